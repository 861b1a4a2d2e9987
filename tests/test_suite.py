from __future__ import annotations

import gc
import gzip
import itertools
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from serkit import SerkitError, UnknownCodec, UnknownFixture
from serkit.checks.sizes import measure_fixture
from serkit.suite import case_benchmark, preparation
from serkit.suite import cases as suite
from serkit.suite.case_benchmark import CaseBenchmark, per_call_timer
from serkit.suite.cases import (
    CODECS_ENV,
    COMPRESSORS,
    FIXTURES_ENV,
    LIBRARY_ENV,
    SLOW_ENV,
    WARMUP_ENV,
    Selection,
    warmup_from_env,
)
from serkit.suite.preparation import prepare


class DumpsLike(CaseBenchmark):
    operation = "dumps"


def test_selection_defaults_to_every_codec_and_the_fast_fixtures() -> None:
    selection = Selection.from_env({})
    assert selection.excludes("orjson", "small-dict") is None
    assert "slow" in (selection.excludes("orjson", "random-dicts-100000") or "")
    assert Selection.from_env({SLOW_ENV: "1"}).excludes("orjson", "random-dicts-100000") is None


def test_selection_narrows_by_codec_fixture_and_library() -> None:
    selection = Selection.from_env({CODECS_ENV: "orjson, json", FIXTURES_ENV: "small-dict"})
    assert selection.excludes("json", "small-dict") is None
    assert CODECS_ENV in (selection.excludes("ujson", "small-dict") or "")
    assert FIXTURES_ENV in (selection.excludes("json", "sensor-record") or "")
    axis = Selection.from_env({LIBRARY_ENV: "msgpack"})
    assert axis.excludes("msgpack-ext", "small-dict") is None
    assert "varies msgpack only" in (axis.excludes("orjson", "small-dict") or "")


def test_selection_refuses_unknown_ids() -> None:
    with pytest.raises(UnknownCodec, match="known codecs"):
        Selection.from_env({CODECS_ENV: "orjsn"})
    with pytest.raises(UnknownFixture):
        Selection.from_env({FIXTURES_ENV: "small-dikt"})


def test_skip_check_prepares_the_pair_outside_the_timed_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CODECS_ENV, raising=False)
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    bench = DumpsLike()
    assert ("orjson", "small-dict") not in bench.skip_params
    assert bench.dumps(bench.obj) == bench.payload
    # Fast calls are repeated inside one timed body; the timer divides them back out.
    assert bench.inner_loops > 1
    assert ("orjson", "sensor-record") in DumpsLike().skip_params  # namedtuples: unsupported


def test_skip_check_skips_what_the_selection_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CODECS_ENV, "json")
    bench = DumpsLike()
    assert ("orjson", "small-dict") in bench.skip_params
    assert not hasattr(bench, "payload")  # nothing was prepared for it


def test_first_calls_are_timed_by_the_preparation() -> None:
    case = prepare("json", "small-dict")
    assert case.loads_s is not None and case.dumps_s > 0 and case.loads_s > 0
    assert case.first_call_s("round_trip") == case.dumps_s + case.loads_s
    assert prepare("json", "small-dict", decode=False).first_call_s("loads") is None


def test_a_long_first_call_is_the_warm_up_and_asv_skips_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CODECS_ENV, raising=False)
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    fast = DumpsLike()
    assert ("orjson", "small-dict") not in fast.skip_params
    assert "warmup_time" not in vars(fast)  # asv's own
    monkeypatch.setenv(WARMUP_ENV, "0.02")  # the quick run's, for pairs not warmed up
    quick = DumpsLike()
    assert ("orjson", "small-dict") not in quick.skip_params
    assert quick.warmup_time == 0.02
    monkeypatch.setattr(preparation, "WARMED_CALL_S", 0.0)  # as if every call were long
    long = DumpsLike()
    assert ("orjson", "small-dict") not in long.skip_params
    assert (long.number, long.warmup_time) == (1, 0.0)


def test_under_serkit_bench_the_warm_up_is_the_pairs_calls_made_while_preparing_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """asv's warm-up is whole samples, the gate and the canaries around each: under serkit
    bench the warm-up a run sets is made of the pair's calls in preparing it, and asv
    makes none."""
    from serkit.suite.budget import NOTES_ENV

    monkeypatch.delenv(CODECS_ENV, raising=False)
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    monkeypatch.setenv(NOTES_ENV, str(tmp_path))
    monkeypatch.setenv(WARMUP_ENV, "0.02")
    warmed: list[tuple[object, float]] = []
    monkeypatch.setattr(
        case_benchmark, "warm_up", lambda call, seconds: warmed.append((call, seconds))
    )
    bench = DumpsLike()
    assert ("orjson", "small-dict") not in bench.skip_params
    assert bench.warmup_time == 0.0  # asv's: none
    ((call, seconds),) = warmed
    assert seconds == 0.02 and callable(call)
    monkeypatch.delenv(WARMUP_ENV)  # a full run: asv's own warm-up, serkit's none
    assert ("orjson", "small-dict") not in DumpsLike().skip_params
    assert len(warmed) == 1


def test_a_warm_up_makes_calls_for_its_time_with_the_collector_off() -> None:
    collecting: list[bool] = []
    assert (
        case_benchmark.warm_up(lambda: collecting.append(gc.isenabled()), 0.0) == 1
    )  # one at least
    assert collecting == [False] and gc.isenabled()
    ticks = itertools.count()  # a clock of its own: a millisecond a reading

    assert case_benchmark.warm_up(lambda: None, 0.005, clock=lambda: next(ticks) / 1000) == 5


def test_serkit_sizes_a_sample_by_the_calls_it_times_not_by_the_clock_around_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """asv would size a sample by the wall clock around it, canary readings and all, so a
    run calibrated in the slow state took fewer bodies a sample: serkit sets `number`."""
    assert preparation.bodies_per_sample(1, suite.SAMPLE_TIME_S / 9) == 9
    assert preparation.bodies_per_sample(20, suite.SAMPLE_TIME_S / 100) == 5
    assert preparation.bodies_per_sample(1, suite.SAMPLE_TIME_S * 30) == 1  # a long call: one
    assert preparation.inner_loops_for(preparation.INNER_TARGET_S / 7) == 7
    assert preparation.inner_loops_for(1e-12) == preparation.MAX_INNER_LOOPS
    monkeypatch.delenv(CODECS_ENV, raising=False)
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    bench = DumpsLike()
    assert ("orjson", "small-dict") not in bench.skip_params
    # Set on the instance, where asv's setup reads it; a body of 20 µs or so, so a 0.2 ms
    # sample holds several.
    assert vars(bench)["number"] >= 2


def test_a_pair_over_the_budget_is_timed_once_and_noted_for_serkit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serkit.suite.budget import BUDGET_ENV, NOTES_ENV, read_singles

    monkeypatch.setenv(CODECS_ENV, "json")
    monkeypatch.setenv(FIXTURES_ENV, "small-dict,random-dicts-100")
    monkeypatch.setenv(NOTES_ENV, str(tmp_path))
    monkeypatch.delenv(WARMUP_ENV, raising=False)
    monkeypatch.setenv(BUDGET_ENV, "1000")  # no pair is over it
    under = DumpsLike()
    assert ("json", "random-dicts-100") not in under.skip_params
    assert "repeat" not in vars(under) and list(read_singles(tmp_path)) == []  # not once
    monkeypatch.setenv(BUDGET_ENV, "1e-9")  # every pair is over it
    over = DumpsLike()
    assert ("json", "random-dicts-100") not in over.skip_params  # timed, not skipped
    assert (over.number, over.warmup_time) == (1, 0.0)  # once: preparing was its warm-up
    (noted,) = read_singles(tmp_path)
    # Named as asv names it, without the suite's package (test_suite.DumpsLike here).
    assert noted.benchmark == "DumpsLike" or noted.benchmark.endswith(".DumpsLike")
    assert noted.params == ("json", "random-dicts-100")
    assert noted.prepare_s > 0 and noted.call_s > 0


def test_the_budget_is_read_in_seconds_and_checked() -> None:
    from serkit.suite.budget import BUDGET_ENV, budget_from_env, pair_cost_s

    assert budget_from_env({}) is None
    assert budget_from_env({BUDGET_ENV: "2"}) == 2.0
    for bad in ("soon", "0", "-1"):
        with pytest.raises(SerkitError, match=BUDGET_ENV):
            budget_from_env({BUDGET_ENV: bad})
    # Five processes of a 0.25 s call, each preparing it first: 2.5 s, over a 2 s budget.
    assert pair_cost_s(0.25, 0.25, 5) == 2.5


def test_the_budget_is_judged_at_the_reference_speed_so_the_state_cannot_move_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One pair measured in either state, on synthetic two-state data: in the machine's own
    seconds the slow state (x1.8, the canary with it) put it over a 2 s budget; at the
    reference speed it is under in both, and a pair truly over it is over in both."""
    from serkit.suite import canary
    from serkit.suite.budget import BUDGET_ENV, NOTES_ENV, read_singles, timed_once

    monkeypatch.setenv(BUDGET_ENV, "2")
    monkeypatch.setenv(NOTES_ENV, str(tmp_path))
    reference = canary.reference_canary_ns()
    assert reference is not None  # CPython
    params = ("json", "random-dicts-100")

    def judged(prepare_s: float, call_s: float, slowness: float, *, scaled: bool) -> bool:
        readings = lambda: reference * slowness  # noqa: E731 - the canary slows with the call
        scale = (lambda: canary.reference_scale(readings)) if scaled else None
        return timed_once(
            "bench_time.Dumps", params, prepare_s * slowness, call_s * slowness, 5, 25, scale
        )

    # Five processes of 25 samples of a 12 ms call, each preparing it in 50 ms: 1.75 s fast.
    assert not judged(0.05, 0.012, 1.0, scaled=False)
    assert judged(0.05, 0.012, 1.8, scaled=False)  # 3.15 s in the slow state: once
    assert not judged(0.05, 0.012, 1.0, scaled=True)
    assert not judged(0.05, 0.012, 1.8, scaled=True)
    assert judged(0.05, 0.02, 1.0, scaled=True) and judged(0.05, 0.02, 1.8, scaled=True)
    (noted,) = read_singles(tmp_path)  # one note a pair, the last: at the reference speed
    assert (noted.prepare_s, noted.call_s) == (pytest.approx(0.05), pytest.approx(0.02))
    # Another implementation than CPython has no reference: its own seconds.
    monkeypatch.setattr(canary.platform, "python_implementation", lambda: "PyPy")
    assert canary.reference_scale(lambda: 1e9) == 1.0


def test_a_cold_first_call_is_checked_again_warm_before_the_pair_is_timed_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Five processes of 25 samples against a 2 s budget: a first call of 16 ms (cold)
    puts a pair over it, its later calls of 8 ms would not; a call over it even at half
    its first time is not made again."""
    from serkit.suite.budget import BUDGET_ENV, NOTES_ENV, read_singles, timed_once

    monkeypatch.setenv(BUDGET_ENV, "2")
    monkeypatch.setenv(NOTES_ENV, str(tmp_path))
    asked: list[float] = []

    def warm(seconds: float) -> Callable[[], float]:
        def call() -> float:
            asked.append(seconds)
            return seconds

        return call

    def once(call_s: float, warm_s: float | None) -> bool:
        call = warm(warm_s) if warm_s is not None else None
        params = (str(call_s), str(warm_s))  # a note a pair
        return timed_once("bench_time.Loads", params, 0.05, call_s, 5, 25, None, call)

    assert not once(0.012, 0.001) and asked == []  # under the budget cold: never asked
    assert once(0.016, None)  # over, with nothing to ask
    assert not once(0.016, 0.008) and asked == [0.008]  # 1.25 s warm: in its processes
    assert once(0.016, 0.015) and asked == [0.008, 0.015]  # still over warm: once
    assert once(0.04, 0.001) and asked == [0.008, 0.015]  # 2.75 s at half: not asked
    # Noted with the faster of its two calls, as the pair was judged.
    assert {round(n.call_s, 3) for n in read_singles(tmp_path)} == {0.015, 0.016, 0.04}


def test_warmup_is_read_in_seconds_and_checked() -> None:
    assert warmup_from_env({}) is None
    assert warmup_from_env({WARMUP_ENV: " 0.02 "}) == 0.02
    for bad in ("fast", "-1", "60"):
        with pytest.raises(SerkitError, match=WARMUP_ENV):
            warmup_from_env({WARMUP_ENV: bad})


def test_fallback_config_is_the_one_timed() -> None:
    case = prepare("orjson", "random-dicts-10")  # int keys need OPT_NON_STR_KEYS
    assert case.config.options == "option=OPT_NON_STR_KEYS"


def test_per_call_timer_reads_seconds_per_inner_loop() -> None:
    clock = per_call_timer(10)
    first = clock()
    assert first > 0
    assert clock() - first < 1  # monotonic, and scaled down


def test_prepared_payload_is_what_serkit_sizes_reports() -> None:
    (result,) = measure_fixture("senate-bios", ["yaml-c"])
    assert len(prepare("yaml-c", "senate-bios").payload) == result.bytes


def test_compressors_are_deterministic_and_labelled_with_their_level() -> None:
    data = prepare("json", "random-dicts-100").payload
    for name, compress in COMPRESSORS.items():
        assert compress(data) == compress(data)
        assert len(compress(data)) < len(data), name
    assert gzip.decompress(COMPRESSORS["gzip-6"](data)) == data


def test_preparing_a_pair_settles_the_allocator_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preparation, "_allocator_settled", False)
    calls: list[int] = []

    def malloc(size: int) -> int:
        calls.append(size)
        return 1

    def free(pointer: int) -> None:
        calls.append(-pointer)

    # Plain functions take ctypes' restype and argtypes attributes like its own do.
    libc = types.SimpleNamespace(malloc=malloc, free=free)
    monkeypatch.setattr(preparation.ctypes, "CDLL", lambda name: libc)
    preparation.prepare("json", "small-dict")
    preparation.prepare("json", "small-dict")
    assert calls == [preparation.SETTLE_BYTES, -1]  # one block out and back, for the process


def test_the_allocator_is_left_alone_where_the_c_library_is_out_of_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreachable(name: object) -> None:
        raise OSError("no C library")

    monkeypatch.setattr(preparation, "_allocator_settled", False)
    monkeypatch.setattr(preparation.ctypes, "CDLL", unreachable)
    assert preparation.settle_allocator() is False
    assert preparation.prepare("json", "small-dict").payload  # preparing still works
