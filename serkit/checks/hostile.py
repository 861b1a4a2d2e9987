"""Hostile input: what each codec's `loads` does with truncated, bit-flipped and random bytes.

The payloads are decoded only inside a worker subprocess, one codec per worker
(``python -m serkit.checks.hostile``); the process that runs ``serkit fidelity`` never decodes
them. The parent watches each worker: a payload that gets no answer within the
per-payload timeout is a *hang* (the worker is killed), a worker that dies is a *crash*
(its signal is recorded). Either way a fresh worker carries on at the next payload, so a
crash never stops the run.

Every payload is reproducible from (codec, seed, index) alone: the worker rebuilds the
valid payloads it mutates from serkit's own documents, and a hostile run of one payload
is ``python -m serkit.checks.hostile --codec ID --seed S --start I --stop I+1``.

The worker is a sandbox, not a jail. Before it decodes anything untrusted it caps its
memory and core dumps, and installs an audit hook that refuses two things: a pickle
global that its own valid payloads did not use (so pickle cannot call os.system or any
other callable a mutated payload names), and operations that reach outside the process
(spawning processes, writing or deleting files, opening sockets). A refusal is recorded
as the outcome *blocked*.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from serkit.checks.workers import (
    EOF,
    ERROR,
    Worker,
    bind_in_worker,
    class_name,
    limit_resources,
)
from serkit.errors import DecodeError, SerkitError

# What a worker can report of one payload, and what the parent adds.
EXCEPTION = "exception"  # loads raised: the clean outcome
VALUE = "value"  # loads returned something; for mutated bytes that is not necessarily wrong
BLOCKED = "blocked"  # the sandbox refused what loads tried to do
HANG = "hang"  # no answer within the per-payload timeout
CRASH = "crash"  # the worker process died
OUTCOMES = (EXCEPTION, VALUE, BLOCKED, HANG, CRASH)

# How each payload is made, in turn by index.
MUTATIONS = ("truncated", "bit-flipped", "random")

# Statuses of a whole codec's run.
FED = "fed"

DEFAULT_SEED = 0
DEFAULT_COUNT = 3000
DEFAULT_PAYLOAD_TIMEOUT = 5.0  # seconds; the slowest decode measured here took 0.14 s
# Seconds per codec, so that a codec that hangs or crashes often cannot stall the run: with
# 18 codecs two at a time, the whole run ends within 9 x 12 s. Measured here it takes ~6 s.
DEFAULT_BUDGET = 12.0
STARTUP_TIMEOUT = 60.0  # a worker imports its library and encodes its seeds first
SEED_MAX_BYTES = 4096  # larger payloads make a pure-Python decoder the whole run's bottleneck
RANDOM_MAX_BYTES = 256
WORKER_MEMORY_BYTES = 2 << 30  # a payload that claims a huge length gets MemoryError, not swap


@dataclass(frozen=True)
class Incident:
    """A hang or a crash: the payload that caused it, and how it ended."""

    outcome: str  # HANG or CRASH
    index: int
    mutation: str
    how: str  # the signal, the exit status, or the timeout


@dataclass
class HostileResult:
    """One codec's hostile run."""

    codec: str
    status: str  # FED, NOT_INSTALLED or ERROR
    seed: int
    requested: int
    fed: int = 0
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    exception_classes: dict[str, int] = field(default_factory=dict)  # the library's own
    blocked: dict[str, int] = field(default_factory=dict)  # audit events the sandbox refused
    incidents: list[Incident] = field(default_factory=list)
    detail: str = ""  # why the run stopped early or could not start

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- payloads ----------------------------------------------------------------------------


def seed_payloads(codec: Any) -> list[bytes]:
    """Valid payloads to mutate: the codec's encoding of each small fixture and probe."""
    from serkit.checks.fidelity import (
        load_document,  # deferred: the worker needs it, importers may not
    )
    from serkit.inputs.probes import probe_names

    payloads = []
    for name in ("small-dict", "sensor-record", *probe_names()):
        try:
            document = load_document(name)
            # A schema codec (bound in the worker to small-dict's schema) encodes the
            # documents of that schema only, as its typed objects; the rest seed nothing.
            payload = codec.dumps(codec.to_typed(document) if codec.needs_schema else document)
        except SerkitError:  # a document this codec refuses seeds nothing
            continue
        except Exception:  # a document a schema codec's types cannot hold
            continue
        if 0 < len(payload) <= SEED_MAX_BYTES:
            payloads.append(payload)
    return payloads


def mutation_of(index: int, seeded: bool) -> str:
    """How payload `index` is made: in turn by index, or at random when nothing seeds it."""
    return MUTATIONS[index % len(MUTATIONS)] if seeded else "random"


def hostile_payload(seeds: Sequence[bytes], codec: str, seed: int, index: int) -> tuple[str, bytes]:
    """Payload `index` of a run: (how it was made, its bytes). The same on every machine."""
    rng = random.Random(f"serkit-hostile:{codec}:{seed}:{index}")  # str seeds are stable
    mutation = mutation_of(index, bool(seeds))
    if mutation == "random":
        return mutation, rng.randbytes(rng.randint(0, RANDOM_MAX_BYTES))
    base = seeds[rng.randrange(len(seeds))]
    if mutation == "truncated":
        return mutation, base[: rng.randrange(len(base))]
    flipped = bytearray(base)
    for _ in range(rng.randint(1, 8)):
        bit = rng.randrange(len(flipped) * 8)
        flipped[bit // 8] ^= 1 << (bit % 8)
    return mutation, bytes(flipped)


# --- the worker --------------------------------------------------------------------------


class Blocked(Exception):
    """The sandbox refused an operation that a payload made `loads` attempt."""


# Audit events that act outside the worker process.
_OUTSIDE_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "subprocess.Popen",
        "os.kill",
        "os.killpg",
        "os.remove",
        "os.rmdir",
        "os.rename",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.symlink",
        "os.mkdir",
        "shutil.rmtree",
        "shutil.move",
        "shutil.copyfile",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "urllib.Request",
        "webbrowser.open",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class _Sandbox:
    """An audit hook that learns the pickle globals of valid payloads, then guards."""

    def __init__(self) -> None:
        self.allowed_globals: set[tuple[str, str]] = set()
        self.guarding = False

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "pickle.find_class":
            if not self.guarding:
                self.allowed_globals.add((args[0], args[1]))
            elif (args[0], args[1]) not in self.allowed_globals:
                raise Blocked(event)  # the name itself is mostly mutated noise
        elif not self.guarding:
            return
        elif event in _OUTSIDE_EVENTS:
            raise Blocked(event)
        elif event == "open" and _opens_for_writing(args[1], args[2]):
            raise Blocked("open for writing")


def _opens_for_writing(mode: str | None, flags: int | None) -> bool:
    return bool((flags or 0) & _WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")


def _decodes(codec: Any, payload: bytes) -> bool:
    try:
        codec.loads(payload)
    except SerkitError:
        return False
    return True


def run_worker(codec_name: str, seed: int, start: int, stop: int, out: TextIO) -> int:
    """Decode payloads start..stop-1 with one codec, one result line each, in this process."""
    sys.dont_write_bytecode = True  # a lazy import must not need to write a file
    limit_resources(WORKER_MEMORY_BYTES)
    sandbox = _Sandbox()
    sys.addaudithook(sandbox.hook)
    codec = bind_in_worker(codec_name, out)
    if codec is None:
        return 0
    # Our own bytes, so trusted: decoding them teaches the sandbox the pickle globals
    # that valid payloads use, and imports what a decoder imports lazily.
    seeds = [payload for payload in seed_payloads(codec) if _decodes(codec, payload)]
    sandbox.guarding = True
    out.write(f"ready\t{len(seeds)}\n")
    out.flush()
    for index in range(start, stop):
        _, payload = hostile_payload(seeds, codec_name, seed, index)
        try:
            value = codec.loads(payload)
        except Exception as exc:
            # DecodeError is serkit's wrapper: the library's own error is its cause.
            cause = exc.__cause__ if isinstance(exc, DecodeError) and exc.__cause__ else exc
            if isinstance(cause, Blocked):
                outcome, detail = BLOCKED, str(cause)
            else:
                outcome, detail = EXCEPTION, class_name(cause)
        else:
            outcome, detail = VALUE, type(value).__name__
        out.write(f"{index}\t{outcome}\t{detail}\n")
        out.flush()
    return 0


# --- the parent --------------------------------------------------------------------------


def run_codec(
    codec: str,
    *,
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    payload_timeout: float = DEFAULT_PAYLOAD_TIMEOUT,
    budget: float = DEFAULT_BUDGET,
) -> HostileResult:
    """Feed `count` hostile payloads to one codec, in workers, within `budget` seconds."""
    result = HostileResult(codec, FED, seed, count)
    started = time.monotonic()
    deadline = started + budget
    tally = _Tally(result)
    index = 0
    with tempfile.TemporaryDirectory(prefix="serkit-hostile-") as scratch:
        while index < count and result.status == FED:
            if time.monotonic() >= deadline:
                result.detail = f"stopped by the {budget:g} s time budget"
                break
            args = ["--codec", codec, "--seed", str(seed), "--start", str(index)]
            args += ["--stop", str(count)]
            worker = Worker("serkit.checks.hostile", args, Path(scratch), str(index))
            try:
                index = _feed(worker, index, count, deadline, payload_timeout, tally)
            finally:
                worker.end()
    tally.close()
    result.seconds = round(time.monotonic() - started, 2)
    return result


class _Tally:
    """Adds one codec's outcomes up, payload by payload."""

    def __init__(self, result: HostileResult) -> None:
        self.result = result
        self.exceptions: Counter[str] = Counter()
        self.blocked: Counter[str] = Counter()

    def add(self, outcome: str, detail: str = "") -> None:
        self.result.outcomes[outcome] += 1
        if outcome == EXCEPTION:
            self.exceptions[detail] += 1
        elif outcome == BLOCKED:
            self.blocked[detail] += 1

    def incident(self, outcome: str, index: int, seeded: bool, how: str) -> None:
        self.add(outcome)
        self.result.incidents.append(Incident(outcome, index, mutation_of(index, seeded), how))

    def fail(self, status: str, detail: str) -> None:
        self.result.status, self.result.detail = status, detail

    def close(self) -> None:
        self.result.fed = sum(self.result.outcomes.values())
        self.result.exception_classes = dict(self.exceptions.most_common())
        self.result.blocked = dict(self.blocked.most_common())


def _feed(
    worker: Worker, index: int, count: int, deadline: float, timeout: float, tally: _Tally
) -> int:
    """Read one worker's results from payload `index` on; return the next index to feed."""
    try:
        first = worker.next_line(STARTUP_TIMEOUT)
    except queue.Empty:
        first = EOF
    if first is not None and first.startswith("unavailable\t"):
        _, status, detail = first.split("\t", 2)
        tally.fail(status, detail)
        return index
    if first is None or not first.startswith("ready\t"):
        tally.fail(ERROR, f"worker failed to start ({worker.end()}): {worker.stderr_tail()}")
        return index
    seeded = int(first.split("\t")[1]) > 0
    while index < count and time.monotonic() < deadline:
        try:
            line = worker.next_line(timeout)
        except queue.Empty:
            worker.end()
            tally.incident(HANG, index, seeded, f"no answer in {timeout:g} s")
            return index + 1
        if line is None:
            tally.incident(CRASH, index, seeded, worker.end())
            return index + 1
        reported, outcome, detail = line.split("\t", 2)
        if int(reported) != index or outcome not in (EXCEPTION, VALUE, BLOCKED):
            tally.fail(ERROR, f"worker out of step at payload {index}: {line[:100]!r}")
            return index
        tally.add(outcome, detail)
        index += 1
    return index


def run_hostile(
    codecs: Iterable[str],
    *,
    seed: int = DEFAULT_SEED,
    count: int = DEFAULT_COUNT,
    payload_timeout: float = DEFAULT_PAYLOAD_TIMEOUT,
    budget: float = DEFAULT_BUDGET,
    jobs: int | None = None,
    done: Callable[[HostileResult], None] | None = None,
) -> dict[str, HostileResult]:
    """Run every codec's hostile run, `jobs` workers at a time (default: one per CPU)."""
    names = list(codecs)
    results: dict[str, HostileResult] = {}

    def one(name: str) -> HostileResult:
        result = run_codec(
            name, seed=seed, count=count, payload_timeout=payload_timeout, budget=budget
        )
        if done is not None:
            done(result)
        return result

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        for name, result in zip(names, pool.map(one, names)):
            results[name] = result
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """The worker's command line. Not for people: `serkit fidelity --hostile` runs it."""
    parser = argparse.ArgumentParser(
        prog="python -m serkit.checks.hostile",
        description="Decode hostile payloads start..stop-1 with one codec, in this process.",
    )
    parser.add_argument("--codec", required=True)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int, default=DEFAULT_COUNT)
    args = parser.parse_args(argv)
    return run_worker(args.codec, args.seed, args.start, args.stop, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
