"""Peak memory of one dumps and one loads, on the large fixtures."""

from __future__ import annotations

from asv_runner.benchmarks.mark import SkipNotImplemented

from serkit.codecs.registry import codec_names
from serkit.errors import SerkitError
from serkit.inputs.fixtures import FIXTURES
from serkit.suite.cases import CaseBenchmark
from serkit.suite.memory import peak_rss_increase


class PeakMemory(CaseBenchmark):
    params = (codec_names(), [name for name, fixture in FIXTURES.items() if fixture.large])
    unit = "bytes"
    inputs = "nothing"  # the measuring interpreter prepares the pair itself

    def track_dumps_rss(self, codec: str, fixture: str) -> int:
        return _peak(codec, fixture, "dumps")

    def track_loads_rss(self, codec: str, fixture: str) -> int:
        return _peak(codec, fixture, "loads")


def _peak(codec: str, fixture: str, operation: str) -> int:
    try:
        return peak_rss_increase(codec, fixture, operation)
    except SerkitError as exc:  # not installed or not supported: skipped, as elsewhere
        raise SkipNotImplemented(str(exc)) from exc
