"""The library releases the matrix measures, kept as data in `releases.json` beside this module.

`serkit matrix --refresh` rewrites the file from the package index (serkit.run.index);
`asv.conf.json` is generated from it (serkit.run.matrix). By hand one edits only the
Python axis (`pythons`) and the history policy (`minor_lines`, and a library's own
`minor_lines` where it keeps fewer); the releases are the index's answer, never typed in,
and so are the libraries: the refresh adds each one serkit's codecs need
(serkit.run.libraries) and drops any they no longer do.

The history policy, per library: the newest release of each of its newest `minor_lines`
minor lines (major.minor) that have a compiled wheel for a Python of the matrix on a
runner kind's platform; where a library has fewer such lines, its newest other releases
fill the count. Newest first. So `minor_lines = 3` keeps orjson 3.13.0, 3.12.0 and the
last 3.11, and PyYAML, all of whose wheeled releases are 6.0.x, its three newest patches.
A companion (a library no codec measures, only needs: genson) keeps its newest release.

A library that is pure Python by design (no release with a compiled wheel) counts its
pure wheel instead, on the Pythons its Requires-Python admits, less those where a
distribution it pins exactly (pydantic: its pydantic-core) has no compiled wheel: read
from the kept releases' metadata, and kept in the file as `pins`.
"""

from __future__ import annotations

import datetime
import errno
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from serkit.checkout import project_root
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.run.index import (
    INDEX_URL,
    PLATFORM_NAMES,
    PLATFORMS,
    IndexFile,
    IndexRelease,
    Platform,
    exact_pins,
    releases,
    split_python,
)
from serkit.run.libraries import matrix_libraries

DATA_NAME = "releases.json"
PACKAGED = Path(__file__).with_name(DATA_NAME)
IN_CHECKOUT = Path("serkit", "run", DATA_NAME)
# A check older than this is mentioned by `serkit bench` and `serkit matrix`.
STALE_AFTER_DAYS = 30
ABOUT = (
    "serkit's matrix as data. `serkit matrix --refresh` rewrites the libraries and their "
    "releases from serkit's codecs and the package index (and asv.conf.json from them); "
    "edit `pythons` and `minor_lines` (a library's own too) by hand, then refresh."
)


class BadReleases(SerkitError):
    """releases.json is missing, unreadable, or not what serkit writes."""


@dataclass(frozen=True)
class Release:
    """One release in the matrix, and the Pythons its compiled wheels serve, by platform."""

    version: str
    uploaded: str | None = None  # the day of its first upload, where the index said
    wheels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # A pure-Python release's exact pins (pydantic: pydantic-core), which decided `wheels`.
    pins: Mapping[str, str] = field(default_factory=dict)

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
    minor_lines: int | None = None  # the policy for this library, where not the file's
    pure_python: bool = False  # no release has a compiled wheel: its pure wheel counts

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
        raise SerkitError(
            f"{name} is not in the matrix ({DATA_NAME}): `serkit matrix --refresh` adds "
            "every library serkit's codecs need"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "about": ABOUT,
            "pythons": list(self.pythons),
            "minor_lines": self.minor_lines,
            "index": self.index,
            "checked": self.checked,
            "libraries": [_library_json(lib) for lib in self.libraries],
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
                            {str(k): str(v) for k, v in (r.get("pins") or {}).items()},
                        )
                        for r in lib["releases"]
                    ),
                    lib.get("newest_served"),
                    _lines(lib.get("minor_lines")) if "minor_lines" in lib else None,
                    bool(lib.get("pure_python", False)),
                )
                for lib in data["libraries"]
            )
            lines = _lines(data["minor_lines"])
            return cls(pythons, lines, libraries, data.get("checked"), str(data["index"]))
        except (KeyError, TypeError, ValueError, AttributeError, SerkitError) as exc:
            raise BadReleases(f"{where} is not serkit's releases file: {exc}") from None


def _library_json(lib: Library) -> dict[str, Any]:
    out: dict[str, Any] = {"name": lib.name}
    if lib.minor_lines is not None:
        out["minor_lines"] = lib.minor_lines
    if lib.pure_python:
        out["pure_python"] = True
    out["newest_served"] = lib.newest_served
    out["releases"] = [
        {
            "version": r.version,
            "uploaded": r.uploaded,
            "wheels": {p: list(r.wheels.get(p, ())) for p in PLATFORM_NAMES},
            **({"pins": dict(r.pins)} if r.pins else {}),
        }
        for r in lib.releases
    ]
    return out


def _lines(value: Any) -> int:
    lines = int(value)
    if lines < 1:
        raise ValueError("minor_lines must be 1 or more")
    return lines


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
    try:
        if not path.parent.is_dir():  # a file named, not a folder to make
            raise FileNotFoundError(errno.ENOENT, "no such folder", str(path.parent))
        atomic_write(path, text)
    except OSError as exc:  # an installed serkit's own file, read-only here
        raise BadReleases(f"cannot write {path}: {exc.strerror or exc}") from None


# --- the history policy -------------------------------------------------------------------


def keep(
    found: Sequence[IndexRelease],
    minor_lines: int,
    usable: Callable[[IndexRelease], IndexRelease | None] | None = None,
) -> list[IndexRelease]:
    """The releases the policy keeps (see the module's docstring), newest first.

    `usable` gives a release as the matrix can use it, or None (default: as it is, where
    it has compiled wheels); it is asked newest first, and only as far as the policy
    needs, since for a pure-Python library each answer reads the index once more.
    """
    ordered = sorted(found, key=lambda r: r.version, reverse=True)
    answers: dict[Version, IndexRelease | None] = {}

    def checked(release: IndexRelease) -> IndexRelease | None:
        if release.version not in answers:
            got = usable(release) if usable else release
            answers[release.version] = got if got is not None and got.has_wheels else None
        return answers[release.version]

    newest_of_line: dict[tuple[int, int], IndexRelease] = {}
    for release in ordered:
        if len(newest_of_line) >= minor_lines:
            break
        line = (release.version.major, release.version.minor)
        if line not in newest_of_line and (got := checked(release)) is not None:
            newest_of_line[line] = got
    kept = list(newest_of_line.values())
    for release in ordered:  # too few lines: the newest other releases fill in
        if len(kept) >= minor_lines:
            break
        got = checked(release)
        if got is not None and got not in kept:
            kept.append(got)
    return sorted(kept, key=lambda r: r.version, reverse=True)


def usable_release(
    found: Sequence[IndexRelease],
    pythons: Sequence[str],
    platforms: Sequence[Platform],
    files_of: Callable[[str], Iterable[IndexFile]],
    metadata_of: Callable[[IndexFile], str] | None,
) -> Callable[[IndexRelease], IndexRelease | None]:
    """How the matrix can use a release of the library whose releases are `found`:

    - with its compiled wheels, where it has any;
    - else with its pure-Python wheel, on the Pythons its Requires-Python admits, where
      the library is pure Python by design (none of `found` has a compiled wheel: cattrs,
      mashumaro, genson) or the release pins exactly a distribution that has them
      (pydantic 2 and its pydantic-core): then only where every exact pin has a wheel
      too (compiled, where that distribution has any compiled one). The pins, read from
      the wheel's metadata, stay on the release.

    A pure wheel of a library that is otherwise compiled, pinning nothing compiled, is
    never used: it would time pure Python under a compiled library's version label.
    """
    by_design = not any(r.has_wheels for r in found)
    pinned_releases: dict[str, list[IndexRelease]] = {}

    def pinned(name: str, version: str) -> IndexRelease | None:
        if name not in pinned_releases:
            pinned_releases[name] = releases(files_of(name), pythons, platforms)
        return next((r for r in pinned_releases[name] if str(r.version) == version), None)

    def usable(release: IndexRelease) -> IndexRelease | None:
        if release.has_wheels:
            return release
        if release.pure_wheel is None or not release.pure:
            return None
        if metadata_of is None:
            raise SerkitError(f"{release.pure_wheel.filename}: its metadata must be read")
        pins = exact_pins(metadata_of(release.pure_wheel))
        served = {p.name: release.pure for p in platforms}
        compiled_pin = False
        for name, version in pins.items():
            theirs = pinned(name, version)
            if theirs is not None and theirs.has_wheels:
                compiled_pin = True
                on: Mapping[str, tuple[str, ...]] = theirs.wheels
            else:
                on = {p.name: theirs.pure if theirs else () for p in platforms}
            served = {p: tuple(x for x in py if x in on.get(p, ())) for p, py in served.items()}
        if not (by_design or compiled_pin):
            return None
        return replace(release, wheels=served, pins=pins)

    return usable


def _compiled(kept: IndexRelease, found: Sequence[IndexRelease]) -> bool:
    """Whether the release as the index served it had compiled wheels."""
    return any(r.has_wheels for r in found if r.version == kept.version)


def refresh(
    data: Releases,
    files_of: Callable[[str], Iterable[IndexFile]],
    *,
    metadata_of: Callable[[IndexFile], str] | None = None,
    wanted: Mapping[str, bool] | None = None,
    platforms: Sequence[Platform] = PLATFORMS,
    today: datetime.date | None = None,
    progress: Callable[[str], None] | None = None,
) -> Releases:
    """`data` with every library the matrix needs (`wanted`: name -> measured, by default
    serkit.run.libraries'), its releases as the index now serves them, by the policy.
    A library's own `minor_lines` is kept; a new one takes the file's, a companion 1.
    `metadata_of` reads a pure-Python wheel's metadata (serkit.run.index.fetch_metadata)."""
    wanted = matrix_libraries() if wanted is None else wanted
    before = {library.name: library for library in data.libraries}
    # The file's order, then the new ones: a refresh moves no line it need not.
    order = [name for name in before if name in wanted] + [n for n in wanted if n not in before]
    libraries = []
    for name in order:
        measured = wanted[name]
        if progress is not None:
            progress(name)
        earlier = before.get(name)
        own_lines = earlier.minor_lines if earlier is not None else None
        lines = own_lines or (data.minor_lines if measured else 1)
        found = releases(files_of(name), data.pythons, platforms)
        if not found:
            raise SerkitError(f"the index lists no release of {name}")
        usable = usable_release(found, data.pythons, platforms, files_of, metadata_of)
        kept = keep(found, lines, usable)
        if not kept:
            raise SerkitError(
                f"no release of {name} has a compiled wheel for Python "
                f"{', '.join(data.pythons)} on {', '.join(p.name for p in platforms)}"
            )
        # Pure Python: every kept release is used by its pure wheel (pins and all).
        pure = all(r.pure_wheel is not None and not _compiled(r, found) for r in kept)
        libraries.append(
            Library(
                name,
                tuple(
                    Release(str(r.version), r.uploaded, dict(r.wheels), dict(r.pins)) for r in kept
                ),
                str(found[0].version),
                own_lines,
                pure,
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
