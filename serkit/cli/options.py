"""Every option more than one command takes, declared once: its name, meaning and type.

A command adds an option by name (`add(parser, "--codec")`), so that a name means the
same on every command that takes it; a command may give its own default and a note, but
never another meaning. An option only one command takes is declared in that command's
module. `tests/test_cli_options.py` reads every command's parser against this table.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from serkit.cli import exits
from serkit.compare.ranking import DEFAULT_MEASURE, MEASURE_WORDS, MEASURES
from serkit.errors import DocumentError
from serkit.inputs.fixtures import MIRROR_ENV
from serkit.inputs.limits import ENV, FLAGS, Limits, parse_count, parse_size
from serkit.run.naming import MACHINE_NAME, MACHINE_RULE
from serkit.suite.cases import split_ids
from serkit.units import bytes_binary, count

FORMATS = ("table", "json", "markdown")
MOST_SECONDS = 86_400.0

# An argparse parser, or a group of one (a titled group, a mutually exclusive one).
Target = Union[argparse.ArgumentParser, "argparse._ArgumentGroup"]
# argparse's action: a name ("store_true") or a class (BooleanOptionalAction).
ActionKind = Union[str, type[argparse.Action]]


def positive_int(value: str) -> int:
    """argparse type for every count: a whole number of at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {value}")
    return number


def positive_seconds(value: str) -> float:
    """argparse type for a time limit or budget: seconds, more than 0, at most a day."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {value!r}") from None
    if not 0 < number <= MOST_SECONDS:  # also NaN and inf, which no timer can wait for
        raise argparse.ArgumentTypeError(
            f"must be more than 0 seconds and at most {MOST_SECONDS:.0f} (a day), not {value}"
        )
    return number


def machine_argument(value: str) -> str:
    """argparse type for --machine: a folder name of letters, digits, _ . and -."""
    if not MACHINE_NAME.fullmatch(value):
        raise argparse.ArgumentTypeError(f"must be {MACHINE_RULE}, not {value!r}")
    return value


def document_size(value: str) -> int:
    """argparse type for --max-bytes: a size such as 1GiB."""
    try:
        return parse_size(value)
    except DocumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def document_count(value: str) -> int:
    """argparse type for --max-nodes, --max-depth, --max-aliases: a count, as the variable's."""
    try:
        return parse_count(value)
    except DocumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# How alike a mistyped option and a real one must be to be named (difflib's ratio):
# `rankby` and `rank-by` are 0.92, `mirorr` and `mirror` 0.83; asv's `factor` and `matrix`,
# which `serkit bench` passes on, 0.5.
NEAR = 0.75


class Parser(argparse.ArgumentParser):
    """serkit's parser, and each command's (argparse makes subparsers of the root's class):
    an option a command does not know that reads like one it does is named in one line,
    exit 2. argparse alone would print the root's usage with no hint, or first complain of a
    missing argument."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._subparsers is None:  # a command's own parser: it knows every option it takes
            for typed in sys.argv[1:] if args is None else args:
                if typed == "--":
                    break
                nearest = self.nearest_option(typed)
                if nearest:
                    words = f"unknown option {typed.split('=', 1)[0]}; did you mean {nearest}?"
                    self.exit(exits.USAGE, f"{self.prog}: error: {words}\n")
        return super().parse_known_args(args, namespace)

    def nearest_option(self, typed: str) -> str | None:
        """The option most like `typed` (`--rankby`: `--rank-by`), where `typed` is none of
        this parser's options (nor a prefix of one, which argparse takes) and one is near."""
        if not typed.startswith("--"):
            return None
        name = typed.split("=", 1)[0]
        known = [flag for flag in self._option_string_actions if flag.startswith("--")]
        if any(flag.startswith(name) for flag in known):
            return None
        # Names without their dashes, which would make any two look alike; and near, so
        # that an option `bench` passes on to asv is not taken for one of serkit's.
        words = {flag[2:]: flag for flag in known}
        found = difflib.get_close_matches(name[2:], words, n=1, cutoff=NEAR)
        return words[found[0]] if found else None


@dataclass(frozen=True)
class Option:
    """One option's declaration: in OPTIONS, what every command that takes it takes; in a
    command's own options, what that one command takes."""

    flags: tuple[str, ...]
    help: str  # the meaning, word for word the same on every command
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    action: ActionKind | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None

    @property
    def name(self) -> str:
        return self.flags[-1]


def _declare(*options: Option) -> Mapping[str, Option]:
    return {option.name: option for option in options}


_LIMITS = Limits()
_LIMIT_WORDS = {
    "nodes": "values, containers and keys a document may expand to, aliases counted each time",
    "depth": "containers a document may nest",
    "aliases": "references to a container already counted (YAML aliases, pickle's memo)",
}

OPTIONS: Mapping[str, Option] = _declare(
    Option(("--format",), "how to print the results", choices=FORMATS, default="table"),
    Option(
        ("--mirror",),
        f"folder holding the fixture sources, used instead of the network (env {MIRROR_ENV})",
        metavar="DIR",
    ),
    Option(("--codec",), "codec ids, comma-separated", type=split_ids, metavar="IDS"),
    Option(("--fixture",), "fixture ids, comma-separated", type=split_ids, metavar="IDS"),
    Option(
        ("--slow",), "include the slow documents (hundreds of MB, minutes)", action="store_true"
    ),
    Option(
        ("--rounds",),
        "interleaved rounds, each timing every call once",
        type=positive_int,
        metavar="N",
    ),
    Option(
        ("--processes",),
        "processes per pair, each a fresh interpreter",
        type=positive_int,
        metavar="N",
    ),
    Option(
        ("--machine",),
        "the machine's name, its folder in the results tree: what this command files "
        "results under or reads them from (default: the name `serkit bench` gives this machine)",
        type=machine_argument,
        metavar="NAME",
    ),
    Option(("--results",), "an asv results tree to read (default: .asv/results)", metavar="DIR"),
    Option(("--into",), "the folder to write into, created if missing", metavar="DIR"),
    Option(("--save",), "also write the JSON document to FILE", metavar="FILE"),
    Option(
        ("--no-save",), "do not write the JSON document to its default place", action="store_true"
    ),
    Option(
        ("--rank-by",),
        "what the verdict ranks codecs by ("
        + "; ".join(f"{name}: {MEASURE_WORDS[name]}" for name in MEASURES)
        + ")",
        choices=MEASURES,
        default=DEFAULT_MEASURE,
    ),
    Option(
        ("--exact-only",),
        "rank only codecs whose round trip is exact; list the others as not ranked",
        action="store_true",
    ),
    Option(
        ("--safe-only",),
        "rank only codecs safe on untrusted bytes (not pickle or marshal: serkit list's "
        "UNSAFE); by default they are ranked apart, after the safe ones",
        action="store_true",
    ),
    Option(
        ("--instructions",),
        "also count instructions and estimated cycles per call under valgrind",
        action="store_true",
    ),
    Option(
        ("--allow-pickle",),
        "read pickle files: loading one runs code named by the file; only for files you trust",
        action="store_true",
    ),
    Option(
        (FLAGS["bytes"],),
        f"the largest file, e.g. 1GiB (default: {bytes_binary(_LIMITS.bytes)}, or ${ENV['bytes']})",
        type=document_size,
        metavar="SIZE",
    ),
    *(
        Option(
            (FLAGS[name],),
            f"{what} (default: {count(getattr(_LIMITS, name))}, or ${ENV[name]})",
            type=document_count,
            metavar="N",
        )
        for name, what in _LIMIT_WORDS.items()
    ),
)

# The commands that print no results: a line or two on what they did, on stderr. They
# take no --format (tests/test_cli_options.py holds every other command to one).
PRINTS_NO_RESULTS: Mapping[str, str] = {
    "report": "writes HTML pages and names them on stderr",
    "fixtures fetch": "downloads the sources and says where each went",
    "fixtures add": "copies one document and says what it declared",
    "fixtures verify": "prints one ok or FAIL line per check as it goes, and exits 1 on a FAIL",
    "results merge": "merges results trees and counts what it added on stderr",
}

# The flags of every command that reads a user's document, under one heading.
DOCUMENT_LIMITS = ("--allow-pickle", *(FLAGS[name] for name in ("bytes", *_LIMIT_WORDS)))
DOCUMENT_LIMITS_TITLE = "what a document may be (it cannot say so itself; see docs/fidelity.md)"


def escaped(text: str) -> str:
    """Help text built from prose: argparse reads a bare % as a format."""
    return text.replace("%", "%%")


_UNSET: Any = object()


def add(
    target: Target, name: str, *, default: Any = _UNSET, note: str = "", required: bool = False
) -> argparse.Action:
    """The table's `name` on `target`, with this command's default and note (if any)."""
    return add_option(target, OPTIONS[name], default=default, note=note, required=required)


def add_option(
    target: Target,
    option: Option,
    *,
    default: Any = _UNSET,
    note: str = "",
    required: bool = False,
) -> argparse.Action:
    """`option` on `target`: its help, then the note, then the default in words."""
    value = option.default if default is _UNSET else default
    words = option.help + (f"; {note}" if note else "")
    if value not in (None, "") and option.action is None and not isinstance(value, list):
        words += f" (default: {value:g})" if isinstance(value, float) else f" (default: {value})"
    settings: dict[str, Any] = {"help": escaped(words)}
    if option.action is not None:
        settings["action"] = option.action  # a switch: off unless given
    else:
        settings["default"] = value
        settings.update(type=option.type, metavar=option.metavar, choices=option.choices)
    if required:
        settings["required"] = True
    if option.type is split_ids:
        settings["action"] = "extend"  # --codec a,b --codec c: all three
    return target.add_argument(*option.flags, **settings)


@dataclass(frozen=True)
class Use:
    """A table option as one command takes it: its own default, a note, required or not."""

    name: str
    default: Any = _UNSET
    note: str = ""
    required: bool = False


def command(
    commands: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    options: tuple[str | Use | Option, ...] = (),
) -> argparse.ArgumentParser:
    """A command: its parser, its options (the table's by name, its own as an Option),
    and the function it runs."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help, description=description)
    for use in options:
        if isinstance(use, Option):
            add_option(parser, use)
            continue
        use = Use(use) if isinstance(use, str) else use
        if use.name == LIMITS:
            add_document_limits(parser)
            continue
        add(parser, use.name, default=use.default, note=use.note, required=use.required)
    parser.set_defaults(run=run)
    return parser


# In a command's options: every flag of DOCUMENT_LIMITS, under their heading.
LIMITS = "--allow-pickle"


def add_all(target: Target, *names: str) -> None:
    """Several of the table's options, each with its own default."""
    for name in names:
        add(target, name)


def add_document_limits(parser: argparse.ArgumentParser) -> None:
    """--allow-pickle and --max-bytes, --max-nodes, --max-depth, --max-aliases."""
    add_all(parser.add_argument_group(DOCUMENT_LIMITS_TITLE), *DOCUMENT_LIMITS)


def add_saving(parser: argparse.ArgumentParser, default_place: str, whole_run: str) -> None:
    """--save FILE or --no-save: where a command's JSON document goes (see save_target)."""
    saving = parser.add_mutually_exclusive_group()
    add(saving, "--save")
    add(saving, "--no-save", note=f"by default {default_place}, after {whole_run}")
