"""What every command shares in printing: tables, JSON, warnings; and the documents chosen.

Each command group is a module in `serkit.cli` named after its command, with one
function, `add_commands(commands)`, that declares its subcommands and binds each to a
`run(args) -> int` with `set_defaults`; the options they share are declared once, in
`serkit.cli.options`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.checkout import project_root, results_dir
from serkit.errors import SerkitError
from serkit.text import diagnostic, markdown_cell, terminal


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def print_table(
    rows: Iterable[Sequence[Any]], headers: Sequence[str], fmt: str, **options: Any
) -> None:
    """A text table, or with `--format markdown` a GitHub-flavoured one."""
    from tabulate import tabulate  # imported when a table is printed: parsing stays light

    escape = markdown_cell if fmt == "markdown" else terminal
    tablefmt = "github" if fmt == "markdown" else "simple"
    cells = [[c if isinstance(c, (int, float)) else escape(c) for c in row] for row in rows]
    print(tabulate(cells, headers=headers, tablefmt=tablefmt, **options))


def warn(warnings: Iterable[str]) -> None:
    for warning in dict.fromkeys(warnings):  # once each: views that read a file again say it again
        print(f"serkit: warning: {diagnostic(warning)}", file=sys.stderr)


def print_hazards(hazards: Mapping[str, str | None], heading: str) -> None:
    """The codecs whose loads must not see untrusted bytes, grouped by what they risk."""
    grouped: dict[str, list[str]] = {}
    for codec, hazard in hazards.items():
        if hazard:
            grouped.setdefault(hazard, []).append(codec)
    if grouped:
        print(heading)
    for hazard, codecs in grouped.items():
        print(f"    {', '.join(codecs)}: {hazard}")


def require_sources(names: Iterable[str]) -> None:
    """A fixture whose fetched source is missing fails now, not after an hour of work."""
    from serkit.inputs.fixtures import FIXTURES, source_path

    for name in names:
        fixture = FIXTURES.get(name)
        if fixture is not None and fixture.source is not None:
            source_path(fixture.source)


def chosen_fixtures(args: argparse.Namespace) -> list[str]:
    """The --fixture ids (by default every fixture but the slow ones and the ones a post
    times), sources checked first."""
    from serkit.inputs.fixtures import check_fixtures, default_fixture_names

    names = check_fixtures(args.fixture) if args.fixture else default_fixture_names(slow=args.slow)
    require_sources(names)
    return names


def save_document(
    save: Callable[[Any, Path], Any], document: Any, target: Path | None, what: str
) -> None:
    """--save's document written to `target` (None: nowhere), and a line saying where."""
    if target is None:
        return
    try:
        save(document, target)
    except OSError as exc:
        raise SerkitError(f"cannot write {target}: {exc}") from exc
    print(f"serkit: saved the {what} to {diagnostic(target)}", file=sys.stderr)


def save_target(
    args: argparse.Namespace, default: Callable[[Path], Path], *, partial: bool
) -> Path | None:
    """Where a command's JSON document goes: --save FILE, else `default(results folder)` in the
    checkout after a full run; nowhere with --no-save or a partial run (`partial`)."""
    if args.save:
        return Path(args.save)
    if args.no_save or partial:
        return None
    try:
        return default(results_dir(project_root()))
    except SerkitError as exc:
        print(f"serkit: not saved ({diagnostic(exc)}); use --save FILE", file=sys.stderr)
        return None


def results_dir_of(args: argparse.Namespace) -> Path:
    """--results as given (relative to the working folder), or the checkout's asv results."""
    return Path(args.results) if args.results else results_dir(project_root())
