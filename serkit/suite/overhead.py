"""The suite's side of the adapter-overhead check: the adapter's call beside the direct one.

`bench_overhead` times, for every codec on `small-dict`, the suite's call (the adapter's
`dumps` or `loads`, exactly as `bench_time` calls it) and the codec's `direct` call: the
same library call with the same arguments, as a user would write it, with no serkit
function in between (a str-returning library's result encoded inline with `.encode()`).
Both are compiled by the same template, their names bound once outside the loop, so
the only difference between them is the adapter.

serkit.trust.overhead judges the timings against the target.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from collections.abc import Iterable
from typing import Any, Callable

from serkit.codecs.registry import Config, DirectCall, get_codec, registry
from serkit.schemas.types import Schema
from serkit.suite.case_benchmark import CaseBenchmark

FIXTURE = "small-dict"
ADAPTER, DIRECT = "adapter", "direct"
CALLS = (ADAPTER, DIRECT)

# The suite's own call, in the form of a DirectCall: the adapter's two callables.
ADAPTER_CALL = DirectCall(
    "dumps, loads = config.dumps, config.loads", "dumps(obj)", "loads(payload)"
)

# As timeit does: setup runs once, and the loop's names are the closure's, not globals.
# `schema` is the schema a schema codec is bound to (None for the others): what its
# direct call builds its library's schema from, as a user's code has its own.
_TEMPLATE = """
def make(config, obj, payload, schema):
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
    call: DirectCall,
    operation: str,
    config: Config,
    obj: Any,
    payload: bytes,
    schema: Schema | None = None,
) -> tuple[Loop, Callable[[], Any]]:
    """`loop(n)` runs the call n times; `once()` runs it and returns its result."""
    stmt = getattr(call, operation)
    source = _TEMPLATE.format(setup=textwrap.indent(call.setup, "    "), stmt=stmt)
    namespace: dict[str, Any] = {"_repeat": itertools.repeat}
    exec(compile(source, f"<serkit {operation}: {stmt}>", "exec"), namespace)
    loop, once = namespace["make"](config, obj, payload, schema)
    return loop, once


def hands_over(
    call: DirectCall, operation: str, config: Config, obj: Any, schema: Schema | None = None
) -> bool:
    """True when the adapter's callable is the very function the direct call names."""
    match = _HANDED_OVER.match(getattr(call, operation))
    if match is None:
        return False
    names: dict[str, Any] = {"config": config, "obj": obj, "schema": schema}
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
        bound = self.bound or get_codec(codec)  # a schema codec: bound to the document's schema
        base = bound.configs[0]
        direct = registry.spec(codec).direct
        if direct is None:
            reason = "the codec declares no direct call (CodecSpec.direct)"
        elif (config.dumps, config.loads) != (base.dumps, base.loads):
            reason = f"{fixture} needs a fallback config; the direct call is the base one"
        else:
            assert self.operation is not None
            chosen = ADAPTER_CALL if call == ADAPTER else direct
            self.loop, _ = compile_call(
                chosen, self.operation, config, self.obj, self.payload, bound.schema
            )
        if reason is not None:
            print(f"serkit: skipped {codec} x {fixture} ({call}): {reason}")
        return reason


def variants(codecs: Iterable[str]) -> dict[str, str]:
    """Each codec's declared variant label, "" for the plain call; unknown ids left out."""
    known = set(registry.names())
    return {c: registry.spec(c).variant for c in codecs if c in known}
