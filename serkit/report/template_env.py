"""The Jinja environment serkit's pages render with: numbers with units (serkit.units) and
spreads, dates, and cells (a round trip's class, code in words) as the templates' filters
and globals. Writing the pages is serkit.report.html's."""

from __future__ import annotations

import datetime
from typing import Any

from serkit import units
from serkit.checks.fidelity import EXACT
from serkit.codecs.registry import unsafe_on_untrusted_bytes
from serkit.compare import ranking, verdict_words
from serkit.compare.in_words import beside_text
from serkit.compare.verdicts import CYCLES_RULE
from serkit.report.hosts_table import asv_field_text
from serkit.results.tree import Measurement
from serkit.stats import Spread


def spread_text(m: Measurement | None, between: Spread | None = None) -> str:
    """The spread between processes where recorded (their modes, when they split), else the
    interquartile range asv recorded, as ± percent of the median."""
    if between is not None:
        count = len(between.values)
        if count == 1:
            return "1 process: single sample"
        if between.multimodal:
            modes = ", ".join(f"{units.seconds(c)} in {n}" for c, n in between.modes)
            return f"{count} processes in {len(between.modes)} modes: {modes}"
        half = (between.q3 - between.q1) / 2 / between.median
        return f"±{units.percent(half, 1)}, {count} processes"
    if m is None or m.value is None:
        return ""
    if m.iqr is None:
        return "no spread recorded"
    low, high = m.iqr
    return f"±{units.percent((high - low) / 2 / m.value, 1)}" if m.value else ""


def spread_title(m: Measurement | None, between: Spread | None = None) -> str:
    if between is not None:
        return (
            f"{units.plural(len(between.values), 'process', 'processes')}, each its least "
            f"sample: {units.seconds(between.low)} "
            f"to {units.seconds(between.high)}, interquartile range "
            f"{units.seconds(between.q1)} to {units.seconds(between.q3)}"
        )
    if m is None or m.iqr is None:
        return ""
    low, high = m.iqr
    return f"interquartile range {units.seconds(low)} to {units.seconds(high)}"


def than_json(ratio: float | None) -> str:
    """A codec's time over json's as people say it: "10.1× faster", "2.3× slower"."""  # noqa: RUF002
    if ratio is None or ratio <= 0:
        return units.MISSING
    shown = units.significant(1 / ratio if ratio < 1 else ratio, 3)
    if "." in shown:  # significant keeps zeros; a factor reads without them
        shown = shown.rstrip("0").rstrip(".")
    if shown == "1":
        return "as fast"
    return f"{shown}\N{MULTIPLICATION SIGN} {'faster' if ratio < 1 else 'slower'}"


def fidelity_cell(fidelity: str | None, missing: str = "not run", lost: str = "") -> Any:
    """A round trip's class as every page shows it: in verdict_words.class_words' words, a lossy
    one marked, with what it `lost` where known; `missing` where it was not recorded."""
    from markupsafe import Markup, escape

    if fidelity is None:
        return escape(missing)
    if fidelity == EXACT:
        return escape(verdict_words.class_words(fidelity))
    words = verdict_words.class_words(fidelity) + (f": {lost}" if lost else "")
    return Markup('<span class="lossy">{}</span>').format(words)


def code_spans(text: str) -> Any:
    """Words as the console writes them, `code` in backticks, with that code shown as code."""
    from markupsafe import Markup, escape

    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: the text as it is
        return escape(text)
    return Markup("").join(
        Markup("<code>{}</code>").format(part) if i % 2 else escape(part)
        for i, part in enumerate(parts)
    )


def date_text(millis: int) -> str:
    if not millis:
        return "unknown"
    moment = datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def moment_text(iso: str | None) -> str:
    """An ISO 8601 moment, as serkit-host.yaml records it, in UTC as people read it."""
    if not iso:
        return "not recorded"
    try:
        moment = datetime.datetime.fromisoformat(iso)
        if moment.tzinfo is not None:
            moment = moment.astimezone(datetime.timezone.utc)
    except (ValueError, OverflowError):  # year 1 at +01:00 is before year 1 in UTC
        return iso
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def environment() -> Any:
    """The Jinja environment every page renders with: the templates in `templates/`, names
    escaped, and the filters and words above at hand."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("serkit.report", "templates"),
        autoescape=True,  # every name comes from results files: never trusted as HTML
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        time=units.seconds,
        bytes=units.bytes_exact,
        memory=units.bytes_binary,
        count=units.whole,
        ratio=units.times,
        than_json=than_json,
        code=code_spans,
        spread=spread_text,
        spread_title=spread_title,
        unbroken=units.unbroken,
        date=date_text,
        moment=moment_text,
    )
    # A timing's instruction count, looked up by the pair (Comparison.instructions_beside).
    env.globals.update(
        object_id=id,
        beside_text=beside_text,
        cycles_rule=CYCLES_RULE,
        asv_field_text=asv_field_text,
        plural=units.plural,
    )
    # The ranked verdict, in words (serkit.compare.ranking).
    env.globals.update(
        verdict_line=verdict_words.verdict_line,
        ranking_lines=verdict_words.ranking_lines,
        verdict_rule=verdict_words.rule_text(ranking.DEFAULT_MEASURE),
        class_words=verdict_words.class_words,
        fidelity_cell=fidelity_cell,
        unsafe_words=ranking.UNSAFE,
        unsafe=unsafe_on_untrusted_bytes,
    )
    return env
