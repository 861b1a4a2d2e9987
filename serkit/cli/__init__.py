"""The `serkit` command line: one module per command group, each with `add_commands`.

Every user mistake ends in one `serkit: error: ...` line on stderr, not a traceback, and
every exit status has one meaning (serkit.cli.exits).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any

from serkit.cli import (
    bench,
    compare,
    conformance,
    exits,
    fidelity,
    fixtures,
    hosts,
    matrix,
    replicate,
    report,
    results,
    trial,
    trust,
)
from serkit.cli import list as list_command
from serkit.cli.exits import UsageError
from serkit.cli.options import Parser
from serkit.errors import BadLimit, SerkitError
from serkit.inputs.fixtures import MIRROR_ENV
from serkit.inputs.limits import limits_from_env, record_max_bytes
from serkit.run.process import Interrupted
from serkit.text import diagnostic

# In `serkit --help` order.
GROUPS = (
    list_command,
    fixtures,
    trial,
    fidelity,
    conformance,
    matrix,
    bench,
    trust,
    compare,
    hosts,
    report,
    results,
    replicate,
)


class _Version(argparse.Action):
    """argparse's version action, reading the installed metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(
            option_strings, dest, nargs=0, help="show program's version number and exit", **kwargs
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from serkit import __version__

        print(f"serkit {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="serkit", description="Benchmark suite for Python serializers.")
    parser.add_argument("--version", action=_Version, default=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        group.add_commands(commands)
    return parser


def _stop(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt  # as Python's own handler: every `except KeyboardInterrupt` holds
    raise Interrupted(signum)


@contextlib.contextmanager
def _signals_owned() -> Iterator[None]:
    """SIGINT and SIGTERM stop the command wherever they land, from its first line to its last.

    A process started in the background (a shell's `&`, a pytest-xdist worker's child)
    inherits SIGINT ignored, and Python then installs no handler of its own: a Ctrl-C
    landing outside a step that set one was lost, and the command ran on to exit 0.
    Signals can be set only in the main thread; elsewhere (a tool calling main() from a
    thread of its own) the caller's handling stands.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_CAUSES = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


def os_failure(exc: OSError) -> str:
    """One line for a failed file operation: the file, the cause, and what was kept."""
    cause = _CAUSES.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    code = errno.errorcode.get(exc.errno or 0, "")
    where = f"{exc.filename}: " if exc.filename is not None else "the system refused: "
    return (
        f"{where}{cause}{f' ({code})' if code else ''}; results already written are kept "
        "whole (each is written beside its place, then renamed into it)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    with _signals_owned():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    saved_mirror = os.environ.get(MIRROR_ENV)
    if getattr(args, "mirror", None):
        os.environ[MIRROR_ENV] = args.mirror  # fixtures built later read it too
    try:
        limits_from_env(), record_max_bytes()  # a SERKIT_MAX_* the person set, checked first
        return int(args.run(args))
    except Interrupted as exc:  # SIGTERM, or a run that says what it kept
        print(f"serkit: {exc}", file=sys.stderr)
        return exc.exit_status
    except (UsageError, BadLimit) as exc:
        print(f"serkit {args.command}: error: {diagnostic(exc)}", file=sys.stderr)
        return exits.USAGE
    except SerkitError as exc:
        print(f"serkit: error: {diagnostic(exc)}", file=sys.stderr)
        return exits.ERROR
    except KeyboardInterrupt:
        print("serkit: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    except BrokenPipeError:  # `serkit list | head`
        return exits.OK
    except OSError as exc:  # a full disk, a read-only folder, a permission: the system's
        print(f"serkit: error: {diagnostic(os_failure(exc))}", file=sys.stderr)
        return exits.ERROR
    finally:  # main() is also called in-process, by tests and other tools
        if saved_mirror is None:
            os.environ.pop(MIRROR_ENV, None)
        else:
            os.environ[MIRROR_ENV] = saved_mirror


if __name__ == "__main__":
    sys.exit(main())
