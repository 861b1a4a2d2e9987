"""The class every benchmark of the asv suite derives from: a pair of the grid prepared on
asv's check, timed in inner loops by a clock that keeps its canary readings.

`benchmarks/` stays thin: its classes derive from :class:`CaseBenchmark` and time one
call each. Everything they need is prepared here (serkit.suite.preparation).

Two things keep microsecond timings honest, each measured on orjson dumps of
small-dict against a plain ``timeit`` of the same call:

- No `setup`. asv_runner forces ``number = 1`` for any timed benchmark that has one,
  which put timer overhead into every result (asv-notes). asv does check a benchmark's
  ``skip_params`` in the benchmark's own process, once, right before timing it; so
  ``skip_params`` here is a lazy container. Asking it whether a pair is skipped
  prepares that one pair on the benchmark instance, outside the timed loop.
- Inner loops. asv calls a parameterized benchmark through a closure and a bound
  method, which read 11-13 % slow on a 1.3 µs call. So each timed body repeats its call
  `inner_loops` times, a count chosen per pair to last about 20 µs, and the pair's
  `timer` divides the clock by that count: results stay in seconds per call, as with
  pyperf's ``inner_loops``, and the harness cost shrinks below 1 %.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import os
import time
import timeit
from collections.abc import Iterable
from typing import Any, Callable, cast

from serkit.codecs.registry import Codec, codec_names
from serkit.errors import RefusedTarget, SerkitError
from serkit.inputs.fixtures import fixture_names
from serkit.suite.budget import timed_once
from serkit.suite.canary import (
    CanaryClock,
    Extra,
    note_canary,
    notes_folder,
    reference_scale,
    spin_loops_for,
)
from serkit.suite.cases import (
    INJECTED_LOOPS,
    SAMPLE_TIME_S,
    SAMPLES_PER_PROCESS,
    SLOW_ENV,
    SLOW_TIMEOUT_S,
    TIMEOUT_S,
    Selection,
    injected_from_env,
    rounds_from_env,
    truthy,
    warmup_from_env,
)
from serkit.suite.preparation import LONG_CALL_S, bodies_per_sample, inner_loops_for, prepare
from serkit.suite.state_watch import sample_placement


def injected_sampling(inner_loops: int, number: int, extra: int) -> tuple[int, float]:
    """For `extra` more calls in every INJECTED_LOOPS, in a sample of the plain run's
    `inner_loops` x `number` calls: the whole calls it makes more, and the rest of the
    share, a part of one call (0 to 1), which a spin of the canary's arithmetic makes.

    The sample keeps the plain run's calls: one of a long call stays one, as a slower
    release of the codec would leave it, where whole calls alone would need ten.
    """
    whole, rest = divmod(inner_loops * number * extra, INJECTED_LOOPS)
    return whole, rest / INJECTED_LOOPS


def spin_readings(call_s: float) -> int:
    """Readings of a sample's calls and a spin that size an injected spin (`call_s` a
    call): about 10 ms of calls, 3 to 15 readings."""
    return max(3, min(15, round(0.01 / call_s))) if call_s > 0 else 15


def _calls_ns(call: Callable[[], object], calls: int, warm: bool = False) -> float:
    """`calls` calls back to back, as a sample's bodies make them (the collector off, as in
    timeit: on, it slows a large decode by up to a third, docs/trust.md "Agreement with
    pyperf"), after one untimed call where the sample has its warm call: ns a call. A
    call right after a spin reads slower than the next ones, most of all a long call
    timed one a sample, so calls timed colder than the sample's would size its spin too
    long."""
    clock = time.perf_counter_ns
    collecting = gc.isenabled()
    gc.disable()
    try:
        if warm:
            call()
        start = clock()
        for _ in itertools.repeat(None, calls):
            call()
        return (clock() - start) / calls
    finally:
        if collecting:
            gc.enable()


def warm_up(
    call: Callable[[], object], seconds: float, clock: Callable[[], float] = time.perf_counter
) -> int:
    """Make `call` back to back for `seconds`, the collector off as in a sample: the calls
    made (at least one)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        end, calls = clock() + seconds, 0
        while True:
            call()
            calls += 1
            if clock() >= end:
                return calls
    finally:
        if collecting:
            gc.enable()


def per_call_timer(inner_loops: int, extra: Extra | None = None) -> Callable[[], float]:
    """A clock for asv that reads in units of 1/inner_loops s: seconds per call; with
    `extra`, it makes those calls in each sample it times (serkit.suite.canary.Extra)."""
    clock = timeit.default_timer
    if extra is None:
        return lambda: clock() / inner_loops
    make, started = extra.make, False

    def read() -> float:
        nonlocal started
        started = not started
        if not started:  # a sample's end: its extra calls fall inside it, after its own
            make()
        return clock() / inner_loops

    return read


class _PreparedOnCheck:
    """asv's ``skip_params``: a membership test that prepares the pair it is asked about."""

    def __init__(self, bench: CaseBenchmark) -> None:
        self._bench = bench
        self._answers: dict[tuple[Any, ...], bool] = {}

    def __contains__(self, params: object) -> bool:
        key: tuple[Any, ...] = tuple(cast("Iterable[Any]", params))
        if key not in self._answers:
            self._answers[key] = self._bench.prepare_for(*key) is not None
        return self._answers[key]


class CaseBenchmark:
    """Base of every benchmark class over the codec x fixture grid.

    After preparation the instance has `dumps`, `loads`, `obj` and `payload` for its
    pair. A class that times something names it in `operation`; it then also gets
    `inner_loops` and the matching `timer`, and every codec pays the same overhead.
    """

    operation: str | None = None  # "dumps", "loads" or "round_trip" for timed classes
    # What preparation must build: "payload" (fixture, config, encoded payload),
    # "round_trip" (the payload proven to decode), or "nothing" for benchmarks that do
    # their own work and only need the pair to be selected and eligible.
    inputs = "payload"

    params: tuple[list[str], ...] = (codec_names(), fixture_names())
    param_names: tuple[str, ...] = ("codec", "fixture")
    timeout = SLOW_TIMEOUT_S if truthy(os.environ.get(SLOW_ENV)) else TIMEOUT_S

    dumps: Callable[[Any], bytes]
    loads: Callable[[bytes], Any]
    obj: Any
    payload: bytes
    bound: Codec | None = None  # a schema codec as prepared: bound to the document's schema
    inner_loops: int = 1  # calls the body makes, and the timer divides by
    repeat: int  # asv's samples per process, and `rounds` its processes: set on timed classes
    rounds: int
    sample_time: float
    number: int  # asv's; set only for a pair whose preparation was its warm-up
    warmup_time: float
    timer: Callable[[], float]
    _noted: tuple[str, tuple[str, ...]]  # asv's name and parameters of a timed pair

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.operation is not None:  # timed: a few samples in each of `rounds` processes
            cls.repeat = SAMPLES_PER_PROCESS
            cls.sample_time = SAMPLE_TIME_S
            cls.rounds = rounds_from_env()

    def __init__(self) -> None:
        self.skip_params = _PreparedOnCheck(self)

    def teardown(self, *params: Any) -> None:
        """Note this process's samples and their canary readings, for serkit's readers."""
        folder, clock = notes_folder(), getattr(self, "timer", None)  # timed classes only
        if folder is not None and isinstance(clock, CanaryClock):
            # A results tree not writable, or a link or FIFO where the note goes (refused):
            # its samples are judged as unnoted ones are.
            with contextlib.suppress(OSError, RefusedTarget):
                note_canary(folder, *self._noted, clock)

    def prepare_for(self, codec: str, fixture: str, *rest: Any) -> str | None:
        """Prepare the pair; return why it is skipped, or None when it is ready."""
        reason = Selection.from_env().excludes(codec, fixture)
        if reason is None and self.inputs != "nothing":
            reason = self._prepare(codec, fixture, tuple(str(p) for p in (codec, fixture, *rest)))
        if reason is not None:
            print(f"serkit: skipped {codec} x {fixture}: {reason}")
        return reason

    def _prepare(self, codec: str, fixture: str, params: tuple[str, ...]) -> str | None:
        try:
            case = prepare(codec, fixture, decode=self.inputs == "round_trip")
        except SerkitError as exc:  # not installed, or cannot encode or decode it
            return str(exc)
        self.dumps, self.loads = case.config.dumps, case.config.loads
        self.obj, self.payload, self.bound = case.obj, case.payload, case.bound
        if self.operation is None:
            return None
        best = case.best_call_s(self.operation)
        self.inner_loops = inner_loops_for(best)
        # serkit picks asv's `number`, not asv: asv sizes a sample by the wall clock
        # around it, canary readings and all (about 120 µs here, 1.8x that in the slow
        # state), so a run calibrated in the slow state took 1 body a 0.2 ms sample where
        # another took 5, and a sample of few bodies reads slow (docs/trust.md, "A
        # sample's first call"). A later round keeps the first round's.
        self.number = bodies_per_sample(self.inner_loops, best)
        # asv imports the suite as a package named after its folder (benchmarks.bench_time)
        # and leaves that package out of benchmark names (bench_time.Dumps.time_dumps).
        module = type(self).__module__.partition(".")[2] or type(self).__module__
        name = f"{module}.{type(self).__name__}"
        call_s = case.first_call_s(self.operation) or 0.0
        # One call timed as a sample is: timeit's clock, the collector off.
        warm_call = functools.partial(timeit.timeit, case.operation(self.operation), number=1)
        noted = notes_folder() is not None
        if timed_once(
            name,
            params,
            case.prepare_s,
            call_s,
            self.rounds,
            self.repeat,
            reference_scale,
            warm_call,
        ):
            # One sample, now (serkit.suite.budget); preparing made the call: its warm-up.
            self.number, self.repeat, self.warmup_time = 1, 1, 0.0
        elif case.warmed_up(self.operation):  # see WARMED_CALL_S
            self.number, self.warmup_time = 1, 0.0
        elif (warmup := warmup_from_env()) is not None:
            self.warmup_time = warmup
            if noted:
                # Noted, the warm-up is the pair's calls alone, made here. asv's is whole
                # samples, each with the canaries and a note around it: calls were about
                # half of its 20 ms for a call of 1.4 µs, 80 % for one of 0.3 ms
                # (docs/trust.md).
                warm_up(case.operation(self.operation), warmup)
                self.warmup_time = 0.0
        # Noted, the canaries leave the caches cold for a sample's first call: one
        # untimed call after them warms them again, unless a call is too long to care.
        warmed = noted and call_s < LONG_CALL_S
        extra = None
        if (injected := injected_from_env()) is not None:
            calls, share = injected_sampling(self.inner_loops, self.number, injected)
            call = case.operation(self.operation)
            sample_calls = self.inner_loops * self.number
            timed_call = functools.partial(_calls_ns, call, sample_calls, warmed)
            loops = spin_loops_for(share, timed_call, spin_readings(best)) if share else 0
            # No work to add (an A/A arm): nothing added to the timed path.
            extra = Extra(call, calls, loops) if calls or loops else None
        self.timer = per_call_timer(self.inner_loops, extra)
        if noted:
            # Each sample keeps the canary readings taken around it (serkit.suite.canary):
            # the machine's speed state when it was taken.
            warm = case.operation(self.operation) if warmed else None
            # Each sample on the vCPU that reads faster now (serkit.suite.state_watch).
            placed = sample_placement()
            self.timer = CanaryClock(
                self.inner_loops,
                keep=self.repeat,
                warm=warm,
                extra=extra,
                place=placed.place if placed is not None else None,
            )
            self._noted = (f"{name}.time_{self.operation}", tuple(repr(p) for p in params))
        return None
