"""How long a pair's calls will take, predicted before it is ever called.

Pure-Python YAML took 14 s for one `loads` of random-dicts-1000, and five processes of
such a pair cost minutes; its cost grows with the document. So the quick run predicts a
pair's calls from the codec's own calls on a small reference document, per byte of each
document's JSON text, and leaves a pair its budget cannot afford to `--full` without
calling it once (serkit.run.quick). Per byte of a small document, a fast codec's fixed
cost per call weighs more than on a large one, so the prediction errs high: it can leave
out a pair near the budget, never time a pair far over it.

A prediction is given at one reference speed, not at the speed the machine happens to
have as the plan is made: a codec's calls are timed each beside a reading of the canary
(serkit.suite.canary), and scaled to what the canary reads on serkit's own VM in its fast
state (serkit.suite.canary.REFERENCE_CANARY_NS). So a run planned in the VM's slow state, a fresh
checkout that has no fast reading of its own, and another host all leave out the same
pairs. Read in seconds at the machine's speed, a fresh clone planned in the slow state
left json x twitter out of its quick run, and with it json's row of twitter's page,
which every "x json" ratio there divides by; the next run timed it.
"""

from __future__ import annotations

import functools
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from serkit.suite.canary import canary_ns, reference_canary_ns
from serkit.suite.preparation import load_granted, prepare
from serkit.units import seconds

REFERENCE_FIXTURE = "small-dict"
# Calls timed, each after one reading of the canary: in a slow stretch the machine flickers
# into its fast state for 0.2-2 ms at a time (docs/trust.md), so a call and the canary
# must sample the same stretch, one beside the other, and be compared by their medians.
BESIDE_READINGS = 15


def at_reference_speed(
    call: Callable[[], object],
    canary: Callable[[], float] = canary_ns,
    clock: Callable[[], int] = time.perf_counter_ns,
    readings: int = BESIDE_READINGS,
) -> float:
    """Seconds `call` takes at the reference speed: its median over `readings` calls, each
    made just after a reading of the canary, over the canary's median, times the reference
    reading. Both slow alike in the slow state, so their ratio does not move with it."""
    calls, canaries = [], []
    for _ in range(readings):
        canaries.append(canary())
        start = clock()
        call()
        calls.append(clock() - start)
    reference = reference_canary_ns()
    if reference is None:
        return statistics.median(calls) / 1e9
    return statistics.median(calls) / statistics.median(canaries) * reference / 1e9


@dataclass(frozen=True)
class Prediction:
    """One pair's calls, predicted: seconds per call."""

    dumps_s: float
    loads_s: float

    def in_words(self) -> str:
        return f"{seconds(self.dumps_s)} a dumps, {seconds(self.loads_s)} a loads"


def text_bytes(document: Any) -> int:
    """The size of a document's JSON text: what every codec's cost is scaled by."""
    return len(json.dumps(document, default=str, ensure_ascii=False).encode())


@functools.cache
def _fixture_bytes(fixture: str) -> int:
    return text_bytes(load_granted(fixture))


@functools.cache
def _per_byte(codec: str) -> tuple[float, float]:
    """The codec's dumps and loads on the reference document, in seconds per byte at the
    reference speed, after the cold calls preparing made."""
    case = prepare(codec, REFERENCE_FIXTURE)
    size = _fixture_bytes(REFERENCE_FIXTURE)
    dumps = at_reference_speed(case.operation("dumps"))
    loads = at_reference_speed(case.operation("loads"))
    return dumps / size, loads / size


def predict(codec: str, fixture: str) -> Prediction:
    """The pair's calls at the reference speed, scaled from the codec's on
    REFERENCE_FIXTURE. Raises a SerkitError subclass where the codec is not installed
    here or cannot take the reference."""
    dumps, loads = _per_byte(codec)
    size = _fixture_bytes(fixture)
    return Prediction(dumps * size, loads * size)
