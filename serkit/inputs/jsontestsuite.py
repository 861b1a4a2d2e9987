"""JSONTestSuite's parsing tests: a fetched source of 318 small files, pinned one by one.

Nicolas Seriot's JSONTestSuite (MIT) names each file for what a conforming parser must
do with it: ``y_`` files must be accepted, ``n_`` files rejected, and ``i_`` files are
left to the implementation. The files are fetched like every other source (copied from
the mirror, or downloaded from their pinned URLs) and each is checked against its sha256
in ``jsontestsuite.sha256``, which lists them as ``sha256sum`` does. Only those hashes
are part of serkit; the files themselves never are.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import quote

from serkit.inputs.sources import Source, fetch_source, source_path

COMMIT = "1ef36fa01286573e846ac449e8683f8833c5b26a"
LICENSE = "MIT, JSONTestSuite (Nicolas Seriot)"
FOLDER = "JSONTestSuite/test_parsing"  # in the mirror and in the data dir
URL = f"https://raw.githubusercontent.com/nst/JSONTestSuite/{COMMIT}/test_parsing/"
MANIFEST = Path(__file__).with_name("jsontestsuite.sha256")

# What a file's prefix asks of a parser.
ACCEPT, REJECT, EITHER = "accept", "reject", "either"
EXPECTATIONS = {"y_": ACCEPT, "n_": REJECT, "i_": EITHER}


def expectation(name: str) -> str:
    """What JSONTestSuite asks of a parser for file `name`: ACCEPT, REJECT or EITHER."""
    try:
        return EXPECTATIONS[name[:2]]
    except KeyError:
        raise ValueError(f"{name!r} is not a JSONTestSuite test_parsing file") from None


def read_manifest(text: str) -> dict[str, str]:
    """`sha256  test_parsing/NAME` lines -> {NAME: sha256}."""
    pinned: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip():
            digest, path = line.split(maxsplit=1)
            pinned[path.lstrip("*").rsplit("/", 1)[-1]] = digest
    return pinned


@cache
def sources() -> tuple[Source, ...]:
    """Every test_parsing file as a pinned source, in name order."""
    pinned = read_manifest(MANIFEST.read_text(encoding="utf-8"))
    return tuple(
        Source(name, URL + quote(name), digest, LICENSE, folder=FOLDER)
        for name, digest in sorted(pinned.items())
    )


def verified_files(mirror: str | None = None) -> dict[str, Path]:
    """{name: path} of every test file, each checked against its pinned sha256.

    Raises FixtureSourceError, saying what to run, at the first missing or changed file.
    """
    return {source.filename: source_path(source, mirror=mirror) for source in sources()}


def fetch(mirror: str | None = None, *, progress: bool = False) -> Path:
    """Copy every test file from the mirror, or download it; return the folder."""
    paths = [fetch_source(source, mirror=mirror, progress=progress) for source in sources()]
    return paths[0].parent
