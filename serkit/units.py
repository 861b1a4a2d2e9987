"""Numbers as people read them, with their units: the one place serkit turns a number into text.

Every view (the terminal tables, `serkit compare`, the HTML report, the replicated posts)
formats through these functions, so one quantity reads the same wherever it appears:
three significant digits, shown even when they are zeros (1.50 ms, 1.00x), whole numbers
from 100 up with thousands separated, and "-" for a value that is missing.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable
from typing import Any

MISSING = "-"
TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def significant(value: float, digits: int = 3) -> str:
    """`digits` significant digits, zeros kept (1.50, 0.0660); from 10**(digits-1) up, whole."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:#.{digits}g}".rstrip(".")  # "#" keeps the zeros; 99.96 gives "100."


def count(value: int) -> str:
    """A whole number, thousands separated: 1,000."""
    return f"{value:,}"


def plural(value: int, word: str, many: str | None = None) -> str:
    """A count and its noun, singular for one: 1 pair, 2 pairs; `many` where an s is not
    the plural (1 process, 2 processes)."""
    return f"{count(value)} {word if value == 1 else many or word + 's'}"


def counts(values: Iterable[int]) -> str:
    """Whole numbers as a list: 10, 100, 1,000."""
    return ", ".join(count(v) for v in values)


def number(value: float | None) -> str:
    """A figure without a unit (its column names it): exact if whole, else significant."""
    if value is None or isinstance(value, int):
        return MISSING if value is None else count(value)
    return MISSING if math.isnan(value) else significant(value)


def seconds(value: float | None) -> str:
    """A duration in the unit that reads best: 1.23 µs, 12.3 ms, 2.00 s."""
    if value is None or _missing(value):
        return MISSING
    shown = float(f"{value:.3g}")  # as rounded: 999.6 µs is 1.00 ms, never "1,000 µs"
    for scale, name in TIME_UNITS:
        if abs(shown) >= scale or scale == TIME_UNITS[-1][0]:
            return f"{significant(value / scale)} {name}"
    raise AssertionError("unreachable: the last unit takes every value")


def _median(values: Iterable[float | None]) -> float | None:
    present = sorted(v for v in values if v is not None and not _missing(v) and v > 0)
    return present[len(present) // 2] if present else None


def time_unit(values: Iterable[float | None]) -> tuple[float, str]:
    """The one unit a chart's time axis shows all its values in (seconds per unit, name):
    the one its median reads best in, as `seconds` would write it."""
    middle = _median(values)
    for scale, name in TIME_UNITS:
        if middle is None or middle >= scale or scale == TIME_UNITS[-1][0]:
            return scale, name
    raise AssertionError("unreachable: the last unit takes every value")


def size_unit(values: Iterable[float | None]) -> tuple[float, str]:
    """The one unit a chart's size axis shows all its values in (bytes per unit, name):
    the largest power of 1024 in which the median is at least 10."""
    middle = _median(values) or 0.0
    power = 0
    while middle / 1024 ** (power + 1) >= 10 and power < len(BINARY_UNITS) - 1:
        power += 1
    return 1024.0**power, BINARY_UNITS[power]


def bytes_exact(value: float | None) -> str:
    """A size to the byte, as encoded sizes are compared: 2,800 B."""
    return MISSING if value is None or _missing(value) else f"{value:,.0f} B"


def bytes_binary(value: float | None) -> str:
    """A size in powers of 1024, as memory is counted: 921 B, 50.8 KiB, 3.07 MiB."""
    if value is None or _missing(value):
        return MISSING
    if abs(value) < 1024:
        return f"{value:,.0f} B" if value == int(value) else f"{value:.1f} B"
    scaled, power = value, 0
    while abs(scaled) >= 1024 and power < len(BINARY_UNITS) - 1:
        scaled, power = scaled / 1024, power + 1
    return f"{significant(scaled)} {BINARY_UNITS[power]}"


def whole(value: float | None) -> str:
    """A count that a column or a unit word names, read as a whole number: 109,008."""
    return MISSING if value is None or _missing(value) else f"{value:,.0f}"


def times(ratio: float | None, digits: int = 3) -> str:
    """A ratio as a multiple: 1.00x (with digits=2: 1.0x)."""
    return MISSING if ratio is None or _missing(ratio) else f"{significant(ratio, digits)}x"


def decimal(value: float | None, places: int = 3) -> str:
    """A ratio near 1 at fixed places, where the third decimal tells noise from change: 1.014."""
    return MISSING if value is None or _missing(value) else f"{value:.{places}f}"


def percent(fraction: float, places: int = 0, signed: bool = False) -> str:
    """A fraction as a percentage, spaced from its sign as SI writes it: 40 %, +1.5 %."""
    return f"{fraction * 100:{'+' if signed else ''}.{places}f} %"


def percent_within(fraction: float) -> str:
    """A gap "within" which things lie, to the percent: under 0.5 % it reads 1 %, which it
    is within, rather than 0 %."""
    return percent(fraction if fraction >= 0.005 else 0.01)


def format_value(value: float | None, unit: str) -> str:
    """A value in an asv unit: "seconds" and "bytes" scaled, any other unit as a plain number."""
    if value is None:
        return MISSING
    if unit == "seconds":
        return seconds(value)
    if unit == "bytes":
        return bytes_binary(value)
    if unit == "allocations":
        return f"{whole(value)} allocations"
    if unit == "instructions":
        return f"{whole(value)} instructions"
    if unit == "estimated cycles":
        return f"{whole(value)} estimated cycles"
    return f"{value:g}"


def signed(value: float, places: int = 1) -> str:
    """A difference with its sign, in a column that names the unit: +1.5, -0.3."""
    return f"{value:+.{places}f}"


# Where a line may not break: after a digit ("10 %", "1.39 ms", "5 processes") and after
# "in" before its count ("in 3"). No-break spaces there keep each quantity whole.
_BOUND = re.compile(r"(?<=\d) |(?<= in) (?=\d)")


def unbroken(text: str) -> str:
    """`text` with a no-break space wherever a break would part a number from its unit."""
    return _BOUND.sub("\N{NO-BREAK SPACE}", text)


def fill(text: str, width: int, **options: Any) -> str:
    """textwrap.fill for the terminal, never parting a number from its unit ("10\\n%")."""
    return textwrap.fill(unbroken(text), width, **options).replace("\N{NO-BREAK SPACE}", " ")
