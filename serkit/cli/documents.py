"""What the person allows a command that reads their document (the flags are in
serkit.cli.options: --allow-pickle, --max-*).

A document never raises its own limits nor allows itself to be unpickled: these flags
(or the SERKIT_MAX_DOCUMENT_* variables the person sets) are the only way
(serkit.inputs.limits).
"""

from __future__ import annotations

import argparse
import functools
from typing import Callable

from serkit.inputs.limits import ENV, Grant, granting, limits_with

Run = Callable[[argparse.Namespace], int]


def granted(run: Run) -> Run:
    """`run` under what the command line allows: its flags, else the environment's limits."""

    @functools.wraps(run)
    def run_granted(args: argparse.Namespace) -> int:
        limits = limits_with({name: getattr(args, f"max_{name}") for name in ENV})
        with granting(Grant(limits, allow_pickle=args.allow_pickle)):
            return run(args)

    return run_granted
