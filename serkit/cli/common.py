"""What every command shares: output format, count checks, id lists, tables, JSON printing.

Each command group is a module in `serkit.cli` with one function,
`add_commands(commands)`, that declares its subcommands and their arguments (as asv's
`asv/commands/` modules do) and binds each to a `run(args) -> int` with `set_defaults`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from serkit.checkout import project_root, results_dir
from serkit.compare.ranking import DEFAULT_MEASURE, MEASURE_WORDS, MEASURES
from serkit.errors import SerkitError
from serkit.inputs.fixtures import (
    FIXTURES,
    MIRROR_ENV,
    check_fixtures,
    default_fixture_names,
    source_path,
)
from serkit.suite.cases import split_ids
from serkit.text import markdown_cell, terminal

FORMATS = ("table", "json", "markdown")


def add_ranking(parser: argparse.ArgumentParser) -> None:
    """--rank-by and --exact-only: what the ranked verdict counts (serkit.compare.ranking)."""
    words = "; ".join(f"{name}: {MEASURE_WORDS[name]}" for name in MEASURES)
    parser.add_argument(
        "--rank-by",
        choices=MEASURES,
        default=DEFAULT_MEASURE,
        help=f"what the verdict ranks codecs by ({words}; default: {DEFAULT_MEASURE})",
    )
    parser.add_argument(
        "--exact-only",
        action="store_true",
        help="rank only codecs whose round trip is exact; list the others as not ranked",
    )


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def print_table(
    rows: Iterable[Sequence[Any]], headers: Sequence[str], fmt: str, **options: Any
) -> None:
    """A text table, or with `--format markdown` a GitHub-flavoured one."""
    escape = markdown_cell if fmt == "markdown" else terminal
    tablefmt = "github" if fmt == "markdown" else "simple"
    cells = [[c if isinstance(c, (int, float)) else escape(c) for c in row] for row in rows]
    print(tabulate(cells, headers=headers, tablefmt=tablefmt, **options))


def warn(warnings: Iterable[str]) -> None:
    for warning in warnings:
        print(f"serkit: warning: {terminal(warning)}", file=sys.stderr)


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
    for name in names:
        fixture = FIXTURES.get(name)
        if fixture is not None and fixture.source is not None:
            source_path(fixture.source)


def chosen_fixtures(args: argparse.Namespace) -> list[str]:
    """The --fixture ids (by default every fixture but the slow ones and the ones a post
    times), sources checked first."""
    names = check_fixtures(args.fixture) if args.fixture else default_fixture_names(slow=args.slow)
    require_sources(names)
    return names


def positive_int(value: str) -> int:
    """argparse type for every count: a whole number of at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {value}")
    return number


class _JsonAlias(argparse.Action):
    """`--json`, kept working as `--format json`, with a note that it is deprecated."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        print("serkit: --json is deprecated; use --format json", file=sys.stderr)
        namespace.format = "json"


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...] = FORMATS) -> None:
    """`--format` on every command that prints results, and the deprecated `--json` alias."""
    parser.add_argument(
        "--format", choices=choices, default="table", help="output format (default: table)"
    )
    parser.add_argument("--json", nargs=0, action=_JsonAlias, help=argparse.SUPPRESS)


def mirror_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--mirror",
        metavar="DIR",
        help=f"folder holding the fixture sources, used instead of the network (env {MIRROR_ENV})",
    )
    return parent


def codec_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--codec", type=split_ids, action="extend", help="codec ids, comma-separated"
    )
    return parent


def fixture_parent(ids: str = "fixture ids") -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--fixture", type=split_ids, action="extend", help=f"{ids}, comma-separated"
    )
    parent.add_argument(
        "--slow", action="store_true", help="include the slow fixtures (hundreds of MB)"
    )
    return parent


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
        print(f"serkit: not saved ({exc}); use --save FILE", file=sys.stderr)
        return None


def results_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--results", metavar="DIR", help="an asv results folder (default: .asv/results)"
    )
    return parent


def results_dir_of(args: argparse.Namespace) -> Path:
    """--results as given (relative to the working folder), or the checkout's asv results."""
    return Path(args.results) if args.results else results_dir(project_root())
