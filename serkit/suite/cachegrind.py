"""What runs under valgrind's cachegrind: one pair's calls, counted in forked processes.

Cachegrind reports a process's total at its exit, and valgrind 3.19 has no way to read
it earlier. So every count is a difference of totals. Starting Python under valgrind
costs about 2.5 s of CPU, so the processes are forked, not started: the worker forks a
process per codec, that one a process per pair, which prepares the pair with `prepare`
(whose round trip is each call's warm-up) and then forks one counting process per
measure. A forked process inherits its parent's total so far.

A counting process first forks a twin that exits at once, then makes its calls: the
difference of their totals is what the calls added, wherever that process stood. It
counts n calls and another counts 2n; the difference of the two is n calls and nothing
else: the fork, the loop's first rounds (the interpreter specialises them), the first
call after the fork are alike in both. Each counting process starts from a full garbage
collection, so the collector runs at the same calls in every run.

A first round counts one call of each operation; n is then the largest step of a fixed
ladder whose calls stay within TARGET_INSTRUCTIONS, so two runs pick the same n. A call
above the target is counted by that first round alone, less a process that makes no call
(the fork's own work is not alike in a process and its twin).

Cachegrind also simulates the caches (a fixed model, CACHE_MODEL, not the host's, so that
every host simulates the same caches), and each count carries an estimated cycle count
per call: callgrind's rule of thumb, also the kind of model CodSpeed's "CPU simulation"
runs on CI, cycles = Ir + 10 x (L1 misses) + 100 x (LL misses) (`estimated_cycles`).
Misses are differenced the same way as instructions: the n calls' share of them.

Under SERKIT_BENCH_INJECT (serkit.suite.cases.injected_from_env), the timed samples do
the work of e extra calls in every INJECTED_LOOPS (whole calls, and a spin timed to last
the part of a call they cannot make), and are divided as if they did none. The counts
add the same share by calls only: each pair is counted as before, and one more process
makes the calls of its last process and as many again as the pair counts; the difference
is what an extra call adds, and e of them over INJECTED_LOOPS are added to each call. So
the counts' +10 % is exactly 10 % of the call's own work, and each pair keeps its own way
of counting.

serkit.suite.instructions starts the worker and reads the results back.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import pickle
import re
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NoReturn

from serkit.errors import SerkitError
from serkit.files import atomic_write

OPERATIONS = ("dumps", "loads")

# n calls of one operation execute at most this many instructions (0.05-0.1 s under
# cachegrind; 2n more are made in all): enough that small calls average over the
# collector's runs.
TARGET_INSTRUCTIONS = 10_000_000
LADDER = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)

# The caches cachegrind simulates: size in bytes, associativity, line size. Fixed rather
# than read from the host (valgrind takes the LL from the host's L3, which on this VM
# reads as 256 MB direct-mapped): a simulated cycle count then depends on the code alone.
# The sizes are a common x86-64 core's: 32 KiB 8-way L1s, an 8 MiB 16-way last level.
CACHE_MODEL = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64")
# callgrind's estimate of a cycle count (valgrind's callgrind manual; the same shape as
# CodSpeed's CPU simulation): an L1 miss costs about 10 cycles, a last-level miss 100.
L1_MISS_CYCLES = 10
LL_MISS_CYCLES = 100
L1_MISSES = ("I1mr", "D1mr", "D1mw")
LL_MISSES = ("ILmr", "DLmr", "DLmw")

# in the worker's folder: {"groups" (pairs per group), "budget_s", "documents", "target"}
REQUEST = "request.json"
_EVENTS = re.compile(rb"^events:[ \t]*(.*)$", re.MULTILINE)
_SUMMARY = re.compile(rb"^summary:[ \t]*(.*)$", re.MULTILINE)

Call = tuple[Callable[[Any], Any], Any]  # function, argument


@dataclass(frozen=True)
class Count:
    """Instructions per call of one operation on one pair, and how many calls gave it."""

    per_call: float
    calls: int
    cycles: float | None = None  # estimated cycles per call; None: counted without cache-sim


@dataclass(frozen=True)
class PairCounts:
    """A pair's counts, or why it has none."""

    codec: str
    fixture: str
    counts: Mapping[str, Count]  # by operation; empty when skipped
    skipped: str | None = None
    seconds: float = 0.0  # wall time of the pair's process under valgrind

    def as_dict(self) -> dict[str, Any]:
        return {
            "codec": self.codec,
            "fixture": self.fixture,
            "counts": {op: [c.per_call, c.calls, c.cycles] for op, c in self.counts.items()},
            "skipped": self.skipped,
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairCounts:
        counts = {
            op: Count(float(v[0]), int(v[1]), None if len(v) < 3 or v[2] is None else float(v[2]))
            for op, v in data["counts"].items()
        }
        return cls(data["codec"], data["fixture"], counts, data["skipped"], data["seconds"])


def request_path(group: int, index: int) -> str:
    return f"pair-{group}-{index}.request"


def result_path(group: int, index: int) -> str:
    return f"pair-{group}-{index}.json"


def status_path(group: int, index: int) -> str:
    return f"status-{group}-{index}"


def worker_main() -> None:
    """Count every group of pairs of the request in the current folder: one forked process
    per group (a codec), which forks one per pair.

    Python starts once under valgrind (about 3 s of CPU) and adopts the documents once;
    each codec's process then starts from that same state, whichever codecs came before
    it. A codec's process takes every fixture of the grid, in the grid's order; a pair
    that is not counted still takes its turn and stops at once. So each pair's process
    starts where it did in any other run, whichever pairs were selected: the state it
    inherits (what its codec's process allocated before) moves some counts by up to 2 %.
    """
    request = json.loads(Path(REQUEST).read_text())
    groups, budget_s = list(request["groups"]), int(request["budget_s"])
    target = int(request.get("target", TARGET_INSTRUCTIONS))
    if request["documents"]:  # built natively: building them here would take 15 s
        from serkit.inputs.fixtures import adopt_built

        with open(request["documents"], "rb") as stream:
            for name, document in pickle.load(stream).items():
                adopt_built(name, document)
    for group in range(len(groups)):
        pid = os.fork()
        if pid == 0:
            _count_group(group, int(groups[group]), budget_s, target)
            os._exit(0)
        os.waitpid(pid, 0)
        with contextlib.suppress(FileNotFoundError):  # the group's process's own report
            os.unlink(f"cg.{pid}")


def _count_group(group: int, count: int, budget_s: int, target: int) -> None:
    for index in range(count):
        pid = os.fork()
        if pid == 0:
            signal.alarm(budget_s)
            _count_request(group, index, target)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            atomic_write(Path(status_path(group, index)), str(status), sync=False)
        with contextlib.suppress(FileNotFoundError):  # the pair's process's own report
            os.unlink(f"cg.{pid}")


def _count_request(group: int, index: int, target: int) -> NoReturn:
    start = time.perf_counter()
    codec, fixture, skipped = json.loads(Path(request_path(group, index)).read_text())
    try:
        if skipped is None:
            counted = count_here(codec, fixture, target)
        else:
            counted = PairCounts(codec, fixture, {}, skipped)
    except Exception as exc:  # a bug or a crashing codec: report it, go on
        counted = PairCounts(codec, fixture, {}, f"counting failed: {exc!r}")
    row = {**counted.as_dict(), "seconds": time.perf_counter() - start}
    atomic_write(Path(result_path(group, index)), json.dumps(row), sync=False)
    os._exit(0)


def count_here(codec: str, fixture: str, target: int = TARGET_INSTRUCTIONS) -> PairCounts:
    """Prepare the pair in this process and count its calls in forked ones."""
    # deferred: the driver never imports codecs
    from serkit.suite.cases import INJECTED_LOOPS, injected_from_env
    from serkit.suite.preparation import prepare

    try:
        case = prepare(codec, fixture)  # its round trip is each operation's first call
    except SerkitError as exc:
        return PairCounts(codec, fixture, {}, str(exc))
    calls: dict[str, Call] = {
        "dumps": (case.config.dumps, case.obj),
        "loads": (case.config.loads, case.payload),
    }
    return PairCounts(
        codec, fixture, count_calls(calls, target, (injected_from_env() or 0, INJECTED_LOOPS))
    )


def count_calls(
    calls: Mapping[str, Call],
    target: int = TARGET_INSTRUCTIONS,
    injected: tuple[int, int] = (0, 1),
) -> dict[str, Count]:
    """Instructions (and estimated cycles) per call of each `function(argument)`, counted
    in forked processes; with `injected` (e, loops), e extra calls in every `loops`, as the
    timed samples make them under SERKIT_BENCH_INJECT (the module).

    Must run under cachegrind with `--cachegrind-out-file=cg.%p` in the current folder.
    """
    # One call, less what a counting process adds with no call at all: the fork's own
    # work differs between the process and its twin (Python's after-fork handlers run in
    # the twin), by some 20,000-60,000 instructions, which one call alone would carry.
    first = _added({f"{name} {m}": (*call, m) for name, call in calls.items() for m in (0, 1)})
    ones = {name: _less(first[f"{name} 1"], first[f"{name} 0"]) for name in calls}
    # n is chosen from the one call's raw difference, short by the fork's handlers, as it
    # always was: a call under about 60,000 instructions is repeated 2,000 times. The
    # collector's occasional full collections need that many: 200 calls of cbor2 dumps of
    # sensor-record read 2.2 % fewer instructions per call than 2,000 (docs/instructions.md).
    repeats = {name: calls_for(first[f"{name} 1"]["Ir"], target) for name in calls}
    # n calls and 2n calls start alike (the loop's first rounds, the first call after the
    # fork): their difference is n calls and nothing else. A call over the target is
    # counted once: what else its process adds is under 0.05 % of it.
    again = {name: n for name, n in repeats.items() if n > 1}
    plan = {f"{name} {m}": (*calls[name], m * n) for name, n in again.items() for m in (1, 2)}
    # Injected: a process that makes the last entry's calls and as many more as the pair
    # counts (n, or the e extra for a call counted once); their difference is what an
    # extra call adds, e of them spread over `loops` calls, as the timed bodies spread
    # them. Counted over only the e extra calls, the misses of two processes' totals
    # swamped them: +10 % read from -30 % to +56 % in estimated cycles (docs/instructions.md).
    # Each pair keeps its own n and way of counting.
    extra_calls, loops = injected
    more = {name: again.get(name, extra_calls) for name in calls}
    if extra_calls:
        last = {name: 2 * again[name] if name in again else 1 for name in calls}
        plan.update({f"{name} more": (*calls[name], last[name] + more[name]) for name in calls})
    added = _added(plan) if plan else {}
    per_call = dict(ones)
    for name, n in again.items():
        added_n = _less(added[f"{name} 2"], added[f"{name} 1"])
        per_call[name] = {event: value / n for event, value in added_n.items()}
    if extra_calls:
        for name in calls:
            base = added[f"{name} 2"] if name in again else first[f"{name} 1"]
            extra = _less(added[f"{name} more"], base)
            per_call[name] = {
                event: value + extra.get(event, 0.0) / more[name] * extra_calls / loops
                for event, value in per_call[name].items()
            }
    return {
        name: Count(per_call[name]["Ir"], repeats[name], estimated_cycles(per_call[name]))
        for name in calls
    }


def _less(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    return {event: after[event] - before.get(event, 0) for event in after}


def estimated_cycles(events: Mapping[str, float]) -> float | None:
    """callgrind's estimate: Ir + 10 x L1 misses + 100 x LL misses; None without cache-sim."""
    if not all(name in events for name in (*L1_MISSES, *LL_MISSES)):
        return None
    l1 = sum(events[name] for name in L1_MISSES)
    last_level = sum(events[name] for name in LL_MISSES)
    return events["Ir"] + L1_MISS_CYCLES * l1 + LL_MISS_CYCLES * last_level


def calls_for(one_call: float, target: int = TARGET_INSTRUCTIONS) -> int:
    """The largest n of the ladder whose calls stay within the target."""
    fitting = [n for n in LADDER if n * max(one_call, 1.0) <= target]
    return fitting[-1] if fitting else 1


def _added(
    plan: Mapping[str, tuple[Callable[[Any], Any], Any, int]],
) -> dict[str, dict[str, float]]:
    """The events (instructions, cache misses) that each entry's n calls add to a process,
    by entry and event.

    Each entry runs in a forked process that first forks a twin which stops at once: the
    difference of their totals is what the calls added, wherever the entry's process
    stands in the sequence.
    """
    read, write = os.pipe()
    entries = list(plan.values())
    pids = [0] * len(entries)  # no list growth between forks: every step is the same work
    for k in range(len(entries)):
        function, argument, n = entries[k]
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _count_in_child(function, argument, n, write)
        os.waitpid(pid, 0)
        pids[k] = pid
    os.close(write)
    with os.fdopen(read) as stream:  # each entry's twin, in the entries' order
        twins = [int(line) for line in stream.read().split()]
    out = {}
    for name, pid, twin in zip(plan, pids, twins):
        after, before = read_totals(Path(f"cg.{pid}")), read_totals(Path(f"cg.{twin}"))
        out[name] = {event: float(after[event] - before.get(event, 0)) for event in after}
    return out


def _count_in_child(function: Callable[[Any], Any], argument: Any, n: int, pipe: int) -> NoReturn:
    gc.collect()  # every entry's calls find the collector in the same state
    twin = os.fork()
    if twin == 0:
        os._exit(0)  # its total: this process's, up to the calls
    os.waitpid(twin, 0)
    _repeat(function, argument, n)
    os.write(pipe, b"%d\n" % twin)
    os._exit(0)


def _repeat(function: Callable[[Any], Any], argument: Any, n: int) -> None:
    # The loop of bench_time's timed bodies, so that counts and times cover the same calls.
    for _ in itertools.repeat(None, n):
        function(argument)


# cachegrind writes its `events:` line in a file's header and its `summary:` line last:
# only the ends are read. The whole of a file (1-1.5 MB for Python) read and searched under
# cachegrind itself took 0.2-0.3 s, most of a counting process's cost.
_HEAD_BYTES = 65536
_TAIL_BYTES = 4096


def read_totals(path: Path) -> dict[str, int]:
    """A process's totals by event (Ir, and with cache-sim I1mr ... DLmw), from its
    cachegrind output file (then removed)."""
    with path.open("rb") as stream:
        data = stream.read(_HEAD_BYTES)
        size = os.fstat(stream.fileno()).st_size
        if size > _HEAD_BYTES:
            stream.seek(max(_HEAD_BYTES, size - _TAIL_BYTES))
            data += b"\n" + stream.read()
    path.unlink()
    return parse_totals(data, str(path))


def parse_totals(data: bytes, source: str = "cachegrind output") -> dict[str, int]:
    """The `summary:` line of a cachegrind output file, by the names its `events:` line gives."""
    events, summary = _EVENTS.search(data), _SUMMARY.search(data)
    if events is None or summary is None:
        raise SerkitError(f"{source} has no cachegrind events and summary lines")
    names = events.group(1).decode().split()
    try:
        values = [int(value) for value in summary.group(1).split()]
    except ValueError:
        raise SerkitError(f"{source} has a summary line that is not counts") from None
    if "Ir" not in names or len(values) != len(names):
        given = f"{len(values)} counts for {len(names)} events"
        raise SerkitError(f"{source}: its summary line gives {given}")
    return dict(zip(names, values))
