"""Memory of one dumps and one loads per pair, measured at the allocator in a fresh interpreter.

A new interpreter prepares the pair, then measures one warm call of each operation with
memray (see serkit.suite.allocations): the peak of bytes the call allocated and held at
once, and how many allocations it made. Each peak comes with a check:

- a dumps call holds its own output, so its peak is at least the encoded size;
- a loads call holds the object it returns, so its peak is at least that object's size
  as tracemalloc sees it (what the call allocated and left live), less LOADS_TOLERANCE.

A pair below its floor was measured wrongly, and the benchmarks record that beside it.

This replaces a resident-set view (how far VmRSS rose during the call), which answered
no useful question: the call reused pages that preparing the pair had made resident,
and read 0 B for a dumps that returns megabytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Union

from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.suite.allocations import TrackerUnavailable, measure_call, unavailable
from serkit.suite.cases import SLOW_ENV, truthy
from serkit.suite.preparation import Case, prepare

OPERATIONS = ("dumps", "loads")
# memray and tracemalloc see the same Python allocations, and memray sees more, so a loads
# peak below the decoded size is a measuring error. The tolerance covers what one call
# fills and the other finds filled (caches, interned keys). Measured over 334 loads here,
# the lowest ratio of peak to decoded size was 0.9999 (docs/memory.md).
LOADS_TOLERANCE = 0.02
TIMEOUT_S = 1800
# Counting the frames, tracking the call and reading the capture took 15 to 25 times
# the call itself (json, orjson, yaml-c on random-dicts-1000). A longer call than this
# is measured only when the slow part of the suite is asked for.
CALL_LIMIT_S = 1.0
COST_FACTOR = 20


@dataclass(frozen=True)
class PairMemory:
    """One operation of one (codec, fixture) pair, measured at the allocator."""

    codec: str
    fixture: str
    operation: str
    peak_bytes: int
    allocations: int
    floor_bytes: int  # dumps: the encoded size; loads: the decoded object's size
    problem: str | None  # why the figures are suspect, or None when they pass

    @property
    def sane(self) -> bool:
        return self.problem is None


# Per operation: its measurement, or why it was not measured.
Outcome = dict[str, Union[PairMemory, str]]


def floor_problem(operation: str, peak_bytes: int, floor_bytes: int) -> str | None:
    """Why `peak_bytes` cannot be right for `operation`, or None when it can."""
    if operation == "dumps" and peak_bytes < floor_bytes:
        return f"dumps peak {peak_bytes:,} B is below the encoded size, {floor_bytes:,} B"
    if operation == "loads" and peak_bytes < floor_bytes * (1 - LOADS_TOLERANCE):
        return (
            f"loads peak {peak_bytes:,} B is below the decoded object's {floor_bytes:,} B "
            f"(tracemalloc) less {LOADS_TOLERANCE:.0%}"
        )
    return None


def retained_bytes(call: Callable[[], object]) -> int:
    """Bytes that one call allocates and leaves live with its result, as tracemalloc sees it:
    the lesser of two calls. A call can grow a table the whole interpreter shares (a dict
    that resizes when it crosses its fill limit): once, by chance of how full it was. One
    msgpack loads of small-dict left 969,518 B that way in one process and 8,302 B in
    the next, a floor the call's own peak could never reach."""
    return min(_retained_once(call) for _ in range(2))


def _retained_once(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        result = call()
        retained, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return retained


def call_limit_s(environ: Mapping[str, str] = os.environ) -> float | None:
    """The longest call measured in this run, in seconds; None (no limit) with SERKIT_BENCH_SLOW."""
    return None if truthy(environ.get(SLOW_ENV)) else CALL_LIMIT_S


def measure_case(case: Case, operation: str, limit_s: float | None = None) -> PairMemory | str:
    """One operation of a prepared pair, in this process; or why it is not measured."""
    first = case.first_call_s(operation)
    if first is None:
        return "its payload was not proven to decode"
    if limit_s is not None and first > limit_s:
        return _too_long(first, operation)
    # The codec's own callable, with no Python frame of serkit's around it.
    if operation == "dumps":
        call: Callable[[], object] = partial(case.config.dumps, case.obj)
    else:
        call = partial(case.config.loads, case.payload)
    floor = len(case.payload) if operation == "dumps" else retained_bytes(call)
    measured = measure_call(call)
    problem = floor_problem(operation, measured.peak_bytes, floor)
    return PairMemory(
        case.codec,
        case.fixture,
        operation,
        measured.peak_bytes,
        measured.allocations,
        floor,
        problem,
    )


def measure_pair_here(
    codec: str,
    fixture: str,
    limit_s: float | None = None,
    operations: tuple[str, ...] = OPERATIONS,
) -> Outcome:
    """Both operations of the pair, in this process (a fresh one: see measure_pair).

    One process serves both: at the allocator, what the dumps left behind does not change
    what the loads allocates (resident memory would reuse its pages). A dumps longer
    than `limit_s` skips both, before any decoding: the loads is as long or longer
    (pure-Python YAML: twice).
    """
    try:
        case = prepare(codec, fixture, decode=False)
    except SerkitError as exc:  # not installed, or refuses the fixture
        return {operation: str(exc) for operation in operations}
    if limit_s is not None and case.dumps_s > limit_s:
        return {operation: _too_long(case.dumps_s, "dumps") for operation in operations}
    cannot_decode = None
    if "loads" in operations:
        try:
            case = prepare(codec, fixture, decode=True)
        except SerkitError as exc:  # it encodes, and only decoding fails
            cannot_decode = str(exc)
    return {
        operation: (operation == "loads" and cannot_decode)
        or measure_case(case, operation, limit_s)
        for operation in operations
    }


def _too_long(seconds: float, operation: str) -> str:
    return (
        f"one {operation} takes {seconds:.2f} s, and tracking it about {COST_FACTOR} times "
        f"that: set {SLOW_ENV}=1 to measure it"
    )


# Memory per call costs about 5 minutes for the default grid here (its cost follows the
# number of allocations, not the call's time), more than the whole quick run: so full
# runs measure it, and a quick run only when asked (`serkit bench --memory`).
MEMORY_ENV = "SERKIT_BENCH_MEMORY"


def not_selected(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why this run leaves memory out, or None when it measures it."""
    if truthy(environ.get(MEMORY_ENV)):
        return None
    return (
        f"memory per call is measured in full runs (serkit bench --full) or with --memory "
        f"({MEMORY_ENV}=1): about 5 minutes for the default grid"
    )


def measure_pair(codec: str, fixture: str, timeout: float = TIMEOUT_S) -> Outcome:
    """Both operations of the pair, measured in a new process forked from this one.

    Forked, not started: it has the imports and the fixtures this process built, and
    saves an interpreter's start and the Senate source's parse per pair (0.7 to 4 s
    here). Nothing of this process's own allocations is counted: only the call's.
    Raises TrackerUnavailable where memray cannot measure.
    """
    reason = unavailable()
    if reason is not None:
        raise TrackerUnavailable(reason)
    cached = _cache_file(codec, fixture)
    if cached is not None and cached.exists():
        return _outcome(cached.read_text())
    limit = call_limit_s()
    text = _in_child(lambda: _dumps(measure_pair_here(codec, fixture, limit)), timeout)
    if text is None:
        raise RuntimeError(f"memory run of {codec} on {fixture} failed (its error is above)")
    if cached is not None:
        _write_atomically(cached, text)
    return _outcome(text)


def _in_child(work: Callable[[], str], timeout: float) -> str | None:
    """Run `work` in a forked child and return what it returned; None if it failed."""
    sys.stdout.flush()
    sys.stderr.flush()
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child ends in os._exit; coverage never sees it)
        status = 1
        try:
            os.close(readable)
            with os.fdopen(writable, "wb") as out:
                out.write(work().encode())
            status = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(status)
    os.close(writable)
    received = bytearray()
    deadline = time.monotonic() + timeout
    with os.fdopen(readable, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                raise TimeoutError(f"memory run took over {timeout:.0f} s")
            chunk = pipe.read(65536)
            if not chunk:
                break
            received += chunk
    _, status = os.waitpid(child, 0)
    return received.decode() if status == 0 else None


def _dumps(outcome: Outcome) -> str:
    return json.dumps({op: v if isinstance(v, str) else asdict(v) for op, v in outcome.items()})


def _outcome(text: str) -> Outcome:
    data = json.loads(text)
    return {op: v if isinstance(v, str) else PairMemory(**v) for op, v in data.items()}


# asv runs every track in a process of its own, forked from one server per environment
# and commit: the peak, the allocations and the check of one call are separate tracks.
# They share one measurement through files named for that server, so a new run measures
# again. Only under asv: anywhere else each call measures afresh.
_CACHE_ROOT = Path(tempfile.gettempdir()) / "serkit-memory"


def _cache_file(codec: str, fixture: str) -> Path | None:
    if os.environ.get("ASV") != "true":
        return None
    server = os.getppid()
    key = f"{server} {sys.executable} {os.environ.get('ASV_COMMIT', '')} {call_limit_s()}"
    folder = _CACHE_ROOT / f"{server}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    return folder / f"{codec}--{fixture}.json"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _forget_finished_runs(path.parent)
    atomic_write(path, text, sync=False)  # in a timed run: whole, not durable


def _forget_finished_runs(current: Path) -> None:
    """Delete the measurements kept for asv servers that have exited."""
    for folder in current.parent.iterdir():
        server = folder.name.split("-", 1)[0]
        if folder == current or not server.isdigit() or _running(int(server)):
            continue
        for file in folder.iterdir():
            file.unlink(missing_ok=True)
        folder.rmdir()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, and someone else's
        return True
    return True


# By hand, in a fresh interpreter: python -m serkit.suite.memory CODEC FIXTURE [OPERATION]
if __name__ == "__main__":
    chosen = tuple(sys.argv[3:4]) or OPERATIONS
    print(_dumps(measure_pair_here(sys.argv[1], sys.argv[2], call_limit_s(), chosen)))
