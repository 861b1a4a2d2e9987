"""`serkit try`'s timed processes, each a new interpreter of its own.

Forked from `serkit try`'s process, every timed process of a run inherited that process's
heap, and so did every process of the run alike: a run could read a call 10-40 % apart
from the next run while its own processes agreed within a few percent, and the verdict
test, which sees only the processes of one run, was sure of a winner the next run did not
name. msgspec-msgpack's dumps of a 153 KiB JSON document read 53-77 µs over four runs of
eight forked processes each, 37-45 µs over four runs of new interpreters, interleaved
with them (2026-11-29). A new interpreter lays out its heap, its addresses and its hash
seed afresh, as pyperf's worker processes do for the same reason, so what differs from
run to run differs from process to process as well, where the test can see it.

Starting one costs about 0.1 s (its imports), against 10 ms to fork. CONCURRENT workers
start and prepare at once, then each times its samples in turn while the others wait,
idle: no worker prepares while another times. A worker takes each sample on the vCPU
whose canary reads faster just before it (`fastest_vcpu`).

The parent sends an Order (pickled by serkit's own process, through a pipe: never a
file's bytes); the worker prepares the pair, says it is ready, and times it when told to
go. Its samples come back as JSON, so the parent unpickles nothing a worker wrote.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from serkit.codecs.registry import Codec, bind_spec, builtin_specs, get_codec
from serkit.schemas.types import Schema
from serkit.suite.preparation import Case, settle_allocator
from serkit.suite.state_watch import Placement, placeable_cpus
from serkit.trial.sampling import Process, cpu_canary_ns, time_process

# Workers starting and preparing at once: two, as this VM and a CI runner have two vCPUs.
CONCURRENT = max(1, min(2, os.cpu_count() or 1))
_READY, _GO = b"r", b"g"


@dataclass(frozen=True)
class Order:
    """What a worker times: one codec's pair on the document, as `serkit try` prepared it."""

    codec: str
    version: str  # its library's, as the parent found it
    label: str
    config_index: int  # of the codec's configs, as bound to `schema`
    schema: Schema | None  # a schema codec's; None for one that needs none
    document: bytes  # the document, pickled once for every order
    payload: bytes
    numbers: Mapping[str, int]  # calls per sample, by operation
    inject: float = 0.0  # SERKIT_BENCH_INJECT's share of a call (sampling.time_process)

    def case(self) -> Case:
        """The pair, prepared here: a schema codec's typed objects built anew."""
        obj = pickle.loads(self.document)  # serkit's own pickle, sent by the parent
        codec, typed = self.codec_bound().for_document(self.label, obj, self.schema)
        config = codec.configs[self.config_index]
        return Case(self.codec, self.label, config, typed, self.payload, 0.0, 0.0, 0.0, bound=codec)

    def codec_bound(self) -> Codec:
        """The codec: a built-in one bound with the version it was given, without reading
        every installed package's metadata for plugins and versions (about 35 ms a
        process); a plugin's through the registry."""
        spec = next((spec for spec in builtin_specs() if spec.name == self.codec), None)
        return bind_spec(spec, self.version) if spec is not None else get_codec(self.codec)


def main() -> None:
    """In the worker: read the order, prepare, say ready, wait for go, time, answer."""
    settle_allocator()  # as every timing process of serkit's starts
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    order: Order | None = pickle.load(stdin)  # None: only what starting one costs
    case = order.case() if order is not None else None  # one that fails ends, not ready
    out.write(_READY)
    out.flush()
    if order is not None and case is not None and stdin.read(1) == _GO:
        placed = fastest_vcpu()
        place = placed.place if placed is not None else lambda: None
        taken = time_process(case, order.numbers, place=place, inject=order.inject)
        out.write(json.dumps(taken).encode())
    out.flush()
    # Its answer ends where its output does: gone now, without tearing down a heap that
    # holds the document (tens of ms on a megabyte), which the parent would wait out.
    os._exit(0)


def fastest_vcpu() -> Placement | None:
    """Each sample on the vCPU whose canary reads faster just before it, as `serkit
    bench`'s are placed (serkit.suite.state_watch), compared every time: `try` keeps no
    host probe to call one reading slow. None where the process cannot be pinned, or may
    run on one vCPU only."""
    cpus = placeable_cpus()
    return Placement(0.0, cpus, canary=cpu_canary_ns) if cpus else None


class _Worker:
    """One worker, its answers read on a thread so that every wait has a deadline."""

    def __init__(self, order: Order | None, limit_s: float) -> None:
        self.deadline = time.monotonic() + limit_s
        # The parent's own import path, so both import the same libraries; a session of
        # its own, so that a Ctrl-C reaches serkit alone, which ends its workers.
        boot = f"import sys; sys.path[:] = {sys.path!r}; from {__name__} import main; main()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", boot],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # what a library prints as it fails is not the user's
            start_new_session=True,
        )
        self.answers: queue.Queue[bytes] = queue.Queue()
        assert self.process.stdin is not None and self.process.stdout is not None
        stdin, stdout = self.process.stdin, self.process.stdout
        threading.Thread(target=_send, args=(stdin, pickle.dumps(order)), daemon=True).start()
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        with stdout:
            self.answers.put(stdout.read(1))  # b"" where it ended first
            self.answers.put(stdout.read())

    def _answer(self) -> bytes:
        try:
            return self.answers.get(timeout=max(0.0, self.deadline - time.monotonic()))
        except queue.Empty:
            return b""

    def ready(self) -> bool:
        return self._answer() == _READY

    def timed(self) -> Process | None:
        """Tell it to go; its samples, or None where it failed or ran out of time."""
        _send(self.process.stdin, _GO)
        answer = self._answer()
        if not answer:
            return None
        try:
            found = json.loads(answer)
            return {op: [tuple(reading) for reading in found[op]] for op in found}
        except (ValueError, TypeError):  # cut off as it was killed
            return None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _send(stream: IO[bytes] | None, data: bytes) -> None:
    try:
        assert stream is not None
        stream.write(data)
        stream.flush()
    except (BrokenPipeError, ValueError, OSError):  # the worker is gone: its reader says so
        pass


def take_processes(orders: Sequence[tuple[Order, float]]) -> list[tuple[Process | None, float]]:
    """Each order's timed process (None where it failed or outran its limit, seconds), in
    order, and what it cost: its share of the start-up it shared, and its own timing."""
    found: list[tuple[Process | None, float]] = []
    for at in range(0, len(orders), CONCURRENT):
        batch = orders[at : at + CONCURRENT]
        began = time.monotonic()
        workers = [_Worker(order, limit_s) for order, limit_s in batch]
        try:
            ready = [worker.ready() for worker in workers]  # all prepared before any times
            shared_s = (time.monotonic() - began) / len(workers)
            for worker, is_ready in zip(workers, ready):
                start = time.monotonic()
                process = worker.timed() if is_ready else None
                found.append((process, shared_s + time.monotonic() - start))
        finally:
            for worker in workers:
                worker.close()
    return found


def starting_s() -> float:
    """What one worker costs before it prepares anything (its interpreter and imports)."""
    began = time.monotonic()
    worker = _Worker(None, 30.0)
    try:
        worker.ready()
    finally:
        worker.close()
    return time.monotonic() - began
