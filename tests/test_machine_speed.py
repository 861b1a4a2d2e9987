"""Waiting out the machine's slow state between rounds (serkit.run.machine_speed), with a
probe whose readings are given: no test races the real machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from serkit.errors import SerkitError
from serkit.run.machine_speed import (
    QUICK_WAIT_S,
    process_environment,
    run_watch,
    wait_budget_s,
)
from serkit.suite import state_watch
from serkit.suite.state_watch import LEDGER_ENV, POLL_S, WAIT_ENV, StateWatch, process_watch


def _watch(tmp_path: Path, readings: list[float], budget_s: float) -> tuple[StateWatch, list[str]]:
    said: list[str] = []
    slept: list[float] = []
    watch = StateWatch(
        tmp_path / "canary-probe.json",
        budget_s,
        probe=iter(readings).__next__,
        sleep=slept.append,
        say=said.append,
    )
    return watch, said


def test_a_slow_machine_is_waited_for_until_it_is_fast_again(tmp_path: Path) -> None:
    # The fast reading first (kept for the host), then slow twice, then fast.
    watch, said = _watch(tmp_path, [100.0, 180.0, 175.0, 102.0], budget_s=60)
    assert watch.ratio() == 1.0
    watch.wait_for_fast("extra round 1")
    assert "slow state (canary x1.80" in said[0] and "up to 60 s" in said[0]
    assert said[1] == "serkit: fast again after 6 s"
    assert watch.waited_s == 6


def test_the_wait_stops_at_its_budget_and_says_so(tmp_path: Path) -> None:
    watch, said = _watch(tmp_path, [100.0, *[180.0] * 10], budget_s=5)
    watch.ratio()
    watch.wait_for_fast("extra round 1")
    assert said[-1].startswith("serkit: still slow after 5 s (x1.80): extra round 1 measures")
    watch.wait_for_fast("extra round 2")  # the budget is spent: no more waiting
    assert "are spent" in said[-1] and watch.waited_s == 5


@pytest.mark.parametrize("fresh_ns", [120.0, 180.0, None])
def test_a_process_slow_where_a_new_interpreter_is_not_does_not_wait(
    tmp_path: Path, fresh_ns: float | None
) -> None:
    """A timed process read 1.4-1.9x for minutes while new interpreters read 1.2x: the
    slowness was its own, and no wait would end it. Such a process samples at once,
    counted for its run, and with no gate before its samples. A new interpreter slow too
    (the machine's state), or one that cannot run, leaves the wait as it was."""
    ledger = tmp_path / "state-wait"
    slept: list[float] = []
    said: list[str] = []
    # The host's fast reading, the process's slow probe, then its probe again (slow where
    # a new interpreter read fast) or the one after its first wait.
    readings = iter([100.0, 180.0, 175.0 if fresh_ns == 120.0 else 102.0])
    watch = StateWatch(
        tmp_path / "probe.json",
        60,
        probe=readings.__next__,
        sleep=slept.append,
        say=said.append,
        ledger=ledger,
        fresh=lambda: fresh_ns,
    )
    watch.ratio()  # the host's fast reading: 100
    watch.wait_for_fast("a timed process")
    if fresh_ns == 120.0:
        assert slept == [] and watch.slow_alone and watch.slow_alone_processes == 1
        assert "where a new interpreter does not" in said[0]
        assert state_watch._gate_for(watch) is None  # no spell would come for its samples
        assert watch.spent_s == 0.0
    else:
        assert slept == [POLL_S] and not watch.slow_alone and watch.slow_alone_processes == 0
        assert state_watch._gate_for(watch) is not None


def test_a_process_slow_in_its_first_milliseconds_only_is_neither_waited_for_nor_counted(
    tmp_path: Path,
) -> None:
    """A process's first probe can read slow where a new interpreter reads fast, and its
    own probe, taken again once the new interpreter has, fast: slow in its first
    milliseconds only. It samples at once, gated as any process, and is not counted as slow
    by itself."""
    said: list[str] = []
    watch = StateWatch(
        tmp_path / "probe.json",
        600,
        probe=iter([100.0, 150.0, 118.0]).__next__,
        sleep=lambda s: pytest.fail("no wait"),
        say=said.append,
        ledger=tmp_path / "state-wait",
        fresh=lambda: 115.0,
    )
    watch.ratio()
    assert watch.wait_for_fast("a timed process") == 0.0
    assert not watch.slow_alone and watch.slow_alone_processes == 0 and said == []
    assert state_watch._gate_for(watch) is not None


def test_a_process_that_waited_in_the_machines_slow_state_stops_once_the_slowness_is_its_own(
    tmp_path: Path,
) -> None:
    """A process slow by itself that starts in a slow flicker of the machine finds a new
    interpreter slow too, and waits; asked again every second, the new interpreter reads
    fast once the flicker ends, and the process stops waiting then, not at its most."""
    ledger = tmp_path / "state-wait"
    slept: list[float] = []
    said: list[str] = []
    fresh = iter([180.0, 175.0, 110.0])  # at the start, after 1 s, after 2 s
    watch = StateWatch(
        tmp_path / "probe.json",
        600,
        probe=iter([100.0, *[180.0] * 100]).__next__,  # the process reads slow throughout
        sleep=slept.append,
        say=said.append,
        ledger=ledger,
        poll_s=0.5,
        fresh=fresh.__next__,
        most_s=120.0,
    )
    watch.ratio()  # the host's fast reading: 100
    assert watch.wait_for_fast("a timed process") == 2.0
    assert slept == [0.5] * 4 and watch.spent_s == 2.0
    assert watch.slow_alone and watch.slow_alone_processes == 1
    assert said[-1] == (
        "serkit: after 2 s a timed process still reads the slow state (canary x1.80) where a "
        "new interpreter no longer does: the slowness is its own, and it stops waiting"
    )
    assert state_watch._gate_for(watch) is None


def test_a_new_interpreter_probes_with_the_canarys_own_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    probe = state_watch.fresh_probe_ns()
    assert probe is not None and probe > 0
    assert state_watch.fresh_probe_ns(python="/nonexistent/python") is None

    def no_source(function: object) -> str:
        raise OSError("could not get source code")

    monkeypatch.setattr(state_watch.inspect, "getsource", no_source)
    assert state_watch.fresh_probe_ns() is None  # then the process's own probe judges


def test_one_process_waits_no_longer_than_asv_lets_a_benchmark_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asv ends a benchmark process after its timeout and records the pair as failed: one
    process that waited past it had its pair recorded as failed. A process waits at most
    PROCESS_WAIT_MOST_S, well inside the timeout, and the next one waits on from the
    run's budget."""
    from serkit.suite.cases import TIMEOUT_S

    assert state_watch.PROCESS_WAIT_MOST_S <= TIMEOUT_S / 2
    monkeypatch.setenv(WAIT_ENV, "600")
    monkeypatch.setenv(state_watch.PROBE_FILE_ENV, str(tmp_path / "probe.json"))
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "state-wait"))
    made = process_watch()
    assert made is not None and made.most_s == state_watch.PROCESS_WAIT_MOST_S
    slept: list[float] = []
    readings = iter([100.0, *[180.0] * 20])
    watch = StateWatch(
        tmp_path / "probe.json",
        600,
        probe=readings.__next__,
        sleep=slept.append,
        ledger=tmp_path / "state-wait",
        poll_s=0.5,
        most_s=1.0,
    )
    watch.ratio()  # the host's fast reading: 100
    assert watch.wait_for_fast("a timed process") == 1.0  # slow still: it samples
    assert watch.wait_for_fast("the next timed process") == 1.0
    assert watch.spent_s == pytest.approx(2.0)  # both from the run's budget


def test_the_fast_reading_is_kept_for_the_next_run(tmp_path: Path) -> None:
    first, _ = _watch(tmp_path, [100.0], budget_s=60)
    first.ratio()
    # A run that begins in the slow state still knows the host's fast reading.
    second, said = _watch(tmp_path, [180.0, 100.0], budget_s=60)
    assert second.slow_now() == pytest.approx(1.8)
    second.wait_for_fast("extra round 1")
    assert said == []  # fast at the next probe: nothing to wait for


def test_no_budget_means_no_probe(tmp_path: Path) -> None:
    watch, said = _watch(tmp_path, [], budget_s=0)  # a probe would raise StopIteration
    assert watch.slow_now() is None
    watch.wait_for_fast("extra round 1")
    assert said == []


def test_the_runs_processes_spend_one_budget_through_its_ledger(tmp_path: Path) -> None:
    """Each timed process waits with a watch of its own; the ledger makes the budget the
    run's: a later process finds it spent and measures in the slow state."""
    ledger = tmp_path / "state-wait"
    said: list[str] = []

    def process_watch(readings: list[float]) -> StateWatch:
        return StateWatch(
            tmp_path / "canary-probe.json",
            4,
            probe=iter(readings).__next__,
            sleep=lambda s: None,
            say=said.append,
            ledger=ledger,
            poll_s=0.5,
        )

    process_watch([100.0]).ratio()  # the host's fast reading, as an earlier probe kept it
    first = process_watch([180.0, 180.0, 180.0, 101.0])
    assert first.wait_for_fast("a timed process") == 1.5 and said[-1].endswith("after 2 s")
    second = process_watch([180.0] * 20)
    assert second.spent_s == 1.5  # the first process's waiting, read from the ledger
    assert second.wait_for_fast("a timed process") == 2.5  # what was left of the 4 s
    third = process_watch([180.0])
    assert third.wait_for_fast("a timed process") == 0.0 and "are spent" in said[-1]
    assert ledger.stat().st_size == 40  # a byte a tenth of a second


def test_a_process_waits_only_where_its_run_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run passes its budget, the host's probes and its ledger to its processes; a
    process without all three (the tests' runs, asv run by hand) never probes."""
    watch = run_watch(tmp_path, tmp_path / "notes", 60)
    given = process_environment(watch)
    assert given[WAIT_ENV] == "60" and given[LEDGER_ENV] == str(tmp_path / "notes" / "state-wait")
    made = process_watch(given)
    assert made is not None and made.budget_s == 60 and made.path == watch.path
    assert made.ledger == watch.ledger
    assert process_environment(run_watch(tmp_path, tmp_path / "notes", 0)) == {}
    assert process_watch({**given, WAIT_ENV: "0"}) is None
    assert process_watch({WAIT_ENV: "60"}) is None
    # Once a process: what it waited before its first sample, and nothing after.
    monkeypatch.setattr(state_watch, "_waited", [])
    monkeypatch.setattr(state_watch, "process_watch", lambda: None)
    assert state_watch.wait_before_sampling() == 0.0
    monkeypatch.setattr(state_watch, "process_watch", lambda: 1 / 0)  # never made again
    assert state_watch.wait_before_sampling() == 0.0


def test_the_budget_comes_from_the_environment_or_the_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(WAIT_ENV)
    assert wait_budget_s(quick=True) == QUICK_WAIT_S
    monkeypatch.setenv(WAIT_ENV, "12")
    assert wait_budget_s(quick=False) == 12
    monkeypatch.setenv(WAIT_ENV, "soon")
    with pytest.raises(SerkitError, match=WAIT_ENV):
        wait_budget_s(quick=True)


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


def test_the_trust_commands_processes_wait_as_a_quick_runs_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serkit aa`, `noise` and `power` run the suite in a scratch folder: its processes
    get a quick run's budget and a ledger of their own, so their floors and power are
    measured as `serkit bench` now samples."""
    from serkit.trust.agreement import ScratchSuite

    monkeypatch.setenv(WAIT_ENV, "30")
    suite = ScratchSuite(tmp_path)
    assert suite.env[WAIT_ENV] == "30"
    assert suite.env[LEDGER_ENV] == str(suite.scratch / "notes" / "state-wait")
    monkeypatch.setenv(WAIT_ENV, "0")
    assert LEDGER_ENV not in ScratchSuite(tmp_path).env


def _gate(
    ledger: Path,
    readings: list[float],
    allowance_s: float,
    step_s: float = 0.05,
    patience_s: float = 10.0,
) -> state_watch.SampleGate:
    """A gate whose canary takes `step_s` a reading, on a clock of its own; a reading of
    125 or over is the slow state's."""
    now = [0.0]
    given = iter(readings)

    def canary() -> float:
        now[0] += step_s
        return next(given)

    return state_watch.SampleGate(
        125.0,
        allowance_s,
        ledger,
        readings=3,
        patience_s=patience_s,
        canary=canary,
        clock=lambda: now[0],
    )


def test_each_sample_waits_for_readings_under_the_slow_state_in_a_row(tmp_path: Path) -> None:
    """A fast flicker inside a slow stretch does not let a sample start: the readings must
    be under the slow state three times in a row. The least readings are not waiting."""
    ledger = tmp_path / "state-wait"
    flickering = [180.0, 100.0, 180.0, 180.0, 100.0, 110.0, 180.0, 100.0, 110.0, 120.0]
    gate = _gate(ledger, [100.0] * 3 + flickering + [180.0] + [100.0] * 3, 2.0, step_s=0.037)
    gate.wait()  # fast at once
    assert gate.waited_s == 0.0
    gate.wait()  # slow, flickers of one and two fast readings, then three in a row
    assert gate.waited_s == pytest.approx(10 * 0.037)
    assert ledger.stat().st_size == 3  # whole tenths of a second, as they add up
    gate.wait()  # one slow reading, three fast: 0.148 s, on top of the 0.07 s left over
    assert ledger.stat().st_size == 5  # waits under a tick add up across samples
    # Marked as a sample's waits, which the run tells from its processes' waits before
    # they sampled.
    assert ledger.read_bytes() == state_watch.GATED * 5
    watch = StateWatch(tmp_path / "probe.json", 60, ledger=ledger)
    state_watch._write_ledger(ledger, 12)  # a process's wait before it sampled: 1.2 s
    assert watch.spent_s == pytest.approx(1.7) and watch.gated_s == pytest.approx(0.5)


def test_fast_readings_above_the_least_probe_pass_the_gate(tmp_path: Path) -> None:
    """The host's least probe can sit well under a run's fast readings (another instance:
    9.9 µs against 12.0-13.3 µs). Those readings are not the slow state's, and the sample
    does not wait for them; the slow state's 1.8x still waits."""
    ledger = tmp_path / "state-wait"
    readings = iter([100.0, 129.0, 131.0, 127.0, 133.0, 180.0, 181.0, 128.0, 132.0, 130.0])
    watch = StateWatch(tmp_path / "probe.json", 60, probe=readings.__next__, ledger=ledger)
    watch.ratio()  # the least probe: 100
    gate = state_watch._gate_for(watch)
    assert gate is not None
    now = [0.0]

    def canary() -> float:
        now[0] += 0.01  # a clock of the gate's own: 10 ms a reading
        return next(readings)

    gate.readings, gate.canary, gate.clock = 3, canary, lambda: now[0]
    gate.wait()  # 129, 131, 127: under 140 three times in a row
    assert gate.waited_s == 0.0 and not gate.gave_up
    gate.wait()  # 133, then the slow state twice, then three in a row again
    assert gate.waited_s == pytest.approx(0.06) and not gate.gave_up
    assert next(readings, None) is None


def test_a_process_stops_waiting_at_its_allowance(tmp_path: Path) -> None:
    """A stretch slow throughout has no flicker to wait for: the process spends its
    allowance once, then samples at once, judged by the canary."""
    gate = _gate(tmp_path / "state-wait", [180.0] * 40, 0.5)
    gate.wait()
    spent = gate.waited_s
    assert 0.5 <= spent < 0.55  # to the reading that reached it
    gate.wait()  # one reading, and no more waiting
    assert gate.waited_s == spent


def test_a_sample_that_finds_no_spell_under_the_slow_state_ends_the_waiting(
    tmp_path: Path,
) -> None:
    """Slow for the whole of a sample's patience: a stretch slow throughout, not a flicker.
    The process stops waiting there, with most of its allowance unspent."""
    flicker = [180.0, 100.0, 100.0, 180.0, 100.0, 100.0, 100.0]  # fast in a row at the 7th
    gate = _gate(tmp_path / "state-wait", flicker + [180.0] * 40, 2.0, 0.01, patience_s=0.1)
    gate.wait()
    assert gate.waited_s == pytest.approx(0.07) and not gate.gave_up
    gate.wait()  # ten slow readings: 0.1 s, and no fast spell
    assert gate.gave_up and gate.waited_s == pytest.approx(0.17)
    gate.wait()  # no reading, no waiting
    assert gate.waited_s == pytest.approx(0.17)
    assert gate.canary() == 180.0  # the 18th reading: the last wait took none


def test_the_gate_comes_with_the_processs_wait_and_the_runs_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "state-wait"
    readings = iter([100.0, 101.0])

    def watch(budget_s: float) -> StateWatch:
        return StateWatch(tmp_path / "probe.json", budget_s, probe=readings.__next__, ledger=ledger)

    watch(60).ratio()  # the host's fast reading, kept
    monkeypatch.setattr(state_watch, "process_watch", lambda: watch(60))
    monkeypatch.setattr(state_watch, "_waited", [])
    monkeypatch.setattr(state_watch, "_gate", [])
    state_watch.wait_before_sampling()  # fast (101): no wait, and the gate is made
    gate = state_watch.sample_gate()
    assert gate is not None and gate.slow_ns == pytest.approx(140.0)  # the slow state's 1.4x
    assert gate.allowance_s == state_watch.PROCESS_SAMPLE_WAIT_S and gate.ledger == ledger
    # Less of the run's budget left than a process's allowance: what is left.
    ledger.write_bytes(b"." * 595)
    assert state_watch._gate_for(watch(60)).allowance_s == pytest.approx(0.5)  # type: ignore[union-attr]
    ledger.write_bytes(b"." * 600)
    assert state_watch._gate_for(watch(60)) is None
    # No fast reading known for this host: nothing to wait for.
    assert state_watch._gate_for(StateWatch(tmp_path / "none.json", 60)) is None
    monkeypatch.setattr(state_watch, "_gate", [])
    assert state_watch.sample_gate() is None  # a process that has not waited
