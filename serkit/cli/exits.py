"""serkit's exit statuses: one meaning each, the same on every command (docs/cli.md)."""

from __future__ import annotations

OK = 0
PROBLEM = 1  # the command ran to its end, and the check it makes found a problem
USAGE = 2  # the command line: argparse's own errors, and options that do not go together
ERROR = 3  # the command could not do its work: serkit's refusal (SerkitError) or the system's
INTERRUPTED = 130  # Ctrl-C (SIGINT); SIGTERM gives 143, 128 and the signal's number as shells do

POLICY = (
    (OK, "ok: the command did its work, and any check it makes passed"),
    (PROBLEM, "the check found a problem: the command ran to its end, and what it "
     "found is printed (a size that differs, a timing slower than `--fail-on` allows, "
     "a fixture that fails verification, a codec that cannot round-trip its own output "
     "or crashes on hostile input, a codec that does not conform, a warning from `doctor`)"),
    (USAGE, "usage: an unknown option (one line names the option meant, where one is "
     "near: `--rankby`, did you mean `--rank-by`?), a bad value (argparse prints the "
     "usage), or options that do not go together"),
    (ERROR, "an error: the command could not do its work (an unknown id, a missing "
     "source, a file the system refused: a full disk, a read-only folder); one line says why"),
    (INTERRUPTED, "interrupted by Ctrl-C (143 for SIGTERM); what was already written is kept"),
)  # fmt: skip


class UsageError(Exception):
    """Options that each parse, but do not go together: exit 2, as argparse's own errors."""


def checked(problem: bool) -> int:
    """A check's status: 1 when it found a problem, else 0."""
    return PROBLEM if problem else OK
