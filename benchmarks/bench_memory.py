"""Peak memory of one dumps and one loads, on the large fixtures."""

from __future__ import annotations

from serkit.fixtures import get_fixture
from serkit.memory import peak_rss_increase
from serkit.suite import CaseBenchmark


class PeakMemory(CaseBenchmark):
    unit = "bytes"

    def eligible(self, codec: str, fixture: str) -> str | None:
        return None if get_fixture(fixture).large else "peak memory is measured on large fixtures"

    def track_dumps_rss(self, codec: str, fixture: str) -> int:
        return peak_rss_increase(codec, fixture, "dumps")

    def track_loads_rss(self, codec: str, fixture: str) -> int:
        return peak_rss_increase(codec, fixture, "loads")
