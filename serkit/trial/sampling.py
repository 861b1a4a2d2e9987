"""Timing one codec in one process of its own: a new interpreter (serkit.trial.worker).

Each process times a pair as `serkit bench` does: for dumps, then for loads, a warm call
and then SAMPLES_PER_PROCESS samples back to back, each between two readings of the
canary (serkit.suite.canary). Back to back, as asv repeats one benchmark: taken in turn,
each dumps sample followed a loads that had just built and freed a copy of the document,
and on a 1.2 MiB JSON document (2026-11-29, fast state) orjson's dumps read 1.34-1.84 ms
across processes (each one's least sample), back to back 0.80-0.82 ms. Samples and
canary are timed by the thread's CPU time (CLOCK): on a shared host other processes
preempt a timed call, which a wall clock counts and a 20 µs canary seldom sees, while a
call's CPU time leaves them out and still slows with the vCPU's state (in forked
processes at a load average of 12-14, 2026-11-29, one call's least sample per process
spread 43-45 % by the wall clock, 9-12 % by CPU time, in 12 processes each,
interleaved).

Before its samples, each operation is called for WARM_S through the timer that takes
them, and a call under LONG_CALL_S gets one untimed call after the canary before each
sample, as `serkit bench`'s noted samples do. With one warm call, and the timer built
after it, a new interpreter's first samples of a call read slow: msgspec's msgpack loads
of a 153 KiB document read 254 µs as samples of one call, 197 µs as samples of four (a
process each, median of five, 2026-11-29). Calls a sample come from preparing, so they
differed from run to run, and so did a run's values, by more than its processes
differed: one run's 2 calls a sample read 217-242 µs, another's 1 call read 253-268 µs.
Warmed this way, one call a sample read 189 and 193 µs, four 189 and 191 µs (msgspec,
orjson).
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable, Mapping, Sequence

from serkit.suite.canary import canary_ns, spin, spin_loops_for
from serkit.suite.preparation import LONG_CALL_S, Case

# Each timed process takes this many samples of dumps and of loads, each about SAMPLE_S
# long: short, as `serkit bench`'s are, so that few straddle a change of state.
SAMPLES_PER_PROCESS = 5
SAMPLE_S = 0.001
WARM_S = 0.005  # CPU time of an operation's untimed calls before its samples (the module)
CLOCK, CLOCK_NS = time.thread_time, time.thread_time_ns  # see the module
# A process is killed at this many times its predicted cost (and never sooner than
# PROCESS_FLOOR_S): a call that hangs costs the run one process, not its budget.
PROCESS_LIMIT = 4.0
PROCESS_FLOOR_S = 2.0
OPERATIONS = ("dumps", "loads")

Key = tuple[str, str]  # (codec, operation)
Reading = tuple[float, float, float]  # a sample: seconds per call, canary ns before, after
Process = Mapping[str, Sequence[Reading]]  # one timed process's samples, by operation


def cpu_canary_ns() -> int:
    """One canary reading by CLOCK_NS."""
    return canary_ns(CLOCK_NS)


def time_process(
    case: Case,
    numbers: Mapping[str, int],
    canary: Callable[[], int] = cpu_canary_ns,
    place: Callable[[], None] = lambda: None,
    inject: float = 0.0,
) -> dict[str, list[Reading]]:
    """One timed process (in a worker: serkit.trial.worker): for each operation, WARM_S of
    untimed calls through its timer, then SAMPLES_PER_PROCESS samples back to back,
    `numbers[operation]` calls a sample, each between two canary readings, as `serkit
    bench`'s clock takes them (by CLOCK), and a call under LONG_CALL_S once, untimed,
    after the first reading (see the module). `place()` goes before each sample: where
    it moves the process to another vCPU, the untimed call warms that one's caches.
    `inject` (SERKIT_BENCH_INJECT, set by hand) adds that share of a call to each timed
    call as a spin of the canary's arithmetic, timed with the sample: a known slowdown,
    to see what `serkit compare` of two `try --into` trees calls."""
    taken: dict[str, list[Reading]] = {}
    for operation in OPERATIONS:
        timer = timeit.Timer(case.operation(operation), timer=CLOCK)
        least = spent = timer.timeit(1)  # caches filled, lazy imports done
        while spent < WARM_S:
            call_s = timer.timeit(1)
            least, spent = min(least, call_s), spent + call_s
        number, rewarm = numbers[operation], least < LONG_CALL_S
        loops = injected_loops(inject, timer, number) * number if inject else 0
        taken[operation] = []
        for _ in range(SAMPLES_PER_PROCESS):
            place()
            before = canary()
            if rewarm:
                timer.timeit(1)
            elapsed = timer.timeit(number)
            if loops:
                started = CLOCK()
                spin(loops)
                elapsed += CLOCK() - started
            after = canary()
            taken[operation].append((elapsed / number, before, after))
    return taken


def injected_loops(share: float, timer: timeit.Timer, number: int) -> int:
    """Loops of `spin` lasting `share` of one call, sized by CLOCK as the samples are."""

    def timed_spin(loops: int) -> int:
        started = CLOCK_NS()
        spin(loops)
        return CLOCK_NS() - started

    return spin_loops_for(
        share, lambda: timer.timeit(number) / number * 1e9, 3, cpu_canary_ns, timed_spin
    )


def calls_per_sample(case: Case, operation: str) -> tuple[int, float]:
    """Calls making one sample of about SAMPLE_S, and the seconds one call takes."""
    call_s = case.best_call_s(operation)
    return max(1, round(SAMPLE_S / max(call_s, 1e-9))), call_s


def sized(case: Case) -> tuple[dict[str, int], float]:
    """Calls per sample of each operation, and the predicted seconds of one process's
    calls (its warm-up, its samples, and the untimed call before each)."""
    found = {operation: calls_per_sample(case, operation) for operation in OPERATIONS}
    numbers = {operation: number for operation, (number, _) in found.items()}
    cost_s = 0.0
    for number, call_s in found.values():
        before_each = 1 if call_s < LONG_CALL_S else 0
        samples_s = SAMPLES_PER_PROCESS * (number + before_each) * call_s
        cost_s += max(WARM_S, call_s) + samples_s
    return numbers, cost_s


def limit_s(cost_s: float) -> float:
    """Seconds after which a process predicted to take `cost_s` is killed."""
    return max(PROCESS_FLOOR_S, PROCESS_LIMIT * cost_s)
