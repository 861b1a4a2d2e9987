"""The replication document as terminal tables, or as GitHub-flavoured Markdown."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from serkit.replicate.claims import CLAIMS_LEGEND, VERDICTS

TERMINAL_COLUMN_WIDTH = 44  # characters; longer cells wrap in --format table


def render(document: Mapping[str, Any], markdown: bool = False) -> str:
    """The document as terminal tables, or as GitHub-flavoured Markdown."""
    from tabulate import tabulate

    lines: list[str] = []
    heading = "## " if markdown else "== "
    lines.append(
        f"{'# ' if markdown else ''}The posts, then and now: {document['python']} on "
        f"{document['host']}, {document['date']}"
    )
    load_ = document.get("load") or {}
    facts = [f"measured: {document['statistic']}"]
    if load_.get("before"):
        facts.append(
            f"load average (1 min) {load_['before'][0]:.2f} before, {load_['after'][0]:.2f} "
            f"after, on {load_['cpus']} CPUs"
        )
    libraries = ", ".join(f"{lib} {ver}" for lib, ver in document["libraries"].items())
    facts.append(f"libraries: {libraries}")
    lines += [("- " if markdown else "") + fact for fact in facts]
    for post in document["posts"]:
        title = f"{heading}Post {post['post']}: {post['title']}"
        lines += ["", title if markdown else f"{title} =="]
        lines.append(f"{'- ' if markdown else ''}source: {post['source']} ({post['date']})")
        lines.append(f"{'- ' if markdown else ''}then: {post['setup_then']}")
        for table in post["tables"]:
            lines += ["", f"{'### ' if markdown else ''}{post['post']}: {table['title']}"]
            if markdown:
                lines.append("")
            rows = table["text_rows"]
            if not markdown:  # a terminal wraps long explanations; Markdown keeps one line
                # By hand: tabulate's own maxcolwidths re-parses "1,000" as a number and fails.
                rows = [
                    [textwrap.fill(cell, TERMINAL_COLUMN_WIDTH) for cell in row] for row in rows
                ]
            lines.append(
                tabulate(
                    rows,
                    headers=table["headers"],
                    tablefmt="github" if markdown else "simple",
                    disable_numparse=True,
                )
            )
            if markdown:
                lines.append("")
            lines += [f"{'- ' if markdown else '  '}{note}" for note in table["notes"]]
        lines += ["", f"{'### ' if markdown else ''}{post['post']}: claims"]
        if markdown:
            rows = [[c["claim"], c["then"], c["now"], c["verdict"]] for c in post["claims"]]
            lines += ["", tabulate(rows, ["claim", "then", "now", "verdict"], tablefmt="github")]
        else:
            for claim in post["claims"]:
                lines.append(f"[{claim['verdict']}] {claim['claim']}")
                lines.append(f"    then: {claim['then']}")
                lines.append(f"    now:  {claim['now']}")
    lines += ["", f"claims: {document.get('claims_legend', CLAIMS_LEGEND)}"]
    lines += ["", "verdicts:"] if not markdown else ["", "Verdicts:", ""]
    for verdict, meaning in document.get("verdicts", VERDICTS).items():
        lines.append(f"{'- ' if markdown else '  '}{verdict}: {meaning}")
    return "\n".join(lines) + "\n"
