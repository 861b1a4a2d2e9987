from __future__ import annotations

import math

import pytest

from serkit import SerkitError, codec_names, get_codec
from serkit.codecs.registry import registry
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV
from serkit.suite.overhead import (
    ADAPTER,
    ADAPTER_CALL,
    DIRECT,
    FIXTURE,
    OverheadBenchmark,
    compile_call,
    hands_over,
    variants,
)
from serkit.suite.preparation import prepare
from serkit.trust.overhead import judge_overheads

# The codecs whose adapter is the library's own function, for each operation. Of the
# schema codecs, only orjson-dataclass's dumps is: the others' direct calls make their own
# encoder, decoder or adapter, and its loads builds the dataclasses too.
HANDED_OVER = {
    "dumps": {
        "bson",
        "cbor2",
        "marshal",
        "msgpack",
        "msgspec-json",
        "msgspec-msgpack",
        "orjson",
        "ormsgpack",
        "orjson-dataclass",
    },
}
HANDED_OVER["loads"] = HANDED_OVER["dumps"] - {"orjson-dataclass"} | {
    "json",
    "simplejson",
    "ujson",
    "rapidjson",
    *(f"pickle-p{p}" for p in (0, 2, 4, 5)),
}


class DumpsOverheadLike(OverheadBenchmark):
    operation = "dumps"


def _installed() -> list[str]:
    names = []
    for name in codec_names():
        try:
            get_codec(name)
        except SerkitError:
            continue
        names.append(name)
    return names


@pytest.mark.parametrize("codec", codec_names())
def test_every_builtin_codec_declares_a_direct_call(codec: str) -> None:
    direct = registry.spec(codec).direct
    assert direct is not None and "obj" in direct.dumps and "payload" in direct.loads


@pytest.mark.parametrize("codec", _installed())
def test_the_direct_call_does_the_adapters_work(codec: str) -> None:
    """Same bytes out, same object back: the two variants differ only by the adapter."""
    case = prepare(codec, FIXTURE)
    direct = registry.spec(codec).direct
    assert direct is not None
    schema = case.bound.schema if case.bound is not None else None
    assert (schema is not None) == registry.spec(codec).needs_schema
    for operation in ("dumps", "loads"):
        inputs = (case.config, case.obj, case.payload, schema)
        _, adapter_once = compile_call(ADAPTER_CALL, operation, *inputs)
        _, direct_once = compile_call(direct, operation, *inputs)
        # A schema codec's loads gives back instances of the schema's classes: equal ones.
        assert direct_once() == adapter_once(), operation


def test_adapters_hand_over_the_librarys_own_function() -> None:
    for operation in ("dumps", "loads"):
        found = set()
        for codec in _installed():
            direct = registry.spec(codec).direct
            assert direct is not None
            case = prepare(codec, FIXTURE)
            schema = case.bound.schema if case.bound is not None else None
            if hands_over(direct, operation, case.config, case.obj, schema):
                found.add(codec)
        assert found == HANDED_OVER[operation] & set(_installed()), operation


def test_adapter_call_loop_runs_the_call_n_times() -> None:
    calls: list[object] = []
    config = get_codec("json").configs[0]
    spy = type(config)(lambda obj: calls.append(obj) or b"", config.loads)
    loop, _ = compile_call(ADAPTER_CALL, "dumps", spy, {"a": 1}, b"{}")
    loop(7)
    assert calls == [{"a": 1}] * 7


def test_only_variants_that_change_speed_are_labelled() -> None:
    labels = variants([*codec_names(), "not-a-codec"])
    assert "not-a-codec" not in labels
    labelled = {codec for codec, label in labels.items() if label}
    # Every schema codec: its calls time typed objects, built from the document's schema.
    typed = {codec for codec in codec_names() if registry.spec(codec).needs_schema}
    assert len(typed) == 8
    assert labelled == {
        "msgpack-ext",
        "yaml",
        "yaml-c",
        *(f"pickle-p{p}" for p in (0, 2, 4, 5)),
        *typed,
    }
    assert "sort_keys=False" in labels["yaml"]


def test_benchmark_prepares_each_call_and_skips_what_is_not_selected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import serkit.suite.preparation as preparation

    monkeypatch.setenv(CODECS_ENV, "orjson")
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    # A call of about 1 µs, as orjson's is on an idle machine: a busy one can read any
    # preparation or call as long, which is the sizing's business, not this test's.
    monkeypatch.setattr(preparation, "LONG_CALL_S", math.inf)
    monkeypatch.setattr(
        preparation.timeit, "repeat", lambda call, number, repeat: [number * 1e-6] * repeat
    )
    for call in (ADAPTER, DIRECT):
        bench = DumpsOverheadLike()
        assert ("orjson", FIXTURE, call) not in bench.skip_params
        assert bench.inner_loops == 20  # 20 µs a body, as in bench_time
        bench.loop(2)
    assert ("json", FIXTURE, DIRECT) in DumpsOverheadLike().skip_params


def test_a_schema_codec_is_timed_bound_to_the_documents_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CODECS_ENV, "fastavro")
    monkeypatch.setenv(FIXTURES_ENV, FIXTURE)  # as `serkit overhead` names it
    for call in (ADAPTER, DIRECT):
        bench = DumpsOverheadLike()
        assert ("fastavro", FIXTURE, call) not in bench.skip_params
        assert bench.bound is not None and bench.bound.schema is not None
        bench.loop(2)


# --- judging -------------------------------------------------------------------------------


def test_judge_allows_50_ns_on_fast_calls_and_5_percent_on_slow_ones() -> None:
    timings = {
        ("orjson", "dumps", ADAPTER): 1.04e-6,  # +40 ns on 1 µs: under the 50 ns floor
        ("orjson", "dumps", DIRECT): 1.0e-6,
        ("json", "dumps", ADAPTER): 10.6e-6,  # +6 % on 10 µs: over 5 % (500 ns)
        ("json", "dumps", DIRECT): 10.0e-6,
        ("yaml", "dumps", ADAPTER): 1.04e-3,  # +4 % on 1 ms
        ("yaml", "dumps", DIRECT): 1.0e-3,
    }
    found = {o.codec: o for o in judge_overheads(timings, {"yaml": "sort_keys=False"})}
    assert found["orjson"].within and math.isclose(found["orjson"].allowed_s, 50e-9)
    assert not found["json"].within and math.isclose(found["json"].allowed_s, 500e-9)
    assert found["yaml"].within and found["yaml"].variant == "sort_keys=False"
    assert math.isclose(found["json"].overhead_s, 600e-9)
    assert math.isclose(found["json"].ratio, 1.06)


def test_rounds_are_judged_by_the_median_of_their_ratios() -> None:
    # The machine slowed down in round 2; each round's pair ran back to back.
    timings = {
        ("orjson", "dumps", ADAPTER): [1.00e-6, 2.00e-6, 1.01e-6],
        ("orjson", "dumps", DIRECT): [0.99e-6, 2.02e-6, 1.00e-6],
    }
    (only,) = judge_overheads(timings)
    assert math.isclose(only.ratio, 1.01) and only.within
    assert math.isclose(only.direct_median_s, 1.00e-6)
    assert math.isclose(only.overhead_s, 10e-9)


def test_a_faster_adapter_is_within_target() -> None:
    (only,) = judge_overheads({("x", "loads", ADAPTER): 0.9e-6, ("x", "loads", DIRECT): 1.0e-6})
    assert only.within and only.overhead_s < 0


def test_judge_leaves_out_pairs_missing_a_side_or_a_value() -> None:
    timings = {
        ("a", "dumps", ADAPTER): 1e-6,  # no direct time
        ("b", "dumps", ADAPTER): 1e-6,
        ("b", "dumps", DIRECT): math.nan,  # skipped in asv's results
        ("d", "dumps", ADAPTER): [1e-6, 1e-6],
        ("d", "dumps", DIRECT): [1e-6],  # not the same rounds
        ("c", "loads", ADAPTER): 2e-6,
        ("c", "loads", DIRECT): 2e-6,
    }
    (only,) = judge_overheads(timings)
    data = only.as_dict()
    assert data["codec"] == "c" and data["within"] is True and data["overhead_s"] == 0
    assert set(data) >= {"adapter_s", "direct_s", "ratios", "ratio", "allowed_s", "variant"}
