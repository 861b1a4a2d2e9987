"""What serkit's adapter adds over the plain library call, and whether that is small enough.

`bench_overhead` times, for every codec on `small-dict`, the suite's call (the adapter's
`dumps` or `loads`, exactly as `bench_time` calls it) and the codec's `direct` call: the
same library call with the same arguments, as a user would write it, with no serkit
function in between (a str-returning library's result encoded inline with `.encode()`).
Both are compiled by the same template, their names bound once outside the loop, so
the only difference between them is the adapter.

Target: the adapter adds at most the larger of 5 % and 50 ns per call. Where the codec
hands over the library's own callable, both variants run the very same code and the
overhead is zero by construction; measuring it then only shows the noise.
"""

from __future__ import annotations

import itertools
import os
import re
import statistics
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from serkit.codecs.registry import Config, DirectCall, get_codec, registry
from serkit.suite.cases import CaseBenchmark

FIXTURE = "small-dict"
ADAPTER, DIRECT = "adapter", "direct"
CALLS = (ADAPTER, DIRECT)
TARGET_RATIO = 0.05
TARGET_FLOOR_S = 50e-9

# The suite's own call, in the form of a DirectCall: the adapter's two callables.
ADAPTER_CALL = DirectCall(
    "dumps, loads = config.dumps, config.loads", "dumps(obj)", "loads(payload)"
)

# As timeit does: setup runs once, and the loop's names are the closure's, not globals.
_TEMPLATE = """
def make(config, obj, payload):
{setup}
    def loop(_n):
        for _ in _repeat(None, _n):
            {stmt}

    def once():
        return {stmt}

    return loop, once
"""
_HANDED_OVER = re.compile(r"^(\w+)\((obj|payload)\)$")

Loop = Callable[[int], None]


def compile_call(
    call: DirectCall, operation: str, config: Config, obj: Any, payload: bytes
) -> tuple[Loop, Callable[[], Any]]:
    """`loop(n)` runs the call n times; `once()` runs it and returns its result."""
    stmt = getattr(call, operation)
    source = _TEMPLATE.format(setup=textwrap.indent(call.setup, "    "), stmt=stmt)
    namespace: dict[str, Any] = {"_repeat": itertools.repeat}
    exec(compile(source, f"<serkit {operation}: {stmt}>", "exec"), namespace)
    loop, once = namespace["make"](config, obj, payload)
    return loop, once


def hands_over(call: DirectCall, operation: str, config: Config) -> bool:
    """True when the adapter's callable is the very function the direct call names."""
    match = _HANDED_OVER.match(getattr(call, operation))
    if match is None:
        return False
    names: dict[str, Any] = {}
    exec(call.setup, names)
    return names.get(match.group(1)) is getattr(config, operation)


class OverheadBenchmark(CaseBenchmark):
    """Base of bench_overhead's classes: the adapter's call or the direct one, on FIXTURE."""

    params = (registry.names(), [FIXTURE], list(CALLS))
    param_names = ("codec", "fixture", "call")
    inputs = "round_trip"  # loads needs a payload that decodes; dumps pays nothing for it

    loop: Loop

    def prepare_for(self, codec: str, fixture: str, *rest: Any) -> str | None:
        (call,) = rest
        reason = super().prepare_for(codec, fixture)
        if reason is not None:
            return reason  # already reported
        config = Config(self.dumps, self.loads)
        base = get_codec(codec).configs[0]
        direct = registry.spec(codec).direct
        if direct is None:
            reason = "the codec declares no direct call (CodecSpec.direct)"
        elif (config.dumps, config.loads) != (base.dumps, base.loads):
            reason = f"{fixture} needs a fallback config; the direct call is the base one"
        else:
            assert self.operation is not None
            chosen = ADAPTER_CALL if call == ADAPTER else direct
            self.loop, _ = compile_call(chosen, self.operation, config, self.obj, self.payload)
        if reason is not None:
            print(f"serkit: skipped {codec} x {fixture} ({call}): {reason}")
        return reason


# --- judging the timings -----------------------------------------------------------------


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
        return [a / d for a, d in zip(self.adapter_s, self.direct_s)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

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


def judge(
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


def variants(codecs: Iterable[str]) -> dict[str, str]:
    """Each codec's declared variant label, "" for the plain call; unknown ids left out."""
    known = set(registry.names())
    return {c: registry.spec(c).variant for c in codecs if c in known}


# --- measuring it with asv -----------------------------------------------------------------

BENCHMARKS = {
    "dumps": "bench_overhead.DumpsOverhead.time_dumps",
    "loads": "bench_overhead.LoadsOverhead.time_loads",
}


def timings_from(
    values: Mapping[tuple[str, tuple[Any, ...]], float],
) -> dict[tuple[str, str, str], float]:
    """bench_overhead's values, by (benchmark, (codec, fixture, call)), as judge wants them."""
    operations = {name: operation for operation, name in BENCHMARKS.items()}
    return {
        (params[0], operations[name], params[2]): value
        for (name, params), value in values.items()
        if name in operations and len(params) == 3 and params[1] == FIXTURE
    }


def measure(root: Path, codecs: Iterable[str] | None = None, rounds: int = 5) -> list[Overhead]:
    """Run bench_overhead with asv in this interpreter, `rounds` times; judge it.

    Each round is one `asv run` (one asv round), in which a codec's adapter and direct
    benchmarks run back to back (`call` is their last parameter).
    """
    from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV
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
    return judge(complete, variants({codec for codec, _, _ in complete}))
