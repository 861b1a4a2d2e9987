"""serkit/run/releases.py: the releases as data, the history policy, the refresh from an index.

Every index here is made up, served from this process: the tests check the policy and the
flow from an index to the matrix, never today's version numbers.
"""

from __future__ import annotations

import datetime
import json
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from serkit.cli import main
from serkit.errors import SerkitError
from serkit.run.index import IndexFile, releases
from serkit.run.releases import (
    BadReleases,
    Library,
    Release,
    Releases,
    behind_installed,
    keep,
    load,
    refresh,
    save,
    staleness,
)

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12", "3.13", "3.14t")
LINUX = "manylinux_2_17_x86_64"


def _files(name: str, served: Mapping[str, Sequence[str]]) -> list[IndexFile]:
    """An index's files: per version, a compiled wheel for each listed Python (cp312,
    cp314t), and an sdist always."""
    files = []
    stem = name.replace("-", "_")  # as wheels and sdists spell a distribution
    for version, tags in served.items():
        files.append(IndexFile(f"{stem}-{version}.tar.gz", uploaded="2026-01-01T00:00:00Z"))
        for tag in tags:
            interpreter = tag.rstrip("t")  # cp314t: the cp314 interpreter's free-threaded ABI
            files.append(IndexFile(f"{stem}-{version}-{interpreter}-{tag}-{LINUX}.whl"))
    return files


def _kept(served: Mapping[str, Sequence[str]], lines: int = 3) -> list[str]:
    found = releases(_files("lib", served), PYTHONS)
    return [str(r.version) for r in keep(found, lines)]


def test_the_policy_keeps_the_newest_release_of_each_of_the_newest_minor_lines() -> None:
    served = {
        "3.9.15": ["cp311"],
        "3.10.0": ["cp311"],
        "3.10.18": ["cp311", "cp312"],
        "3.11.1": ["cp312"],
        "3.12.0": ["cp312", "cp313"],
        "3.13.0": ["cp313", "cp314t"],
    }
    assert _kept(served) == ["3.13.0", "3.12.0", "3.11.1"]
    assert _kept(served, lines=5) == ["3.13.0", "3.12.0", "3.11.1", "3.10.18", "3.9.15"]


def test_with_fewer_lines_than_asked_the_newest_patches_fill_in() -> None:
    served = {"5.4.1": [], "6.0.1": ["cp311"], "6.0.2": ["cp312"], "6.0.3": ["cp313"]}
    assert _kept(served) == ["6.0.3", "6.0.2", "6.0.1"]  # 5.4.1: no wheel for the matrix


def test_a_release_without_compiled_wheels_is_never_kept() -> None:
    served = {"1.2.4": ["cp312"], "1.2.5": [], "1.1.0": ["cp311"], "2.0.0": []}
    assert _kept(served) == ["1.2.4", "1.1.0"]


def _data(*names: str) -> Releases:
    return Releases(PYTHONS, 3, tuple(Library(name, ()) for name in names), None)


def _wanted(*names: str) -> dict[str, bool]:
    """The libraries a refresh is to keep, all measured (serkit.run.libraries' form)."""
    return dict.fromkeys(names, True)


def test_refresh_rewrites_every_library_from_the_index() -> None:
    index = {
        "cbor2": _files("cbor2", {"6.2.1": ["cp312"], "6.3.0": ["cp312", "cp314t"]}),
        "orjson": _files("orjson", {"3.13.0": ["cp313"], "3.14.0": []}),
    }
    asked: list[str] = []
    after = refresh(
        _data("cbor2", "orjson"),
        index.__getitem__,
        wanted=_wanted("cbor2", "orjson"),
        today=datetime.date(2026, 12, 1),
        progress=asked.append,
    )
    assert asked == ["cbor2", "orjson"] and after.checked == "2026-12-01"
    cbor2, orjson = after.libraries
    assert [r.version for r in cbor2.releases] == ["6.3.0", "6.2.1"]
    assert cbor2.releases[0].wheels["linux-x86_64"] == ("3.12", "3.14t")
    assert cbor2.releases[0].wheels["macos-arm64"] == ()
    # orjson 3.14.0 is served, but with no wheel: left out, and said by newest_served.
    assert [r.version for r in orjson.releases] == ["3.13.0"]
    assert orjson.newest_served == "3.14.0"


def test_a_library_with_nothing_usable_is_an_error() -> None:
    with pytest.raises(SerkitError, match="no release of cbor2 has a compiled wheel"):
        refresh(_data("cbor2"), lambda name: _files(name, {"1.0": []}), wanted=_wanted("cbor2"))
    with pytest.raises(SerkitError, match="lists no release of cbor2"):
        refresh(_data("cbor2"), lambda name: [], wanted=_wanted("cbor2"))


def test_refresh_adds_the_libraries_the_codecs_need_and_drops_the_others() -> None:
    """The file lists cbor2 (its own policy: 1 line) and an old library; the codecs need
    cbor2, orjson, and genson beside orjson's schema codec."""
    served = {"5.0.1": ["cp312"], "5.1.0": ["cp312"], "6.0.0": ["cp312"]}
    data = replace(
        _data("gone", "cbor2"),
        libraries=(Library("gone", ()), Library("cbor2", (), None, minor_lines=1)),
    )
    wanted = {"cbor2": True, "orjson": True, "genson": False}
    after = refresh(data, lambda name: _files(name, served), wanted=wanted)
    assert [lib.name for lib in after.libraries] == ["cbor2", "orjson", "genson"]
    kept = {lib.name: [r.version for r in lib.releases] for lib in after.libraries}
    # cbor2 keeps its own line count; orjson, new, takes the file's; genson, a companion, 1.
    assert kept == {
        "cbor2": ["6.0.0"],
        "orjson": ["6.0.0", "5.1.0", "5.0.1"],
        "genson": ["6.0.0"],
    }
    assert after.library("cbor2").minor_lines == 1 and after.library("orjson").minor_lines is None


def test_the_checked_in_file_lists_what_the_codecs_need() -> None:
    from serkit.run.libraries import matrix_libraries

    assert {lib.name for lib in load().libraries} == set(matrix_libraries())


# --- pure-Python libraries -------------------------------------------------------------


def _pure(name: str, version: str, requires: str | None = None) -> IndexFile:
    stem = name.replace("-", "_")
    return IndexFile(
        f"{stem}-{version}-py3-none-any.whl", url=f"x/{stem}-{version}", requires_python=requires
    )


def _metadata(pins: Mapping[str, str]) -> Callable[[IndexFile], str]:
    """A wheel's metadata by its address: Requires-Dist lines, exact where pinned."""

    def read(wheel: IndexFile) -> str:
        lines = ["Metadata-Version: 2.1", "Name: x", "Requires-Dist: typing-extensions>=4.6"]
        lines += [f"Requires-Dist: {dep}" for dep in pins.get(wheel.url, "").split(",") if dep]
        return "\n".join(lines) + "\n"

    return read


def test_a_pure_python_library_counts_its_pure_wheel_where_its_python_is_admitted() -> None:
    index = {"cattrs": [_pure("cattrs", "26.2.1", ">=3.12"), _pure("cattrs", "25.3.0")]}
    after = refresh(
        _data("cattrs"), index.__getitem__, metadata_of=_metadata({}), wanted=_wanted("cattrs")
    )
    (cattrs,) = after.libraries
    assert cattrs.pure_python
    newest, older = cattrs.releases
    assert newest.wheels["macos-arm64"] == ("3.12", "3.13", "3.14t")  # 3.11 is not admitted
    assert older.wheels["linux-aarch64"] == PYTHONS


def test_a_pure_wheel_that_pins_a_compiled_distribution_serves_where_that_does() -> None:
    """pydantic 2: a pure wheel pinning pydantic-core, compiled; pydantic 1.10 had compiled
    wheels of its own, which do not make pydantic 2's pure wheel a fallback."""
    index = {
        "pydantic": [
            _pure("pydantic", "2.14.4", ">=3.10"),
            _pure("pydantic", "2.13.5", ">=3.10"),
            *_files("pydantic", {"1.10.27": ["cp311", "cp312"]}),
        ],
        "pydantic-core": _files("pydantic-core", {"2.50.5": ["cp312", "cp313"], "2.46.5": []}),
    }
    pins = {
        "x/pydantic-2.14.4": "pydantic-core==2.50.5",
        "x/pydantic-2.13.5": "pydantic-core==2.46.5",
    }
    after = refresh(
        _data("pydantic"),
        index.__getitem__,
        metadata_of=_metadata(pins),
        wanted=_wanted("pydantic"),
    )
    (pydantic,) = after.libraries
    versions = [r.version for r in pydantic.releases]
    # 2.13.5's core has no wheel at all: not kept; 1.10 by its own compiled wheels.
    assert versions == ["2.14.4", "1.10.27"]
    newest = pydantic.releases[0]
    assert newest.pins == {"pydantic-core": "2.50.5"}
    assert newest.wheels["linux-x86_64"] == ("3.12", "3.13")  # where the core has wheels
    assert newest.wheels["macos-arm64"] == ()


def test_a_pure_wheel_of_a_compiled_library_is_never_a_fallback() -> None:
    index = {"cbor2": [_pure("cbor2", "6.0.0"), *_files("cbor2", {"5.9.0": ["cp312"]})]}
    after = refresh(
        _data("cbor2"), index.__getitem__, metadata_of=_metadata({}), wanted=_wanted("cbor2")
    )
    assert [r.version for r in after.libraries[0].releases] == ["5.9.0"]
    assert not after.libraries[0].pure_python


def test_the_file_round_trips_and_a_broken_one_is_one_error(tmp_path: Path) -> None:
    data = refresh(
        _data("cbor2"), lambda name: _files(name, {"6.3.0": ["cp312"]}), wanted=_wanted("cbor2")
    )
    path = tmp_path / "releases.json"
    save(data, path)
    assert load(path) == data
    path.write_text(json.dumps({"pythons": ["3.12"], "libraries": []}))
    with pytest.raises(BadReleases, match="not serkit's releases file"):
        load(path)
    path.write_text("{")
    with pytest.raises(BadReleases, match="not JSON"):
        load(path)


def test_the_checked_in_file_follows_the_policy() -> None:
    data = load()
    for library in data.libraries:
        versions = [r.version for r in library.releases]
        assert 1 <= len(versions) <= data.minor_lines, library.name
        assert all(any(r.wheels.values()) for r in library.releases), library.name
        assert versions == sorted(versions, key=_version, reverse=True), library.name


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


# --- is the matrix behind the index? ---------------------------------------------------


def _one(name: str, newest: str) -> Releases:
    return Releases(PYTHONS, 3, (Library(name, (Release(newest),), newest),), "2026-11-01")


def test_a_newer_release_installed_here_says_the_matrix_is_behind() -> None:
    installed = {"cbor2": "6.3.0"}.get
    assert [str(b) for b in behind_installed(_one("cbor2", "6.2.1"), installed)] == [
        "cbor2 6.3.0 is installed here, but the matrix knows releases up to 6.2.1"
    ]
    assert behind_installed(_one("cbor2", "6.3.0"), installed) == []
    assert behind_installed(_one("cbor2", "7.0.0"), installed) == []
    assert behind_installed(_one("ujson", "6.1.0"), installed) == []  # not installed


def test_an_old_check_is_mentioned() -> None:
    data = _one("no-such-library-here", "1.0")
    assert staleness(data, today=datetime.date(2026, 11, 20)) == []
    (line,) = staleness(data, today=datetime.date(2027, 1, 1))
    assert "last checked against the index 61 days ago" in line


# --- the refresh on the command line, against an index served here ---------------------


class _Index(BaseHTTPRequestHandler):
    pages: ClassVar[dict[str, list[IndexFile]]] = {}

    def do_GET(self) -> None:
        name = self.path.strip("/").split("/")[-1]
        files = self.pages.get(name)
        if files is None:
            self.send_error(404)
            return
        body = json.dumps(
            {
                "meta": {"api-version": "1.1"},
                "files": [
                    {"filename": f.filename, "yanked": f.yanked, "upload-time": f.uploaded}
                    for f in files
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def index() -> Iterator[tuple[str, dict[str, list[IndexFile]]]]:
    """A simple index on 127.0.0.1: its URL, and the pages it serves (by project)."""
    pages: ClassVar[dict[str, list[IndexFile]]] = {}
    handler = type("Index", (_Index,), {"pages": pages})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/", pages
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout's matrix files, the releases today's: what a refresh rewrites."""
    root = tmp_path / "checkout"
    (root / "benchmarks").mkdir(parents=True)
    (root / "serkit" / "run").mkdir(parents=True)
    shutil.copy(ROOT / "asv.conf.json", root / "asv.conf.json")
    shutil.copy(ROOT / "serkit" / "run" / "releases.json", root / "serkit/run/releases.json")
    monkeypatch.chdir(root)
    return root


def test_a_new_release_on_the_index_becomes_a_new_point_with_no_code_edit(
    index: tuple[str, dict[str, list[IndexFile]]],
    checkout: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from serkit.run import planning

    url, pages = index
    before = load(checkout / "serkit/run/releases.json")
    # The index serves what the file holds, and cbor2 one release more: 99.0.0.
    for library in before.libraries:
        served = {
            r.version: [f"cp{p.replace('.', '')}" for p in r.wheels["linux-x86_64"]]
            for r in library.releases
        }
        if library.name == "cbor2":
            served["99.0.0"] = ["cp311", "cp312", "cp313"]
        pages[library.name] = _files(library.name, served)
    assert main(["matrix", "--refresh", "--index-url", url]) == 0
    out = capsys.readouterr().out
    assert "cbor2: + 99.0.0, - " in out  # the newest three lines: the oldest one leaves
    after = load(checkout / "serkit/run/releases.json")
    assert after.library("cbor2").releases[0].version == "99.0.0"
    config = (checkout / "asv.conf.json").read_text()
    assert '"cbor2": "99.0.0"' in config
    # The next matrix run measures it: a new environment, on every Python with a wheel.
    plan = planning.plan(checkout, matrix=True, pythons=["3.11"])
    labels = [env.label for env in plan.environments]
    assert "py3.11 cbor2 99.0.0" in labels
    # ... and the quick run's newest set has it too.
    (quick,) = planning.plan(checkout, matrix=False).environments
    assert quick.requirements["cbor2"] == "99.0.0"


def test_an_index_without_the_project_is_one_error_and_the_file_is_kept(
    index: tuple[str, dict[str, list[IndexFile]]],
    checkout: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, _ = index  # it serves no project at all: 404
    before = (checkout / "serkit/run/releases.json").read_text()
    assert main(["matrix", "--refresh", "--index-url", url]) == 3
    err = capsys.readouterr().err
    assert f"serkit: error: could not read {url}msgpack/: Not Found" in err
    assert "Traceback" not in err
    assert (checkout / "serkit/run/releases.json").read_text() == before
