"""The table that ends `serkit bench`: each fixture's ranked verdict, read from the results tree.

It reads what the run wrote, as the report does (serkit.report.snapshot.snapshot, ranked by
serkit.compare.ranking), never the run's own state: the table is what any later `serkit
report` of the same tree would say at the top of each fixture's page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from serkit.compare.ranking import DEFAULT_MEASURE, MEASURE_WORDS, TIE_SPAN, TIMINGS, Group, Ranking
from serkit.compare.verdict_words import (
    following_text,
    group_text,
    margin_text,
    rule_text,
    tier_words,
    value_text,
)
from serkit.inputs.fixtures import fixture_names
from serkit.report.runs import baseline_runs, in_registry_order, latest_runs
from serkit.report.snapshot import snapshot
from serkit.results.tree import read_tree
from serkit.text import markdown_cell
from serkit.units import fill, percent

HEADERS = ["fixture", "Python", "ranked first", "", "ahead of the next", "ranked apart, ahead"]
JSON_KEYS = ["fixture", "python", "ranked_first", "value", "ahead_of_the_next", "apart_ahead"]
NAMES = 3  # at most this many names of a tied group in a cell
WIDTHS = [None, None, 36, None, 40, 36]  # characters; longer cells wrap
RULE_WIDTH = 100


def _value(group: Group, measure: str) -> str:
    """The group's value as the table shows it: an unresolved group's first to last."""
    value = value_text(group.median, measure)
    if group.resolved or group.last is None:
        return value
    return f"{value} to {value_text(group.last, measure)}"


def _row(fixture: str, python: str, ranking: Ranking) -> list[str]:
    if not ranking.tiers:
        return [fixture, python, "no codec measured", "", "", ""]
    first = ranking.tiers[0]
    best = first.groups[0]
    label = group_text(best, NAMES, first.lost, measure=None)
    if first.fidelity != "exact" or first.unsafe:
        label += f" ({tier_words(first)}: no exact safe codec ranked)"
    ahead = ""
    if first.margins:
        nxt = first.groups[1]
        margin = margin_text(first.margins[0], ranking.measure)
        ahead = f"{margin} than {following_text(nxt, NAMES, first.lost)}"
    others = [
        f"{tier.groups[0].codecs[0]} ({tier_words(tier, tier.groups[0].codecs[0])})"
        for tier in ranking.tiers[1:]
        if tier.groups[0].median < best.median
    ]
    return [
        fixture,
        python,
        label,
        _value(best, ranking.measure),
        ahead,
        ", ".join(others) or "none",
    ]


@dataclass(frozen=True)
class Summary:
    """The summary's parts: printed as a table, a GitHub table, or JSON."""

    title: str
    rows: list[list[str]]  # under HEADERS
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "rows": [dict(zip(JSON_KEYS, row)) for row in self.rows],
            "rule": self.rule,
        }

    def text(self, *, markdown: bool = False) -> str:
        if markdown:
            cells = [[markdown_cell(cell) for cell in row] for row in self.rows]
            table = tabulate(cells, headers=HEADERS, tablefmt="github", disable_numparse=True)
            return f"{self.title}\n\n{table}\n\n{self.rule}"
        table = tabulate(self.rows, headers=HEADERS, maxcolwidths=WIDTHS, disable_numparse=True)
        return f"{self.title}\n\n{table}\n\n{fill(self.rule, RULE_WIDTH)}"


def summary(
    results: Path,
    machine: str | None = None,
    *,
    measure: str = DEFAULT_MEASURE,
    exact_only: bool = False,
    safe_only: bool = False,
) -> Summary | None:
    """Per fixture and Python, what ranked first on `machine` (every machine: None), by
    how much, and any codec that is not exact but was ahead; then the rule. None when the
    tree holds nothing to rank."""
    tree = read_tree(results, [machine] if machine else None)
    runs = [run for run in latest_runs(tree) if machine is None or run.machine == machine]
    rows = []
    unresolved = False
    for run in baseline_runs(runs):
        for fixture in in_registry_order(run.fixtures, fixture_names()):
            table = snapshot(run, fixture)
            if any(row.measured for row in table.rows):
                ranked = table.ranking(measure, exact_only=exact_only, safe_only=safe_only)
                unresolved = unresolved or ranked.unresolved
                where = run.env.python if machine else f"{run.machine}, {run.env.python}"
                rows.append(_row(fixture, where, ranked))
    if not rows:
        return None
    best = "fastest" if measure in TIMINGS else "smallest"
    title = f"The answer: the {best} codec per fixture, by {MEASURE_WORDS[measure]}"
    rule = rule_text(measure, exact_only, safe_only)
    if unresolved:
        rule += (
            " Some codecs are not resolved: their timings are too few or too scattered to order "
            f"them within {percent(TIE_SPAN)} (one process, or a loaded machine): serkit bench "
            "--full takes more processes."
        )
    return Summary(title, rows, rule)


def summary_table(
    results: Path,
    machine: str | None = None,
    *,
    measure: str = DEFAULT_MEASURE,
    exact_only: bool = False,
) -> str:
    """The summary as text; "" when the tree holds nothing to rank."""
    found = summary(results, machine, measure=measure, exact_only=exact_only)
    return found.text() if found is not None else ""
