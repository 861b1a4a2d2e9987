"""What `serkit try` found: each codec's trial on a document, the document's, and a codec's
row as the ranking reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from serkit.checks.fidelity import ERROR, LOSSY, FidelityResult
from serkit.codecs.registry import unsafe_on_untrusted_bytes
from serkit.compare.ranking import DUMPS, LOADS, TIE_SPAN, Candidate
from serkit.sample_speed import StateShare
from serkit.trial.timings import Timing, timing_dict

# serkit try calls no timing gap under this a win (serkit.compare.ranking's `floor`): on
# a 153 KiB document three runs in a row, each of processes in new interpreters, called
# orjson 1.07x ± 0.04 faster than msgspec-struct-msgpack, it 1.10x ± 0.05 faster than
# orjson, and the two tied (2026-11-29). Within one run the test sees its processes only;
# between runs a gap this small went either way.
FLOOR = TIE_SPAN


@dataclass(frozen=True)
class CodecTrial:
    """One codec on one document: what it did, how fast, and how small."""

    codec: str
    format: str
    library: str
    fidelity: FidelityResult  # status, why (detail), bytes, options, implementation, version
    pure_python_by_design: bool = False
    dumps: Timing | None = None
    loads: Timing | None = None
    compressed: Mapping[str, int] = field(default_factory=dict)  # COMPRESSORS name -> bytes

    @property
    def status(self) -> str:
        return self.fidelity.status

    @property
    def round_trip_s(self) -> float | None:
        """Median dumps plus median loads: what the table is ordered by."""
        if self.dumps is None or self.loads is None:
            return None
        return self.dumps.median + self.loads.median

    def as_dict(self) -> dict[str, Any]:
        result = self.fidelity
        return {
            "codec": self.codec,
            "format": self.format,
            "library": self.library,
            "version": result.version,
            "implementation": result.implementation,
            "pure_python_by_design": self.pure_python_by_design,
            "status": result.status,
            "why": result.detail,
            "options": result.options,
            "bytes": result.bytes,
            "compressed_bytes": dict(self.compressed),
            "dumps": timing_dict(self.dumps),
            "loads": timing_dict(self.loads),
        }


@dataclass(frozen=True)
class DocumentTrial:
    """Every codec on one document, fastest first."""

    path: str
    format: str
    bytes: int  # the file's size
    content_sha256: str | None  # None when the document holds types the hash cannot pin
    codecs: tuple[CodecTrial, ...]
    wall_s: float
    budget_s: float
    max_processes: int
    key_cap_s: float
    # The schema derived from it, which the schema codecs ran under; else why none fits.
    schema_sha256: str | None = None
    no_schema: str = ""
    # How much of the run's samples the machine spent in its slow state; None: none taken.
    state: StateShare | None = None
    injected: float = 0.0  # SERKIT_BENCH_INJECT's share, added to every timed call

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "bytes": self.bytes,
            "content_sha256": self.content_sha256,
            "schema_sha256": self.schema_sha256,
            "no_schema": self.no_schema,
            "wall_s": round(self.wall_s, 2),
            "budget_s": self.budget_s,
            "max_processes": self.max_processes,
            "key_cap_s": self.key_cap_s,
            "machine_state": self.state.in_words() if self.state else None,
            "injected": self.injected,
            "codecs": [c.as_dict() for c in self.codecs],
        }


def candidate(trial: CodecTrial) -> Candidate:
    """One row as the ranking reads it: its processes' values and weights, and its sizes."""
    sizes = {"size": trial.fidelity.bytes, **trial.compressed}
    dumps, loads = trial.dumps, trial.loads
    # A first call alone is a cold call, not what the others' samples time: not ranked.
    measured = dumps is not None and loads is not None and not first_call_only(trial)
    lost = trial.fidelity.differences if trial.fidelity.fidelity_class == LOSSY else ()
    return Candidate(
        trial.codec,
        trial.fidelity.fidelity_class,
        dumps.values if measured and dumps else (),
        loads.values if measured and loads else (),
        {name: size for name, size in sizes.items() if size is not None},
        why_not=_why_not(trial),
        dumps_weights=dumps.weights if measured and dumps else (),
        loads_weights=loads.weights if measured and loads else (),
        # The medians the table shows (render.timing_text), which the verdict quotes.
        shown={
            operation: timing.median
            for operation, timing in ((DUMPS, dumps), (LOADS, loads))
            if measured and timing is not None
        },
        unsafe=unsafe_on_untrusted_bytes(trial.codec),
        lost=", ".join(d.kind for d in lost),
    )


def first_call_only(trial: CodecTrial) -> bool:
    """Whether the codec was timed by its first call alone: not sampled within the budget."""
    return any(t is not None and t.first_call_only for t in (trial.dumps, trial.loads))


def _why_not(trial: CodecTrial) -> str:
    """In a few words, for the verdict's "not ranked" (the table's row says it in full)."""
    if trial.status == ERROR and "share of the" in (trial.fidelity.detail or ""):
        return "not measured within the time budget"
    if first_call_only(trial):
        return "its first call only: not sampled within the time budget"
    return trial.status
