"""Text read from a file, made safe for where serkit prints it: Markdown, a terminal, or
a page that renders it as HTML (asv's own pages).

A host's CPU model, a fixture's description, a document's keys, a file's name: each can
come from a file someone else wrote. In Markdown (`--format markdown`, pasted into an
issue or a CI summary), raw HTML would render and a `|` or a newline would break the
table; on a terminal, an escape sequence (`\\x1b[2J`) would act instead of being shown.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

# C0 and C1 control characters, and DEL, but the newline and the tab, which print as text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal(text: Any) -> str:
    """`text` for a terminal: each control character shown as its escape (`\\x1b`), and
    each invisible format character (bidirectional overrides) as `\\u202e`."""
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in shown)


def diagnostic(text: Any) -> str:
    """One line of an error or a warning: as `terminal`, and a newline shown as `\\n`, so
    that a name read from a file cannot begin a line of its own (a forged `serkit: error:`)."""
    return terminal(text).replace("\n", "\\n")


def markdown_text(text: Any) -> str:
    """Prose for Markdown: raw HTML shown as text (Markdown passes HTML through)."""
    return html.escape(terminal(text), quote=False)


def markdown_cell(value: Any) -> str:
    """One cell of a Markdown table: as markdown_text, a `|` kept from ending the cell,
    and its lines joined by `<br>` (a cell is one line)."""
    text = markdown_text(value).replace("|", "\\|")
    return "<br>".join(text.splitlines()) if "\n" in text or "\r" in text else text


def html_text(text: Any) -> str:
    """Text for a page that inserts it as HTML, in an element or an attribute: markup,
    ampersands and both quotes escaped, so it can neither open a tag nor end an attribute."""
    return html.escape(str(text), quote=True)
