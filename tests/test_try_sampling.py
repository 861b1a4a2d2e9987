"""One timed process of `serkit try` warms each call through the timer that samples it, and
gives a short call one untimed call after the canary before each sample: a new
interpreter's first calls read slow, and how slow depended on the calls a sample took.
Each sample is placed first on the vCPU whose canary reads faster."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import cast

import pytest

import serkit.trial.sampling as sampling
from serkit.suite.preparation import LONG_CALL_S, Case
from serkit.trial.sampling import OPERATIONS, SAMPLES_PER_PROCESS, WARM_S, time_process
from serkit.trial.worker import fastest_vcpu


class _Pair:
    """A pair whose calls move a clock of their own by a fixed time, and are logged."""

    def __init__(self, call_s: dict[str, float], log: list[str]) -> None:
        self.now, self.call_s, self.log = 0.0, call_s, log

    def clock(self) -> float:
        return self.now

    def operation(self, operation: str) -> Callable[[], None]:
        def call() -> None:
            self.now += self.call_s[operation]
            self.log.append(operation)

        return call


@pytest.mark.parametrize(
    ("call_s", "before_each"), [(2**-13, True), (2**-9, False)], ids=["short", "long"]
)
def test_each_operation_is_warmed_then_sampled_with_the_canary_around(
    monkeypatch: pytest.MonkeyPatch, call_s: float, before_each: bool
) -> None:
    log: list[str] = []
    pair = _Pair(dict.fromkeys(OPERATIONS, call_s), log)
    monkeypatch.setattr(sampling, "CLOCK", pair.clock)

    def canary() -> int:
        log.append("canary")
        return 20_000

    numbers = {"dumps": 3, "loads": 2}
    taken = time_process(cast(Case, pair), numbers, canary, place=lambda: log.append("place"))

    assert (call_s < LONG_CALL_S) == before_each  # times in powers of 2: their sums exact
    warm = math.ceil(WARM_S / call_s)  # 41 short calls, 3 long ones
    expected: list[str] = []
    for operation in OPERATIONS:
        # Each sample: placed on a vCPU, the canary, the untimed call (a short one's), the
        # timed calls, the canary.
        calls = [operation] * (before_each + numbers[operation])
        sample = ["place", "canary", *calls, "canary"]
        expected += [operation] * warm + sample * SAMPLES_PER_PROCESS
    assert log == expected
    for operation in OPERATIONS:  # the untimed call is in no sample's value
        assert [value for value, _, _ in taken[operation]] == pytest.approx(
            [call_s] * SAMPLES_PER_PROCESS
        )


def test_a_worker_places_its_samples_on_every_vcpu_it_may_run_on() -> None:
    placed = fastest_vcpu()
    cpus = tuple(sorted(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else ()
    if len(cpus) < 2:
        assert placed is None
        return
    assert placed is not None and placed.cpus == cpus
    assert placed.slow_ns == 0  # every reading compared: try keeps no host probe
    try:
        placed.place()
        assert placed.on in cpus and os.sched_getaffinity(0) == {placed.on}
    finally:  # this test's process goes on with the others' tests
        os.sched_setaffinity(0, cpus)


def test_an_injected_slowdown_is_timed_with_each_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    # SERKIT_BENCH_INJECT's share of a call, spun after each sample's calls and before its
    # end is read: every sample's value carries it, and nothing else changes.
    call_s, share = 2**-13, 0.125
    pair = _Pair(dict.fromkeys(OPERATIONS, call_s), [])
    monkeypatch.setattr(sampling, "CLOCK", pair.clock)
    loops_a_call = 64  # what injected_loops sizes for `share` of one call, here

    def spin(loops: int) -> None:
        pair.now += loops / loops_a_call * share * call_s

    monkeypatch.setattr(sampling, "spin", spin)
    monkeypatch.setattr(sampling, "injected_loops", lambda got, timer, number: loops_a_call)
    numbers = {"dumps": 3, "loads": 2}
    taken = time_process(cast(Case, pair), numbers, lambda: 20_000, inject=share)
    plain = time_process(cast(Case, pair), numbers, lambda: 20_000)
    for operation in OPERATIONS:
        assert [value for value, _, _ in taken[operation]] == pytest.approx(
            [call_s * (1 + share)] * SAMPLES_PER_PROCESS
        )
        assert [value for value, _, _ in plain[operation]] == pytest.approx(
            [call_s] * SAMPLES_PER_PROCESS
        )
