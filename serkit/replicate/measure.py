"""Timing a post's measurements as the asv suite times them, interleaved round by round.

:func:`serkit.suite.cases.prepare` builds each (codec, fixture) pair as the suite does, and
a sample repeats ``Case.operation`` in whole bodies of ``Case.inner_loops`` calls until it
lasts about :data:`SAMPLE_TARGET_S` (asv's default sample time), timed by :mod:`timeit` as
asv does. Samples interleave round by round across all of a post's measurements, so load
from other jobs falls on every codec alike, and a comparison between two codecs uses the
per-round ratios of their samples.
"""

from __future__ import annotations

import math
import timeit
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from serkit.errors import SerkitError
from serkit.progress import progress
from serkit.stats import paired_ratios, quartiles
from serkit.suite.cases import Case, prepare

SAMPLE_TARGET_S = 0.010  # asv's default sample_time

Key = tuple[str, str, str]  # (codec, fixture, operation)


@dataclass(frozen=True)
class Timing:
    """One measurement: seconds per call, one sample per round."""

    samples: tuple[float, ...]

    @property
    def quartiles(self) -> tuple[float, float, float]:
        return quartiles(self.samples)


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


def _calls_per_sample(case: Case, operation: str) -> int:
    """Whole suite bodies (inner_loops calls each) lasting about SAMPLE_TARGET_S."""
    inner = case.inner_loops(operation)
    body_s = timeit.Timer(case.operation(operation)).timeit(inner)
    return inner * max(1, math.ceil(SAMPLE_TARGET_S / max(body_s, 1e-9)))


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
                # Builds are equal; keeping one per fixture saves ~1 GB at 100,000 records.
                case = replace(case, obj=shared.setdefault(fixture, case.obj))
                cases[codec, fixture] = case
                measured.sizes[codec, fixture] = len(case.payload)
            bar.update()
    runnable = [key for key in keys if key[:2] in cases]
    calls = {key: cases[key[:2]].operation(key[2]) for key in runnable}
    numbers = {key: _calls_per_sample(cases[key[:2]], key[2]) for key in runnable}
    samples: dict[Key, list[float]] = {key: [] for key in runnable}
    with progress(total=rounds * len(runnable), desc=desc, unit="sample") as bar:
        for round_ in range(rounds):
            # Rotated each round, so no codec always runs first (or right after another).
            shift = round_ % max(1, len(runnable))
            for key in runnable[shift:] + runnable[:shift]:
                number = numbers[key]
                samples[key].append(timeit.Timer(calls[key]).timeit(number) / number)
                bar.update()
    measured.timings = {key: Timing(tuple(values)) for key, values in samples.items()}
    return measured
