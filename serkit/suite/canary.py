"""A canary timed beside every sample: which speed the machine was in when it was taken.

This VM, like the CI runners and laptops serkit runs on, has two speeds: for stretches of
seconds to minutes every process runs about 1.8x slower, and neither the load average nor
steal time shows it (docs/trust.md, "Two speeds"). A fixed pure-Python loop timed right
before and right after a sample slows with it: one process timing json.dumps and this
loop in turn read the two within a few per cent of a fixed ratio whenever both were taken
in one state. So each sample keeps the two canary readings taken around it, and the
readers (serkit.sample_speed) judge each sample's state from them.

A second canary reads memory: a few dozen cache lines in a fixed pseudo-random order over
a buffer twice the size of the last-level cache. The first canary stays in the L1 cache
and sees only the vCPU's share of a core; codecs walk and allocate memory, and on a shared
host they also slow when others take the cache and the memory bus, which the first canary
does not see (docs/trust.md, "A second canary, for memory"). So each sample keeps both.

The clock does it: asv calls a benchmark's `timer` exactly twice per timed sample (at
its start and its end, as timeit does), so the canary runs outside the timed interval,
and the body that asv times is the same as without it.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import secrets
import statistics
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from serkit.checkout import RESULTS_DIR, plain_notes_dir
from serkit.files import open_in_place
from serkit.suite.budget import NOTES_ENV

# About 20 µs on this VM in its fast state. The readings lie outside the timed interval,
# but inside asv's wall clock: hence serkit, not asv, sizes a sample (serkit.suite.cases).
CANARY_LOOPS = 400
# One timed process's note, a file of its own in its environment's notes folder (not
# `*.json`: the folder also holds serkit.suite.budget's notes). asv tears a process's benchmark
# down before each of its samples but the first, and again after the last, and only the
# last is its whole: so each teardown rewrites the process's note. Before 2026-11-27 every
# teardown appended a line to one CANARY_NOTES file, which readers still take: a quick
# run's results file held 26 notes a process: 34.5 MB, where one a process took 2.2 MB.
PROCESS_NOTES = "canary-*.note"
CANARY_NOTES = "canary.jsonl"
_note_names: dict[int, str] = {}  # this process's note, by pid (a forked child makes its own)
# Its note kept open, by pid and folder, with the length last written: rewriting it in place
# took 0.1 ms here, where opening it anew at each of a process's 25 teardowns took 0.36 ms
# a time: a short pair's process sampled in 40-50 ms before, 36-39 ms since (docs/trust.md).
_open_notes: dict[tuple[int, str], tuple[int, int]] = {}


# The memory canary: MEMORY_READS reads (about 40 µs here, nearly all of it misses), spread
# over MEMORY_BUFFER_BYTES, twice this VM's 32 MiB last-level cache so that a read rarely
# finds its line there. Few lines, so the canary barely disturbs what the sample caches.
MEMORY_READS = 64
MEMORY_BUFFER_BYTES = 64 << 20
_LINE = 64
_memory: list[object] = []  # [buffer, position]: made once a process, by `prepare_memory`


def prepare_memory() -> None:
    """Make the memory canary's buffer, written so that every page is its own (an unwritten
    page reads the kernel's one zero page, which stays cached). Made at import of the suite
    under `serkit bench`, in asv's server process, so the benchmark processes it forks share
    it rather than each writing 64 MiB."""
    if not _memory:
        _memory.extend([bytearray(b"\x01") * MEMORY_BUFFER_BYTES, 12345])


def memory_canary_ns() -> int:
    """One reading of the memory canary in nanoseconds; each reading reads new lines."""
    prepare_memory()
    buffer, position = _memory
    assert isinstance(buffer, bytearray) and isinstance(position, int)
    lines = MEMORY_BUFFER_BYTES // _LINE
    clock = time.perf_counter_ns
    start = clock()
    total = 0
    for _ in range(MEMORY_READS):
        position = (position * 1103515245 + 12345) & 0x7FFFFFFF  # a fixed LCG: no index list
        total += buffer[(position % lines) * _LINE]
    elapsed = clock() - start
    _memory[1] = position
    return elapsed


def canary_ns(clock: Callable[[], int] = time.perf_counter_ns) -> int:
    """One reading of the canary: a fixed loop of integer arithmetic, in nanoseconds (of
    `clock`: `serkit try` reads its thread's CPU time)."""
    start = clock()
    total = 0
    for i in range(CANARY_LOOPS):
        total += i * i % 7
    return clock() - start


def spin(loops: int) -> int:
    """The canary's arithmetic, `loops` times: work that slows with the machine's state as
    the canary does, in any amount (an injected share of a call, `Extra`). In runs of the
    canary's own length, so that its integers stay as small as the canary's."""
    total = 0
    whole, rest = divmod(loops, CANARY_LOOPS)
    for length in itertools.chain(itertools.repeat(CANARY_LOOPS, whole), (rest,)):
        for i in range(length):
            total += i * i % 7
    return total


def spin_ns(loops: int) -> int:
    """How long `spin(loops)` took, in nanoseconds."""
    clock = time.perf_counter_ns
    start = clock()
    spin(loops)
    return clock() - start


def spin_loops_for(
    share: float,
    call_ns: Callable[[], float],
    readings: int,
    canary: Callable[[], int] = canary_ns,
    timed_spin: Callable[[int], int] = spin_ns,
) -> int:
    """Loops of `spin` that last `share` of one call (`call_ns` times a sample's calls, in
    ns a call).

    A spin sized by the canary to last one call is timed in turn with the calls, `readings`
    times, and the median of the calls' ratios to it sizes the share. The two span the
    same time, so where the state changes within a long call it slows both alike, and a
    pair of readings taken in two states is outvoted (a 20 µs canary would catch a fast
    spell that a 10 ms call did not).
    """
    if share <= 0:
        return 0
    per_loop_ns = min(canary() for _ in range(3)) / CANARY_LOOPS
    one_call = max(1, round(call_ns() / per_loop_ns))
    ratios = [call_ns() / max(1, timed_spin(one_call)) for _ in range(readings)]
    return max(1, round(share * one_call * statistics.median(ratios)))


@dataclass(frozen=True)
class Extra:
    """Work a sample does beyond its bodies' and its timer does not count: an injected
    slowdown (serkit.suite.cases.INJECT_ENV), done after the sample's calls, right before
    its end is read, so that they follow the warm call as a plain sample's do. Whole calls
    of the pair, then `spin_loops` of the canary's arithmetic for the part of a call that
    whole calls cannot make, so that the sample keeps the plain run's calls."""

    call: Callable[[], object]
    calls: int
    spin_loops: int = 0

    def make(self) -> None:
        call = self.call
        for _ in itertools.repeat(None, self.calls):
            call()
        if self.spin_loops:
            spin(self.spin_loops)


# What a timed process runs around its canary readings under `serkit bench`, by version.
# A change there moves the canary's own reading, as a change of the machine would: the
# sample gate of 2026-11-28 made runs read their fast canary 2.7 % slower, and runs
# without a warm-up read it 3 % faster (docs/trust.md). A host's runs are judged against
# one fast canary read from all of them (serkit.sample_speed.reference), so only runs that
# record one harness are read as one host's (serkit.results.identity.speed_host). Runs recorded
# before it have none: they are read together, apart from every later one.
# 1: the gate (under 1.4x the host's least probe, ten readings in a row), a warm call
#    before each sample, and the warm-up made of the pair's calls while preparing it.
# 2: no gate; each sample placed on the vCPU whose canary read faster (a reading or two
#    more where the first read slow).
CANARY_HARNESS = 2


# The canary's fast reading on serkit's VM (2 vCPUs, docs/trust.md), in ns, by CPython
# version: the least of 60 probes each, 2026-11-27. The pure-Python loop runs 1.4x apart
# across these Pythons where C codecs do not, so each is scaled by its own.
REFERENCE_CANARY_NS = {
    (3, 9): 26_900.0,
    (3, 10): 25_000.0,
    (3, 11): 19_400.0,
    (3, 12): 25_200.0,
    (3, 13): 27_000.0,
}
# Readings the budget's check takes (serkit.suite.budget): about 0.1 ms in all.
SCALE_READINGS = 5


def reference_canary_ns(version: tuple[int, int] | None = None) -> float | None:
    """REFERENCE_CANARY_NS for `version` (default: this Python), else for the nearest
    version measured; None on another implementation than CPython (PyPy compiles the
    canary's loop), whose predictions stay in its own seconds."""
    if version is None and platform.python_implementation() != "CPython":
        return None
    major, minor = version or sys.version_info[:2]
    known = min(REFERENCE_CANARY_NS, key=lambda v: abs(v[0] - major) * 100 + abs(v[1] - minor))
    return REFERENCE_CANARY_NS[known]


def reference_scale(
    canary: Callable[[], float] = canary_ns, readings: int = SCALE_READINGS
) -> float:
    """What seconds measured now, at the machine's present speed, are multiplied by to be
    seconds at serkit's reference speed: the reference reading over the median of
    `readings` canary readings taken now; 1.0 where there is no reference (not CPython).
    The slow state lasts seconds to minutes, so readings right after a measurement of a
    few milliseconds share its state."""
    reference = reference_canary_ns()
    if reference is None:
        return 1.0
    return reference / statistics.median(canary() for _ in range(readings))


class CanaryClock:
    """asv's `timer` for a timed pair: seconds per call (the clock over `inner_loops`, as
    serkit.suite.case_benchmark.per_call_timer reads it), with the canary timed right before each
    sample starts and right after it ends.

    Keeps the last `keep` samples' intervals, exactly as asv computes them, and their
    canary readings: asv's own samples are the last timeit calls of a process.
    """

    def __init__(
        self,
        inner_loops: int,
        keep: int,
        warm: Callable[[], object] | None = None,
        extra: Extra | None = None,
        place: Callable[[], object] | None = None,
    ) -> None:
        self._inner_loops = inner_loops
        self._warm = warm  # one call, untimed, between the canaries and the sample
        self._extra = extra
        # Moves the process, before the canaries, to the vCPU that reads faster now
        # (serkit.suite.state_watch)
        self._place = place
        self._started: tuple[float, int, int] | None = None
        # Each sample: its interval, the canary before and after, the memory canary before
        # and after.
        self.kept: deque[tuple[float, int, int, int, int]] = deque(maxlen=keep)

    def __call__(self) -> float:
        clock, loops = time.perf_counter, self._inner_loops
        if self._started is None:
            if self._place is not None:
                self._place()
            memory_before = memory_canary_ns()
            before = canary_ns()  # the first canary nearest the sample, as before
            if self._warm is not None:
                self._warm()
            start = clock() / loops
            self._started = (start, before, memory_before)
            return start
        if self._extra is not None:
            self._extra.make()
        end = clock() / loops
        after = canary_ns()
        memory_after = memory_canary_ns()
        start, before, memory_before = self._started
        self._started = None
        self.kept.append((end - start, before, after, memory_before, memory_after))
        return end


def _note_name() -> str:
    """This process's note: its pid and a random tag, since pids are reused within a run."""
    pid = os.getpid()
    if pid not in _note_names:
        _note_names.clear()
        _note_names[pid] = PROCESS_NOTES.replace("*", f"{pid}-{secrets.token_hex(4)}")
    return _note_names[pid]


def note_canary(folder: Path, benchmark: str, params: Sequence[str], clock: CanaryClock) -> None:
    """Write one process's samples and canary readings, as they stand, to its note in
    `folder` (one file a process, rewritten at each teardown; see PROCESS_NOTES).

    `benchmark` is asv's name (module.Class.method) and `params` asv's repr() strings, as
    the results file keys them; `t` holds each sample's interval before asv divides it by
    its `number`, which is how a reader finds the samples they belong to.
    """
    if not clock.kept:
        return
    line = {
        "benchmark": benchmark,
        "params": list(params),
        "t": [kept[0] for kept in clock.kept],
        "canary": [[kept[1], kept[2]] for kept in clock.kept],
        "memory": [[kept[3], kept[4]] for kept in clock.kept],
    }
    # Read only once asv has finished: a process cut short mid-write leaves a note no
    # reader can parse, and its samples are judged as before the canary.
    _rewrite_note(folder, json.dumps(line).encode())


def _rewrite_note(folder: Path, data: bytes) -> None:
    """This process's note in `folder`, made `data`: opened once, rewritten in place."""
    key = (os.getpid(), str(folder))
    if key not in _open_notes:
        folder.mkdir(parents=True, exist_ok=True)
        if not hasattr(os, "pwrite"):  # Windows: written anew each time
            (folder / _note_name()).write_bytes(data)
            return
        # A plain run's notes sit in the results tree: a link planted there is refused.
        _open_notes[key] = (open_in_place(folder / _note_name(), os.O_TRUNC), 0)
    fd, length = _open_notes[key]
    os.pwrite(fd, data, 0)
    if len(data) < length:
        os.ftruncate(fd, len(data))
    _open_notes[key] = (fd, len(data))


# What asv sets in every process it runs a benchmark in: the commit measured and the
# environment's name; and the results tree, which serkit's environment type adds
# (serkit.run.asv_env), else the checkout's (asv runs in its config's folder).
ASV_PROCESS_ENV = ("ASV_COMMIT", "ASV_ENV_NAME")
RESULTS_ENV = "ASV_SERKIT_RESULTS"


def notes_folder(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where this process notes its canary readings: `serkit bench`'s notes folder; under a
    plain `asv run`, its commit's and environment's folder in the checkout's results tree
    (serkit.checkout.plain_notes_dir), so that its samples keep their state there too; None
    outside asv.

    A benchmark process does not know asv's machine name, so two plain runs of one commit
    and environment under two machine names share the folder: each process writes a note
    of its own, and a reader takes only the notes whose intervals are its file's samples
    (serkit.results.canary.matched_notes), so the runs never mix."""
    folder = environ.get(NOTES_ENV, "").strip()
    if folder:
        return Path(folder)
    commit, env_name = (environ.get(name, "").strip() for name in ASV_PROCESS_ENV)
    results = environ.get(RESULTS_ENV, "").strip()
    if not results and environ.get("ASV_CONF_DIR"):
        results = str(Path(environ["ASV_CONF_DIR"]) / RESULTS_DIR)
    if not (results and commit and env_name):
        return None
    return plain_notes_dir(Path(results), commit, env_name)


# A probe of the machine's state between rounds: the median of this many readings (about
# 10 ms), which one interrupt cannot move.
PROBE_READINGS = 400


def probe_ns(readings: int = PROBE_READINGS, left_out: int = 0) -> float:
    """The machine's speed now, as the canary's median reading in this process (ns), over
    `readings` taken after `left_out` more."""
    for _ in range(left_out):
        canary_ns()
    taken = sorted(canary_ns() for _ in range(readings))
    return float(taken[len(taken) // 2])
