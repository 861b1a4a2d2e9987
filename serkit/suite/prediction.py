"""How long a pair's calls will take, predicted before it is ever called.

Pure-Python YAML took 14 s for one `loads` of random-dicts-1000, and five processes of
such a pair cost minutes; its cost grows with the document. So the quick run predicts a
pair's calls from the codec's own calls on a small reference document, per byte of each
document's JSON text, and leaves a pair its budget cannot afford to `--full` without
calling it once (serkit.run.quick). Per byte of a small document, a fast codec's fixed
cost per call weighs more than on a large one, so the prediction errs high: it can leave
out a pair near the budget, never time a pair far over it.
"""

from __future__ import annotations

import functools
import json
import timeit
from dataclasses import dataclass
from typing import Any

from serkit.suite.cases import load_granted, prepare
from serkit.units import seconds

REFERENCE_FIXTURE = "small-dict"


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
    """The codec's dumps and loads on the reference document, in seconds per byte: the
    best of three calls each, after the cold one preparing made."""
    case = prepare(codec, REFERENCE_FIXTURE)
    size = _fixture_bytes(REFERENCE_FIXTURE)
    dumps = min(timeit.repeat(case.operation("dumps"), number=1, repeat=3))
    loads = min(timeit.repeat(case.operation("loads"), number=1, repeat=3))
    return dumps / size, loads / size


def predict(codec: str, fixture: str) -> Prediction:
    """The pair's calls, scaled from the codec's on REFERENCE_FIXTURE. Raises a SerkitError
    subclass where the codec is not installed here or cannot take the reference."""
    dumps, loads = _per_byte(codec)
    size = _fixture_bytes(fixture)
    return Prediction(dumps * size, loads * size)
