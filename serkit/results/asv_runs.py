"""What each `asv run` cost beyond what asv recorded of it.

serkit times every `asv run` it starts (serkit.run.rounds). asv records in the results
file the duration of each benchmark it ran, of each `setup_cache` and of the
environment's build. What the wall time leaves after those is asv's own cost per run:
its start, the checkout and install of the commit, discovery in the environment, the
forkserver and the results file. The cost model (serkit.run.cost) prices every `asv
run` of the matrix with it, so a runner kind's figure comes from its own runs, not from
this VM's.

asv rewrites the results file with its own keys on every run, so the records are kept
as notes beside the canary's (serkit.results.canary) and written back after each run
(serkit.results.asv_file.attach_notes), where `recorded` read them from.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUNS_KEY = "serkit_asv_runs"
RUNS_FILE = "asv-runs.jsonl"
BUILD = "<build>"


@dataclass(frozen=True)
class AsvRun:
    """One `asv run`: its wall time and what asv recorded of it, in seconds."""

    wall_s: float
    recorded_s: float  # the benchmarks' and setup_cache durations this run wrote
    build_s: float  # the environment's build, when this run made it
    # What its timed processes waited for the machine's fast state before sampling
    # (serkit.suite.state_watch): inside the durations asv recorded of them.
    waited_s: float = 0.0

    @property
    def overhead_s(self) -> float:
        return max(self.wall_s - self.recorded_s - self.build_s, 0.0)


def as_row(run: AsvRun) -> dict[str, float]:
    row = {"wall_s": run.wall_s, "recorded_s": run.recorded_s, "build_s": run.build_s}
    return row | ({"waited_s": run.waited_s} if run.waited_s else {})


def note(folder: Path, run: AsvRun) -> None:
    """Keep `run` in the environment's notes folder."""
    folder.mkdir(parents=True, exist_ok=True)
    line = json.dumps(as_row(run))
    with (folder / RUNS_FILE).open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def _parse(items: Iterable[Any]) -> list[AsvRun]:
    found = []
    for item in items:
        try:
            values = [float(item[key]) for key in ("wall_s", "recorded_s", "build_s")]
            values.append(float(item.get("waited_s", 0.0)))  # older rows: no waiting
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a damaged line costs itself only
        # A tree from elsewhere may say anything: only finite, non-negative seconds count.
        if all(math.isfinite(v) and v >= 0 for v in values):
            found.append(AsvRun(*values))
    return found


def read_notes(folder: Path) -> list[AsvRun]:
    try:
        lines = (folder / RUNS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    items = []
    for line in lines:
        try:
            items.append(json.loads(line))
        except ValueError:
            continue
    return _parse(items)


def runs_of(data: Mapping[str, Any]) -> list[AsvRun]:
    """The runs a results file's data records; [] for one written without them."""
    block = data.get(RUNS_KEY)
    return _parse(block) if isinstance(block, list) else []


def typical_overhead(runs: Sequence[AsvRun]) -> float | None:
    """The median of the runs' overheads, seconds; None without runs."""
    return statistics.median(r.overhead_s for r in runs) if runs else None
