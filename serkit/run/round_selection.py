"""What each round of `serkit bench` runs: asv's `-b` regexes, pair by pair.

The rounds themselves are driven by serkit.run.rounds. A round after the first runs each
benchmark whose `rounds` reach it, at the parameters the user selected, less the pairs
the first round timed once (the quick run's budget, serkit.suite.budget) or skipped; an
extra round runs only the pairs still short of typical processes or of the precision the
run's plan needs (`imprecise_pairs`), read from the results file the earlier rounds wrote.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.results.asv_file import param_sets, read_data, rows_or_none
from serkit.results.tree import read_run_file
from serkit.run.precision import is_short
from serkit.sample_speed import state_share
from serkit.suite.budget import SingleSample

BENCH_OPTIONS = ("-b", "--bench")


def split_bench_args(extra: Sequence[str]) -> tuple[list[str], list[str]]:
    """The `-b` regexes among asv arguments, and the other arguments."""
    regexes: list[str] = []
    rest: list[str] = []
    args = iter(extra)
    for arg in args:
        if arg in BENCH_OPTIONS:
            regexes.append(next(args, ""))
        elif arg.startswith("--bench="):
            regexes.append(arg.split("=", 1)[1])
        elif arg.startswith("-b") and len(arg) > 2:
            regexes.append(arg[2:])
        else:
            rest.append(arg)
    return regexes, rest


def _param_sets(info: Mapping[str, Any]) -> list[tuple[str, ...]]:
    params = info.get("params") or []
    if not params:
        return []
    return [tuple(str(p) for p in combo) for combo in itertools.product(*params)]


def later_selection(
    benchmarks: Mapping[str, Any],
    round_index: int,
    user_regexes: Sequence[str],
    singles: Iterable[SingleSample],
    measured: Mapping[str, set[tuple[str, ...]]] | None = None,
    *,
    extra: bool = False,
) -> list[str]:
    """asv `-b` regexes for a round after the first: each benchmark whose rounds reach it,
    at the parameters the user selected, less the pairs timed once, and, where `measured`
    says what the first round measured (by benchmark), less the pairs it skipped: a skip
    costs a process each round. An `extra` round (past the planned ones) takes exactly
    the pairs `measured` names, whatever their benchmark's rounds. [] when nothing is left."""
    timed_once: set[tuple[str, tuple[str, ...]]] = {
        (s.benchmark, tuple(repr(p) for p in s.params)) for s in singles
    }
    selected: list[str] = []
    for name, info in sorted(benchmarks.items()):
        if not isinstance(info, dict):
            continue
        if extra and (measured is None or name not in measured):
            continue
        if not extra and int(info.get("rounds") or 1) <= round_index:
            continue
        sets = _param_sets(info)
        if not sets:
            if not user_regexes or any(re.search(r, name) for r in user_regexes):
                selected.append(f"^{re.escape(name)}$")
            continue
        owner = name.rsplit(".", 1)[0]  # the class a process notes a single sample under
        chosen = [
            combo
            for combo in sets
            if not user_regexes
            or any(re.search(r, f"{name}({', '.join(combo)})") for r in user_regexes)
        ]
        if measured is not None and name in measured:
            chosen = [combo for combo in chosen if combo in measured[name]]
        kept = [combo for combo in chosen if (owner, combo) not in timed_once]
        if not kept:
            continue
        if kept == sets:
            selected.append(f"^{re.escape(name)}\\(")
        else:  # each parameter set by name
            listed = "|".join(re.escape(", ".join(combo)) for combo in kept)
            selected.append(f"^{re.escape(name)}\\((?:{listed})\\)$")
    return selected


def first_round_values(path: Path) -> dict[str, set[tuple[str, ...]]]:
    """By benchmark, the parameter sets an asv results file holds a value for; {} if unread."""
    measured: dict[str, set[tuple[str, ...]]] = {}
    for name, row in rows_or_none(read_data(path)).items():
        sets = param_sets(row)
        results = row.get("result") or [None] * len(sets)
        measured[name] = {c for c, v in zip(sets, results) if v is not None and v == v}
    return measured


def imprecise_pairs(
    path: Path, benchmarks: Mapping[str, Any], needed: float
) -> dict[str, set[tuple[str, ...]]]:
    """By timed benchmark, the parameter sets whose processes so far (in the results file at
    `path`) hold fewer than TYPICAL_PROCESSES typical ones, or place the pair less precisely
    than `needed` (serkit.stats.standard_error); a pair timed once is not one. Each process
    as every reader takes it: judged by the machine's state (serkit.results.judging)."""
    short: dict[str, set[tuple[str, ...]]] = {}
    for m in read_run_file(path, benchmarks):
        processes = m.process_values
        if len(processes) >= 2 and is_short(processes, needed):
            short.setdefault(m.benchmark, set()).add(m.params)
    return short


# The short pairs a run names, at most; the rest are counted.
NAMED_SHORT = 4


def short_in_words(
    path: Path, benchmarks: Mapping[str, Any], short: Mapping[str, set[tuple[str, ...]]]
) -> str:
    """The pairs `short` names (by benchmark) in words, and why: how much of their samples
    in the results file at `path` read the slow state, against the run's other pairs'."""
    names = sorted(
        f"{benchmark.rsplit('_', 1)[-1]} {' '.join(p.strip(chr(39)) for p in combo)}"
        for benchmark, combos in short.items()
        for combo in combos
    )
    named = ", ".join(names[:NAMED_SHORT])
    if len(names) > NAMED_SHORT:
        named += f" and {len(names) - NAMED_SHORT} more"
    theirs: list[float | None] = []
    others: list[float | None] = []
    ref = None
    for m in read_run_file(path, benchmarks):
        ref = ref or m.canary_reference
        (theirs if m.params in short.get(m.benchmark, ()) else others).extend(m.canary)
    if not theirs or ref is None:
        return f"{named} (their processes scatter; no canary kept)"
    slow, rest = state_share(theirs, ref).slow_share, state_share(others, ref).slow_share
    return (
        f"{named} (their processes scatter: {slow:.0%} of their samples read the slow state "
        f"on every vCPU tried, {rest:.0%} of the other pairs')"
    )
