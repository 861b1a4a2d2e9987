"""What the package index serves: a library's releases, and which Pythons each has a compiled
wheel for on each runner kind's platform.

`serkit matrix --refresh` asks the index (PyPI's simple API, or any index that speaks it:
PEP 691's JSON, else PEP 503's HTML) once per library. A wheel counts for a Python on a
platform when one of its tags is among the tags that Python would install there
(`packaging.tags`, as pip and uv decide), and only compiled wheels count: a pure-Python
wheel would change the implementation under a version label, and a source build needs a
compiler. Pre-releases and yanked files are left out.

A library that is pure Python by design (no release has a compiled wheel: cattrs,
mashumaro, genson, pydantic) counts its `py3-none-any` wheel, for the Pythons its
`Requires-Python` admits; serkit.run.releases then reads the wheel's metadata for what
it pins exactly (pydantic pins its compiled pydantic-core) and keeps only the Pythons
those pins have compiled wheels for (`exact_pins`, `fetch_metadata`).
"""

from __future__ import annotations

import email.parser
import io
import json
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit
from zipfile import BadZipFile, ZipFile

from packaging import tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from serkit.errors import SerkitError
from serkit.run.interpreters import FREE_THREADED  # "3.14t": CPython 3.14's free-threaded build

INDEX_URL = "https://pypi.org/simple/"
# PEP 691: the JSON form where the index has it, its HTML page otherwise.
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
# glibc of the Linux runners' image (ubuntu-24.04: 2.39): manylinux wheels up to it install.
RUNNER_GLIBC = (2, 39)
RUNNER_MACOS = (14, 0)  # macos-14: wheels for macOS 14 and older
# A wheel read whole for its metadata, where the index serves no metadata file (PEP 658):
# pure-Python wheels are small (pydantic's: 0.5 MB); anything larger is refused.
WHEEL_LIMIT_BYTES = 32 * 1024 * 1024


class IndexUnreadable(SerkitError):
    """The package index could not be read, or said something it should not."""


@dataclass(frozen=True)
class Platform:
    """A runner kind's platform: the wheels its Pythons install."""

    name: str  # how serkit's data and tables name it
    runner: str  # the CI runner kind (GitHub's label) it stands for
    platform_tags: tuple[str, ...]


def _manylinux(arch: str, glibc: tuple[int, int]) -> tuple[str, ...]:
    """Every manylinux tag a glibc `glibc` system of `arch` installs, newest first."""
    major, newest = glibc
    found = [f"manylinux_{major}_{minor}_{arch}" for minor in range(newest, 4, -1)]
    legacy = {"manylinux2014": 17, "manylinux2010": 12, "manylinux1": 5}  # PEP 600's aliases
    for alias, minor in legacy.items():
        if minor <= newest and (arch in ("x86_64", "i686") or alias == "manylinux2014"):
            found.append(f"{alias}_{arch}")
    return tuple(found)


PLATFORMS = (
    Platform("linux-x86_64", "ubuntu-latest", _manylinux("x86_64", RUNNER_GLIBC)),
    # ubuntu-24.04-arm is glibc: musllinux wheels do not install there.
    Platform("linux-aarch64", "ubuntu-24.04-arm", _manylinux("aarch64", RUNNER_GLIBC)),
    Platform("macos-arm64", "macos-14", tuple(tags.mac_platforms(RUNNER_MACOS, "arm64"))),
)
PLATFORM_NAMES = tuple(p.name for p in PLATFORMS)


# What platform.system() and platform.machine() say on each runner kind.
_HERE = {
    ("linux", "x86_64"): "linux-x86_64",
    ("linux", "amd64"): "linux-x86_64",
    ("linux", "aarch64"): "linux-aarch64",
    ("linux", "arm64"): "linux-aarch64",
    ("darwin", "arm64"): "macos-arm64",
}


def platform_here(system: str | None = None, machine: str | None = None) -> Platform | None:
    """This machine's platform among PLATFORMS; None on any other (Windows, Intel macOS)."""
    import platform as host

    key = ((system or host.system()).lower(), (machine or host.machine()).lower())
    name = _HERE.get(key)
    return platform_named(name) if name else None


def platform_named(name: str) -> Platform:
    for platform in PLATFORMS:
        if platform.name == name:
            return platform
    raise SerkitError(f"no platform {name!r}: serkit knows {', '.join(PLATFORM_NAMES)}")


def split_python(python: str) -> tuple[tuple[int, int], bool]:
    """`3.14t` as ((3, 14), True): the version, and whether it is the free-threaded build."""
    threaded = python.endswith(FREE_THREADED)
    major, _, minor = python.removesuffix(FREE_THREADED).partition(".")
    if not (major.isdigit() and minor.isdigit()):
        raise SerkitError(f"{python!r} is not a Python version such as 3.13 or 3.14t")
    return (int(major), int(minor)), threaded


@cache
def python_tags(python: str, platform: Platform) -> frozenset[tags.Tag]:
    """The compiled-wheel tags CPython `python` installs on `platform` (abi3 included, pure
    `py3-none-any` not)."""
    version, threaded = split_python(python)
    abi = f"cp{version[0]}{version[1]}{FREE_THREADED if threaded else ''}"
    found = tags.cpython_tags(version, abis=[abi], platforms=platform.platform_tags)
    return frozenset(tag for tag in found if tag.platform != "any")


@dataclass(frozen=True)
class IndexFile:
    """One file of a project on the index."""

    filename: str
    yanked: bool = False
    uploaded: str | None = None  # ISO 8601, where the index says (PEP 700)
    url: str = ""  # where to download it (absolute)
    requires_python: str | None = None  # its Requires-Python, where the index says
    has_metadata: bool = False  # the index serves its metadata at url + ".metadata" (PEP 658)


@dataclass(frozen=True)
class IndexRelease:
    """One final release and the Pythons its compiled wheels serve, by platform."""

    version: Version
    uploaded: str | None  # the day its first file was uploaded, where known
    wheels: Mapping[str, tuple[str, ...]]  # platform name -> Pythons, in the matrix's order
    # Where it has a pure-Python wheel: the Pythons that wheel installs on (any platform),
    # and the wheel, for its metadata.
    pure: tuple[str, ...] = ()
    pure_wheel: IndexFile | None = None
    # What it pins exactly, where read (serkit.run.releases, for a pure-Python library).
    pins: Mapping[str, str] = field(default_factory=dict)

    @property
    def has_wheels(self) -> bool:
        return any(self.wheels.values())


def releases(
    files: Iterable[IndexFile], pythons: Sequence[str], platforms: Sequence[Platform] = PLATFORMS
) -> list[IndexRelease]:
    """Every final, unyanked release among `files`, newest first, with its compiled wheels."""
    by_version: dict[Version, list[IndexFile]] = {}
    for file in files:
        version = _version_of(file.filename)
        if version is None or version.is_prerelease or version.is_devrelease or file.yanked:
            continue
        by_version.setdefault(version, []).append(file)
    out = []
    for version in sorted(by_version, reverse=True):
        wheel_tags = [_wheel_tags(f.filename) for f in by_version[version]]
        wheels = {
            platform.name: tuple(
                python
                for python in pythons
                if any(t & python_tags(python, platform) for t in wheel_tags)
            )
            for platform in platforms
        }
        days = sorted(f.uploaded[:10] for f in by_version[version] if f.uploaded)
        pure_wheel = next((f for f in by_version[version] if _is_pure(f.filename)), None)
        pure = pure_pythons(pure_wheel, pythons) if pure_wheel else ()
        out.append(IndexRelease(version, days[0] if days else None, wheels, pure, pure_wheel))
    return out


def _is_pure(filename: str) -> bool:
    """A wheel for any Python 3 on any platform (`py3-none-any`)."""
    return any(
        t.abi == "none" and t.platform == "any" and t.interpreter in ("py3", "py2.py3")
        for t in _wheel_tags(filename)
    )


def pure_pythons(wheel: IndexFile, pythons: Sequence[str]) -> tuple[str, ...]:
    """The Pythons a pure-Python wheel installs on: those its Requires-Python admits."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # costly: when asked

    try:
        admitted = SpecifierSet(wheel.requires_python or "")
    except InvalidSpecifier:
        return ()
    out = []
    for python in pythons:
        (major, minor), _ = split_python(python)
        if admitted.contains(f"{major}.{minor}", prereleases=True):
            out.append(python)
    return tuple(out)


def exact_pins(metadata_text: str) -> dict[str, str]:
    """What a distribution's metadata pins to one release (`Requires-Dist: x==1.2`), for
    every install: requirements with an environment marker or an extra are left out."""
    from packaging.requirements import InvalidRequirement, Requirement  # costly: when asked

    message = email.parser.Parser().parsestr(metadata_text, headersonly=True)
    pins = {}
    for line in message.get_all("Requires-Dist") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        specifiers = list(requirement.specifier)
        if requirement.marker is None and len(specifiers) == 1:
            (only,) = specifiers
            if only.operator == "==" and "*" not in only.version:
                pins[str(canonicalize_name(requirement.name))] = only.version
    return pins


def _version_of(filename: str) -> Version | None:
    """The release a wheel or sdist belongs to; None for what this cannot read."""
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        for suffix in (".tar.gz", ".zip", ".tar.bz2"):
            if filename.endswith(suffix):
                return Version(filename.removesuffix(suffix).rpartition("-")[2])
    except (InvalidWheelFilename, ValueError):
        return None
    return None


def _wheel_tags(filename: str) -> frozenset[tags.Tag]:
    if not filename.endswith(".whl"):
        return frozenset()
    try:
        return parse_wheel_filename(filename)[3]
    except InvalidWheelFilename:
        return frozenset()


def project_url(index_url: str, name: str) -> str:
    return urljoin(index_url if index_url.endswith("/") else index_url + "/", f"{name}/")


def _get(
    url: str, timeout_s: float, accept: str = "*/*", limit: int | None = None
) -> tuple[str, bytes]:
    """One GET: the content type and the body (at most `limit` bytes, else refused)."""
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "serkit"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            kind = response.headers.get_content_type()
            body = response.read() if limit is None else response.read(limit + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise IndexUnreadable(f"could not read {url}: {reason}") from None
    if limit is not None and len(body) > limit:
        raise IndexUnreadable(f"{url} is over {limit // (1024 * 1024)} MiB: not read")
    return kind, body


def fetch_files(name: str, index_url: str = INDEX_URL, timeout_s: float = 30) -> list[IndexFile]:
    """The files the index lists for project `name` (one request)."""
    url = project_url(index_url, str(canonicalize_name(name)))
    kind, body = _get(url, timeout_s, ACCEPT)
    try:
        if kind == "application/vnd.pypi.simple.v1+json" or kind.endswith("json"):
            return parse_json_page(json.loads(body), url)
        return parse_html_page(body.decode("utf-8", "replace"), url)
    except (ValueError, KeyError, TypeError) as exc:
        raise IndexUnreadable(f"{url} is not a simple-index page: {exc}") from None


def fetch_metadata(wheel: IndexFile, timeout_s: float = 60) -> str:
    """A wheel's core metadata: the index's metadata file where it serves one (PEP 658),
    else the wheel itself, read whole (up to WHEEL_LIMIT_BYTES) for its METADATA."""
    if not wheel.url:
        raise IndexUnreadable(f"the index gave no address for {wheel.filename}")
    parts = urlsplit(wheel.url)
    bare = urlunsplit(parts._replace(fragment=""))  # a hash fragment belongs to the wheel
    if wheel.has_metadata:
        return _get(bare + ".metadata", timeout_s)[1].decode("utf-8", "replace")
    body = _get(bare, timeout_s, limit=WHEEL_LIMIT_BYTES)[1]
    try:
        with ZipFile(io.BytesIO(body)) as archive:
            found = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
            if len(found) != 1:
                raise IndexUnreadable(f"{wheel.filename} has {len(found)} METADATA files")
            return archive.read(found[0]).decode("utf-8", "replace")
    except BadZipFile as exc:
        raise IndexUnreadable(f"{wheel.filename} is not a wheel: {exc}") from None


def parse_json_page(page: Mapping[str, Any], page_url: str = "") -> list[IndexFile]:
    """PEP 691's JSON project page."""
    out = []
    for entry in page["files"]:
        metadata = entry.get("core-metadata", entry.get("dist-info-metadata"))
        out.append(
            IndexFile(
                str(entry["filename"]),
                bool(entry.get("yanked")),  # False, or the reason as a string
                entry.get("upload-time"),
                urljoin(page_url, str(entry.get("url") or "")) if entry.get("url") else "",
                entry.get("requires-python"),
                bool(metadata),  # False, or the metadata file's hashes
            )
        )
    return out


class _Links(HTMLParser):
    def __init__(self, page_url: str) -> None:
        super().__init__()
        self.files: list[IndexFile] = []
        self._page_url = page_url
        self._attrs: dict[str, str | None] = {}
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._attrs = dict(attrs)
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._text is not None:
            attrs = self._attrs
            href = attrs.get("href")
            metadata = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
            self.files.append(
                IndexFile(
                    "".join(self._text).strip(),
                    "data-yanked" in attrs,
                    None,
                    urljoin(self._page_url, href) if href and self._page_url else "",
                    attrs.get("data-requires-python"),  # the parser has unescaped it
                    metadata is not None and metadata != "false",
                )
            )
            self._text = None


def parse_html_page(page: str, page_url: str = "") -> list[IndexFile]:
    """PEP 503's HTML project page: one link per file, its text the file's name."""
    parser = _Links(page_url)
    parser.feed(page)
    return parser.files
