"""What serkit's adapter adds over the plain library call, for every codec on small-dict.

`call` is "adapter" (the suite's call, as bench_time times it) or "direct" (the codec's
CodecSpec.direct: the same library call written inline); see serkit.suite.overhead.
"""

from __future__ import annotations

from serkit.suite.overhead import OverheadBenchmark


class DumpsOverhead(OverheadBenchmark):
    operation = "dumps"

    def time_dumps(self, codec: str, fixture: str, call: str) -> None:
        self.loop(self.inner_loops)


class LoadsOverhead(OverheadBenchmark):
    operation = "loads"

    def time_loads(self, codec: str, fixture: str, call: str) -> None:
        self.loop(self.inner_loops)
