"""Running asv so that Ctrl-C and SIGTERM stop it, and everything it started, at once.

asv starts each of its children (the installer, the benchmark server and the benchmark
processes that server forks) in a process group of its own, so a signal sent to the
terminal's group reaches none of them, and asv itself went on for minutes after a Ctrl-C.
So serkit starts asv in a new session, which every one of those processes belongs to,
and on the first SIGINT or SIGTERM:

1. sends SIGINT to asv, which stops as it does on a Ctrl-C of its own: it kills its
   benchmark server's group and exits, without saving the round it was in;
2. if anything of the session is left after GRACE_S, or at a second signal (nox sends
   SIGTERM 0.3 s after its own Ctrl-C), kills every process of the session.

Results already saved are safe either way: serkit.run.asv_env makes asv's writes atomic.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import IO

from serkit.errors import SerkitError

GRACE_S = 1.2  # asv's own clean-up takes about 0.2 s; the budget for stopping is 2 s
_PR_SET_PDEATHSIG = 1


class Interrupted(SerkitError):
    """SIGINT or SIGTERM stopped the run: asv and its processes are gone."""

    def __init__(self, signum: int, message: str = "") -> None:
        self.signum = signum
        super().__init__(message or f"stopped by {signal.Signals(signum).name}")

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # as a shell reports it: 130 for Ctrl-C


def _die_with_parent() -> None:
    """In asv's process, before it runs: a SIGINT when serkit dies (Linux only).

    If serkit is killed outright (nox escalates to SIGKILL), asv still stops as after a
    Ctrl-C instead of timing on, orphaned, for minutes.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def session_members(sid: int, proc: Path = Path("/proc")) -> list[int]:
    """Every live process of session `sid` (Linux's /proc; elsewhere only `sid` itself)."""
    if not proc.is_dir():
        return [sid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Fields after the command's closing parenthesis: state ppid pgrp session ...
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def kill_session(sid: int) -> None:
    """SIGKILL every process in session `sid`, the groups asv made included."""
    for pid in session_members(sid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _send(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def _wait_for_session(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Wait up to `seconds` for asv to exit and its session to empty; whether it did."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None and not session_members(process.pid):
            return True
        time.sleep(0.05)
    return False


def _signals() -> Iterator[signal.Signals]:
    yield signal.SIGINT
    yield signal.SIGTERM


def _pump(stream: IO[bytes], output: Callable[[str], None]) -> None:
    """Each line of `stream` to `output`, until every writer of the pipe has closed it."""
    with stream:
        for raw in stream:
            output(raw.decode("utf-8", "replace").rstrip("\r\n"))


def run_in_session(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    output: Callable[[str], None] | None = None,
) -> int:
    """Run `command` in a session of its own and return its exit status.

    Raises Interrupted once a SIGINT or SIGTERM has stopped it and every process it
    started. Its output goes to the user's terminal, or, given `output`, line by line to
    that (stdout and stderr together, read in a thread so that a signal is still handled
    at once).
    """
    received: list[int] = []
    process = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        start_new_session=True,
        preexec_fn=_die_with_parent,
        stdout=subprocess.PIPE if output is not None else None,
        stderr=subprocess.STDOUT if output is not None else None,
    )
    reader = None
    if output is not None and process.stdout is not None:
        reader = threading.Thread(target=_pump, args=(process.stdout, output), daemon=True)
        reader.start()

    def forward(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            _send(process.pid, signal.SIGINT)  # asv's own clean stop
        else:
            kill_session(process.pid)

    previous = {s: signal.signal(s, forward) for s in _signals()}
    try:
        status = _wait(process, received, forward)
        if received:
            if not _wait_for_session(process, GRACE_S):
                kill_session(process.pid)
                _wait_for_session(process, 0.5)
            raise Interrupted(received[0])
        # asv may leave a benchmark server behind when it fails; none outlives the run.
        kill_session(process.pid)
        return status
    finally:
        if reader is not None:
            # Every writer is gone (the session is emptied above): the last lines arrive.
            reader.join(timeout=0.5)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _wait(
    process: subprocess.Popen[bytes],
    received: list[int],
    forward: Callable[[int, FrameType | None], None],
) -> int:
    """asv's exit status; after a signal, at most GRACE_S before its session is killed."""
    stop_by = None
    while True:
        try:
            return process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            pass
        except KeyboardInterrupt:  # a caller's SIGINT handler raised it: handled as ours
            forward(signal.SIGINT, None)
        if received and stop_by is None:
            stop_by = time.monotonic() + GRACE_S
        if stop_by is not None and time.monotonic() > stop_by:
            kill_session(process.pid)
            return process.wait()
