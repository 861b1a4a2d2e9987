"""The library releases the matrix measures, kept as data in `releases.json` beside this module.

`serkit matrix --refresh` rewrites the file from the package index (serkit.run.index);
`asv.conf.json` is generated from it (serkit.run.matrix). By hand one edits only the
Python axis (`pythons`) and the history policy (`minor_lines`); the releases are the
index's answer, never typed in.

The history policy, per library: the newest release of each of its newest `minor_lines`
minor lines (major.minor) that have a compiled wheel for a Python of the matrix on a
runner kind's platform; where a library has fewer such lines, its newest other releases
fill the count. Newest first. So `minor_lines = 3` keeps orjson 3.13.0, 3.12.0 and the
last 3.11, and PyYAML, all of whose wheeled releases are 6.0.x, its three newest patches.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from serkit.checkout import project_root
from serkit.errors import SerkitError
from serkit.run.index import (
    INDEX_URL,
    PLATFORM_NAMES,
    PLATFORMS,
    IndexFile,
    IndexRelease,
    Platform,
    releases,
    split_python,
)

DATA_NAME = "releases.json"
PACKAGED = Path(__file__).with_name(DATA_NAME)
IN_CHECKOUT = Path("serkit", "run", DATA_NAME)
# A check older than this is mentioned by `serkit bench` and `serkit matrix`.
STALE_AFTER_DAYS = 30
ABOUT = (
    "serkit's matrix as data. `serkit matrix --refresh` rewrites the releases from the "
    "package index; edit `pythons` and `minor_lines` by hand, then refresh and run "
    "`serkit matrix --write-config asv.conf.json`."
)


class BadReleases(SerkitError):
    """releases.json is missing, unreadable, or not what serkit writes."""


@dataclass(frozen=True)
class Release:
    """One release in the matrix, and the Pythons its compiled wheels serve, by platform."""

    version: str
    uploaded: str | None = None  # the day of its first upload, where the index said
    wheels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def has_wheel(self, python: str, platform: str | None = None) -> bool:
        """A compiled wheel for `python` on `platform` (None: on any runner kind's)."""
        if platform is None:
            return any(python in pythons for pythons in self.wheels.values())
        return python in self.wheels.get(platform, ())


@dataclass(frozen=True)
class Library:
    """One codec library: the releases the policy keeps, newest first."""

    name: str  # the distribution name, as pip and serkit's codec registry spell it
    releases: tuple[Release, ...]
    newest_served: str | None = None  # the newest final release on the index at the check

    def newest_for(self, python: str, platform: str | None = None) -> Release | None:
        return next((r for r in self.releases if r.has_wheel(python, platform)), None)


@dataclass(frozen=True)
class Releases:
    """The whole data file."""

    pythons: tuple[str, ...]
    minor_lines: int
    libraries: tuple[Library, ...]
    checked: str | None = None  # the day of the last refresh, UTC
    index: str = INDEX_URL

    def library(self, name: str) -> Library:
        for library in self.libraries:
            if library.name == name:
                return library
        raise SerkitError(f"{name} is not in the matrix ({DATA_NAME})")

    def as_json(self) -> dict[str, Any]:
        return {
            "about": ABOUT,
            "pythons": list(self.pythons),
            "minor_lines": self.minor_lines,
            "index": self.index,
            "checked": self.checked,
            "libraries": [
                {
                    "name": lib.name,
                    "newest_served": lib.newest_served,
                    "releases": [
                        {
                            "version": r.version,
                            "uploaded": r.uploaded,
                            "wheels": {p: list(r.wheels.get(p, ())) for p in PLATFORM_NAMES},
                        }
                        for r in lib.releases
                    ],
                }
                for lib in self.libraries
            ],
        }

    @classmethod
    def from_json(cls, data: Any, where: str = DATA_NAME) -> Releases:
        try:
            pythons = tuple(str(p) for p in data["pythons"])
            for python in pythons:
                split_python(python)
            libraries = tuple(
                Library(
                    str(lib["name"]),
                    tuple(
                        Release(
                            str(r["version"]),
                            r.get("uploaded"),
                            {str(p): tuple(map(str, ps)) for p, ps in r["wheels"].items()},
                        )
                        for r in lib["releases"]
                    ),
                    lib.get("newest_served"),
                )
                for lib in data["libraries"]
            )
            lines = int(data["minor_lines"])
            if lines < 1:
                raise ValueError("minor_lines must be 1 or more")
            return cls(pythons, lines, libraries, data.get("checked"), str(data["index"]))
        except (KeyError, TypeError, ValueError, AttributeError, SerkitError) as exc:
            raise BadReleases(f"{where} is not serkit's releases file: {exc}") from None


def data_path(start: Path | None = None) -> Path:
    """The checkout's releases.json (which a refresh rewrites), else the installed copy."""
    try:
        candidate = project_root(start) / IN_CHECKOUT
    except SerkitError:
        return PACKAGED
    return candidate if candidate.is_file() else PACKAGED


_LOADED: dict[tuple[Path, int], Releases] = {}


def load(path: Path | None = None) -> Releases:
    """The data file, read once per path and modification."""
    path = path or data_path()
    try:
        stamp = path.stat().st_mtime_ns
        if (path, stamp) not in _LOADED:
            _LOADED[path, stamp] = Releases.from_json(json.loads(path.read_text()), str(path))
        return _LOADED[path, stamp]
    except OSError as exc:
        raise BadReleases(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BadReleases(f"{path} is not JSON: {exc}") from None


def save(data: Releases, path: Path) -> None:
    """Write the file in one rename, so a reader never sees half of it."""
    text = json.dumps(data.as_json(), indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(text)
    os.replace(temporary, path)


# --- the history policy -------------------------------------------------------------------


def keep(found: Sequence[IndexRelease], minor_lines: int) -> list[IndexRelease]:
    """The releases the policy keeps (see the module's docstring), newest first."""
    usable = sorted((r for r in found if r.has_wheels), key=lambda r: r.version, reverse=True)
    newest_of_line: dict[tuple[int, int], IndexRelease] = {}
    for release in usable:
        newest_of_line.setdefault((release.version.major, release.version.minor), release)
    kept = list(newest_of_line.values())[:minor_lines]
    for release in usable:  # too few lines: the newest other releases fill in
        if len(kept) >= minor_lines:
            break
        if release not in kept:
            kept.append(release)
    return sorted(kept, key=lambda r: r.version, reverse=True)


def refresh(
    data: Releases,
    files_of: Callable[[str], Iterable[IndexFile]],
    *,
    platforms: Sequence[Platform] = PLATFORMS,
    today: datetime.date | None = None,
    progress: Callable[[str], None] | None = None,
) -> Releases:
    """`data` with every library's releases as the index now serves them, by the policy."""
    libraries = []
    for library in data.libraries:
        if progress is not None:
            progress(library.name)
        found = releases(files_of(library.name), data.pythons, platforms)
        if not found:
            raise SerkitError(f"the index lists no release of {library.name}")
        kept = keep(found, data.minor_lines)
        if not kept:
            raise SerkitError(
                f"no release of {library.name} has a compiled wheel for Python "
                f"{', '.join(data.pythons)} on {', '.join(p.name for p in platforms)}"
            )
        libraries.append(
            Library(
                library.name,
                tuple(Release(str(r.version), r.uploaded, dict(r.wheels)) for r in kept),
                str(found[0].version),
            )
        )
    day = (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat()
    return replace(data, libraries=tuple(libraries), checked=day)


# --- is the matrix behind? ----------------------------------------------------------------


@dataclass(frozen=True)
class Behind:
    """A library installed here at a release newer than the index served at the last check."""

    library: str
    installed: str
    newest_served: str | None

    def __str__(self) -> str:
        return (
            f"{self.library} {self.installed} is installed here, but the matrix knows "
            f"releases up to {self.newest_served or 'none'}"
        )


def behind_installed(
    data: Releases, installed: Callable[[str], str | None] | None = None
) -> list[Behind]:
    """The libraries this interpreter has at a release the matrix's last check had not seen:
    the index serves something newer. Reads installed metadata only, no network."""
    installed = installed or _installed_version
    out = []
    for library in data.libraries:
        here = installed(library.name)
        if here is None:
            continue
        try:
            newer = library.newest_served is None or Version(here) > Version(library.newest_served)
        except InvalidVersion:
            continue
        if newer:
            out.append(Behind(library.name, here, library.newest_served))
    return out


def days_since_check(data: Releases, today: datetime.date | None = None) -> int | None:
    if not data.checked:
        return None
    try:
        checked = datetime.date.fromisoformat(data.checked)
    except ValueError:
        return None
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    return (today - checked).days


def staleness(data: Releases, today: datetime.date | None = None) -> list[str]:
    """What to tell a person whose matrix may be behind the index, one line each."""
    lines = [f"{b}: run `serkit matrix --refresh`" for b in behind_installed(data)]
    days = days_since_check(data, today)
    if days is None or days > STALE_AFTER_DAYS:
        when = "never" if days is None else f"{days} days ago"
        lines.append(
            f"the matrix's releases were last checked against the index {when}: "
            "`serkit matrix --refresh` asks again"
        )
    return lines


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def current_python() -> str:
    """This interpreter as the matrix names it: 3.13, or 3.14t for a free-threaded build."""
    import sysconfig

    threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    return f"{sys.version_info[0]}.{sys.version_info[1]}{'t' if threaded else ''}"
