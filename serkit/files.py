"""Writing a file whole or not at all, for every layer of serkit."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, content: bytes) -> None:
    """Whole or not at all: a temporary file beside `path`, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:  # named after the file meant, not its temporary sibling
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        # mkstemp's file is private (0600); the file replaced keeps its mode, a new one
        # gets the one any new file would.
        os.chmod(temporary, path.stat().st_mode if path.exists() else _new_file_mode())
        os.replace(temporary, path)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a write names no file
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
