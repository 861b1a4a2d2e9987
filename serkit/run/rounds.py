"""`serkit bench` runs the rounds itself: one `asv run` per round and environment.

Each timed pair takes one sample in each of `rounds` processes, one process per round,
the rounds interleaved over the whole grid. asv can interleave rounds itself, but it
saves an environment's results only when its run ends, and counts rounds per benchmark,
never per pair. Driving them from here gives three things:

- every finished round is saved (asv saves at the end of each `asv run`), so an
  interrupted run keeps them, and `serkit bench --resume` goes on from the next one;
- the quick run's budget (serkit.suite.budget): in the first round a pair too slow for
  it is timed once, and the later rounds leave it out by asv's parameter selection (a
  skipped pair would lose the sample: asv keeps only what a selected pair measured);
- a broken environment costs its own runs only: the others go on.

A benchmark declared with `rounds = r` (asv's attribute: 1 for tracks, 2 for import
time) takes part in the first r rounds; later rounds append their samples to the
earlier ones (`asv run --append-samples`), with asv's `number` kept per pair.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.errors import SerkitError
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
) -> list[str]:
    """asv `-b` regexes for a round after the first: each benchmark whose rounds reach it,
    at the parameters the user selected, less the pairs timed once. [] when none is left."""
    timed_once: set[tuple[str, tuple[str, ...]]] = {
        (s.benchmark, tuple(repr(p) for p in s.params)) for s in singles
    }
    selected: list[str] = []
    for name, info in sorted(benchmarks.items()):
        if not isinstance(info, dict) or int(info.get("rounds") or 1) <= round_index:
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
        left_out = [combo for combo in chosen if (owner, combo) in timed_once]
        kept = [combo for combo in chosen if (owner, combo) not in timed_once]
        if not kept:
            continue
        if user_regexes:  # only what the user chose: each parameter set by name
            listed = "|".join(re.escape(", ".join(combo)) for combo in kept)
            selected.append(f"^{re.escape(name)}\\((?:{listed})\\)$")
        elif left_out:  # all but the pairs timed once
            listed = "|".join(re.escape(", ".join(combo)) for combo in left_out)
            selected.append(f"^{re.escape(name)}\\((?!(?:{listed})\\)$)")
        else:
            selected.append(f"^{re.escape(name)}\\(")
    return selected


@dataclass
class RunState:
    """What one `serkit bench` set out to do, and what it has done: for `--resume`."""

    commit: str
    quick: bool
    matrix: bool
    pythons: list[str] | None
    rounds: int
    environments: list[str]  # asv names, in the order they run
    selection: dict[str, str]  # SERKIT_BENCH_* as the run began
    extra: list[str]  # passed on to `asv run`
    notes: str  # the folder of the pairs timed once
    done: list[tuple[int, str]] = field(default_factory=list)  # (round, environment)
    failed: dict[str, str] = field(default_factory=dict)  # environment: why not built

    def is_done(self, round_index: int, env: str) -> bool:
        return (round_index, env) in self.done

    def next_round(self) -> int:
        """The first round not finished in every environment that builds (0-based)."""
        for round_index in range(self.rounds):
            for env in self.environments:
                if env not in self.failed and not self.is_done(round_index, env):
                    return round_index
        return self.rounds

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".bench-run-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dataclasses.asdict(self), out, indent=1)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> RunState:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            data["done"] = [(int(r), str(e)) for r, e in data.get("done", [])]
            return cls(**data)
        except FileNotFoundError:
            raise SerkitError(
                "nothing to resume: no interrupted `serkit bench` in this checkout"
            ) from None
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise SerkitError(f"{path} is not a serkit run state ({exc}); run afresh") from exc
