"""Worker subprocesses for the checks that feed a codec input it may crash or hang on.

The hostile-input and conformance checks never decode untrusted bytes in serkit's own
process. Each starts a worker (``python -X faulthandler -m <module> ...``) that writes one
line per input; the parent reads those lines on a thread, so that a read can time out.
No answer in time is a hang (the parent kills the worker); the line stream ending early
is a crash, and :meth:`Worker.end` says how it ended (the signal, or the exit status).
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

from serkit.errors import CodecNotInstalled, SerkitError

if TYPE_CHECKING:
    from serkit.codecs.registry import Codec

# What a worker's line queue yields once the worker is gone.
EOF = None


def limit_resources(memory_bytes: int) -> None:
    """Cap this process's address space and forbid core dumps (called in a worker).

    Input that makes a decoder allocate without bound then gets MemoryError, not swap.
    """
    try:
        import resource
    except ImportError:  # not on Windows; the parent's timeouts still hold
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash must not litter core files
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, hard))


def class_name(exc: BaseException) -> str:
    """`json.decoder.JSONDecodeError`; builtins without their module (`ValueError`)."""
    kind = type(exc)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def one_line(text: str) -> str:
    return " ".join(text.split())[:200]


# A worker's codec status, when it could not run the codec at all.
NOT_INSTALLED = "not installed"
ERROR = "error"  # no worker could start, or one fell out of step


# The document whose schema a schema codec is bound to in a worker (small and record-shaped).
SCHEMA_DOCUMENT = "small-dict"


def bind_in_worker(codec_name: str, out: TextIO) -> Codec | None:
    """In a worker: the codec, bound; or None, after writing the `unavailable` line that
    tells the parent why (not installed, or failed to bind)."""
    from serkit.codecs.registry import get_codec
    from serkit.schemas.pinned import fixture_schema

    try:
        codec = get_codec(codec_name)
        # A schema codec decodes into one schema's types: the hostile run's seed document's.
        return codec.with_schema(fixture_schema(SCHEMA_DOCUMENT)) if codec.needs_schema else codec
    except CodecNotInstalled as exc:
        out.write(f"unavailable\t{NOT_INSTALLED}\t{one_line(str(exc))}\n")
    except SerkitError as exc:
        out.write(f"unavailable\t{ERROR}\t{one_line(str(exc))}\n")
    return None


class Worker:
    """One worker subprocess, its output lines read on a thread so reads can time out."""

    def __init__(self, module: str, args: Sequence[str], scratch: Path, label: str) -> None:
        self.stderr_path = scratch / f"worker-{label}.stderr"
        command = [sys.executable, "-X", "faulthandler", "-m", module, *args]
        with self.stderr_path.open("wb") as stderr:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=scratch,  # anything it might still write lands in a temporary folder
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                text=True,
            )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:  # closed here, once the worker is gone
            for line in self.process.stdout:
                self.lines.put(line.rstrip("\n"))
        self.lines.put(EOF)

    def next_line(self, timeout: float) -> str | None:
        """The next line; EOF when the worker is gone; raises queue.Empty on timeout."""
        return self.lines.get(timeout=timeout)

    def end(self) -> str:
        """Kill the worker if it still runs; how it ended, e.g. 'SIGSEGV' or 'exit 1'."""
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        if code < 0:
            try:
                return signal.Signals(-code).name
            except ValueError:
                return f"signal {-code}"
        return f"exit {code}"

    def stderr_tail(self) -> str:
        try:
            lines = self.stderr_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return one_line(lines[-1]) if lines else ""


# --- work in a forked child: the same document, without serkit's process at stake -------

_T = TypeVar("_T")


@dataclass(frozen=True)
class Forked(Generic[_T]):
    """How `run_forked`'s work ended: its value, what it raised, out of time, or dead."""

    value: _T | None = None
    raised: BaseException | None = None
    timed_out: bool = False
    died: str = ""  # how a child that gave no answer ended: "SIGABRT", "exit 1"


def run_forked(work: Callable[[], _T], limit_s: float) -> Forked[_T]:
    """`work()` in a child forked from this process (which it shares, copy-on-write: a
    document read once is not read again), killed at `limit_s`.

    Nothing is raised into serkit's own process, so no stray exception can land in a
    garbage collector's callback or a finalizer, as a timer's signal could; a C call that
    never returns, an abort or a crash in the child costs the child only. Its value and
    anything it raised come back pickled, from serkit's own code in the child. Where
    there is no fork (Windows), `work()` runs here, unbounded.
    """
    if not hasattr(os, "fork"):
        try:
            return Forked(value=work())
        except Exception as exc:
            return Forked(raised=exc)
    if limit_s <= 0:
        return Forked(timed_out=True)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer once, then leave without running the parent's exits
        try:
            os.close(read_end)
            _quiet_child()
            with os.fdopen(write_end, "wb") as out:
                out.write(_answer(work))
        finally:
            os._exit(0)
    os.close(write_end)
    timed_out = True  # until the child's answer is read whole: also if serkit is stopped
    try:
        data, timed_out = _read_until(read_end, time.monotonic() + limit_s)
    finally:
        os.close(read_end)
        if timed_out:  # killing a child that has just ended, not yet waited for, is harmless
            os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    if timed_out:
        return Forked(timed_out=True)
    if not data:
        return Forked(died=_ending(status))
    try:
        kind, found = pickle.loads(data)  # serkit's own child wrote it, a moment ago
    except Exception as exc:  # cut off as the child was killed, or not rebuilt here
        return Forked(died=f"{_ending(status)}, its answer unreadable ({class_name(exc)})")
    return Forked(value=found) if kind == "value" else Forked(raised=found)


def _quiet_child() -> None:
    """In the child: stopped by its parent alone, and silent. What a library prints as it
    aborts (or faulthandler's dump of it) is not the user's business: the parent says in
    one line how the child ended."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    faulthandler.disable()
    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)


def _answer(work: Callable[[], Any]) -> bytes:
    try:
        outcome: tuple[str, Any] = ("value", work())
    except BaseException as exc:  # a codec or plugin failing, out of memory or stack
        outcome = ("raised", exc)
    try:
        data = pickle.dumps(outcome)
        pickle.loads(data)  # one that pickles but cannot be rebuilt (its __init__'s arguments)
        return data
    except Exception:  # an exception that cannot travel: its class and words can
        raised = outcome[1] if outcome[0] == "raised" else None
        what = (
            f"{class_name(raised)}: {one_line(str(raised))}" if raised else "an unpicklable value"
        )
        return pickle.dumps(("raised", RuntimeError(what)))


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything the child writes up to its end of the pipe; (what came, timed out)."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)


def _ending(status: int) -> str:
    if os.WIFSIGNALED(status):
        try:
            return signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}"
