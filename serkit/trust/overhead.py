"""Whether serkit's adapter adds little enough over the plain library call.

Target: the adapter adds at most the larger of 5 % and 50 ns per call. Where the codec
hands over the library's own callable, both variants run the very same code and the
overhead is zero by construction; measuring it then only shows the noise. The timings
come from bench_overhead (serkit.suite.overhead).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from serkit.stats import median_paired_ratio, paired_ratios
from serkit.suite.benchmark_names import OVERHEAD
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV
from serkit.suite.overhead import ADAPTER, DIRECT, FIXTURE, variants

TARGET_RATIO = 0.05
TARGET_FLOOR_S = 50e-9


@dataclass(frozen=True)
class Overhead:
    """One codec and operation: the adapter's time, the direct call's, and the verdict.

    With several rounds, each round's adapter and direct values ran back to back, so
    the ratio is the median of the rounds' ratios (machine drift between rounds moves
    both alike), and the overhead is that ratio applied to the direct call's median.
    """

    codec: str
    operation: str
    adapter_s: tuple[float, ...]  # one value per round
    direct_s: tuple[float, ...]
    variant: str = ""  # CodecSpec.variant: options of the call that change its speed

    @property
    def ratios(self) -> list[float]:
        return paired_ratios(self.adapter_s, self.direct_s)

    @property
    def ratio(self) -> float:
        return median_paired_ratio(self.adapter_s, self.direct_s)

    @property
    def direct_median_s(self) -> float:
        return statistics.median(self.direct_s)

    @property
    def adapter_median_s(self) -> float:
        return statistics.median(self.adapter_s)

    @property
    def overhead_s(self) -> float:
        return (self.ratio - 1) * self.direct_median_s

    @property
    def allowed_s(self) -> float:
        return max(TARGET_RATIO * self.direct_median_s, TARGET_FLOOR_S)

    @property
    def within(self) -> bool:
        return self.overhead_s <= self.allowed_s

    def as_dict(self) -> dict[str, Any]:
        return {
            "codec": self.codec,
            "operation": self.operation,
            "variant": self.variant,
            "adapter_s": list(self.adapter_s),
            "direct_s": list(self.direct_s),
            "adapter_median_s": self.adapter_median_s,
            "direct_median_s": self.direct_median_s,
            "ratios": self.ratios,
            "ratio": self.ratio,
            "overhead_s": self.overhead_s,
            "allowed_s": self.allowed_s,
            "within": self.within,
        }


Timing = Union[float, Sequence[float]]


def judge_overheads(
    timings: Mapping[tuple[str, str, str], Timing], variants: Mapping[str, str] | None = None
) -> list[Overhead]:
    """Pair each (codec, operation)'s adapter and direct times, in seconds per call.

    `timings` maps (codec, operation, call), `call` being "adapter" or "direct", to
    seconds: one value, or one per round (the same rounds on both sides). A pair
    missing either side, or with a value that is not above 0 (NaN, a skip), is left
    out. `variants` maps codec to its label (by default, none).
    """
    found = []
    keys = sorted({(codec, op) for codec, op, _ in timings})
    for codec, operation in keys:
        adapter = _values(timings.get((codec, operation, ADAPTER)))
        direct = _values(timings.get((codec, operation, DIRECT)))
        if not adapter or len(adapter) != len(direct):
            continue
        if not all(v > 0 for v in (*adapter, *direct)):  # False for NaN too
            continue
        label = (variants or {}).get(codec, "")
        found.append(Overhead(codec, operation, adapter, direct, label))
    return found


def _values(timing: Timing | None) -> tuple[float, ...]:
    if timing is None:
        return ()
    return (float(timing),) if isinstance(timing, (int, float)) else tuple(timing)


# --- measuring it with asv -----------------------------------------------------------------


def timings_from(
    values: Mapping[tuple[str, tuple[Any, ...]], float],
) -> dict[tuple[str, str, str], float]:
    """bench_overhead's values, by (benchmark, (codec, fixture, call)), for judge_overheads."""
    operations = {name: operation for operation, name in OVERHEAD.items()}
    return {
        (params[0], operations[name], params[2]): value
        for (name, params), value in values.items()
        if name in operations and len(params) == 3 and params[1] == FIXTURE
    }


def measure_overheads(
    root: Path, codecs: Iterable[str] | None = None, rounds: int = 5
) -> list[Overhead]:
    """Run bench_overhead with asv in this interpreter, `rounds` times; judge it.

    Each round is one `asv run` (one asv round), in which a codec's adapter and direct
    benchmarks run back to back (`call` is their last parameter).
    """
    from serkit.trust.agreement import ScratchSuite, progress_rounds

    env = {**os.environ, FIXTURES_ENV: FIXTURE}
    if codecs is not None:
        env[CODECS_ENV] = ",".join(codecs)
    per_round: dict[tuple[str, str, str], list[float]] = {}
    with ScratchSuite(root, env) as suite:
        for _ in progress_rounds(rounds):
            found = timings_from(suite.run(["^bench_overhead\\."], ["rounds=1"]))
            for key, value in found.items():
                per_round.setdefault(key, []).append(value)
    complete = {key: values for key, values in per_round.items() if len(values) == rounds}
    return judge_overheads(complete, variants({codec for codec, _, _ in complete}))
