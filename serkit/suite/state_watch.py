"""Watching the machine's state with the canary, and waiting out its slow state.

A process timed in the slow state has to be corrected by the readers (serkit.sample_speed), and
corrected values scatter three times as much as fast ones here (docs/trust.md). A slow
stretch lasts seconds to minutes, so waiting for the fast state before timing is often
cheaper than timing through it: `serkit bench` waits before its extra rounds, and each
timed process waits before it samples (`wait_before_sampling`), within the run's budget.
Inside a slow stretch the machine also flickers fast for milliseconds, so a process that
began fast was often timed part fast, part slow: each sample waits too (`SampleGate`).

The probe's fast reading is kept per host and Python in the checkout's `.asv` folder (the
least probe seen), since a run that begins in the slow state has no fast reading of its
own to compare with; every process of a run counts what it waited in one ledger, so the
budget is the run's, not each process's.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import platform
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from serkit.files import atomic_write
from serkit.sample_speed import (
    SAMPLE_NOT_SLOW_READINGS,
    SAMPLE_PATIENCE_S,
    SLOW,
    SLOW_FROM,
    classify,
)
from serkit.suite.budget import seconds_from_env
from serkit.suite.canary import CANARY_LOOPS, canary_ns, probe_ns

POLL_S = 3.0
# The most a run waits for the fast state, over all its processes and extra rounds; the
# environment variable sets it (0: never probe, never wait).
WAIT_ENV = "SERKIT_BENCH_STATE_WAIT"
# Where a run's processes find the host's fast probe and count their waiting.
PROBE_FILE_ENV = "SERKIT_BENCH_STATE_PROBE"
LEDGER_ENV = "SERKIT_BENCH_STATE_LEDGER"
# The ledger holds a byte for each tenth of a second waited: appends of a few bytes never
# interleave, so processes need no lock to share it. A wait before a process sampled, or
# before an extra round, writes WAITED; a sample's wait (`SampleGate`) writes GATED, so
# that a run can say which of the two its time went to.
LEDGER_TICKS_PER_S = 10
WAITED, GATED = b".", b":"
# A timed process probes before it samples: 100 readings, about 2 ms in the fast state,
# since it does so once for each of a quick run's ~1,600 processes; the median still
# holds against the fast flickers of a slow stretch (docs/trust.md, "The state flickers").
# A fresh process's first readings run slow: its first probe read 1.10-1.43x its later
# ones here, and 1.09-1.15x after PROCESS_WARM_READINGS readings left out, well under the
# 1.4x that calls the machine slow (serkit.sample_speed).
PROCESS_PROBE_READINGS = 100
PROCESS_WARM_READINGS = 50
# A waiting process probes again this often. Spells of the slow state can be short: in a
# quick run of 2026-11-28, 5 of the 13 processes that waited did so for one look of the
# 0.5 s this was, the longest 7 s. A look costs a probe of about 2 ms.
PROCESS_POLL_S = 0.1
# The most one process waits so, over all its samples.
PROCESS_SAMPLE_WAIT_S = 2.0
# The most one timed process waits before it samples. asv ends a benchmark process after
# its `timeout` (serkit.suite.cases.TIMEOUT_S, 300 s) and records the pair as failed: on
# 2026-11-28 one process waited past it in a run whose budget was 600 s, and its pair
# was recorded as failed. A longer slow stretch is waited out by the next processes.
PROCESS_WAIT_MOST_S = 120.0
# A timed process whose probe reads the slow state asks a new interpreter of its Python to
# probe too. On 2026-11-28 the timed processes of one `asv run` waited for 9 minutes, one
# after another, the run's whole budget: one of them read 1.43-1.94x the host's least
# probe for minutes while new interpreters read 1.18-1.29x it, and the next `asv run`
# waited none. Waiting does not end a slowness that is the process's own, not the
# machine's: a process slow where a new interpreter is not samples at once, judged by the
# canary, and counts itself in the file beside the ledger with this suffix.
FRESH_PROBE_TIMEOUT_S = 10.0
SLOW_ALONE_SUFFIX = ".slow-alone"
MACHINE, OWN = "machine", "own"  # whose slowness a slow probe read (StateWatch._whose_slowness)
# While it waits, a process asks a new interpreter again this often. One asked at the start
# of a slow flicker of the machine reads slow too; once the flicker ends, a process slow by
# itself would wait out its whole PROCESS_WAIT_MOST_S. A new interpreter costs ~11 ms.
FRESH_AGAIN_S = 1.0


def _key() -> str:
    return f"{socket.gethostname()} {platform.python_implementation()} {sys.version.split()[0]}"


def process_probe_ns() -> float:
    """A timed process's probe: the median of PROCESS_PROBE_READINGS canary readings (ns)."""
    return probe_ns(PROCESS_PROBE_READINGS, left_out=PROCESS_WARM_READINGS)


def fresh_probe_ns(python: str = sys.executable) -> float | None:
    """A timed process's probe taken by a new interpreter of `python` (ns): the canary's own
    source, run without site or serkit, so in about 11 ms. None where it could not run."""
    try:
        source = textwrap.dedent(inspect.getsource(canary_ns))
    except (OSError, TypeError):  # installed without its sources
        return None
    code = "\n".join(
        (
            "import time",
            f"CANARY_LOOPS = {CANARY_LOOPS}",
            source,
            f"for _ in range({PROCESS_WARM_READINGS}): canary_ns()",
            f"taken = sorted(canary_ns() for _ in range({PROCESS_PROBE_READINGS}))",
            "print(taken[len(taken) // 2])",
        )
    )
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-c", code],
            capture_output=True,
            text=True,
            timeout=FRESH_PROBE_TIMEOUT_S,
            check=True,
        )
        return float(done.stdout.strip())
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


@dataclass
class StateWatch:
    """Probes of the canary against the host's least probe, and waiting within a budget
    that every process sharing `ledger` spends (None: this watch's own)."""

    path: Path  # the host's fast probes, by host and Python
    budget_s: float
    probe: Callable[[], float] = probe_ns
    sleep: Callable[[float], None] = time.sleep
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr)
    ledger: Path | None = None
    poll_s: float = POLL_S
    # A probe by a new interpreter, where the watch's own probe reads slow (a timed
    # process's: `fresh_probe_ns`); None: the watch's probe alone judges.
    fresh: Callable[[], float | None] | None = None
    most_s: float | None = None  # the most one wait lasts, within the budget (None: no less)
    fresh_again_s: float = FRESH_AGAIN_S  # while waiting, `fresh` is asked again this often
    waited_s: float = 0.0  # by this watch
    slow_alone: bool = False  # its probe read slow where a new interpreter's did not
    _fast: float | None = field(default=None, init=False)

    def _known(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (OSError, ValueError, TypeError):
            return {}

    @property
    def spent_s(self) -> float:
        """What the budget has paid for: by every process of the ledger, or this watch."""
        if self.ledger is None:
            return self.waited_s
        try:
            return self.ledger.stat().st_size / LEDGER_TICKS_PER_S
        except OSError:
            return 0.0

    @property
    def gated_s(self) -> float:
        """Of `spent_s`, what timed processes waited before single samples (`SampleGate`)."""
        return _read_bytes(self.ledger).count(GATED) / LEDGER_TICKS_PER_S

    @property
    def slow_alone_processes(self) -> int:
        """How many processes sharing the ledger found the slow state theirs alone."""
        return len(_read_bytes(self._slow_alone_file()))

    def _slow_alone_file(self) -> Path | None:
        return (
            None
            if self.ledger is None
            else self.ledger.with_name(self.ledger.name + SLOW_ALONE_SUFFIX)
        )

    def _whose_slowness(self) -> str | None:
        """Asked where this watch's probe read the slow state: MACHINE where a new
        interpreter reads it too (or cannot say); OWN where a new interpreter reads the fast
        state and this watch's probe, taken again, still the slow one (noted once, for the
        run to count); None where that probe reads fast again, as a process's first
        milliseconds can (a quarter of those called slow by themselves on 2026-11-28)."""
        now = self.fresh() if self.fresh is not None else None
        fast = self.fast_ns()
        if now is None or not fast or classify(now / fast, 1.0) == SLOW:
            return MACHINE
        if self.slow_now() is None:
            return None
        self.slow_alone = True
        _write_ledger(self._slow_alone_file(), 1)
        return OWN

    def _spend(self, seconds: float) -> None:
        self.waited_s += seconds
        _write_ledger(self.ledger, round(seconds * LEDGER_TICKS_PER_S))

    def fast_ns(self) -> float | None:
        """The host's fast probe (ns), as a probe of this watch or an earlier run kept it."""
        if self._fast is None:
            self._fast = self._known().get(_key())
        return self._fast

    def ratio(self) -> float:
        """The canary now over the host's fast reading (1.0 at the first probe ever)."""
        now = self.probe()
        self.fast_ns()
        if self._fast is None or now < self._fast:
            self._fast = now
            known = self._known() | {_key(): now}
            # A read-only checkout: the probe still compares within this run.
            with contextlib.suppress(OSError):
                atomic_write(self.path, json.dumps(known, indent=1).encode())
        return now / self._fast

    def slow_now(self) -> float | None:
        """The canary's slowness when the machine is in its slow state now, else None
        (None too with no budget: the run was asked not to probe)."""
        if self.budget_s <= 0:
            return None
        ratio = self.ratio()
        return ratio if classify(ratio, 1.0) == SLOW else None

    def wait_for_fast(self, what: str) -> float:
        """Before `what`, wait while the machine is slow, within the budget: the seconds
        waited."""
        slow = self.slow_now()
        if slow is None:
            return 0.0
        left = self.budget_s - self.spent_s
        if self.most_s is not None:
            left = min(left, self.most_s)
        if left <= 0:
            self.say(
                f"serkit: {what} runs in the machine's slow state (canary x{slow:.2f} its fast "
                f"reading): the {self.budget_s:.0f} s this run may wait for the fast state are "
                "spent; its samples are judged by the canary"
            )
            return 0.0
        whose = self._whose_slowness()
        if whose is None:  # slow in its first milliseconds only: its samples gated as any
            return 0.0
        if whose == OWN:
            self.say(
                f"serkit: {what} reads the slow state (canary x{slow:.2f} its fast reading) "
                "where a new interpreter does not: the slowness is its own, and it does not wait"
            )
            return 0.0
        self.say(
            f"serkit: the machine is in its slow state (canary x{slow:.2f} its fast reading, "
            f"which the load average does not show): waiting up to {left:.0f} s for the fast "
            f"state before {what}"
        )
        spent = asked = 0.0
        while slow is not None and spent < left:
            step = min(self.poll_s, left - spent)
            self.sleep(step)
            spent += step
            self._spend(step)
            slow = self.slow_now()
            if slow is not None and spent - asked >= self.fresh_again_s:
                asked = spent
                whose = self._whose_slowness()
                if whose is None:
                    slow = None  # its probe, taken again, read fast
                elif whose == OWN:
                    self.say(
                        f"serkit: after {spent:.0f} s {what} still reads the slow state (canary "
                        f"x{slow:.2f}) where a new interpreter no longer does: the slowness is "
                        "its own, and it stops waiting"
                    )
                    return spent
        if slow is None:
            self.say(f"serkit: fast again after {spent:.0f} s")
        else:
            self.say(
                f"serkit: still slow after {spent:.0f} s (x{slow:.2f}): {what} measures in "
                "the slow state; its samples are judged by the canary"
            )
        return spent


def _read_bytes(path: Path | None) -> bytes:
    """A ledger's bytes; none where there is no ledger yet."""
    try:
        return path.read_bytes() if path is not None else b""
    except OSError:
        return b""


def _write_ledger(ledger: Path | None, ticks: int, mark: bytes = WAITED) -> None:
    if ledger is not None and ticks > 0:
        with contextlib.suppress(OSError), open(ledger, "ab") as out:
            out.write(mark * ticks)


@dataclass
class SampleGate:
    """Before each sample of a timed process: wait until the canary reads under the slow
    state `readings` times in a row, spending at most `patience_s` a sample and
    `allowance_s` over the process's samples, and none after a sample that found no such
    spell; what it waited goes to the run's ledger in whole ticks as it adds up. asv
    tears a process down after each sample, so a rest rounded there would drop every wait
    under 0.05 s; the last part of a tick a process waited is left out instead."""

    slow_ns: float  # a canary reading this or over is the slow state's
    allowance_s: float
    ledger: Path | None = None
    readings: int = SAMPLE_NOT_SLOW_READINGS
    patience_s: float = SAMPLE_PATIENCE_S
    canary: Callable[[], float] = canary_ns
    clock: Callable[[], float] = time.perf_counter
    waited_s: float = 0.0
    gave_up: bool = False  # a sample found no spell under the slow state: it samples on
    _unwritten_s: float = field(default=0.0, init=False)

    def wait(self) -> None:
        if self.gave_up:
            return
        start, in_a_row, taken = self.clock(), 0, 0
        while in_a_row < self.readings:
            in_a_row = in_a_row + 1 if self.canary() < self.slow_ns else 0
            taken += 1
            waited = self.clock() - start
            if self.waited_s + waited >= self.allowance_s:
                break
            if waited >= self.patience_s and in_a_row < self.readings:
                self.gave_up = True
                break
        if taken > self.readings:  # only readings past the least count as waiting
            self._add(self.clock() - start)

    def _add(self, seconds: float) -> None:
        self.waited_s += seconds
        self._unwritten_s += seconds
        ticks = int(self._unwritten_s * LEDGER_TICKS_PER_S + 1e-9)  # 0.3 s is 3 ticks
        if ticks:
            _write_ledger(self.ledger, ticks, GATED)
            self._unwritten_s -= ticks / LEDGER_TICKS_PER_S


def wait_from_env(environ: Mapping[str, str] = os.environ) -> float | None:
    """WAIT_ENV in seconds, from 0 to an hour; None when unset."""
    return seconds_from_env(WAIT_ENV, most=3600, what="from 0 to 3600", zero=True, environ=environ)


def process_watch(environ: Mapping[str, str] = os.environ) -> StateWatch | None:
    """The watch a timed process waits with, as its run set it (None: never wait)."""
    path, ledger = environ.get(PROBE_FILE_ENV, ""), environ.get(LEDGER_ENV, "")
    budget = wait_from_env(environ)
    if not path or not ledger or not budget:
        return None
    return StateWatch(
        Path(path),
        budget,
        probe=process_probe_ns,
        say=lambda line: None,  # the run says what its processes waited, from the ledger
        ledger=Path(ledger),
        poll_s=PROCESS_POLL_S,
        fresh=fresh_probe_ns,
        most_s=PROCESS_WAIT_MOST_S,
    )


_waited: list[float] = []  # once a process: what it waited before its first sample


def wait_before_sampling() -> float:
    """In a timed process under `serkit bench`: wait while the machine is slow, within
    what is left of the run's budget, before the process prepares and samples its pair;
    the seconds waited (0.0 when its run set no budget, or after the first call)."""
    if _waited:
        return 0.0
    watch = process_watch()
    _waited.append(watch.wait_for_fast("a timed process") if watch is not None else 0.0)
    _gate.append(_gate_for(watch) if watch is not None else None)
    return _waited[0]


_gate: list[SampleGate | None] = []  # once a process, made with its first wait


def _gate_for(watch: StateWatch) -> SampleGate | None:
    fast = watch.fast_ns()
    left = watch.budget_s - watch.spent_s
    if fast is None or left <= 0 or watch.slow_alone:  # its own state: no spell to wait for
        return None
    return SampleGate(SLOW_FROM * fast, min(PROCESS_SAMPLE_WAIT_S, left), watch.ledger)


def sample_gate() -> SampleGate | None:
    """In a timed process under `serkit bench`, once it has waited (`wait_before_sampling`):
    the gate each of its samples waits at; None where its run set no budget, the budget is
    spent, or the host's fast reading is not known."""
    return _gate[0] if _gate else None
