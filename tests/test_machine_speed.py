"""Placing each sample on the vCPU that reads faster (serkit.suite.state_watch,
serkit.run.machine_speed), with canary readings and pinning that are given: no test races
the real machine, and none sleeps."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from serkit.checkout import CANARY_PROBE
from serkit.run.machine_speed import LEDGER, process_environment
from serkit.suite import state_watch
from serkit.suite.canary import RESULTS_ENV
from serkit.suite.state_watch import (
    LEDGER_ENV,
    PROBE_FILE_ENV,
    HostProbe,
    Placement,
    moved_samples,
    placement,
)


def _probe(tmp_path: Path, readings: list[float]) -> HostProbe:
    return HostProbe(tmp_path / "canary-probe.json", probe=iter(readings).__next__)


def _placement(
    tmp_path: Path, readings: list[float], on: int | None = None
) -> tuple[Placement, list[tuple[int, ...]]]:
    """A placement over vCPUs 0 and 1 whose canary reads `readings` in turn, 140 or over
    the slow state's, and which notes where it pinned the process."""
    pinned: list[tuple[int, ...]] = []

    def pin(cpus: Collection[int]) -> None:
        pinned.append(tuple(cpus))

    given = iter(readings)
    placed = Placement(140.0, (0, 1), tmp_path / LEDGER, canary=given.__next__, pin=pin, on=on)
    return placed, pinned


def test_the_fast_reading_is_kept_for_the_next_run(tmp_path: Path) -> None:
    assert _probe(tmp_path, [100.0]).ratio() == 1.0
    # A run that begins in the slow state still knows the host's fast reading.
    later = _probe(tmp_path, [180.0])
    assert later.ratio() == pytest.approx(1.8) and later.fast_ns() == 100.0
    assert _probe(tmp_path, [90.0]).ratio() == 1.0  # a faster probe is kept instead
    assert _probe(tmp_path, []).fast_ns() == 90.0


def test_a_sample_stays_where_the_canary_reads_fast(tmp_path: Path) -> None:
    placed, pinned = _placement(tmp_path, [139.0])
    placed.place()
    assert pinned == [] and placed.on is None and moved_samples(tmp_path / LEDGER) == 0


def test_a_slow_reading_moves_the_sample_to_the_vcpu_that_reads_faster(tmp_path: Path) -> None:
    """Not pinned yet, the process reads every vCPU it may run on and stays on the fastest;
    once pinned, one reading on the other vCPU decides. Each move goes to the ledger."""
    placed, pinned = _placement(tmp_path, [180.0, 100.0, 185.0])
    placed.place()
    assert pinned == [(0,), (1,), (0,)] and placed.on == 0 and placed.moved == 1
    placed.canary = iter([150.0, 101.0]).__next__  # slow on 0, fast on 1
    placed.place()
    assert pinned[3:] == [(1,)] and placed.on == 1 and placed.moved == 2
    assert moved_samples(tmp_path / LEDGER) == 2


def test_a_sample_stays_where_it_read_faster_when_every_vcpu_reads_slow(tmp_path: Path) -> None:
    placed, pinned = _placement(tmp_path, [170.0, 200.0, 190.0])
    placed.place()
    assert pinned == [(0,), (1,), (0, 1)] and placed.on is None  # free again, as it began
    placed, pinned = _placement(tmp_path, [170.0, 200.0], on=1)
    placed.place()
    assert pinned == [(0,), (1,)] and placed.on == 1 and placed.moved == 0
    assert moved_samples(tmp_path / LEDGER) == 0


def test_a_process_places_its_samples_only_where_its_run_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run gives its processes the host's probe and its ledger; the slow state is
    SLOW_FROM times the host's fast probe. A plain `asv run` in serkit's checkout takes the
    checkout's probe, uncounted. Outside both, on one vCPU, or where the platform cannot
    pin, a process samples where it is."""
    host = _probe(tmp_path, [100.0])
    host.ratio()
    given = process_environment(host, tmp_path / "notes")
    assert given == {
        PROBE_FILE_ENV: str(host.path),
        LEDGER_ENV: str(tmp_path / "notes" / LEDGER),
    }
    monkeypatch.setattr(state_watch.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(state_watch.os, "sched_setaffinity", lambda pid, c: None, raising=False)
    made = placement(given)
    assert made is not None and made.slow_ns == pytest.approx(140.0) and made.cpus == (0, 1)
    assert made.ledger == tmp_path / "notes" / LEDGER
    assert placement({}) is None
    plain = {"ASV_CONF_DIR": str(tmp_path), RESULTS_ENV: str(tmp_path / "results")}
    (tmp_path / CANARY_PROBE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / CANARY_PROBE).write_text(host.path.read_text())
    by_hand = placement(plain)
    assert by_hand is not None and by_hand.slow_ns == pytest.approx(140.0)
    assert by_hand.ledger is None
    assert placement({"ASV_CONF_DIR": str(tmp_path)}) is None  # not serkit's environment
    monkeypatch.setattr(state_watch.os, "sched_getaffinity", lambda pid: {1})
    assert placement(given) is None
    monkeypatch.delattr(state_watch.os, "sched_setaffinity")
    assert placement(given) is None


def test_the_first_process_on_a_python_probes_for_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_watch.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(state_watch.os, "sched_setaffinity", lambda pid, c: None, raising=False)
    fresh = _probe(tmp_path, [200.0])
    made = placement({PROBE_FILE_ENV: str(fresh.path)}, host=fresh)
    assert made is not None and made.slow_ns == pytest.approx(280.0) and made.ledger is None
    assert _probe(tmp_path, []).fast_ns() == 200.0  # kept for the next process


def test_a_full_disk_under_asv_is_one_line_naming_it(tmp_path: Path) -> None:
    """asv's own traceback on a full disk (issue 30) becomes serkit's one line, exit 3."""
    from serkit.cli import os_failure
    from serkit.run.rounds import disk_full

    tail = [
        "  File asv/util.py, line 900, in write_json",
        "OSError: [Errno 28] No space left on device",
    ]
    found = disk_full(tmp_path, tail)
    assert found is not None and found.errno == 28
    line = os_failure(found)
    assert line.startswith(f"{tmp_path}: ") and "(ENOSPC)" in line and "\n" not in line
    # Another failure, on a disk with room: asv's own output says what happened.
    assert disk_full(tmp_path, ["ImportError: no module named x"]) is None


def test_the_trust_commands_processes_place_samples_as_a_quick_runs_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serkit aa`, `noise` and `power` run the suite in a scratch folder: its processes
    get the host's probe and a ledger of their own, so their floors and power are
    measured as `serkit bench` now samples."""
    from serkit.trust import agreement
    from serkit.trust.agreement import ScratchSuite

    monkeypatch.setattr(agreement, "run_probe", lambda root: _probe(tmp_path, [100.0]))
    suite = ScratchSuite(tmp_path)
    assert suite.env[LEDGER_ENV] == str(suite.scratch / "notes" / LEDGER)
    assert suite.env[PROBE_FILE_ENV] == str(tmp_path / "canary-probe.json")
