"""Memory per call at the allocator: known allocation patterns, the floors, the fresh process."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from serkit.codecs.registry import Config
from serkit.errors import SerkitError
from serkit.suite import allocations, memory
from serkit.suite.cases import SLOW_ENV
from serkit.suite.preparation import Case

pytestmark = pytest.mark.skipif(
    allocations.unavailable() is not None, reason=str(allocations.unavailable())
)

N = 100_000
ONE_BYTES_OBJECT = sys.getsizeof(bytes(N))  # N bytes and the object's header


def _one_bytes_object(obj: object) -> bytes:
    """A dumps that makes exactly one allocation: a bytes object of N bytes."""
    return bytes(N)


def _nested(depth: int) -> bytes:
    return _nested(depth - 1) if depth else bytes(N)


CACHED = bytes(N)


def _cached(obj: object) -> bytes:
    """A dumps that allocates nothing: it hands out a buffer made beforehand."""
    return CACHED


def _records(payload: bytes) -> list[dict[str, int]]:
    """A loads that builds 1,000 new dicts and lists."""
    return [{"i": i, "v": [i, i + 1]} for i in range(1000, 2000)]


def _case(dumps: Any = _one_bytes_object, loads: Any = _records) -> Case:
    config = Config(dumps, loads)
    return Case("test-codec", "test-fixture", config, {"a": 1}, bytes(N), 0.0, 0.001, 0.001)


def test_one_bytes_object_is_one_allocation_of_its_size() -> None:
    measured = allocations.measure_call(partial(_one_bytes_object, None))
    assert measured.allocations == 1
    assert measured.peak_bytes == ONE_BYTES_OBJECT


@pytest.mark.skipif(sys.version_info < (3, 11), reason="frames are allocated before 3.11")
def test_frames_the_tracker_forces_are_not_counted() -> None:
    # A dozen Python frames: each frame object is the profile hook's, not the call's.
    measured = allocations.measure_call(partial(_nested, 11))
    assert measured.profiler_frames == 12
    assert measured.allocations == 1
    assert measured.peak_bytes == ONE_BYTES_OBJECT


def test_allocations_made_before_the_call_are_not_counted() -> None:
    before = [bytes(N) for _ in range(10)]
    measured = allocations.measure_call(before.clear)  # frees 1 MB, allocates nothing
    assert measured.allocations == 0
    assert measured.peak_bytes == 0


def test_native_allocations_count() -> None:
    zlib = pytest.importorskip("zlib")
    data = bytes(range(256)) * 4096
    # zlib's deflate state is malloc'd by zlib itself, some hundreds of KB at level 9.
    measured = allocations.measure_call(partial(zlib.compress, data, 9))
    assert measured.peak_bytes > 200_000 > len(zlib.compress(data, 9))
    assert measured.allocations >= 3


def test_a_dumps_below_its_encoded_size_is_flagged() -> None:
    result = memory.measure_case(_case(dumps=_cached), "dumps")
    assert isinstance(result, memory.PairMemory)
    assert result.allocations == 0 and result.floor_bytes == N
    assert result.peak_bytes < 300  # at most the frame object of `_cached` (see allocations)
    assert not result.sane and "below the encoded size" in str(result.problem)


def test_an_honest_dumps_passes() -> None:
    result = memory.measure_case(_case(), "dumps")
    assert isinstance(result, memory.PairMemory)
    assert result.sane and result.peak_bytes >= result.floor_bytes == N
    assert result.allocations == 1


def test_a_loads_holds_at_least_what_it_returns() -> None:
    result = memory.measure_case(_case(), "loads")
    assert isinstance(result, memory.PairMemory)
    assert result.sane
    # 1,000 dicts and lists, their ints above the small-int cache: tens of kilobytes.
    assert 50_000 < result.floor_bytes <= result.peak_bytes
    assert result.allocations >= 4000


def test_the_floors_and_the_tolerance() -> None:
    assert memory.floor_problem("dumps", 999, 1000) is not None
    assert memory.floor_problem("dumps", 1000, 1000) is None
    tolerated = int(1000 * (1 - memory.LOADS_TOLERANCE))
    assert memory.floor_problem("loads", tolerated, 1000) is None
    assert memory.floor_problem("loads", tolerated - 1, 1000) is not None


def test_a_long_call_is_measured_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = memory.measure_case(_case(), "dumps", limit_s=0.0)
    assert isinstance(reason, str) and SLOW_ENV in reason
    monkeypatch.setenv(SLOW_ENV, "1")
    assert memory.call_limit_s() is None


def test_a_real_pair_in_a_process_of_its_own() -> None:
    outcome = memory.measure_pair("json", "small-dict")
    for operation in memory.OPERATIONS:
        result = outcome[operation]
        assert isinstance(result, memory.PairMemory), result
        assert result.sane and result.allocations > 0
    dumps = outcome["dumps"]
    assert isinstance(dumps, memory.PairMemory)
    assert dumps.peak_bytes >= dumps.floor_bytes > 1000  # small-dict is kilobytes as JSON


def test_a_pair_that_cannot_run_says_why() -> None:
    outcome = memory.measure_pair("marshal", "sensor-record")  # namedtuples: marshal refuses
    assert all(isinstance(v, str) and v for v in outcome.values())


def test_asv_tracks_share_one_measurement(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(memory, "_CACHE_ROOT", tmp_path)
    monkeypatch.setenv("ASV", "true")
    first = memory.measure_pair("json", "small-dict")
    assert len(list(tmp_path.glob("*/json--small-dict.json"))) == 1

    def no_second_run(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("measured twice")

    monkeypatch.setattr(memory, "_in_child", no_second_run)
    assert memory.measure_pair("json", "small-dict") == first
    monkeypatch.delenv("ASV")
    assert memory._cache_file("json", "small-dict") is None  # outside asv: always afresh


def test_without_memray_the_benchmarks_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    from asv_runner.benchmarks.mark import SkipNotImplemented

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from benchmarks import bench_memory
    finally:
        sys.path.pop(0)
    monkeypatch.setenv(memory.MEMORY_ENV, "1")
    monkeypatch.setattr(allocations, "find_spec", lambda name: None)
    with pytest.raises(SkipNotImplemented, match="memray is not installed"):
        bench_memory.PeakMemory().track_dumps_peak("json", "small-dict")
    with pytest.raises(SerkitError, match="memray is not installed"):
        allocations.measure_call(lambda: None)


def test_a_failing_measurement_is_an_error_not_a_figure() -> None:
    def fails() -> str:
        raise RuntimeError("boom")

    assert memory._in_child(fails, timeout=60) is None
    assert memory._in_child(lambda: "figures", timeout=60) == "figures"


def test_a_measurement_that_hangs_is_stopped() -> None:
    import time

    def hangs() -> str:
        time.sleep(60)
        return ""

    with pytest.raises(TimeoutError):
        memory._in_child(hangs, timeout=0.5)


def test_a_quick_run_leaves_memory_out_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.MEMORY_ENV, raising=False)
    reason = memory.not_selected()
    assert reason is not None and "--memory" in reason and "--full" in reason
    monkeypatch.setenv(memory.MEMORY_ENV, "1")
    assert memory.not_selected() is None
