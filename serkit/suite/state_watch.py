"""The host's fast probe, and each sample placed on the vCPU that reads faster now.

Each vCPU of this VM flips between its two speeds on its own: two probes pinned one to
each read slow at the same moment about as often as independence predicts (627 times
where each read slow 862 and 873 times of 1,200; docs/trust.md, "Two speeds"). So before
each sample a timed process reads the canary where it runs and, where that reads the slow
state, reads it on the other vCPUs it may run on and stays on the one that read faster
(`Placement`). It never sleeps: a run takes the time its samples take.

The slow state is SLOW_FROM times the host's fast probe, kept per host and Python in the
checkout's `.asv` folder (the least probe seen): a sample's own canary reading cannot say
what fast is. Every process of a run counts the samples it moved in one ledger, so the
run can say how often the other vCPU was taken.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from serkit.checkout import CANARY_PROBE
from serkit.errors import RefusedTarget
from serkit.files import atomic_write, open_in_place
from serkit.sample_speed import SLOW_FROM
from serkit.suite.canary import RESULTS_ENV, canary_ns, probe_ns

# Where a run's processes find the host's fast probe and count the samples they moved.
PROBE_FILE_ENV = "SERKIT_BENCH_STATE_PROBE"
LEDGER_ENV = "SERKIT_BENCH_STATE_LEDGER"
# The ledger holds a byte for each sample moved to another vCPU: appends of a few bytes
# never interleave, so processes need no lock to share it.
MOVED = b">"
# A timed process probes itself only where the host has no fast probe on its Python yet:
# 100 readings after 50 left out (a fresh process's first readings run 1.10-1.43x slow).
PROCESS_PROBE_READINGS = 100
PROCESS_WARM_READINGS = 50


def _key() -> str:
    return f"{socket.gethostname()} {platform.python_implementation()} {sys.version.split()[0]}"


def process_probe_ns() -> float:
    """A timed process's probe: the median of PROCESS_PROBE_READINGS canary readings (ns)."""
    return probe_ns(PROCESS_PROBE_READINGS, left_out=PROCESS_WARM_READINGS)


@dataclass
class HostProbe:
    """The host's fast canary probe on this Python: the least probe any run took, kept in
    `path` by host and Python (a run that begins slow has no fast reading of its own)."""

    path: Path
    probe: Callable[[], float] = probe_ns
    _fast: float | None = field(default=None, init=False)

    def _known(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (OSError, ValueError, TypeError):
            return {}

    def fast_ns(self) -> float | None:
        """The host's fast probe (ns), as kept; None before any probe on this Python."""
        if self._fast is None:
            self._fast = self._known().get(_key())
        return self._fast

    def ratio(self) -> float:
        """The canary now over the host's fast probe (1.0 at the first probe ever); a
        probe under the kept one is kept instead."""
        now = self.probe()
        self.fast_ns()
        if self._fast is None or now < self._fast:
            self._fast = now
            known = self._known() | {_key(): now}
            # A read-only checkout: the probe still compares within this run.
            with contextlib.suppress(OSError):
                atomic_write(self.path, json.dumps(known, indent=1).encode())
        return now / self._fast


def moved_samples(ledger: Path | None) -> int:
    """How many samples the processes sharing `ledger` moved to another vCPU."""
    try:
        return ledger.read_bytes().count(MOVED) if ledger is not None else 0
    except OSError:
        return 0


def _pin(cpus: Collection[int]) -> None:
    os.sched_setaffinity(0, cpus)


@dataclass
class Placement:
    """Before each sample: where the canary reads `slow_ns` or over on this vCPU, read it on
    each other vCPU of `cpus` (the process's own set) and stay where it read fastest."""

    slow_ns: float
    cpus: tuple[int, ...]
    ledger: Path | None = None
    canary: Callable[[], float] = canary_ns
    pin: Callable[[Collection[int]], None] = _pin
    on: int | None = None  # the vCPU it is pinned to; None: not pinned, any of `cpus`
    moved: int = 0

    def place(self) -> None:
        best = self.canary()
        if best < self.slow_ns:
            return
        where, last = self.on, self.on
        for cpu in self.cpus:
            if cpu != self.on:
                self.pin((cpu,))
                last = cpu
                reading = self.canary()
                if reading < best:
                    best, where = reading, cpu
        if where != last:  # back where it read fastest
            self.pin(self.cpus if where is None else (where,))
        if where != self.on:
            self.on = where
            self.moved += 1
            if self.ledger is not None:
                with contextlib.suppress(OSError, RefusedTarget):
                    fd = open_in_place(self.ledger, os.O_APPEND)
                    try:
                        os.write(fd, MOVED)
                    finally:
                        os.close(fd)


def placeable_cpus() -> tuple[int, ...]:
    """The vCPUs this process may be pinned to, in order; () where the platform cannot pin
    a process or gives it one vCPU only (then there is nothing to choose between)."""
    if not hasattr(os, "sched_setaffinity"):
        return ()
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    return cpus if len(cpus) > 1 else ()


def placement(
    environ: Mapping[str, str] = os.environ, host: HostProbe | None = None
) -> Placement | None:
    """The placement a timed process's samples take, as its run set it, or as a plain
    `asv run` in serkit's checkout takes it (`plain_probe_file`); None outside both, or
    where the platform cannot pin a process or gives it one vCPU."""
    path = environ.get(PROBE_FILE_ENV, "") or plain_probe_file(environ)
    cpus = placeable_cpus()
    if not path or not cpus:
        return None
    host = host or HostProbe(Path(path), probe=process_probe_ns)
    fast = host.fast_ns()
    if fast is None:  # the first run on this Python: its first process probes
        host.ratio()
        fast = host.fast_ns()
    ledger = environ.get(LEDGER_ENV, "")
    return Placement(SLOW_FROM * (fast or 0.0), cpus, Path(ledger) if ledger else None)


def plain_probe_file(environ: Mapping[str, str]) -> str:
    """Under a plain `asv run` in serkit's checkout (whose environment type names its
    results tree: serkit.run.asv_env), the checkout's kept probe, so that its samples are
    placed as `serkit bench`'s are; its moves go uncounted, having no run to count them."""
    conf = environ.get("ASV_CONF_DIR", "").strip()
    return str(Path(conf) / CANARY_PROBE) if conf and environ.get(RESULTS_ENV) else ""


_placements: dict[int, Placement | None] = {}  # once a process, by pid (a fork makes its own)


def sample_placement() -> Placement | None:
    """In a timed process under `serkit bench`: the placement its samples take (`placement`),
    made once a process."""
    pid = os.getpid()
    if pid not in _placements:
        _placements.clear()
        _placements[pid] = placement()
    return _placements[pid]
