"""Encoded sizes of fixtures, with a fidelity flag: the first measurement serkit makes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

# The statuses are decided in fidelity; re-exported for callers of sizes.
from serkit.checks.fidelity import (
    ERROR,
    EXACT,
    LOSSY,
    NOT_INSTALLED,
    UNSUPPORTED,
    check_round_trip,
)
from serkit.inputs.fixtures import load_fixture

__all__ = [
    "ERROR",
    "EXACT",
    "LOSSY",
    "NOT_INSTALLED",
    "UNSUPPORTED",
    "SizeResult",
    "measure_fixture",
]


@dataclass(frozen=True)
class SizeResult:
    codec: str
    fixture: str
    status: str
    bytes: int | None  # None unless encoded
    options: str  # the fallback options used, "" for the codec's base call
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure_fixture(fixture: str, codecs: Iterable[str]) -> Iterator[SizeResult]:
    """Encode fixture `fixture` with every codec in `codecs` and check the round trip."""
    obj = load_fixture(fixture)
    for name in codecs:
        checked = check_round_trip(name, fixture, obj)
        # A codec that cannot decode its own output has no size worth showing.
        size = None if checked.status == ERROR else checked.bytes
        yield SizeResult(name, fixture, checked.status, size, checked.options, checked.detail)
