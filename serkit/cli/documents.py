"""The flags of every command that reads a user's document: what the person allows it.

A document never raises its own limits nor allows itself to be unpickled: these flags
(or the SERKIT_MAX_DOCUMENT_* variables the person sets) are the only way
(serkit.inputs.limits).
"""

from __future__ import annotations

import argparse
import functools
from typing import Callable

from serkit.cli.common import positive_int
from serkit.errors import DocumentError
from serkit.inputs.limits import ENV, FLAGS, Grant, Limits, granting, limits_with, parse_size
from serkit.units import bytes_binary, count

Run = Callable[[argparse.Namespace], int]
PICKLE_HELP = "read pickle files: loading one runs code named by the file; only for files you trust"


def _size(value: str) -> int:
    try:
        return parse_size(value)
    except DocumentError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def document_parent() -> argparse.ArgumentParser:
    """--allow-pickle and --max-bytes, --max-nodes, --max-depth, --max-aliases."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group(
        "what a document may be (it cannot say so itself; see docs/fidelity.md)"
    )
    group.add_argument("--allow-pickle", action="store_true", help=PICKLE_HELP)
    default = Limits()
    group.add_argument(
        FLAGS["bytes"],
        type=_size,
        metavar="SIZE",
        help=f"the largest file, e.g. 1GiB (default: {bytes_binary(default.bytes)}, "
        f"or ${ENV['bytes']})",
    )
    for name, what in (
        ("nodes", "values, containers and keys it may expand to, aliases counted each time"),
        ("depth", "containers it may nest"),
        ("aliases", "references to a container already counted (YAML aliases, pickle's memo)"),
    ):
        group.add_argument(
            FLAGS[name],
            type=positive_int,
            metavar="N",
            help=f"{what} (default: {count(getattr(default, name))}, or ${ENV[name]})",
        )
    return parent


def granted(run: Run) -> Run:
    """`run` under what the command line allows: its flags, else the environment's limits."""

    @functools.wraps(run)
    def run_granted(args: argparse.Namespace) -> int:
        limits = limits_with({name: getattr(args, f"max_{name}") for name in ENV})
        with granting(Grant(limits, allow_pickle=args.allow_pickle)):
            return run(args)

    return run_granted
