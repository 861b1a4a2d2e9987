"""Encoded size, raw and compressed: deterministic, so tracks, not timings."""

from __future__ import annotations

from serkit.suite.cases import COMPRESSORS, CaseBenchmark


class EncodedSize(CaseBenchmark):
    unit = "bytes"

    def track_bytes(self, codec: str, fixture: str) -> int:
        return len(self.payload)


class CompressedSize(CaseBenchmark):
    params = (*CaseBenchmark.params, list(COMPRESSORS))
    param_names = (*CaseBenchmark.param_names, "compressor")
    unit = "bytes"

    def track_bytes(self, codec: str, fixture: str, compressor: str) -> int:
        return len(COMPRESSORS[compressor](self.payload))
