"""`serkit matrix --cost`: the matrix's time per runner kind and shard (serkit.run.cost)."""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.cli.common import print_json, print_table, warn
from serkit.codecs.spec import STDLIB
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.results.hosts import load_text
from serkit.run.cost import (
    ASV_RUN_S,
    BUILD_S,
    SHARD_BUDGET_S,
    LeaveOut,
    Measured,
    RunnerCost,
    durations_table,
    leave_out,
    read_costs,
    read_durations,
    read_predictions,
    runner_costs,
)
from serkit.run.matrix import COUNTS_PYTHON
from serkit.run.precision import MOST_PROCESSES, processes_for
from serkit.run.quick import FULL_BUDGET_S
from serkit.run.releases import Releases, load
from serkit.run.sentinel import SENTINEL_PYTHON
from serkit.run.weekly_cost import SentinelCost, WeeklyCost, weekly_costs
from serkit.suite.cases import FULL_ROUNDS, TYPICAL_PROCESSES
from serkit.units import plural


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def _measured(results: Path, machine: str | None, precision: float | None = None) -> list[Measured]:
    """What each environment cost, from a results tree or a saved durations table."""
    if results.is_file():
        return read_durations(results)
    measured, warnings = read_costs(results, machine)
    warn(warnings)
    if not any(m.library is not None for m in measured):
        if precision is not None and any(m.spreads for m in measured):
            # A run of one Python's newest releases prices nothing, but its pairs' spreads
            # still say what --detect would ask of each.
            print(_precision_words(measured, precision).strip())
        raise SerkitError(
            f"no matrix environment's results in {results}"
            + (f" for machine {machine}" if machine else "")
            + ": run `serkit bench --matrix` (a --python and a shard are enough to start)"
        )
    return measured


def per_run_words(measured: Sequence[Measured], table: bool) -> tuple[float, str]:
    """The seconds the model gives each `asv run` beyond its durations, and where they
    come from."""
    runs = sum(len(m.recorded_runs) for m in measured)
    seconds = measured[0].asv_run_s if measured else ASV_RUN_S
    if runs:
        return seconds, f"the median of the {plural(runs, 'asv run')} the tree records"
    if table and seconds != ASV_RUN_S:
        return seconds, "as the table states"
    return seconds, "measured here under load (docs/cost.md): no recorded runs to go by"


@dataclass(frozen=True)
class Before:
    """What the model leaves as runs did before its levers: every pair of the grid timed
    (--every-pair), memory per call and instructions counted everywhere
    (--counted-everywhere)."""

    every_pair: bool = False
    counted_everywhere: bool = False


def _counted_words(before: Before) -> str:
    if before.counted_everywhere:
        return (
            " Memory per call and instructions counted in every environment (--counted-everywhere)."
        )
    return (
        f" Memory per call and instructions counted where a matrix run counts them: each "
        f"release on Python {COUNTS_PYTHON}, each Python in its newest releases."
    )


def save_durations(results: Path, machine: str | None, path: Path) -> int:
    """`--save-durations FILE`: the tree's durations as a table (serkit.run.cost
    .durations_table), read back with --durations wherever the tree is not."""
    measured = _measured(results, machine)
    libraries = [STDLIB, *(library.name for library in load().libraries)]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    what = (
        f"The durations asv recorded in {results}"
        + (f" (machine {machine})" if machine else "")
        + f", saved by `serkit matrix --cost --save-durations` at {stamp}; the predictions "
        f"made then, at a load average of {load_text()}."
    )
    table = durations_table(measured, what, libraries)
    try:
        atomic_write(path, json.dumps(table, indent=1) + "\n")
    except OSError as exc:
        raise SerkitError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(
        f"wrote {path}: {plural(len(table['environments']), 'environment')}, "
        f"{table['asv_run_s']:.1f} s per asv run, "
        f"{plural(len(table['predictions']['pairs']), 'pair')} predicted"
    )
    return 0


def _left_out(results: Path, every_pair: bool, data: Releases) -> LeaveOut | None:
    """The pairs a full run leaves out (serkit.run.cost.leave_out) of the matrix's
    libraries: from the saved table's predictions, else predicted here; None with
    --every-pair."""
    if every_pair:
        return None
    libraries = [STDLIB, *(library.name for library in data.libraries)]
    # A saved table is the whole input: without predictions of its own, none.
    saved = (read_predictions(results) or {}) if results.is_file() else None
    return leave_out(libraries, saved)


def _left_words(left: LeaveOut | None) -> str:
    if left is None:
        return " Every pair of the grid timed (--every-pair)."
    pairs = sorted(f"{codec} x {fixture}" for codec, fixture in left.left)
    if not left.weights:
        return " No pair predicted (a saved table without predictions): none left out."
    return (
        f" Less the {plural(len(pairs), 'pair')} a full run leaves out, predicted over its "
        f"{FULL_BUDGET_S:g} s a pair ({', '.join(pairs) or 'none'}), each at its predicted "
        "share of its environment's timed time."
    )


def _precision_words(measured: Sequence[Measured], precision: float | None) -> str:
    """What --detect did: each pair's processes, and how many pairs reach the precision."""
    if precision is None:
        return ""
    spreads = [sd for m in measured for sd in m.spreads]
    if not spreads:
        return (
            " No per-process samples here: every pair at the planned processes (a full run "
            f"gives each {TYPICAL_PROCESSES} to {MOST_PROCESSES}, by its spread)."
        )
    known = [sd for sd in spreads if sd is not None]
    needed = [processes_for(sd, precision) for sd in known]
    fewest = sum(1 for n in needed if n == TYPICAL_PROCESSES)
    most = sum(1 for n in needed if n == MOST_PROCESSES)
    short = sum(1 for sd in known if sd / math.sqrt(MOST_PROCESSES) > precision)
    middle = f", median {statistics.median(needed):g}" if needed else ""
    return (
        f" Each timed pair with the processes its spread needs for a standard error of "
        f"{precision:.2%}: of {len(spreads)} pairs, {len(spreads) - len(known)} with no "
        f"spread (fewer than two typical processes: as recorded), {fewest} need "
        f"{TYPICAL_PROCESSES}, {most} the most, {MOST_PROCESSES}{middle}; {short} stay short "
        "of it even then (a pair counted as an equal share of its environment's time)."
    )


@dataclass(frozen=True)
class _Priced:
    """What both views price from: the environments measured, the pairs a full run leaves
    out, and the seconds each `asv run` costs beyond its durations."""

    results: Path
    measured: list[Measured]
    data: Releases
    left: LeaveOut | None
    per_run: float
    per_run_source: str
    precision: float | None
    before: Before

    def notes(self) -> str:
        """What --detect, --every-pair and --counted-everywhere made of the model."""
        return (
            _precision_words(self.measured, self.precision)
            + _left_words(self.left)
            + _counted_words(self.before)
        )

    def record(self) -> dict[str, Any]:
        """The JSON both views begin with."""
        return {
            "results": str(self.results),
            "asv_run_s": round(self.per_run, 2),
            "asv_run_source": self.per_run_source,
        }

    def left_record(self) -> list[list[str]] | None:
        return None if self.left is None else sorted(map(list, self.left.left))


def _priced(results: Path, machine: str | None, precision: float | None, before: Before) -> _Priced:
    measured = _measured(results, machine, precision)
    data = load()
    left = _left_out(results, before.every_pair, data)
    per_run, per_run_source = per_run_words(measured, results.is_file())
    return _Priced(results, measured, data, left, per_run, per_run_source, precision, before)


def _kind_record(kind: RunnerCost) -> dict[str, Any]:
    return {
        "runner": kind.platform.runner,
        "platform": kind.platform.name,
        "total_s": round(kind.total_s, 1),
        "shards": [
            {"shard": str(s), "seconds": round(t, 1), "environments": n} for s, t, n in kind.shards
        ],
        "environments": [
            {
                "label": e.env.label,
                "seconds": None if e.seconds is None else round(e.seconds, 1),
                "source": e.source,
            }
            for e in kind.estimates
        ],
    }


def _cost_words(priced: _Priced, kinds: Sequence[RunnerCost], processes: int | None) -> str:
    """Where the figures come from, and what the model counts."""
    results, measured = priced.results, priced.measured
    machines = sorted({m.machine for m in measured})
    own = sum(1 for e in kinds[0].estimates if e.source == "measured")
    return (
        (
            f"From the durations table {results} ({plural(len(measured), 'environment')}): "
            if results.is_file()
            else f"From {plural(len(measured), 'results file')} of {', '.join(machines)} "
            f"in {results}: "
        )
        + f"{own} of the {len(kinds[0].estimates)} {kinds[0].platform.name} environments "
        f"measured, the others borrowed from the nearest measured (the same release on "
        f"another Python, else another release; a library never measured, by its pairs). "
        "Each benchmark's duration times its "
        + (f"{processes} processes (timed pairs)" if processes else "processes")
        + f", {priced.per_run:.1f} s per asv run ({priced.per_run_source}), "
        f"{BUILD_S:g} s per build." + priced.notes()
    )


def _print_shards(kinds: Sequence[RunnerCost], fmt: str) -> None:
    """Each runner kind's matrix, then each shard's time, then the budget's verdict."""
    count = len(kinds[0].shards)
    rows = [
        [
            kind.platform.runner,
            kind.platform.name,
            len(kind.estimates),
            _hours(kind.total_s),
            count,
            _hours(kind.longest_shard_s),
        ]
        for kind in kinds
    ]
    headers = ["runner kind", "platform", "environments", "whole matrix", "shards", "longest"]
    print_table(rows, headers, fmt, disable_numparse=True)
    print()
    shard_rows = [
        [kind.platform.runner, str(shard), n, _hours(seconds)]
        for kind in kinds
        for shard, seconds, n in kind.shards
    ]
    print_table(shard_rows, ["runner kind", "shard", "environments", "time"], fmt)
    unknown = sorted({e.env.label for kind in kinds for e in kind.unknown})
    if unknown:
        print(f"Not estimated, nothing like them measured: {', '.join(unknown)}.")
    within = all(kind.longest_shard_s <= SHARD_BUDGET_S for kind in kinds)
    verdict = "within" if within else "OVER"
    print(f"Every shard {verdict} the {_hours(SHARD_BUDGET_S)} budget.", file=sys.stderr)


def print_cost(
    results: Path,
    fmt: str,
    shards: int | None,
    machine: str | None = None,
    processes: int | None = None,
    precision: float | None = None,
    before: Before = Before(),
) -> int:
    priced = _priced(results, machine, precision, before)
    kinds = runner_costs(
        priced.data,
        priced.measured,
        shards,
        processes,
        precision,
        priced.left,
        before.counted_everywhere,
    )
    if fmt == "json":
        print_json(
            {
                **priced.record(),
                "processes": processes,
                "precision": precision,
                "left_out": priced.left_record(),
                "build_s": BUILD_S,
                "shard_budget_s": SHARD_BUDGET_S,
                "runner_kinds": [_kind_record(kind) for kind in kinds],
            }
        )
        return 0
    print(_cost_words(priced, kinds, processes))
    _print_shards(kinds, fmt)
    return 0


def _known(kind: WeeklyCost, library: str, seconds: Callable[[str], float]) -> float | None:
    """Seconds, rounded; None where an environment of the release was not estimated."""
    if any(e.seconds is None for e in kind.new_release[library]):
        return None
    return round(seconds(library), 1)


# What a scheduled run may cost a runner kind in its steady state (issue 32).
WEEKLY_TARGET_S = 2 * 3600


def _weekly_record(kind: WeeklyCost) -> dict[str, Any]:
    return {
        "runner": kind.platform.runner,
        "full_s": round(kind.full_s, 1),
        "new_release": {
            library: {
                "environments": len(kind.new_release[library]),
                "seconds": _known(kind, library, kind.release_s),
                "week_s": _known(kind, library, kind.week_s),
                "not_estimated": [
                    e.env.label for e in kind.new_release[library] if e.seconds is None
                ],
            }
            for library in kind.new_release
        },
    }


def _weekly_words(priced: _Priced, sentinel: SentinelCost, rounds: int) -> str:
    """What a scheduled run measures, and what the sentinel costs."""
    cost = "not estimated" if sentinel.seconds is None else f"{sentinel.seconds / 60:.1f} min"
    return (
        f"A scheduled run, at {rounds} processes a timed pair: the environments no stored "
        f"point covers (here, one library's new release on every Python that has it) and "
        f"the sentinel, {sentinel.pairs} pairs in py{SENTINEL_PYTHON}'s standard-library "
        f"environment: {cost} a runner kind ({sentinel.source}; its pairs counted as "
        f"{sentinel.share:.1%} of that environment's timed time, an upper bound). "
        f"{priced.per_run:.1f} s per asv run ({priced.per_run_source})." + priced.notes()
    )


def _print_releases(first: WeeklyCost, fmt: str) -> None:
    """One runner kind's week with each library's new release."""
    rows = []
    for library in first.new_release:
        estimates = first.new_release[library]
        measured_all = all(e.seconds is not None for e in estimates)
        rows.append(
            [
                library,
                len(estimates),
                _hours(first.release_s(library)) if measured_all else "not estimated",
                _hours(first.week_s(library)) if measured_all else "not estimated",
            ]
        )
    headers = ["new release of", "environments", "its environments", "week, with the sentinel"]
    print(f"{first.platform.runner}:")
    print_table(rows, headers, fmt, disable_numparse=True)


def _print_weeks(kinds: Sequence[WeeklyCost], fmt: str) -> None:
    """Each runner kind's costliest week, and which new releases keep within the target."""
    summary = [
        [
            kind.platform.runner,
            _hours(kind.full_s),
            kind.costliest,
            _hours(kind.week_s(kind.costliest)),
        ]
        for kind in kinds
    ]
    headers = ["runner kind", "full re-measure", "costliest new release", "its week"]
    print_table(summary, headers, fmt, disable_numparse=True)
    first = kinds[0]
    unknown = [
        library
        for library in first.new_release
        if any(e.seconds is None for k in kinds for e in k.new_release[library])
    ]
    known = [library for library in first.new_release if library not in unknown]
    within = [lib for lib in known if all(k.week_s(lib) <= WEEKLY_TARGET_S for k in kinds)]
    over = [lib for lib in known if lib not in within]
    if unknown:
        print(f"Not estimated, nothing like them measured: {', '.join(unknown)}.")
    print(
        f"Within the {_hours(WEEKLY_TARGET_S)} target on every kind: a week with a new release "
        f"of {', '.join(within) or 'none'}." + (f" Over it: {', '.join(over)}." if over else "")
    )


def print_weekly(
    results: Path,
    fmt: str,
    machine: str | None = None,
    processes: int | None = None,
    precision: float | None = None,
    before: Before = Before(),
) -> int:
    """`--schedule weekly`: per runner kind, a week with one new release of each library in
    turn, the sentinel, and the full re-measure it replaces."""
    priced = _priced(results, machine, precision, before)
    rounds = processes or FULL_ROUNDS
    kinds = weekly_costs(
        priced.data, priced.measured, rounds, precision, priced.left, before.counted_everywhere
    )
    sentinel = kinds[0].sentinel
    if fmt == "json":
        print_json(
            {
                **priced.record(),
                "processes": rounds,
                "left_out": priced.left_record(),
                "target_s": WEEKLY_TARGET_S,
                "sentinel": {
                    "pairs": sentinel.pairs,
                    "python": SENTINEL_PYTHON,
                    "seconds": None if sentinel.seconds is None else round(sentinel.seconds, 1),
                    "source": sentinel.source,
                },
                "runner_kinds": [_weekly_record(kind) for kind in kinds],
            }
        )
        return 0
    print(_weekly_words(priced, sentinel, rounds))
    _print_releases(kinds[0], fmt)
    print()
    _print_weeks(kinds, fmt)
    return 0
