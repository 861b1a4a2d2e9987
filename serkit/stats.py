"""Statistics shared by every view: paired ratios and their median, quartiles.

Two timings taken back to back in one round share the machine's state, so the ratio of a
pair is steadier than either value; over several rounds serkit states the median of the
per-round ratios, never the ratio of two medians.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def paired_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Each round's numerator over the same round's denominator."""
    if len(numerators) != len(denominators):
        raise ValueError(f"unpaired rounds: {len(numerators)} against {len(denominators)}")
    return [a / b for a, b in zip(numerators, denominators)]


def median_paired_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the per-round ratios (see the module docstring)."""
    return statistics.median(paired_ratios(numerators, denominators))


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """Q1, median and Q3 (inclusive method); a single value is its own quartiles."""
    if len(values) == 1:
        return (values[0],) * 3
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3
