"""`serkit try` for people: per document, the ranked verdict, then one table in its order, every
number with its unit."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tabulate import tabulate

from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, NO_SCHEMA
from serkit.codecs.registry import registry, unsafe_on_untrusted_bytes
from serkit.compare.ranking import DEFAULT_MEASURE, TIE_SPAN, UNSAFE, Ranking, rank
from serkit.compare.verdict_words import ranking_lines, rule_text, verdict_line
from serkit.suite.cases import COMPRESSORS, INJECT_ENV
from serkit.text import markdown_cell, terminal
from serkit.trial.sampling import SAMPLES_PER_PROCESS
from serkit.trial.timings import Timing
from serkit.trial.trials import FLOOR, CodecTrial, DocumentTrial, candidate, first_call_only
from serkit.units import bytes_binary, fill, percent, plural, seconds

FIDELITY_WIDTH = 46  # characters; a longer reason wraps, at a space or between a path's keys
# Half the interquartile range over the median at which a timing is no value to go by:
# its quartiles a whole median apart (cattrs-orjson read 2.50 ms ±743 % under load here).
SCATTERED = 0.5
VERDICT_WIDTH = 100  # characters; the verdict's lines wrap
IMPLEMENTATIONS = {"c": "C", "python": "Python"}


def timing_text(timing: Timing | None) -> str:
    """`1.15 ms ±6 %`: the median of its processes' values, and half their interquartile
    range over it; past SCATTERED, `too scattered (2.50 ms ±743 %)`, not a value to read
    as one."""
    if timing is None:
        return "-"
    q1, median, q3 = timing.quartiles
    if timing.first_call_only:
        return f"{seconds(median)} (1st call)"
    if len(timing.values) == 1 or median <= 0:
        return (
            f"{seconds(median)} (1 process)"
            if timing.processes
            else f"{seconds(median)} (1 sample)"
        )
    spread = (q3 - q1) / 2 / median
    text = f"{seconds(median)} ±{percent(spread)}"
    return f"too scattered ({text})" if spread >= SCATTERED else text


def wrapped(text: str, width: int) -> str:
    """`text` in lines of at most `width`, broken at spaces or before a path's next key
    (`['resources']` / `['DhcpOptions']`), never inside one: a key longer than `width`
    stands whole on its line."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        for index, piece in enumerate(p for p in re.split(r"(?=\[)", word) if p):
            joint = " " if index == 0 and line else ""
            if line and len(line) + len(joint) + len(piece) > width:
                lines.append(line)
                line, joint = "", ""
            line += joint + piece
    return "\n".join([*lines, line] if line else lines)


def implementation_text(trial: CodecTrial) -> str:
    known = trial.fidelity.implementation
    if known is None:
        return "-"
    text = IMPLEMENTATIONS.get(known, known)
    if known == "python" and not trial.pure_python_by_design:
        text += " (no C!)"  # a C library that fell back to its pure-Python code
    return text


def fidelity_text(trial: CodecTrial, no_schema: str = "") -> str:
    """The status and why, after "unsafe on untrusted bytes" where the codec's entry says
    so; a schema codec refused for the document's `no_schema` (said once, above the table)
    points there rather than repeat it."""
    result = trial.fidelity
    if result.status == NO_SCHEMA and no_schema:
        return f"{NO_SCHEMA}: not run (see above)"
    status = KEY_ORDER_ONLY if result.fidelity_class == KEY_ORDER_ONLY else result.status
    text = status if not result.detail else f"{status}: {result.detail}"
    if result.options:
        text += f" (with {result.options})"
    return f"{UNSAFE}; {text}" if unsafe_on_untrusted_bytes(trial.codec) else text


SMALLEST = "*"  # after the smallest size an exact, safe codec made, in a size column


def _sizes(trial: CodecTrial) -> list[int | None]:
    """The encoded size, then each compressor's: the size columns, in order."""
    return [trial.fidelity.bytes, *(trial.compressed.get(name) for name in COMPRESSORS)]


def smallest_sizes(document: DocumentTrial) -> list[int | None]:
    """Per size column, the smallest size an exact codec safe on untrusted bytes made (None
    when none made one): a lossy codec's bytes do not hold the same document, so it cannot
    win on size, and an unsafe one is ranked apart, as the verdict ranks it."""
    exact = [
        _sizes(trial)
        for trial in document.codecs
        if trial.status == EXACT and not unsafe_on_untrusted_bytes(trial.codec)
    ]
    # Every row has _sizes's columns (zip's strict= is 3.10 and later).
    columns = zip(*exact) if exact else [()] * (1 + len(COMPRESSORS))
    return [min((n for n in column if n is not None), default=None) for column in columns]


def ranking(
    document: DocumentTrial,
    measure: str = DEFAULT_MEASURE,
    exact_only: bool = False,
    safe_only: bool = False,
) -> Ranking:
    """The document's codecs in order by `measure` (serkit.compare.ranking's rules)."""
    candidates = [candidate(t) for t in document.codecs]
    return rank(candidates, measure, exact_only=exact_only, safe_only=safe_only, floor=FLOOR)


def in_ranked_order(document: DocumentTrial, ranked: Ranking) -> list[CodecTrial]:
    """The rows in the ranking's order; those it left out after, as measure.py ordered them."""
    placed = {
        codec: (tier, group, member)
        for tier, t in enumerate(ranked.tiers)
        for group, g in enumerate(t.groups)
        for member, codec in enumerate(g.codecs)
    }
    last = (len(placed) + 1, 0, 0)
    return sorted(document.codecs, key=lambda trial: placed.get(trial.codec, last))


def _may_win(trial: CodecTrial) -> bool:
    return trial.status == EXACT and not unsafe_on_untrusted_bytes(trial.codec)


def _row(trial: CodecTrial, smallest: Sequence[int | None], no_schema: str = "") -> list[str]:
    sizes = [
        bytes_binary(size)
        + (SMALLEST if size is not None and size == least and _may_win(trial) else "")
        for size, least in zip(_sizes(trial), smallest)
    ]
    return [
        trial.codec,
        implementation_text(trial),
        timing_text(trial.dumps),
        timing_text(trial.loads),
        *sizes,
        fidelity_text(trial, no_schema),
    ]


def _cells(row: Sequence[str], markdown: bool) -> list[str]:
    """A row's cells escaped (a document's keys are the user's: text in Markdown and on a
    terminal); on a terminal its fidelity, last, wrapped at FIDELITY_WIDTH."""
    if markdown:
        return [markdown_cell(cell) for cell in row]
    cells = [terminal(cell) for cell in row]
    return [*cells[:-1], wrapped(cells[-1], FIDELITY_WIDTH)]


HEADERS = ["codec", "impl", "dumps", "loads", "size", *COMPRESSORS, "fidelity"]


def heading(document: DocumentTrial) -> str:
    codecs = len(document.codecs)
    pinned = f", content sha256 {document.content_sha256[:12]}…" if document.content_sha256 else ""
    if document.schema_sha256:
        pinned += f", derived schema sha256 {document.schema_sha256[:12]}…"
    state = f"; machine: {document.state.in_words()}" if document.state else ""
    if document.injected:
        state += f"; every call slowed by an injected {percent(document.injected)} ({INJECT_ENV})"
    return (
        f"{document.path}: {document.format}, {bytes_binary(document.bytes)}{pinned}; "
        f"{codecs} codec{'s' if codecs != 1 else ''} in {seconds(document.wall_s)}{state}"
    )


def schema_line(document: DocumentTrial) -> str | None:
    """Once per document: the schema codecs not run because no schema was derived, and why."""
    refused = [t.codec for t in document.codecs if t.status == NO_SCHEMA]
    if not document.no_schema or not refused:
        return None
    return (
        f"Schema codecs not run ({len(refused)}: {', '.join(refused)}): no schema could be "
        f"derived from this document: {document.no_schema}"
    )


def legend(documents: Sequence[DocumentTrial]) -> list[str]:
    budget = seconds(documents[0].budget_s) if documents else "-"
    cap = seconds(documents[0].key_cap_s) if documents else "-"
    most = documents[0].max_processes if documents else 0
    lines = [
        "Rows in the ranking's order (the verdict above each table). dumps, loads: the "
        "median time per call over the codec's processes, ± half their interquartile range "
        "over the median.",
        "Each codec is timed in processes of its own, each a new interpreter "
        f"({SAMPLES_PER_PROCESS} samples each of "
        "dumps and loads by the thread's CPU time, which leaves out other processes' turns, "
        "the canary timed around each sample), in a random order across "
        f"the codecs, within about {budget} per document: a few each first (at most {cap} "
        f"a codec), then up to {most} for codecs whose place the verdict has not yet "
        "decided. A process's value is its least sample taken in the machine's fast state, "
        "else its least slow one corrected by the canary, as `serkit compare` judges them.",
        "(1st call): not sampled within that time (too slow for one process within its "
        "share of it, or not reached), so the time of its first call, which preparing made; "
        "a cold call, so the verdict does not rank it.",
        "(1 process), (1 sample): one value only, so no spread is shown.",
        f"too scattered: half the interquartile range is over {percent(SCATTERED)} of the "
        "median, so the median is no value to go by (a loaded machine: a larger --budget, or "
        "a quieter machine, measures it).",
        f"size: encoded bytes; {' and '.join(COMPRESSORS)}: those bytes compressed (each "
        f"tool's default level); {SMALLEST}: the smallest of the exact codecs in its "
        "column (a lossy codec's bytes do not hold the whole document; an unsafe one is "
        "ranked apart). "
        "impl: the implementation that ran.",
        f"A codec that could not finish within its share of the budget ({budget} here), "
        "or ran out of memory or stack, says so in one line and is not measured.",
        f"fidelity: {EXACT} if the codec gives back the same types and values; "
        f"{KEY_ORDER_ONLY} if it lost dict key order and nothing else; else what changed "
        "(see `serkit fidelity`).",
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


def verdict(
    document: DocumentTrial, measure: str = DEFAULT_MEASURE, exact_only: bool = False
) -> list[str]:
    """The ranked verdict's lines for one document: the answer first, then every class."""
    ranked = ranking(document, measure, exact_only)
    return [verdict_line(ranked), *ranking_lines(ranked)]


def unsampled_line(count: int, budget_s: float) -> str:
    return (
        f"{plural(count, 'codec was', 'codecs were')} not sampled within the "
        f"{seconds(budget_s)} budget, so not ranked (the table shows the first call, a cold "
        f"one): a larger --budget samples {'it' if count == 1 else 'them'}."
    )


def render(
    documents: Sequence[DocumentTrial],
    markdown: bool = False,
    *,
    measure: str = DEFAULT_MEASURE,
    exact_only: bool = False,
    safe_only: bool = False,
) -> str:
    """Every document's verdict and table, then one legend for all of them."""
    tablefmt = "github" if markdown else "simple"
    parts = []
    for document in documents:
        # A document's name and keys are the user's: text in Markdown and on a terminal.
        escape = markdown_cell if markdown else terminal
        title = f"**{escape(heading(document))}**" if markdown else escape(heading(document))
        ranked = ranking(document, measure, exact_only, safe_only)
        lines = [verdict_line(ranked), *ranking_lines(ranked)]
        said = schema_line(document)
        if said:
            lines.append(escape(said))
        if ranked.unresolved:
            lines.append(
                "Some codecs are not resolved: their samples are too few or too scattered to "
                f"order them within {percent(TIE_SPAN)} (a loaded machine): a larger --budget, "
                "or a quieter machine, tells them apart."
            )
        unsampled = sum(first_call_only(trial) for trial in document.codecs)
        if unsampled:
            lines.append(unsampled_line(unsampled, document.budget_s))
        table = tabulate(
            [
                _cells(_row(t, smallest_sizes(document), document.no_schema), markdown)
                for t in in_ranked_order(document, ranked)
            ],
            headers=HEADERS,
            tablefmt=tablefmt,
            disable_numparse=True,
        )
        if markdown:
            verdict_text = "\n".join(f"- {line}" for line in lines)
        else:  # wrapped, each line hanging under its first
            verdict_text = "\n".join(
                fill(
                    line,
                    VERDICT_WIDTH,
                    initial_indent="  ",
                    subsequent_indent="    ",
                    break_on_hyphens=False,  # never inside a codec's name
                )
                for line in lines
            )
        parts.append(f"{title}\n\n{verdict_text}\n\n{table}")
    rule = rule_text(measure, exact_only, safe_only, FLOOR)
    return "\n\n".join([*parts, "\n".join([rule, *legend(documents)])])
