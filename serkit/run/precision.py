"""Each pair's processes from its own spread: precision paid for where it buys something.

A full run (a matrix shard included) aims every timed pair at one precision: the standard
error of its mean log, over its typical processes, within the run's `precision`
(serkit.suite.cases.precision_needed: 0.84 % to see a 5 % change). A pair whose calls
take milliseconds and whose processes agree reaches it in a few processes; a pair whose
processes scatter needs many. So every pair gets LEAST_PROCESSES processes, and each
round after those takes only the pairs still short of the precision (serkit.run.rounds),
up to MOST_PROCESSES. A process is taken as every reader takes it, judged by the machine's
state when its results were read (serkit.results.judging): a process the canary shows slow
is corrected, not counted as spread.

`serkit matrix --cost` prices the same rule from the same reading (`processes_for`, from
each pair's spread in a results tree), so the model and the run agree pair by pair:
a standard error of sd/sqrt(n) reaches the precision at n = (sd / precision)^2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from serkit.results.noise import BETWEEN_RUNS_SPREAD, LEAST_FLOOR
from serkit.stats import log_std, standard_error, typical_processes
from serkit.suite.cases import FULL_ROUNDS, QUICK_SEES, TYPICAL_PROCESSES, precision_needed

# Every pair's processes: the fewest a verdict judges, and the most a full run gives (its
# planned rounds and as many extra rounds again).
LEAST_PROCESSES = TYPICAL_PROCESSES
MOST_PROCESSES = 2 * FULL_ROUNDS

Combo = tuple[str, ...]


def quick_precision() -> float:
    """What a quick run's pairs aim at: a QUICK_SEES change called between two runs in 90 %
    of pairs, read past the floor such verdicts apply (LEAST_FLOOR), with the spread two
    runs add to a pair's processes (BETWEEN_RUNS_SPREAD). When runs aimed at the test alone
    (1.65 %), pairs at a standard error of 1.0-1.25 % were called at +10 % in 93.5 % of
    pairings, those at 1.5-1.65 % in 82.5 % (docs/trust.md, "Aiming past the floor")."""
    return precision_needed(QUICK_SEES, floor=LEAST_FLOOR, spread=BETWEEN_RUNS_SPREAD)


def processes_for(spread: float | None, precision: float, unknown: int = FULL_ROUNDS) -> int:
    """The processes a pair needs for the standard error of its mean log to reach
    `precision`, from the spread (serkit.stats.log_std) of its typical processes: within
    LEAST_PROCESSES and MOST_PROCESSES; `unknown` for a pair whose spread was not measured."""
    if spread is None:
        return unknown
    wanted = math.ceil((spread / precision) ** 2)
    return min(max(wanted, LEAST_PROCESSES), MOST_PROCESSES)


def is_short(processes: Sequence[float], precision: float) -> bool:
    """Whether a pair's processes so far hold fewer than TYPICAL_PROCESSES typical ones, or
    place it less precisely than `precision`."""
    error = standard_error(processes)
    return len(typical_processes(processes)) < TYPICAL_PROCESSES or (error or 0) > precision


def spread_of(processes: Sequence[float]) -> float | None:
    """The spread of a pair's typical processes; None under two."""
    typical = typical_processes(processes) if len(processes) >= 2 else ()
    return log_std(typical) if len(typical) >= 2 else None


def by_precision(round_index: int, rounds: int, least: int) -> bool:
    """Whether a planned round (0-based) takes only the pairs short of precision: every one
    from the `least`-th on, where the run sets it (0: every planned round takes every pair)."""
    return 0 < least <= round_index < rounds
