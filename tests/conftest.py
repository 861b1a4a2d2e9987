from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from hypothesis import settings

# Before serkit is imported: the tests see serkit's own fixtures, never the documents a
# developer declared in this checkout's fixtures/user (tests that need some declare them).
os.environ["SERKIT_USER_FIXTURES"] = str(Path(__file__).parent / "no-user-fixtures")
# Sizes and fidelity measured afresh in every test's run, never read from the developer's
# store of facts (serkit.suite.facts); the tests of that store give it a folder of their own.
os.environ["SERKIT_FACTS_DIR"] = "off"

import serkit
from serkit.codecs.registry import CodecRegistry
from serkit.errors import FixtureSourceError
from serkit.inputs.fixtures import FIXTURES
from serkit.inputs.sources import MIRROR_ENV, SENATE_SOURCE, SOURCES, source_path

TESTS = Path(__file__).resolve().parent

# Documents a case takes seconds to build or to round-trip through every codec: the slow
# fixtures, and random-dicts-1000 (2-3 s a half of the codecs, yaml's left to a smaller one).
HEAVY_DOCUMENTS = frozenset({*(f.name for f in FIXTURES.values() if f.slow), "random-dicts-1000"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A case parametrized on a heavy document is `slow` (pyproject.toml's markers), so that
    `-m "not slow"` leaves it out as it leaves out the tests marked in their files."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and HEAVY_DOCUMENTS & set(map(str, callspec.params.values())):
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # xdist deals the tests out in this order (after its groups, the largest first):
        # the slow ones lead, so that the run does not end on one worker's long test.
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Warn when `--dist loadgroup` cannot keep an `xdist_group` module on one worker.

    xdist groups tests by suffixing their ids, which pytest 9.2 no longer lets it do
    (pytest-xdist issue 1386): each module's real run, minutes long, then runs again on
    every worker, and nothing fails. pyproject.toml's test extra pins pytest below 9.2.
    """
    if not getattr(session.config.option, "loadgroup", False):  # set on xdist's workers
        return
    grouped = [item.nodeid for item in session.items if item.get_closest_marker("xdist_group")]
    split = [nodeid for nodeid in grouped if "@" not in nodeid]
    if split:
        warnings.warn(
            f"--dist loadgroup does not group {split[0]} with pytest {pytest.__version__} "
            "(pytest-xdist issue 1386): its module's real run repeats on each worker; "
            "install the test extra's pytest",
            pytest.PytestWarning,
            stacklevel=1,
        )


# Shared, noisy machines: a slow example is not a failure.
settings.register_profile("serkit", deadline=None)
settings.load_profile("serkit")


@pytest.fixture(scope="session")
def senate_available() -> None:
    """Fail, saying what to run, when the Senate source is neither fetched nor mirrored."""
    try:
        source_path(SENATE_SOURCE)
    except FixtureSourceError as exc:
        pytest.fail(f"{exc} (or set {MIRROR_ENV})")


@pytest.fixture(scope="session")
def sources_available() -> None:
    """Fail, saying what to run, when any fixture source is neither fetched nor mirrored."""
    try:
        for source in SOURCES:
            source_path(source)
    except FixtureSourceError as exc:
        pytest.fail(f"{exc} (or set {MIRROR_ENV})")


@pytest.fixture
def isolated_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data dir and no mirror: as on a machine that has fetched nothing."""
    monkeypatch.setenv("SERKIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    return tmp_path / "data"


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The mirror CI points at, or the data dir `serkit fixtures fetch` filled.

    Session-scoped so that it is resolved before `isolated_data` hides both.
    """
    configured = os.environ.get(MIRROR_ENV)
    return Path(configured) if configured else source_path(SENATE_SOURCE).parent


@pytest.fixture
def misbehaving_codec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> serkit.Codec:
    """Install tests/misbehaving_codec.py as an entry-point codec, for the workers too."""
    info = tmp_path / "serkit_misbehaving_codec-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: serkit-misbehaving-codec\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[serkit.codecs]\nmisbehaving = misbehaving_codec:SPEC\n"
    )
    paths = [str(tmp_path), str(TESTS), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    monkeypatch.syspath_prepend(str(tmp_path))
    # This process gets a registry of its own, which finds the entry point as workers do;
    # the global registry is left untouched for the other tests.
    codec = CodecRegistry().get("misbehaving")
    assert codec.name == "misbehaving"
    return codec


@pytest.fixture
def ghost_codec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An entry-point codec, visible to workers, whose library is not installed: its id."""
    (tmp_path / "ghost_codec.py").write_text(
        "from serkit import CodecSpec\n"
        "def _bind():\n"
        "    import serkit_no_such_library\n"
        "SPEC = CodecSpec('ghost', 'json', 'ghost-lib', _bind)\n"
    )
    info = tmp_path / "ghost_codec-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ghost-codec\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[serkit.codecs]\nghost = ghost_codec:SPEC\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return "ghost"
