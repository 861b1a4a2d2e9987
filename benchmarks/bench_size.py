"""Encoded size, raw and compressed: deterministic, so tracks, not timings.

Measured once per codec release, Python and document (serkit.suite.facts), in one process
for the whole selection; each track reads its pair's.
"""

from __future__ import annotations

from collections.abc import Mapping

from asv_runner.benchmarks.mark import SkipNotImplemented

from serkit.suite.cases import COMPRESSORS
from serkit.suite.facts import FactsBenchmark, PairFacts

Facts = Mapping[tuple[str, str], PairFacts]


class EncodedSize(FactsBenchmark):
    unit = "bytes"

    def track_bytes(self, facts: Facts, codec: str, fixture: str) -> int:
        found = self.pair(facts, codec, fixture)
        if found.encoded_bytes is None:
            raise SkipNotImplemented(found.not_encoded)
        return found.encoded_bytes


class CompressedSize(FactsBenchmark):
    params = (*FactsBenchmark.params, list(COMPRESSORS))
    param_names = (*FactsBenchmark.param_names, "compressor")
    unit = "bytes"

    def track_bytes(self, facts: Facts, codec: str, fixture: str, compressor: str) -> int:
        found = self.pair(facts, codec, fixture)
        if compressor not in found.compressed_bytes:
            raise SkipNotImplemented(found.not_encoded)
        return found.compressed_bytes[compressor]
