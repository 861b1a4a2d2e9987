"""`serkit try` for people: one table per document, fastest first, every number with its unit."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from serkit.checks.fidelity import EXACT
from serkit.codecs.registry import registry
from serkit.replicate.measure import Timing
from serkit.suite.cases import COMPRESSORS
from serkit.trial.measure import CodecTrial, DocumentTrial
from serkit.units import bytes_binary, percent, seconds

FIDELITY_WIDTH = 46  # characters; a longer reason wraps
IMPLEMENTATIONS = {"c": "C", "python": "Python"}


def timing_text(timing: Timing | None) -> str:
    """`1.15 ms ±6 %`: the median, and half the interquartile range over it."""
    if timing is None:
        return "-"
    q1, median, q3 = timing.quartiles
    if timing.first_call_only:
        return f"{seconds(median)} (1st call)"
    if len(timing.samples) == 1 or median <= 0:
        return f"{seconds(median)} (1 sample)"
    return f"{seconds(median)} ±{percent((q3 - q1) / 2 / median)}"


def implementation_text(trial: CodecTrial) -> str:
    known = trial.fidelity.implementation
    if known is None:
        return "-"
    text = IMPLEMENTATIONS.get(known, known)
    if known == "python" and not trial.pure_python_by_design:
        text += " (no C!)"  # a C library that fell back to its pure-Python code
    return text


def fidelity_text(trial: CodecTrial) -> str:
    result = trial.fidelity
    text = result.status if not result.detail else f"{result.status}: {result.detail}"
    if result.options:
        text += f" (with {result.options})"
    return text


def _row(trial: CodecTrial) -> list[str]:
    return [
        trial.codec,
        implementation_text(trial),
        timing_text(trial.dumps),
        timing_text(trial.loads),
        bytes_binary(trial.fidelity.bytes),
        *(bytes_binary(trial.compressed.get(name)) for name in COMPRESSORS),
        fidelity_text(trial),
    ]


HEADERS = ["codec", "impl", "dumps", "loads", "size", *COMPRESSORS, "fidelity"]


def heading(document: DocumentTrial) -> str:
    pinned = f", content sha256 {document.content_sha256[:12]}…" if document.content_sha256 else ""
    return (
        f"{document.path}: {document.format}, {bytes_binary(document.bytes)}{pinned}; "
        f"{len(document.codecs)} codecs in {seconds(document.wall_s)}"
    )


def legend(documents: Sequence[DocumentTrial]) -> list[str]:
    budget = seconds(documents[0].budget_s) if documents else "-"
    cap = seconds(documents[0].key_cap_s) if documents else "-"
    rounds = documents[0].max_rounds if documents else 0
    lines = [
        "Fastest round trip (dumps + loads) first. dumps, loads: the median time per call, "
        "± half the interquartile range over the median,",
        f"of up to {rounds} samples interleaved round by round across the codecs, within "
        f"about {budget} per document and {cap} per call;",
        "(1st call): too slow to sample within its share of that time, so the time of its "
        "first call, which preparing made.",
        f"size: encoded bytes; {' and '.join(COMPRESSORS)}: those bytes compressed (each "
        "tool's default level). impl: the implementation that ran.",
        f"fidelity: {EXACT} if the codec gives back the same types and values, else what "
        "changed (see `serkit fidelity`).",
    ]
    if any("(no C!)" in implementation_text(t) for d in documents for t in d.codecs):
        lines.append("(no C!): the library's C extension did not load; its pure Python ran.")
    return lines


def hazards(documents: Sequence[DocumentTrial]) -> dict[str, str]:
    """The codecs in these tables whose loads must never see untrusted bytes, and why."""
    found: dict[str, str] = {}
    for document in documents:
        for trial in document.codecs:
            hazard = registry.spec(trial.codec).untrusted_input_hazard
            if hazard:
                found[trial.codec] = hazard
    return found


def render(documents: Sequence[DocumentTrial], markdown: bool = False) -> str:
    """Every document's table, then one legend for all of them."""
    tablefmt = "github" if markdown else "simple"
    widths = [None] * (len(HEADERS) - 1) + [FIDELITY_WIDTH]
    parts = []
    for document in documents:
        title = f"**{heading(document)}**" if markdown else heading(document)
        table = tabulate(
            [_row(t) for t in document.codecs],
            headers=HEADERS,
            tablefmt=tablefmt,
            maxcolwidths=None if markdown else widths,
            disable_numparse=True,
        )
        parts.append(f"{title}\n\n{table}")
    return "\n\n".join([*parts, "\n".join(legend(documents))])
