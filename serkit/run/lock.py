"""One `serkit bench` at a time in a checkout: a second one refuses, in one line.

Two runs at once would write the same results files in turn, each over what the other
had saved, and would share the machine's cores, so that each one's timings would be
the other's noise. The lock is an flock on .asv/bench.lock: the kernel releases it when
its holder exits, however it exits, so a killed run never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from serkit.checkout import BENCH_LOCK
from serkit.errors import SerkitError


class Busy(SerkitError):
    """Another `serkit bench` holds this checkout."""


def check_free(root: Path) -> None:
    """Busy, now, if another run holds the checkout (the run still takes the lock itself)."""
    with bench_lock(root):
        pass


@contextlib.contextmanager
def bench_lock(root: Path) -> Iterator[None]:
    """Hold the checkout's bench lock for the block; Busy if another run holds it."""
    path = root / BENCH_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by asv: O_CLOEXEC
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise Busy(
                f"another `serkit bench` is running in this checkout ({holder}); two at once "
                "would overwrite each other's results and spoil each other's timings: "
                "wait for it to end, or stop it (Ctrl-C)"
            ) from None
        since = datetime.datetime.now().strftime("%H:%M:%S")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, since {since}".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
