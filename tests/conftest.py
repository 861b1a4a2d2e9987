from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Before serkit is imported: the tests see serkit's own fixtures, never the documents a
# developer declared in this checkout's fixtures/user (tests that need some declare them).
os.environ["SERKIT_USER_FIXTURES"] = str(Path(__file__).parent / "no-user-fixtures")

from serkit.inputs.fixtures import MIRROR_ENV, SENATE_SOURCE, FixtureSourceError, source_path

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
