"""Statistics shared by every view: paired ratios and their median, quartiles.

Two timings taken back to back in one round share the machine's state, so the ratio of a
pair is steadier than either value; over several rounds serkit states the median of the
per-round ratios, never the ratio of two medians.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from serkit.errors import SerkitError


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


# --- values measured in several processes ---------------------------------------------------

# Two processes whose values differ by more than this (as a ratio) are in separate modes:
# on a shared VM one process can read a call 2x slower than another throughout.
MODE_GAP = 0.25
# The verdict test's level per pair, before any floor. Half the 1 % an A/A may call:
# judging each side's typical processes (judged_processes) chooses the processes from the
# values, which makes the test liberal (simulated, 1.2-1.7 % of A/A pairs at 1 %, with the
# fastest mode alone); at 0.5 % it calls 0.25-0.6 % (tests/test_stats.py).
Z_99 = 2.576  # two-sided 1 % of a normal distribution
ALPHA = 0.005


@dataclass(frozen=True)
class Spread:
    """One value per process: their median, quartiles, range and modes."""

    values: tuple[float, ...]  # sorted
    median: float
    q1: float
    q3: float
    modes: tuple[tuple[float, int], ...]  # each cluster's median and how many processes

    @property
    def low(self) -> float:
        return self.values[0]

    @property
    def high(self) -> float:
        return self.values[-1]

    @property
    def multimodal(self) -> bool:
        return len(self.modes) > 1

    @property
    def cv(self) -> float:
        """The spread between processes as a coefficient of variation (of the logs)."""
        return log_std(self.values)


def spread(values: Sequence[float]) -> Spread:
    """The between-process spread of `values` (each one process's time, all above 0)."""
    ordered = tuple(sorted(values))
    if not ordered or ordered[0] <= 0:
        raise ValueError("a spread needs one or more values above 0")
    q1, median, q3 = quartiles(ordered)
    return Spread(ordered, median, q1, q3, modes(ordered))


def modes(values: Sequence[float], gap: float = MODE_GAP) -> tuple[tuple[float, int], ...]:
    """Clusters of processes: sorted values split wherever one is over (1 + gap) x the last."""
    ordered = sorted(values)
    clusters: list[list[float]] = [[ordered[0]]]
    for value in ordered[1:]:
        if value > clusters[-1][-1] * (1 + gap):
            clusters.append([value])
        else:
            clusters[-1].append(value)
    return tuple((statistics.median(c), len(c)) for c in clusters)


def log_std(values: Sequence[float]) -> float:
    """The sample standard deviation of the natural logs: about the CV for small spreads."""
    if len(values) < 2:
        return 0.0
    return statistics.stdev(math.log(v) for v in values)


def fastest_mode(values: Sequence[float], gap: float = MODE_GAP) -> tuple[float, ...]:
    """The processes of the fastest mode (`modes`): sorted, up to the first gap."""
    ordered = sorted(values)
    fastest = [ordered[0]]
    for value in ordered[1:]:
        if value > fastest[-1] * (1 + gap):
            break
        fastest.append(value)
    return tuple(fastest)


# Within a side's fastest mode, a process more than this many robust standard deviations
# (1.4826 x the median absolute deviation of the logs) above the mode's median measured a
# neighbour, not the code: on this VM about one process in ten read 5-100 % slow while the
# rest sat within 1-2 % of each other (docs/trust.md). The deviation is taken as at least
# LEAST_SPREAD, so that a tight cluster does not shed processes a hair above its median.
STRAGGLER_SDS = 3.0
LEAST_SPREAD = 0.02
MAD_TO_SD = 1.4826  # a normal distribution's standard deviation per median absolute deviation


def typical_processes(values: Sequence[float]) -> tuple[float, ...]:
    """The processes that measured the code: the fastest mode (`fastest_mode`) less its slow
    stragglers (STRAGGLER_SDS above the mode's median); sorted."""
    fastest = fastest_mode(values)
    logs = [math.log(v) for v in fastest]
    centre = statistics.median(logs)
    deviation = statistics.median(abs(v - centre) for v in logs)
    limit = centre + STRAGGLER_SDS * max(MAD_TO_SD * deviation, LEAST_SPREAD)
    return tuple(v for v, log in zip(fastest, logs) if log <= limit)


def judged_processes(
    a: Sequence[float], b: Sequence[float]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The processes a verdict judges: each side's typical processes (`typical_processes`),
    where both sides keep two or more; else every process of both sides.

    Another tenant's work only ever slows a process down, and on a shared VM it slowed
    some processes by 5 % to 2x throughout (docs/trust.md): such a process measures the
    neighbour, not the code. Both sides are treated alike, so that neither is judged by
    its fast processes against the other's slow ones.
    """
    typical_a, typical_b = typical_processes(a), typical_processes(b)
    if len(typical_a) < 2 or len(typical_b) < 2:
        return tuple(sorted(a)), tuple(sorted(b))
    return typical_a, typical_b


def standard_error(values: Sequence[float]) -> float | None:
    """The standard error of the mean log of the typical processes (`typical_processes`):
    how precisely a pair's processes place it, relative (0.01: 1 %); None under two."""
    typical = typical_processes(values) if len(values) >= 2 else ()
    if len(typical) < 2:
        return None
    return log_std(typical) / math.sqrt(len(typical))


@dataclass(frozen=True)
class Difference:
    """Whether B's processes differ from A's, and the smallest difference this could tell."""

    ratio: float  # B's median / A's median, each over its typical processes
    p_value: float | None  # Welch's t-test on the logs; None when it cannot be run
    detectable: float  # smallest relative difference this pair could call (0.12: 12 %)
    differs: bool
    used: tuple[int, int] = (0, 0)  # processes judged a side: its typical ones


def _weighted_side(
    values: Sequence[float], weights: Sequence[float] | None, judged: int
) -> tuple[float, float]:
    """A side's weighted mean log over its `judged` fastest processes (the ones
    `judged_processes` keeps are always the fastest), and that mean's variance."""
    order = sorted(range(len(values)), key=values.__getitem__)[:judged]
    logs = [math.log(values[i]) for i in order]
    given = [weights[i] if weights is not None else 1.0 for i in order]
    total = sum(given)
    mean = sum(w * x for w, x in zip(given, logs)) / total
    # The weights say how precise each process is against the others, not how precise any
    # is: the scale comes from the side's own scatter, with n - 1 degrees of freedom.
    scatter = sum(w * (x - mean) ** 2 for w, x in zip(given, logs)) / (len(logs) - 1)
    return mean, scatter / total


def joint_error(
    a: Sequence[float],
    b: Sequence[float],
    weights: tuple[Sequence[float], Sequence[float]] | None = None,
) -> float:
    """The standard error of the difference of the two sides' mean logs, as `difference`
    weighs and judges them (its `weights`, each side's judged processes)."""
    (_, var_a), (_, var_b) = _weighted_sides(a, b, weights, judged_processes(a, b))
    return math.sqrt(var_a + var_b)


def _weighted_sides(
    a: Sequence[float],
    b: Sequence[float],
    weights: tuple[Sequence[float], Sequence[float]] | None,
    judged: tuple[Sequence[float], Sequence[float]],
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Each side's `_weighted_side` over its `judged` processes (`judged_processes`)."""
    weights_a, weights_b = weights if weights is not None else (None, None)
    return (
        _weighted_side(a, weights_a, len(judged[0])),
        _weighted_side(b, weights_b, len(judged[1])),
    )


def difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    floor: float = 0.0,
    alpha: float = ALPHA,
    weights: tuple[Sequence[float], Sequence[float]] | None = None,
) -> Difference:
    """Welch's t-test on the logs of the per-process values (`judged_processes`: each side's
    typical processes), and a floor.

    A pair differs only when the test rejects "no difference" at `alpha` and the change
    exceeds `floor`: differences between whole runs (another tenant busy during one of
    them) move every process of a run alike, which no per-pair test can see, so the floor
    is measured on the host by an A/A run (`serkit noise`). `detectable` is the larger of
    the floor and the shift the test needed, given these processes' spread.

    `weights`, one per process of `a` and of `b` in their order (serkit.sample_speed.
    judging_weight), make the test's means weighted ones: a process that measured the call
    less precisely counts for less. Without them every process counts alike, which is
    Welch's test itself. The ratio stays that of the medians, as the values are shown.
    """
    # Student's t from scipy.special: the functions scipy.stats.t computes with, bit for
    # bit, imported in 0.5 s where scipy.stats takes 2.0 s (2026-11-29), which `serkit
    # try` paid out of its budget.
    try:
        from scipy.special import stdtr, stdtrit
    except ImportError:
        raise SerkitError("comparing processes needs scipy: pip install 'serkit[stats]'") from None

    if len(a) < 2 or len(b) < 2:
        raise ValueError("a test between processes needs two or more values a side")
    if weights is not None and (
        (len(weights[0]), len(weights[1])) != (len(a), len(b)) or min(*weights[0], *weights[1]) <= 0
    ):
        raise ValueError("weights: one above 0 for each process of each side")
    judged_a, judged_b = judged_processes(a, b)
    ratio = statistics.median(judged_b) / statistics.median(judged_a)
    (mean_a, var_a), (mean_b, var_b) = _weighted_sides(a, b, weights, (judged_a, judged_b))
    error = math.sqrt(var_a + var_b)
    if error == 0:  # identical values a side: only the floor can hold them apart
        shift = 0.0
        p_value = None if ratio == 1 else 0.0
    else:
        dof = error**4 / (var_a**2 / (len(judged_a) - 1) + var_b**2 / (len(judged_b) - 1))
        shift = float(stdtrit(dof, 1 - alpha / 2)) * error  # the t quantile
        p_value = float(2 * stdtr(dof, -abs(mean_b - mean_a) / error))  # both tails
    detectable = max(floor, math.exp(shift) - 1)
    differs = p_value is not None and p_value < alpha and abs(math.log(ratio)) > math.log1p(floor)
    return Difference(ratio, p_value, detectable, differs, (len(judged_a), len(judged_b)))
