"""Find real CPython interpreters for the matrix's Python versions, on any machine.

asv's virtualenv plugin looks up `python3.X` on PATH. pyenv's shims answer to that name
and then break virtualenv, so serkit finds the real executables itself (pyenv's
versions folder, uv's managed Pythons, then PATH without shims) and exposes exactly
those under their `python3.X` names in one folder put first on PATH.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

FREE_THREADED = "t"


def _is_shim(path: Path) -> bool:
    return "shims" in path.parts


def _version_key(path: Path) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", str(path))
    return tuple(int(part) for part in match.groups()) if match else (0,)


def _pyenv_roots() -> Iterator[Path]:
    if os.environ.get("PYENV_ROOT"):
        yield Path(os.environ["PYENV_ROOT"])
    yield Path.home() / ".pyenv"


def _candidates(version: str) -> Iterator[Path]:
    """Possible executables for `version`, most trusted first."""
    # A free-threaded build (3.14t, executable python3.14t) is a different interpreter
    # from 3.14, never a stand-in for it, nor it for one.
    threaded = version.endswith(FREE_THREADED)
    base = version.removesuffix(FREE_THREADED)
    name = f"python{version}"
    # pyenv and uv install each patch release in its own folder: newest patch first.
    for root in _pyenv_roots():
        found = (root / "versions").glob(f"{base}.*/bin/{name}")
        kind = (p for p in found if p.parent.parent.name.endswith("t") == threaded)
        yield from sorted(kind, key=_version_key, reverse=True)
    uv_root = Path(os.environ.get("UV_PYTHON_INSTALL_DIR", Path.home() / ".local/share/uv/python"))
    found = uv_root.glob(f"cpython-{base}.*/bin/{name}")
    kind = (p for p in found if ("freethreaded" in p.parent.parent.name) == threaded)
    yield from sorted(kind, key=_version_key, reverse=True)
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder) / name
        if folder and not _is_shim(candidate) and shutil.which(name, path=folder):
            yield candidate
    # The interpreter running serkit counts too, through its real base installation.
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == base:
        yield Path(sys.base_prefix) / "bin" / name


# What an interpreter says it is, as the matrix names Pythons: 3.13, or 3.14t free-threaded.
_SAY_VERSION = (
    "import sys, sysconfig; t = 't' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''; "
    "print('%d.%d%s' % (*sys.version_info[:2], t))"
)


def _reports_version(executable: Path, version: str) -> bool:
    try:
        out = subprocess.run(
            [str(executable), "-c", _SAY_VERSION],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def find_python(version: str) -> Path | None:
    """A working, real (not shim) CPython `version` executable, or None."""
    seen: set[Path] = set()
    for candidate in _candidates(version):
        if candidate in seen or not candidate.is_file():
            continue
        seen.add(candidate)
        if _reports_version(candidate, version):
            return candidate
    return None


def find_pythons(versions: Iterable[str]) -> dict[str, Path | None]:
    """Each version, mapped to its executable or to None when this machine lacks it."""
    return {version: find_python(version) for version in versions}


def expose(pythons: dict[str, Path | None], folder: Path) -> dict[str, str]:
    """Link each found interpreter as `folder/python3.X`; return an environment for asv.

    The PATH returned starts with `folder` and drops pyenv's shims.
    """
    # Link by link, each replaced in one rename: two serkit processes planning at once
    # (a `serkit bench` refused by the lock, tests on several cores) never see it half made.
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {f"python{v}": exe for v, exe in pythons.items() if exe is not None}
    for stale in folder.iterdir():
        if stale.name not in wanted:
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
    for name, executable in wanted.items():
        temporary = folder / f".{name}.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(executable)
        os.replace(temporary, folder / name)
    path = os.environ.get("PATH", "").split(os.pathsep)
    kept = [folder for folder in path if folder and not _is_shim(Path(folder))]
    return {**os.environ, "PATH": os.pathsep.join([str(folder), *kept])}
