"""Instructions and estimated cycles per call of dumps and loads, under valgrind's cachegrind.

Opt-in (SERKIT_BENCH_INSTRUCTIONS=1). One `setup_cache` counts every selected pair in a
few valgrind processes, with cache simulation; each track reads its pair's count back.
"""

from __future__ import annotations

from asv_runner.benchmarks.mark import SkipNotImplemented

from serkit.errors import SerkitError
from serkit.suite.benchmark_names import CYCLES_UNIT
from serkit.suite.case_benchmark import CaseBenchmark
from serkit.suite.instructions import SETUP_TIMEOUT_S, Counted, count_selected, unavailable


class Instructions(CaseBenchmark):
    unit = "instructions"
    inputs = "nothing"  # the worker under valgrind prepares the pair itself

    def setup_cache(self) -> Counted:
        return count_selected(self.params)

    setup_cache.timeout = SETUP_TIMEOUT_S  # type: ignore[attr-defined]

    def prepare_for(self, codec: str, fixture: str, *rest: object) -> str | None:
        reason = unavailable()  # not opted in, or no valgrind: one line, then skipped
        if reason is None:
            return super().prepare_for(codec, fixture, *rest)
        print(f"serkit: skipped {codec} x {fixture}: {reason}")
        return reason

    def track_dumps(self, counted: Counted, codec: str, fixture: str) -> float:
        return _per_call(counted, codec, fixture, "dumps")

    def track_loads(self, counted: Counted, codec: str, fixture: str) -> float:
        return _per_call(counted, codec, fixture, "loads")

    # Instructions plus weighted cache misses (serkit.suite.cachegrind.estimated_cycles).
    def track_cycles_dumps(self, counted: Counted, codec: str, fixture: str) -> float:
        return _per_call(counted, codec, fixture, "dumps", cycles=True)

    def track_cycles_loads(self, counted: Counted, codec: str, fixture: str) -> float:
        return _per_call(counted, codec, fixture, "loads", cycles=True)

    track_cycles_dumps.unit = CYCLES_UNIT  # type: ignore[attr-defined]  # asv reads it
    track_cycles_loads.unit = CYCLES_UNIT  # type: ignore[attr-defined]


def _per_call(
    counted: Counted, codec: str, fixture: str, operation: str, cycles: bool = False
) -> float:
    try:
        if cycles:
            return counted.cycles_per_call(codec, fixture, operation)
        return counted.per_call(codec, fixture, operation)
    except SerkitError as exc:  # not installed, unsupported, too slow: skipped, as elsewhere
        raise SkipNotImplemented(str(exc)) from exc
