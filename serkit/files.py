"""The guarded writer: every file serkit writes, whole or not at all, for every layer.

The twin of the guarded reader (serkit.inputs.guarded_read.read_bytes). A file is written
to a temporary name in its own folder, synced, and renamed over its place, so a crash, a
`kill -9` or a full disk leaves the old file or the new one, never a part of either, and
never an empty one. What is at the place already is looked at without following it: a
symbolic link is refused (writing through it would replace a file anywhere the person
can write), and so is a FIFO or a device (opening one would block, or write to
hardware). A file replaced keeps its mode. Below a folder given as `within` (an
`--into`), no folder on the way is a link either: each is opened with O_NOFOLLOW, and
the file is created and renamed through that open folder, so nothing swapped in after a
check is followed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from serkit.errors import RefusedTarget

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX: Linux and macOS, where serkit runs
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISLNK, "a symbolic link: serkit never writes through a link"),
    (stat.S_ISFIFO, "a FIFO: serkit writes only regular files"),
    (stat.S_ISSOCK, "a socket: serkit writes only regular files"),
    (stat.S_ISCHR, "a character device: serkit writes only regular files"),
    (stat.S_ISBLK, "a block device: serkit writes only regular files"),
    (stat.S_ISDIR, "a folder, not a file"),
)
FIX = "remove it, or choose another folder"


def _refusal(path: Path, mode: int) -> RefusedTarget:
    what = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return RefusedTarget(f"{path} is {what}; nothing was written there ({FIX})")


def _named(exc: OSError, path: Path) -> OSError:
    """The system's error, naming the file meant rather than a temporary or a folder's part."""
    return OSError(exc.errno, exc.strerror, str(path))


def _open_folder(folder: Path, within: Path | None) -> int:
    """An open descriptor of `folder`, created if missing. Below `within` each folder on
    the way is created or opened by name in the one above with O_NOFOLLOW: a link there
    is refused, never followed."""
    if within is None:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(folder, _FOLDER)
    within.mkdir(parents=True, exist_ok=True)
    fd = os.open(within, _FOLDER)
    reached = within
    try:
        for part in folder.relative_to(within).parts:
            reached = reached / part
            if part in ("..", "."):
                raise RefusedTarget(f"{reached}: a name with '..' leads outside {within}")
            with suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            try:
                below = os.open(part, _FOLDER | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    found = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                    raise _refusal(reached, found) from None
                raise _named(exc, reached) from None
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_folder(folder: Path, *, within: Path | None = None) -> None:
    """Create `folder` and the folders above it up to `within`, none of them a link."""
    os.close(_open_folder(folder, within))


def _mode_at(folder: int, name: str, path: Path) -> int | None:
    """The mode of the regular file at `name`, None when there is none; RefusedTarget for
    a link, a FIFO, a device or a folder. Looked at, never opened."""
    try:
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(found.st_mode):
        raise _refusal(path, found.st_mode)
    return stat.S_IMODE(found.st_mode)


def open_in_place(path: Path, flags: int = 0) -> int:
    """A descriptor to write `path` in place, for what is rewritten or appended to many
    times a second (a timed process's canary note, a run's ledger), where a temporary and a
    rename each time would cost the timed process: never through a link (O_NOFOLLOW), and
    RefusedTarget where something other than a regular file is there (a FIFO is opened
    without blocking, then refused). `flags`: O_TRUNC or O_APPEND."""
    opened = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | flags
    try:
        fd = os.open(path, opened, 0o644)
    except OSError as exc:
        found = _lstat(path)
        if found is not None and not stat.S_ISREG(found.st_mode):
            raise _refusal(path, found.st_mode) from None
        raise _named(exc, path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _refusal(path, mode)
    return fd


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def check_target(path: Path) -> None:
    """RefusedTarget unless `path` is a regular file or nothing: before a long command
    starts, so that it does not fail at its end."""
    try:
        found = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(found.st_mode):
        raise _refusal(path, found.st_mode)


def check_folder(path: Path) -> None:
    """RefusedTarget unless `path` is a folder (not a link to one) or nothing."""
    try:
        found = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISDIR(found.st_mode):
        raise _refusal(path, found.st_mode)


def atomic_write(
    path: Path, content: bytes | str, *, within: Path | None = None, sync: bool = True
) -> None:
    """Write `content` (str as UTF-8) at `path`, whole or not at all (see the module).

    `within`: the folder, such as an `--into`, below which no folder may be a link.
    `sync`: fsync the file before it is renamed and its folder after (a write in a timed
    process passes False: it needs only to be whole, not to survive a power cut).
    OSError names `path` (a full disk: ENOSPC); RefusedTarget, one line, for what is there.
    """
    write_together({path: content}, within=within, sync=sync)


def write_together(
    writes: Mapping[Path, bytes | str], *, within: Path | None = None, sync: bool = True
) -> None:
    """Write every file of `writes` as atomic_write does, all or none: each is written to
    its temporary first, and only when all are there are they renamed into place, so a
    full disk or a refused place part-way leaves every file as it was."""
    folders: dict[Path, int] = {}
    staged: list[tuple[int, str, Path]] = []
    path = next(iter(writes), Path())
    try:
        for path, content in writes.items():
            data = content.encode("utf-8") if isinstance(content, str) else content
            if path.parent not in folders:
                folders[path.parent] = _open_folder(path.parent, within)
            folder = folders[path.parent]
            mode = _mode_at(folder, path.name, path)
            staged.append((folder, _write_temporary(folder, path, data, mode, sync), path))
        for folder, temporary, path in staged:
            os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        staged.clear()
        if sync:
            for folder in folders.values():
                os.fsync(folder)
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        for folder, temporary, _ in staged:  # not renamed in: removed
            _remove(folder, temporary)
        for folder in folders.values():
            os.close(folder)


def _write_temporary(folder: int, path: Path, data: bytes, mode: int | None, sync: bool) -> str:
    """A new file beside `path` holding all of `data`, synced; its name in `folder`."""
    while True:
        temporary = f".{path.name[:200]}.{secrets.token_hex(4)}.part"
        try:
            fd = os.open(temporary, _NEW, 0o666, dir_fd=folder)  # the umask's mode, as any file
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            if mode is not None:
                os.fchmod(stream.fileno(), mode)
            if sync:
                os.fsync(stream.fileno())
    except BaseException:
        _remove(folder, temporary)
        raise
    return temporary


def _remove(folder: int, name: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)


# --- a folder of files, replaced whole ---------------------------------------------------


@contextmanager
def replacing_folder(target: Path) -> Iterator[Path]:
    """A new, empty folder beside `target` to build in; when the block ends, it replaces
    `target` (the old one set aside, the new one renamed in, the old one removed), and
    when the block fails it is removed and `target` is left as it was.

    The two are swapped in one step where the system can (renameat2), so a `kill -9`
    leaves one folder or the other, whole, under `target`'s name; elsewhere a kill between
    the two renames leaves the old one aside, where the next call puts it back (`_restore`).
    """
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    _restore(target)
    built = parent / f".{target.name}.{secrets.token_hex(4)}.new"
    try:
        os.mkdir(built)
    except OSError as exc:
        raise _named(exc, built) from None
    aside = _aside(target)
    try:
        yield built
        _sync_tree(built)
        try:
            found: os.stat_result | None = os.lstat(target)
        except FileNotFoundError:
            found = None
        if found is not None and not stat.S_ISDIR(found.st_mode):
            raise _refusal(target, found.st_mode)
        if found is None:
            os.rename(built, target)
        elif _exchange(built, target):
            aside = built  # the old one, now under the new one's temporary name
        else:
            os.rename(target, aside)
            os.rename(built, target)
    except BaseException as exc:
        shutil.rmtree(built, ignore_errors=True)
        _restore(target)  # the old one back, if it was set aside
        meant = str(exc.filename) if isinstance(exc, OSError) and exc.filename else ""
        if isinstance(exc, OSError) and meant.startswith(str(built)):  # named as it would be
            raise _named(exc, target / Path(meant).relative_to(built)) from None
        raise
    _sync_folder(parent)
    shutil.rmtree(aside, ignore_errors=True)


def _exchange(new: Path, old: Path) -> bool:
    """Swap two folders in one step (Linux's renameat2 RENAME_EXCHANGE), so there is no
    moment without one of them at `old`; False where the system cannot."""
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    here = -100  # AT_FDCWD: paths as given
    if call(here, os.fsencode(new), here, os.fsencode(old), 2) == 0:  # 2: RENAME_EXCHANGE
        return True
    failed = ctypes.get_errno()
    if failed in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # a file system without it
        return False
    raise OSError(failed, os.strerror(failed), str(old))


def _aside(target: Path) -> Path:
    return target.parent / f".{target.name}.old"


def _restore(target: Path) -> None:
    """The old folder set aside by a `replacing_folder` killed between its two renames,
    put back; one set aside by one that finished, removed. Stray new folders, removed."""
    aside = _aside(target)
    if aside.is_dir() and not aside.is_symlink():
        if os.path.lexists(target):
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(aside, target)
    for stray in target.parent.glob(f".{target.name}.*.new"):
        if stray.is_dir() and not stray.is_symlink():
            shutil.rmtree(stray, ignore_errors=True)


def _sync_tree(folder: Path) -> None:
    """Every folder in `folder` synced, so that its renamed entries survive a power cut
    (each file was synced when it was written)."""
    for below, _, _ in os.walk(folder):
        _sync_folder(Path(below))


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, _FOLDER)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
