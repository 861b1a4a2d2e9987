"""`serkit try` for people: one table per document, fastest first, every number with its unit."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from serkit.checks.fidelity import EXACT
from serkit.codecs.registry import registry
from serkit.replicate.measure import Timing
from serkit.suite.cases import COMPRESSORS
from serkit.text import markdown_cell, terminal
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


SMALLEST = "*"  # after the smallest size in a size column


def _sizes(trial: CodecTrial) -> list[int | None]:
    """The encoded size, then each compressor's: the size columns, in order."""
    return [trial.fidelity.bytes, *(trial.compressed.get(name) for name in COMPRESSORS)]


def smallest_sizes(document: DocumentTrial) -> list[int | None]:
    """Per size column, the smallest size any codec made (None when none made one)."""
    columns = zip(*(_sizes(trial) for trial in document.codecs), strict=True)
    return [min((n for n in column if n is not None), default=None) for column in columns]


def _row(trial: CodecTrial, smallest: Sequence[int | None]) -> list[str]:
    sizes = [
        bytes_binary(size) + (SMALLEST if size is not None and size == least else "")
        for size, least in zip(_sizes(trial), smallest, strict=True)
    ]
    return [
        trial.codec,
        implementation_text(trial),
        timing_text(trial.dumps),
        timing_text(trial.loads),
        *sizes,
        fidelity_text(trial),
    ]


HEADERS = ["codec", "impl", "dumps", "loads", "size", *COMPRESSORS, "fidelity"]


def heading(document: DocumentTrial) -> str:
    codecs = len(document.codecs)
    pinned = f", content sha256 {document.content_sha256[:12]}…" if document.content_sha256 else ""
    if document.schema_sha256:
        pinned += f", derived schema sha256 {document.schema_sha256[:12]}…"
    elif document.no_schema:
        pinned += f", no schema ({document.no_schema})"
    return (
        f"{document.path}: {document.format}, {bytes_binary(document.bytes)}{pinned}; "
        f"{codecs} codec{'s' if codecs != 1 else ''} in {seconds(document.wall_s)}"
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
        "(1 sample): time for a single sample only, so no spread is shown.",
        f"size: encoded bytes; {' and '.join(COMPRESSORS)}: those bytes compressed (each "
        f"tool's default level); {SMALLEST}: the smallest in its column. "
        "impl: the implementation that ran.",
        f"A codec that could not finish within its share of the budget ({budget} here), "
        "or ran out of memory or stack, says so in one line and is not measured.",
        f"fidelity: {EXACT} if the codec gives back the same types and values, else what "
        "changed (see `serkit fidelity`).",
    ]
    if any(d.schema_sha256 or d.no_schema for d in documents):
        lines.append(
            "Schema codecs (serkit list: schema derived) time typed objects under the schema "
            "derived from the document (its sha256 above); their fidelity is compared as "
            "plain data, converted back from those objects."
        )
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
        # A document's name and keys are the user's: text in Markdown and on a terminal.
        escape = markdown_cell if markdown else terminal
        title = f"**{escape(heading(document))}**" if markdown else escape(heading(document))
        table = tabulate(
            [[escape(c) for c in _row(t, smallest_sizes(document))] for t in document.codecs],
            headers=HEADERS,
            tablefmt=tablefmt,
            maxcolwidths=None if markdown else widths,
            disable_numparse=True,
        )
        parts.append(f"{title}\n\n{table}")
    return "\n\n".join([*parts, "\n".join(legend(documents))])
