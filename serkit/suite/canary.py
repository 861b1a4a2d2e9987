"""A canary timed beside every sample: which speed the machine was in when it was taken.

This VM, like the CI runners and laptops serkit runs on, has two speeds: for stretches of
seconds to minutes every process runs about 1.8x slower, and neither the load average nor
steal time shows it (docs/trust.md, "Two speeds"). A fixed pure-Python loop timed right
before and right after a sample slows with it: one process timing json.dumps and this
loop in turn read the two within a few per cent of a fixed ratio whenever both were taken
in one state. So each sample keeps the two canary readings taken around it, and the
readers (serkit.state) judge each sample's state from them.

The clock does it: asv calls a benchmark's `timer` exactly twice per timed sample (at
its start and its end, as timeit does), so the canary runs outside the timed interval,
and the body that asv times is the same as without it.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from serkit.suite.budget import NOTES_ENV

# About 20 µs on this VM in its fast state: two readings cost each 2 ms sample 2 %.
CANARY_LOOPS = 400
# The notes of one environment's processes, one JSON line each (not `*.json`: the folder
# also holds serkit.suite.budget's notes).
CANARY_NOTES = "canary.jsonl"


def canary_ns() -> int:
    """One reading of the canary: a fixed loop of integer arithmetic, in nanoseconds."""
    clock = time.perf_counter_ns
    start = clock()
    total = 0
    for i in range(CANARY_LOOPS):
        total += i * i % 7
    return clock() - start


class CanaryClock:
    """asv's `timer` for a timed pair: seconds per call (the clock over `inner_loops`, as
    serkit.suite.cases.per_call_timer reads it), with the canary timed right before each
    sample starts and right after it ends.

    Keeps the last `keep` samples' intervals, exactly as asv computes them, and their
    canary readings: asv's own samples are the last timeit calls of a process.
    """

    def __init__(self, inner_loops: int, keep: int) -> None:
        self._inner_loops = inner_loops
        self._started: tuple[float, int] | None = None
        self.kept: deque[tuple[float, int, int]] = deque(maxlen=keep)

    def __call__(self) -> float:
        clock, loops = time.perf_counter, self._inner_loops
        if self._started is None:
            before = canary_ns()
            start = clock() / loops
            self._started = (start, before)
            return start
        end = clock() / loops
        after = canary_ns()
        start, before = self._started
        self._started = None
        self.kept.append((end - start, before, after))
        return end


def note_canary(folder: Path, benchmark: str, params: Sequence[str], clock: CanaryClock) -> None:
    """Append one process's samples and canary readings to `folder`'s notes.

    `benchmark` is asv's name (module.Class.method) and `params` asv's repr() strings, as
    the results file keys them; `t` holds each sample's interval before asv divides it by
    its `number`, which is how a reader finds the samples they belong to.
    """
    if not clock.kept:
        return
    line = {
        "benchmark": benchmark,
        "params": list(params),
        "t": [interval for interval, _, _ in clock.kept],
        "canary": [[before, after] for _, before, after in clock.kept],
    }
    folder.mkdir(parents=True, exist_ok=True)
    # One write of one line in append mode: processes of one environment never interleave.
    with open(folder / CANARY_NOTES, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def notes_folder() -> Path | None:
    """Where this process notes its canary readings: `serkit bench`'s notes folder, if any."""
    folder = os.environ.get(NOTES_ENV, "").strip()
    return Path(folder) if folder else None


# A probe of the machine's state between rounds: the median of this many readings (about
# 10 ms), which one interrupt cannot move.
PROBE_READINGS = 400


def probe_ns() -> float:
    """The machine's speed now, as the canary's median reading in this process (ns)."""
    readings = sorted(canary_ns() for _ in range(PROBE_READINGS))
    return float(readings[len(readings) // 2])
