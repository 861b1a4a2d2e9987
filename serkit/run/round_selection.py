"""What each round of `serkit bench` runs: asv's `-b` regexes, pair by pair.

The rounds themselves are driven by serkit.run.rounds. A round after the first runs each
benchmark whose `rounds` reach it, at the parameters the user selected, less the pairs
the first round timed once (the quick run's budget, serkit.suite.budget) or skipped; an
extra round runs only the pairs still short of typical processes or of the precision the
run's plan needs (`imprecise_pairs`), read from the results file the earlier rounds wrote.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.results.canary import notes_of, params_key, sample_canaries
from serkit.results.tree import Benchmark
from serkit.state import process_values, reference
from serkit.stats import standard_error, typical_processes
from serkit.suite.budget import SingleSample
from serkit.suite.cases import TYPICAL_PROCESSES

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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        columns = data["result_columns"]
        measured: dict[str, set[tuple[str, ...]]] = {}
        for name, values in data["results"].items():
            row = dict(zip(columns, values))
            sets = [tuple(str(p) for p in c) for c in itertools.product(*(row["params"] or []))]
            results = row["result"] or [None] * len(sets)
            measured[name] = {c for c, v in zip(sets, results) if v is not None and v == v}
        return measured
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def imprecise_pairs(
    path: Path, benchmarks: Mapping[str, Any], needed: float
) -> dict[str, set[tuple[str, ...]]]:
    """By timed benchmark, the parameter sets whose processes so far (in the results file at
    `path`) hold fewer than TYPICAL_PROCESSES typical ones, or place the pair less precisely
    than `needed` (serkit.stats.standard_error); a pair timed once is not one."""
    short: dict[str, set[tuple[str, ...]]] = {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        columns = data["result_columns"]
        rows = data["results"].items()
    except (OSError, ValueError, KeyError, TypeError):
        return short
    # Each process judged as the readers judge it: by the machine's state (serkit.state),
    # against the fast canary of this run's own samples.
    notes = notes_of(data)
    ref = reference([c for found in notes.values() for note in found for c in note.canaries])
    for name, values in rows:
        info = benchmarks.get(name)
        if not isinstance(info, dict) or info.get("type") != "time":
            continue
        size = Benchmark(name, "time", "seconds", repeat=info.get("repeat")).samples_per_process
        row = dict(zip(columns, values))
        sets = [tuple(str(p) for p in c) for c in itertools.product(*(row.get("params") or []))]
        for combo, samples in zip(sets, row.get("samples") or []):
            kept = [float(v) for v in samples or [] if v is not None and v == v and v > 0]
            if size is None or not kept:
                continue
            canaries = sample_canaries(kept, size, notes.get((name, params_key(combo)), []))
            processes = [p.value for p in process_values(kept, canaries, size, ref)]
            if len(processes) < 2:
                continue
            error = standard_error(processes)
            if len(typical_processes(processes)) < TYPICAL_PROCESSES or (error or 0) > needed:
                short.setdefault(name, set()).add(combo)
    return short
