"""Memory of one dumps and one loads, measured at the allocator, on every fixture.

One fresh interpreter per pair measures both operations (serkit.suite.memory); the
tracks below read that one measurement. Where memray is missing or unsupported, or the
call is too long to track in this run, the pair is skipped with the reason.
"""

from __future__ import annotations

from asv_runner.benchmarks.mark import SkipNotImplemented

from serkit.errors import SerkitError
from serkit.suite.case_benchmark import CaseBenchmark
from serkit.suite.memory import PairMemory, measure_pair, not_selected


class PeakMemory(CaseBenchmark):
    """The most bytes one call allocated and held at once, above what was live before it."""

    unit = "bytes"
    inputs = "nothing"  # the measuring interpreter prepares the pair itself

    def track_dumps_peak(self, codec: str, fixture: str) -> int:
        return _measured(codec, fixture, "dumps").peak_bytes

    def track_loads_peak(self, codec: str, fixture: str) -> int:
        return _measured(codec, fixture, "loads").peak_bytes


class Allocations(CaseBenchmark):
    """How many allocations one call made (malloc, realloc, Python's object allocator...)."""

    unit = "allocations"
    inputs = "nothing"

    def track_dumps_allocations(self, codec: str, fixture: str) -> int:
        return _measured(codec, fixture, "dumps").allocations

    def track_loads_allocations(self, codec: str, fixture: str) -> int:
        return _measured(codec, fixture, "loads").allocations


class MemoryCheck(CaseBenchmark):
    """Whether the peak reaches its floor: the encoded size (dumps), the decoded size (loads)."""

    unit = "1 = peak reaches its floor, 0 = below it: the memory figures are suspect"
    inputs = "nothing"

    def track_dumps_sane(self, codec: str, fixture: str) -> int:
        return int(_measured(codec, fixture, "dumps").sane)

    def track_loads_sane(self, codec: str, fixture: str) -> int:
        return int(_measured(codec, fixture, "loads").sane)


def _measured(codec: str, fixture: str, operation: str) -> PairMemory:
    reason = not_selected()
    if reason is not None:
        raise SkipNotImplemented(reason)
    try:
        measured = measure_pair(codec, fixture)[operation]
    except SerkitError as exc:  # memray missing or unsupported here
        raise SkipNotImplemented(str(exc)) from exc
    if isinstance(measured, str):  # not installed, refused, or too long for this run
        raise SkipNotImplemented(measured)
    if measured.problem is not None:
        print(f"serkit: memory of {codec} {operation} on {fixture} is suspect: {measured.problem}")
    return measured
