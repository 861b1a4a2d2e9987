"""serkit.units: every number shown to a person, with its unit."""

from __future__ import annotations

import math

import pytest

from serkit import units


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (1.5, 3, "1.50"),  # zeros kept: three digits shown are three digits meant
        (0.066, 2, "0.066"),
        (0.0661, 3, "0.0661"),
        (12.34, 3, "12.3"),
        (386.2, 2, "386"),  # whole from 10**(digits-1) up, never in exponent form
        (123_456.0, 3, "123,456"),
        (99.96, 3, "100"),
    ],
)
def test_significant_digits(value: float, digits: int, text: str) -> None:
    assert units.significant(value, digits) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (40e-6, "40.0 µs"),
        (1.234e-6, "1.23 µs"),
        (0.0123, "12.3 ms"),
        (2.0, "2.00 s"),
        (5e-10, "0.500 ns"),
        (999.6e-6, "1.00 ms"),  # the unit of the value as rounded, never "1,000 µs"
        (999e-6, "999 µs"),
    ],
)
def test_seconds_scale_to_the_unit_that_reads_best(value: float, text: str) -> None:
    assert units.seconds(value) == text


def test_bytes_exact_and_binary() -> None:
    assert units.bytes_exact(2800) == "2,800 B"
    assert units.bytes_binary(921) == "921 B"
    assert units.bytes_binary(52003) == "50.8 KiB"
    assert units.bytes_binary(3_223_269) == "3.07 MiB"


def test_ratios_percentages_and_counts() -> None:
    assert units.times(1.0) == "1.00x" and units.times(0.5, 2) == "0.50x"
    assert units.decimal(1.0142) == "1.014"
    assert units.percent(0.4) == "40 %" and units.percent(0.0153, 1, signed=True) == "+1.5 %"
    assert units.counts([10, 1_000, 100_000]) == "10, 1,000, 100,000"
    assert units.number(1_000) == "1,000" and units.number(0.5) == "0.500"


def test_missing_values_read_as_a_dash() -> None:
    assert units.seconds(None) == units.bytes_binary(math.nan) == units.times(None) == "-"
    assert units.number(None) == units.format_value(None, "seconds") == "-"


def test_a_chart_axis_takes_the_unit_its_median_reads_best_in() -> None:
    from serkit.units import size_unit, time_unit

    assert time_unit([2e-7, 5e-6, 3e-3]) == (1e-6, "µs")
    assert time_unit([0.02, 0.5, None, float("nan")]) == (1e-3, "ms")
    assert time_unit([None]) == (1.0, "s")
    assert size_unit([1762, 900, 2100]) == (1.0, "B")
    assert size_unit([617_000, 40_000, 700_000]) == (1024.0, "KiB")
    assert size_unit([]) == (1.0, "B")


def test_a_count_of_one_takes_the_singular_and_others_the_plural() -> None:
    """`serkit hosts` once said "1 files"."""
    assert [units.plural(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]
    assert units.plural(1, "process", "processes") == "1 process"
    assert units.plural(1_234, "process", "processes") == "1,234 processes"


def test_a_wrapped_line_never_parts_a_number_from_its_unit() -> None:
    # The rule the main command printed: "...within 10 % and the test could miss no more
    # than 10\n%, else not resolved" broke inside a quantity at 100 columns.
    rule = "tied where they are within 10 % and the test could miss no more than 10 %, else"
    for width in range(20, len(rule)):
        lines = units.fill(rule, width).splitlines()
        assert not any(line.startswith("%") for line in lines), width
        assert all(not line.endswith((" 10", "10")) for line in lines), width
        assert " ".join(lines) == rule  # the words unchanged, plain spaces
    assert units.unbroken("7 processes in 2 modes") == "7\xa0processes in\xa02\xa0modes"
