"""The `serkit` command line: one module per command group, each with `add_commands`.

Every user mistake ends in one `serkit: error: ...` line on stderr, not a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from serkit import __version__
from serkit.cli import (
    bench,
    checks,
    codecs,
    conformance,
    fixtures,
    replicate,
    results,
    store,
    trial,
    trust,
)
from serkit.errors import SerkitError
from serkit.inputs.fixtures import MIRROR_ENV

# In `serkit --help` order.
GROUPS = (codecs, fixtures, trial, checks, conformance, bench, trust, results, store, replicate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="serkit", description="Benchmark suite for Python serializers."
    )
    parser.add_argument("--version", action="version", version=f"serkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        group.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    saved_mirror = os.environ.get(MIRROR_ENV)
    if getattr(args, "mirror", None):
        os.environ[MIRROR_ENV] = args.mirror  # fixtures built later read it too
    try:
        return int(args.run(args))
    except SerkitError as exc:
        print(f"serkit: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("serkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `serkit list | head`
        return 0
    finally:  # main() is also called in-process, by tests and other tools
        if saved_mirror is None:
            os.environ.pop(MIRROR_ENV, None)
        else:
            os.environ[MIRROR_ENV] = saved_mirror


if __name__ == "__main__":
    sys.exit(main())
