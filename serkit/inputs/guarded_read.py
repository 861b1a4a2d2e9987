"""The one guarded path from a file's name to bytes in memory, for every reader of serkit.

A file is looked at before it is opened (opening a FIFO blocks), opened once, and checked
again on what was opened: a regular file, under its cap, never through a link where the
caller says so. What it holds is parsed elsewhere (serkit.inputs.documents).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from serkit.errors import RefusedFile, RefusedFileLimit
from serkit.inputs.limits import current_grant, how_to_raise
from serkit.units import bytes_binary

_NOT_REGULAR = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _kind(mode: int) -> str:
    return next((what for test, what in _NOT_REGULAR if test(mode)), "not a regular file")


def read_bytes(
    path: Path,
    max_bytes: int | None = None,
    *,
    what: str = "a document",
    how_to_allow: str | None = None,
    follow_links: bool = True,
    folder: int | None = None,
) -> bytes:
    """The file's bytes: the one guarded path from a file's name to bytes in memory.

    Refused, one line each (RefusedFile), before a byte is read: a file that is missing, a
    folder, not a regular file (a FIFO would block the reader forever), or over
    `max_bytes` (the cap for `what`). The size is checked again on the open file, which
    is opened without blocking, and at most `max_bytes` + 1 bytes are read. `max_bytes`
    defaults to the limit granted (serkit.inputs.limits.current_grant); `how_to_allow`
    says how the person raises it (by default, a document's --max-bytes). With
    `follow_links` False, a symbolic link is refused, looked at and opened (O_NOFOLLOW).
    `folder`: an open folder to find `path`'s name in, rather than by its path, so that
    a folder on the way swapped for a link after it was opened changes nothing.
    """
    where: str | Path = path if folder is None else path.name
    max_bytes = current_grant().limits.bytes if max_bytes is None else max_bytes
    how_to_allow = how_to_allow or how_to_raise("bytes", "4GiB")
    try:
        # never open() first: opening a FIFO blocks
        status = os.stat(where, dir_fd=folder, follow_symlinks=follow_links)
    except FileNotFoundError:
        raise RefusedFile(f"{path}: no such file", "no such file") from None
    except OSError as exc:
        why = f"cannot read it ({exc.strerror or exc})"
        raise RefusedFile(f"{path}: {why}", why) from None
    if stat.S_ISDIR(status.st_mode):
        raise RefusedFile(f"{path} is a folder, not a document", "a folder, not a file")
    if stat.S_ISLNK(status.st_mode):
        rule = "a symbolic link, which serkit does not follow here"
        raise RefusedFile(f"{path} is {rule}", rule)
    if not stat.S_ISREG(status.st_mode):
        rule = f"{_kind(status.st_mode)}, not a regular file: serkit reads only regular files"
        raise RefusedFile(f"{path} is {rule}", rule)
    _check_size(path, status.st_size, max_bytes, what, how_to_allow)
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(where, flags | (0 if follow_links else os.O_NOFOLLOW), dir_fd=folder)
        with os.fdopen(fd, "rb") as stream:
            opened = os.fstat(stream.fileno())  # the file opened may not be the one stat()ed
            if not stat.S_ISREG(opened.st_mode):
                rule = f"{_kind(opened.st_mode)}, not a regular file, when it was opened"
                raise RefusedFile(f"{path} is {rule}", rule)
            _check_size(path, opened.st_size, max_bytes, what, how_to_allow)
            data = stream.read(max_bytes + 1)  # the file may have grown since stat()
    except OSError as exc:
        why = f"cannot read it ({exc.strerror or exc})"
        raise RefusedFile(f"{path}: {why}", why) from None
    if len(data) > max_bytes:
        rule = f"grew past the {bytes_binary(max_bytes)} limit while read"
        raise RefusedFileLimit(f"{path} {rule}", rule)
    if not data:
        raise RefusedFile(f"{path} is empty", "empty")
    return data


def _check_size(path: Path, size: int, max_bytes: int, what: str, how_to_allow: str) -> None:
    if size > max_bytes:
        rule = f"{bytes_binary(size)}, over the {bytes_binary(max_bytes)} limit for {what}"
        raise RefusedFileLimit(f"{path} is {rule}; {how_to_allow}", f"{rule}; {how_to_allow}")


def inside(root: Path, name: str | os.PathLike[str]) -> Path:
    """`name`, as a file in `root` names another, resolved: symbolic links followed, and
    refused (RefusedFile, one line) unless what it resolves to is inside `root`.

    An absolute name, a `..` or a link out of the folder would let a folder someone shared
    make serkit read, hash, or replace any file the person running it can reach.
    """
    base = root.resolve()
    given = Path(name)
    target = (base / given).resolve()
    if given.is_absolute() or not target.is_relative_to(base):
        rule = (
            f"it leads outside {base} (an absolute path, '..', or a symbolic link): "
            "a file named in a folder must stay inside that folder"
        )
        raise RefusedFile(f"{base / given}: refused: {rule}", f"refused: {rule}")
    return target
