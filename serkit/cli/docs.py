"""docs/cli.md, written from the parser: every command, its description and every option.

    python -m serkit.cli.docs            # print the page
    python -m serkit.cli.docs --write    # write docs/cli.md in this checkout
    python -m serkit.cli.docs --check    # exit 1 when docs/cli.md is not what the parser says

The prose that is not in the parser (the exit statuses, the limits on documents) is here,
once; everything else is read from `build_parser()`, so the page cannot drift from it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from serkit.checkout import project_root
from serkit.cli import build_parser, exits
from serkit.cli.options import DOCUMENT_LIMITS, OPTIONS, PRINTS_NO_RESULTS
from serkit.files import atomic_write
from serkit.inputs.limits import ENV

PAGE = Path("docs") / "cli.md"
WIDTH = 100  # usage lines wrap here, whatever the terminal

INTRO = """\
# The command line

<!-- Written by `python -m serkit.cli.docs --write` from the parser; edit serkit/cli, not this
page. The lint session fails when the two differ. -->

`serkit COMMAND --help` prints what this page says of a command; `python -m serkit` is the
same program. Ids (`IDS`) are comma-separated, and an option given twice adds to the list.
Every command that prints results takes `--format table|json|markdown`; those that print
none say so below."""

LIMITS = f"""\
## What a document may be

The flags of every command that reads your documents ({
    ", ".join(f"`{f}`" for f in DOCUMENT_LIMITS)
}) are what you allow them, since a document cannot allow itself anything
(see [Your documents](fidelity.md#your-documents)); each limit can also be raised for a
whole shell by its variable ({", ".join(f"`{v}`" for v in ENV.values())}).
`SERKIT_MAX_RECORD_BYTES` (default 64 MiB) is the size cap on serkit's own kinds of file
read from a results tree or a fixtures folder (results files, `machine.json`,
`benchmarks.json`, `serkit-host.yaml`, `fixtures.json`); see [Folders, results trees and
disks from elsewhere](fidelity.md#folders-results-trees-and-disks-from-elsewhere)."""


def _md(text: str) -> str:
    """Help text as Markdown: the characters Markdown would read as markup, escaped."""
    for char in ("\\", "*", "_", "[", "]"):
        text = text.replace(char, "\\" + char)
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _help(action: argparse.Action) -> str:
    return (action.help or "").replace("%%", "%")


def _flags(action: argparse.Action) -> str:
    """`--codec IDS`, `-v, --verbose`, `--format {table,json,markdown}`, `POST`."""
    if not action.option_strings:
        return str(action.metavar or action.dest)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    if action.metavar is not None:
        value = str(action.metavar)
    elif action.choices is not None:
        value = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        value = action.dest.upper()
    return ", ".join(action.option_strings) + " " + value


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every command and subcommand: its words, its one-line help, its parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*words, name), helps.get(name, ""), sub
                yield from commands(sub, (*words, name))


def _section(words: tuple[str, ...], summary: str, parser: argparse.ArgumentParser) -> str:
    level = "#" * (2 + len(words))  # under "## The commands"
    lines = [f"{level} serkit {' '.join(words)}", "", _md(summary) + "."]
    if parser.description:
        lines += ["", _md(parser.description)]
    lines += ["", "```text", _usage(parser), "```"]
    rows = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    rows = [a for a in rows if not isinstance(a, argparse._SubParsersAction)]
    if rows:
        lines += ["", "| argument | what it is |", "|---|---|"]
        lines += [f"| `{_flags(a)}` | {_md(_help(a))} |" for a in rows]
    if " ".join(words) in PRINTS_NO_RESULTS:
        lines += ["", f"No `--format`: it {_md(PRINTS_NO_RESULTS[' '.join(words)])}."]
    return "\n".join(lines)


def _policy() -> str:
    lines = ["## Exit status", "", "Every command exits with one of these, each with one meaning:"]
    lines += ["", "| status | meaning |", "|---|---|"]
    lines += [f"| {code} | {meaning} |" for code, meaning in exits.POLICY]
    lines += [
        "",
        "`serkit compare --fail-on` and every check follow it: 1 is a finding, 3 is a "
        "command that could not look.",
    ]
    return "\n".join(lines)


def _shared() -> str:
    lines = [
        "## Options that mean the same everywhere",
        "",
        "An option more than one command takes is declared once (`serkit/cli/options.py`),",
        "and means this on every command; a command may add a note and its own default.",
        "",
        "| option | what it is |",
        "|---|---|",
    ]
    for option in OPTIONS.values():
        flags = ", ".join(option.flags)
        value = option.metavar or ("{" + ",".join(option.choices) + "}" if option.choices else "")
        lines.append(f"| `{flags}{' ' + value if value else ''}` | {_md(option.help)} |")
    return "\n".join(lines)


def page(parser: argparse.ArgumentParser | None = None) -> str:
    parser = parser or build_parser()
    found = list(commands(parser))
    index = ["| command | what it does |", "|---|---|"]
    index += [f"| `serkit {' '.join(w)}` | {_md(summary)} |" for w, summary, _ in found]
    parts = [INTRO, "\n".join(index), _policy(), _shared(), LIMITS, "## The commands"]
    parts += [_section(w, summary, sub) for w, summary, sub in found]
    return "\n\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m serkit.cli.docs", description="docs/cli.md from serkit's parser."
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help=f"write {PAGE} in this checkout")
    action.add_argument("--check", action="store_true", help=f"exit 1 when {PAGE} differs")
    args = parser.parse_args(argv)
    text = page()
    if not (args.write or args.check):
        sys.stdout.write(text)
        return 0
    path = project_root() / PAGE
    if args.write:
        atomic_write(path, text)
        return 0
    if path.read_text(encoding="utf-8") != text:
        print(
            f"{PAGE} is not what the parser says: run `python -m serkit.cli.docs --write`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
