"""Worker subprocesses for the checks that feed a codec input it may crash or hang on.

The hostile-input and conformance checks never decode untrusted bytes in serkit's own
process. Each starts a worker (``python -X faulthandler -m <module> ...``) that writes one
line per input; the parent reads those lines on a thread, so that a read can time out.
No answer in time is a hang (the parent kills the worker); the line stream ending early
is a crash, and :meth:`Worker.end` says how it ended (the signal, or the exit status).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

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
