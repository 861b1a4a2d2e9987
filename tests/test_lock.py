"""One `serkit bench` at a time in a checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from serkit.cli import main
from serkit.run.lock import Busy, bench_lock

ROOT = Path(__file__).resolve().parents[1]


def test_a_second_holder_is_refused_saying_who_holds_it(tmp_path: Path) -> None:
    busy = pytest.raises(Busy, match=r"pid \d+, since .*spoil each other's timings")
    with bench_lock(tmp_path), busy, bench_lock(tmp_path):
        pass
    with bench_lock(tmp_path):  # released: the next run goes ahead
        pass


def _checkout_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout of its own, so that a real run in this one is never in the way."""
    shutil.copy(ROOT / "asv.conf.json", tmp_path / "asv.conf.json")
    (tmp_path / "benchmarks").mkdir()
    monkeypatch.chdir(tmp_path)


def test_a_second_serkit_bench_refuses_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _checkout_of_its_own(tmp_path, monkeypatch)
    with bench_lock(tmp_path):
        assert main(["bench", "--no-report"]) == 3
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1
    assert "another `serkit bench` is running in this checkout" in errors[0]
    assert not (tmp_path / ".asv" / "results").exists()  # refused before asv ran at all


def test_resume_while_another_run_holds_the_checkout_refuses_before_saying_it_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _checkout_of_its_own(tmp_path, monkeypatch)
    with bench_lock(tmp_path):
        assert main(["bench", "--resume", "--no-report"]) == 3
    err = capsys.readouterr().err
    assert "resuming" not in err and "another `serkit bench` is running" in err
