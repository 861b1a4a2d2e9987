"""The public data files some fixtures are built from: pinned, fetched, never committed.

Each source is pinned to one commit and checked by sha256 (and, shipped compressed, its
decompressed bytes too) before it is kept or read; `serkit fixtures fetch` copies it from
a mirror or downloads it. serkit.inputs.fixtures builds the documents from them.
"""

from __future__ import annotations

import hashlib
import lzma
import os
from dataclasses import dataclass
from pathlib import Path

from serkit.errors import FixtureSourceError, RefusedFile
from serkit.files import atomic_write
from serkit.inputs.guarded_read import read_bytes


@dataclass(frozen=True)
class Source:
    """A public data file, pinned to one commit and checked by sha256."""

    filename: str
    url: str
    sha256: str
    license: str
    # Where it sits, in the mirror and in the data dir alike ("" for the top).
    folder: str = ""
    # For a file that ships compressed (.xz): the sha256 of its decompressed bytes.
    decompressed_sha256: str = ""

    @property
    def relative_path(self) -> str:
        return f"{self.folder}/{self.filename}" if self.folder else self.filename


SENATE_SOURCE = Source(
    filename="legislators-current.yaml",
    url=(
        "https://raw.githubusercontent.com/unitedstates/congress-legislators/"
        "dfa9622263dd4c8d08636926e498f1845704d7eb/legislators-current.yaml"
    ),
    sha256="423f7bdf2d4ee46589eed93361451408d309c2f81b45e5d7bb6fe9fa4ff0c321",
    license="CC0 1.0 (public domain), congress-legislators project",
)

# The documents most JSON benchmarks use (nativejson-benchmark, orjson, simdjson, serde's
# json-benchmark), so that serkit's numbers can be set beside theirs.
_NATIVEJSON = (
    "https://raw.githubusercontent.com/miloyip/nativejson-benchmark/"
    "478d5727c2a4048e835a29c65adecc7d795360d5/data/"
)
_NATIVEJSON_LICENSE = "MIT, nativejson-benchmark (Milo Yip)"
TWITTER_SOURCE = Source(
    filename="twitter.json",
    url=_NATIVEJSON + "twitter.json",
    sha256="a08b769f32b95f426cbc3abafcec65c1a19d3eb544d4ddf320eae142c99efc5d",
    license=_NATIVEJSON_LICENSE,
    folder="corpora",
)
CITM_CATALOG_SOURCE = Source(
    filename="citm_catalog.json",
    url=_NATIVEJSON + "citm_catalog.json",
    sha256="a73e7a883f6ea8de113dff59702975e60119b4b58d451d518a929f31c92e2059",
    license=_NATIVEJSON_LICENSE,
    folder="corpora",
)
CANADA_SOURCE = Source(
    filename="canada.json",  # nativejson's LF copy; orjson's canada.json.xz holds a CRLF one
    url=_NATIVEJSON + "canada.json",
    sha256="f83b3b354030d5dd58740c68ac4fecef64cb730a0d12a90362a7f23077f50d78",
    license=_NATIVEJSON_LICENSE,
    folder="corpora",
)
GITHUB_SOURCE = Source(
    filename="github.json.xz",
    url=(
        "https://raw.githubusercontent.com/ijl/orjson/"
        "5cbb3d0398a2f42de51210270286fecd798c5d78/data/github.json.xz"
    ),
    sha256="6f3c83af7cac5b0159ee4eafb4148efec4af730bda256b3fc7d619bb058bfd76",
    license="Apache-2.0 or MIT, orjson (ijl)",
    folder="corpora",
    decompressed_sha256="275e688d9081f1528483eccc7d87290957a67768d4413817e30e092a68cb2124",
)
SOURCES = (SENATE_SOURCE, TWITTER_SOURCE, CITM_CATALOG_SOURCE, CANADA_SOURCE, GITHUB_SOURCE)

DATA_DIR_ENV = "SERKIT_DATA_DIR"
MIRROR_ENV = "SERKIT_FIXTURE_MIRROR"


def data_dir() -> Path:
    """Where fetched sources are kept: $SERKIT_DATA_DIR, else the user cache."""
    configured = os.environ.get(DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    # pooch's own os_cache, without importing pooch (half a second, in every benchmark run).
    import platformdirs

    return Path(platformdirs.user_cache_dir("serkit")) / "fixtures"


# The largest source is 2.2 MB; a file far past that is not one of them.
SOURCE_MAX_BYTES = 64 << 20


def _read(path: Path, where: str, source: Source) -> bytes:
    """The bytes of `path`, read once by the guarded reader, without following a link:
    what is checked is what is used, whatever is at the path afterwards."""
    try:
        return read_bytes(path, SOURCE_MAX_BYTES, what="a fixture source", follow_links=False)
    except RefusedFile as exc:
        if exc.rule == "empty":  # a pinned file may be empty (JSONTestSuite's n_structure_no_data)
            return b""
        if exc.rule == "no such file":
            raise FixtureSourceError(
                f"{source.relative_path} is missing from {where}: run `serkit fixtures fetch`"
            ) from None
        raise FixtureSourceError(f"{exc}: delete it and run `serkit fixtures fetch`") from None


def _mirror(mirror: str | os.PathLike[str] | None) -> Path | None:
    chosen = mirror if mirror is not None else os.environ.get(MIRROR_ENV) or None
    return Path(chosen).expanduser() if chosen is not None else None


def _verified(source: Source, mirror: str | None) -> tuple[Path, bytes]:
    """The local copy of `source` (the mirror's when one is given, else the fetched one)
    and its bytes, read once and checked against the pin; FixtureSourceError, saying what
    to run, when it is missing or mismatched."""
    folder = _mirror(mirror)
    where = f"mirror {folder}" if folder else f"{data_dir()}"
    path = (folder or data_dir()) / source.relative_path
    data = _read(path, where, source)
    actual = hashlib.sha256(data).hexdigest()
    if actual != source.sha256:
        raise FixtureSourceError(
            f"{path} fails its sha256 check (got {actual[:12]}…, pinned {source.sha256[:12]}…): "
            "delete it and run `serkit fixtures fetch`"
        )
    return path, data


def source_path(source: Source = SENATE_SOURCE, *, mirror: str | None = None) -> Path:
    """The verified local copy of `source`: the mirror's when one is given, else the fetched one.

    Raises FixtureSourceError, saying what to run, when it is missing or mismatched. A
    caller that reads the file uses source_bytes, which checks the bytes it returns.
    """
    return _verified(source, mirror)[0]


def source_bytes(source: Source, *, mirror: str | None = None) -> bytes:
    """The verified contents of `source`, decompressed and checked again when it ships as .xz."""
    return _contents(source, *_verified(source, mirror))


def _contents(source: Source, path: Path, data: bytes) -> bytes:
    if not source.decompressed_sha256:
        return data
    try:
        data = lzma.decompress(data)
    except lzma.LZMAError as exc:
        raise FixtureSourceError(f"{path} does not decompress: {exc}") from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != source.decompressed_sha256:
        raise FixtureSourceError(
            f"{path} decompresses to the wrong bytes (sha256 {actual[:12]}…, pinned "
            f"{source.decompressed_sha256[:12]}…): delete it and run `serkit fixtures fetch`"
        )
    return data


def fetch_source(
    source: Source = SENATE_SOURCE, *, mirror: str | None = None, progress: bool = True
) -> Path:
    """Copy `source` into the data dir from the mirror, or download it from its pinned URL.

    Either way the file is checked against the pinned sha256 (and, compressed, its
    decompressed bytes against theirs) before it is kept.
    """
    target = data_dir() / source.relative_path
    folder = _mirror(mirror)
    if folder is not None:
        verified, data = _verified(source, str(folder))
        _contents(source, verified, data)
        atomic_write(target, data)  # the bytes checked, never the path read again
        return target
    import pooch

    try:
        fetched = Path(
            pooch.retrieve(
                source.url,
                known_hash=f"sha256:{source.sha256}",
                fname=source.filename,
                path=target.parent,
                progressbar=progress,
            )
        )
    except ValueError as exc:  # pooch's hash mismatch
        raise FixtureSourceError(f"{source.url} does not match its pinned sha256: {exc}") from exc
    except Exception as exc:  # network errors come in many classes
        raise FixtureSourceError(
            f"could not download {source.url} ({type(exc).__name__}); "
            f"offline, point {MIRROR_ENV} or --mirror at a folder holding {source.relative_path}"
        ) from exc
    try:
        _contents(source, fetched, _read(fetched, str(target.parent), source))
    except FixtureSourceError:
        fetched.unlink()  # nothing half-checked is kept
        raise
    return fetched
