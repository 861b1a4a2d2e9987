"""Timing a post's measurements as the asv suite times them, interleaved round by round.

:func:`serkit.suite.preparation.prepare` builds each (codec, fixture) pair as the suite does, and
a sample repeats ``Case.operation`` in whole bodies of ``Case.inner_loops`` calls until it
lasts about :data:`SAMPLE_TARGET_S` (asv's default sample time), timed by :mod:`timeit` as
asv does. Samples interleave round by round across all of a post's measurements, so load
from other jobs falls on every codec alike, and a comparison between two codecs uses the
per-round ratios of their samples.

`serkit try` (:mod:`serkit.trial.measure`) times the user's documents with the same
sampling and the same interleaving, with rounds budgeted by time.
"""

from __future__ import annotations

import math
import timeit
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from serkit.errors import SerkitError
from serkit.progress import progress
from serkit.stats import paired_ratios, quartiles
from serkit.suite.preparation import WARMED_CALL_S, Case, prepare

SAMPLE_TARGET_S = 0.010  # asv's default sample_time

Key = tuple[str, str, str]  # (codec, fixture, operation)
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Timing:
    """One measurement: seconds per call, one sample per round."""

    samples: tuple[float, ...]
    calls_per_sample: int = 1
    # No sample fit its share of a time budget (serkit try): the only figure is the first,
    # cold call that preparing the pair made.
    first_call_only: bool = False

    @property
    def quartiles(self) -> tuple[float, float, float]:
        return quartiles(self.samples)

    @property
    def median(self) -> float:
        return self.quartiles[1]


@dataclass
class Measured:
    """What one post's run produced: timings, payload sizes, and what could not run."""

    timings: dict[Key, Timing] = field(default_factory=dict)
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)  # (codec, fixture) -> B
    failed: dict[tuple[str, str], str] = field(default_factory=dict)  # (codec, fixture) -> why

    def ratios(self, winner: Key, loser: Key) -> list[float] | None:
        """Per round, the loser's time over the winner's: above 1, the winner was faster."""
        a, b = self.timings.get(winner), self.timings.get(loser)
        if a is None or b is None:
            return None
        return paired_ratios(b.samples, a.samples)


def sample_size(case: Case, operation: str) -> tuple[int, float]:
    """Calls per sample, whole suite bodies (inner_loops calls each) lasting about
    SAMPLE_TARGET_S, and the seconds one sample is expected to take.

    A call whose first run took WARMED_CALL_S or more is one sample on its own, and is not
    run again to be sized.
    """
    first = case.first_call_s(operation)
    if first is not None and first >= WARMED_CALL_S:
        return 1, first
    inner = case.inner_loops(operation)
    body_s = timeit.Timer(case.operation(operation)).timeit(inner)
    bodies = max(1, math.ceil(SAMPLE_TARGET_S / max(body_s, 1e-9)))
    return inner * bodies, body_s * bodies


def sample_interleaved(
    calls: Mapping[K, Callable[[], object]],
    numbers: Mapping[K, int],
    counts: Mapping[K, int],
    desc: str,
    deadline: float = math.inf,
) -> dict[K, list[float]]:
    """Seconds per call, `counts[key]` samples of `numbers[key]` calls each, one per round.

    Every round runs each key that still needs a sample, in an order rotated each round,
    so no codec always runs first (or right after another). No round starts after
    `deadline` (on timeit.default_timer's clock).
    """
    samples: dict[K, list[float]] = {key: [] for key in calls}
    keys = list(calls)
    rounds = max(counts.values(), default=0)
    with progress(total=sum(counts.values()), desc=desc, unit="sample") as bar:
        for round_ in range(rounds):
            if timeit.default_timer() > deadline:
                break
            shift = round_ % max(1, len(keys))
            for key in keys[shift:] + keys[:shift]:
                if counts[key] > round_:
                    number = numbers[key]
                    samples[key].append(timeit.Timer(calls[key]).timeit(number) / number)
                    bar.update()
    return samples


def measure_timings(keys: Sequence[Key], rounds: int, desc: str = "measuring") -> Measured:
    """Each key's seconds per call, one sample per round, and each pair's payload size.

    Each (codec, fixture) pair is prepared as the asv suite prepares it; a pair that cannot
    be (not installed, or cannot encode the fixture) is recorded in `failed` with why.
    """
    measured = Measured()
    cases: dict[tuple[str, str], Case] = {}
    shared: dict[str, Any] = {}
    pairs = list(dict.fromkeys((codec, fixture) for codec, fixture, _ in keys))
    with progress(total=len(pairs), desc=f"{desc}: preparing", unit="pair") as bar:
        for codec, fixture in pairs:
            try:
                case = prepare(codec, fixture)
            except SerkitError as exc:  # not installed, or cannot encode it: a row says so
                measured.failed[codec, fixture] = str(exc)
            else:
                # Builds are equal; keeping one per fixture saves ~1 GB at 100,000 records. A
                # schema codec's obj is its own typed objects (Structs, models), not shared.
                if case.bound is None or not case.bound.needs_schema:
                    case = replace(case, obj=shared.setdefault(fixture, case.obj))
                cases[codec, fixture] = case
                measured.sizes[codec, fixture] = len(case.payload)
            bar.update()
    runnable = [key for key in keys if key[:2] in cases]
    calls = {key: cases[key[:2]].operation(key[2]) for key in runnable}
    numbers = {key: sample_size(cases[key[:2]], key[2])[0] for key in runnable}
    samples = sample_interleaved(calls, numbers, dict.fromkeys(runnable, rounds), desc)
    measured.timings = {key: Timing(tuple(values), numbers[key]) for key, values in samples.items()}
    return measured
