"""`serkit try` times each process in a new interpreter: prepared beside at most one other,
timed alone when told to go, and killed at its limit without costing the others."""

from __future__ import annotations

import os
import pickle
import time
from typing import Any

import pytest

import serkit.trial.measure as measure
import serkit.trial.worker as worker
from serkit.codecs.registry import get_codec
from serkit.suite.preparation import prepare_object
from serkit.trial.sampling import SAMPLES_PER_PROCESS
from serkit.trial.worker import Order, take_processes

DOC = {"name": "serkit", "values": [1, 2.5, None, True], "nested": {"a": "b"}}
HANG_S = 600.0


class _Unpickled:
    """What a worker meets as it unpickles its document: a call (sleep, abort) instead."""

    def __init__(self, call: Any, *args: Any) -> None:
        self.call, self.args = call, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.call, self.args


def _order(codec: str = "orjson", document: Any = DOC) -> Order:
    case = prepare_object(codec, "doc", DOC)
    index = (case.bound or get_codec(codec)).configs.index(case.config)
    numbers = {"dumps": 3, "loads": 3}
    version = get_codec(codec).version
    return Order(codec, version, "doc", index, None, pickle.dumps(document), case.payload, numbers)


def test_a_worker_times_the_pair_as_asked_and_answers_its_samples() -> None:
    [(process, cost_s)] = take_processes([(_order(), 60.0)])
    assert process is not None and set(process) == {"dumps", "loads"}
    for readings in process.values():
        assert len(readings) == SAMPLES_PER_PROCESS
        for seconds, before, after in readings:
            assert 0 < seconds < 1 and before > 0 and after > 0  # a call, the canary around
    assert cost_s > 0


def test_a_worker_that_fails_crashes_or_hangs_costs_only_its_own_process() -> None:
    unknown = Order("no-such-codec", "0", "doc", 0, None, pickle.dumps(DOC), b"{}", {"dumps": 1})
    crashes = _order(document=_Unpickled(os.abort))
    hangs = _order(document=_Unpickled(time.sleep, HANG_S))
    start = time.monotonic()
    found = take_processes(
        [(_order(), 60.0), (unknown, 60.0), (crashes, 60.0), (hangs, 1.0), (_order(), 60.0)]
    )
    assert [process is not None for process, _ in found] == [True, False, False, False, True]
    assert time.monotonic() - start < HANG_S / 2  # the hanging one was killed at its limit


def test_no_worker_times_until_every_worker_started_beside_it_is_ready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: list[tuple[str, int]] = []

    class Recorded:
        """A worker that only records what it was asked, in the order asked."""

        def __init__(self, order: int, limit_s: float) -> None:
            self.at = order

        def ready(self) -> bool:
            log.append(("ready", self.at))
            return True

        def timed(self) -> dict[str, list[Any]]:
            log.append(("timed", self.at))
            return {}

        def close(self) -> None:
            log.append(("closed", self.at))

    monkeypatch.setattr(worker, "_Worker", Recorded)
    monkeypatch.setattr(worker, "CONCURRENT", 2)
    take_processes([(i, 1.0) for i in range(3)])  # type: ignore[misc]
    steps = [step for step, _ in log]
    assert steps[:6] == ["ready", "ready", "timed", "timed", "closed", "closed"]
    assert steps[6:] == ["ready", "timed", "closed"]  # the third, alone
    assert [at for step, at in log if step == "timed"] == [0, 1, 2]


def test_a_ctrl_c_while_waiting_ends_every_worker_it_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[Any] = []
    real_ready = worker._Worker.ready

    def interrupted(self: Any) -> bool:
        started.append(self.process)
        if len(started) == 2:
            raise KeyboardInterrupt
        return real_ready(self)

    monkeypatch.setattr(worker._Worker, "ready", interrupted)
    monkeypatch.setattr(worker, "CONCURRENT", 2)
    hangs = _order(document=_Unpickled(time.sleep, HANG_S))
    with pytest.raises(KeyboardInterrupt):
        take_processes([(_order(), 60.0), (hangs, HANG_S)])
    assert all(process.poll() is not None for process in started)  # none left behind


def test_a_document_nested_deeper_than_pickle_goes_is_given_to_no_process() -> None:
    deep: list[Any] = []
    for _ in range(100_000):  # built by a loop: no recursion here
        deep = [deep]
    assert measure._pickled(deep) is None  # each codec is then shown from its first call
    assert measure._pickled(DOC) is not None
