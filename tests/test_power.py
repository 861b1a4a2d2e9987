"""`serkit power`: a known slowdown that really runs, judged by compare's rule, kept per host."""

from __future__ import annotations

import dataclasses
import gc
import shutil
import timeit
from pathlib import Path
from typing import Callable

import pytest
from results_factory import per_process_tree
from test_noise import scaled
from test_state import _note_canaries

from serkit.cli import main
from serkit.compare.comparison import compare
from serkit.compare.in_words import power_text
from serkit.compare.json_form import as_json
from serkit.errors import SerkitError
from serkit.report.hosts_table import worded
from serkit.results.hosts import describe_hosts
from serkit.results.noise import (
    BETWEEN_RUNS,
    POWER_NOT_MEASURED,
    SAME_RUN,
    PowerRecord,
    read_power,
    record_power,
)
from serkit.results.tree import read_tree
from serkit.suite import canary, case_benchmark
from serkit.suite.canary import CANARY_LOOPS, CanaryClock, Extra, spin, spin_loops_for
from serkit.suite.case_benchmark import CaseBenchmark, injected_sampling, per_call_timer
from serkit.suite.cases import INJECT_ENV, injected_from_env
from serkit.trust.agreement import ScratchSuite, read_as_one_host
from serkit.trust.power import arm_machine, judge_arm


def test_an_injected_share_is_whole_extra_calls_in_twenty() -> None:
    assert injected_from_env({}) is None
    assert injected_from_env({INJECT_ENV: "0"}) == 0
    assert injected_from_env({INJECT_ENV: "0.05"}) == 1
    assert injected_from_env({INJECT_ENV: "0.2"}) == 4
    for bad in ("0.03", "-0.05", "lots"):
        with pytest.raises(SerkitError, match=INJECT_ENV):
            injected_from_env({INJECT_ENV: bad})


def test_an_injected_sample_keeps_the_plain_calls_and_spins_for_a_part_call() -> None:
    # Short calls: 20 calls a body, 10 bodies a sample; +10 % is 20 whole calls more.
    assert injected_sampling(20, 10, 2) == (20, 0.0)
    # One call a sample stays one: a tenth of a call at +10 %, a twentieth at +5 %.
    assert injected_sampling(1, 1, 2) == (0, pytest.approx(0.1))
    assert injected_sampling(1, 1, 1) == (0, pytest.approx(0.05))
    assert injected_sampling(1, 1, 0) == (0, 0.0)
    # 3 x 4 = 12 calls at +20 %: 2.4 calls, two whole and 0.4 of one.
    assert injected_sampling(3, 4, 4) == (2, pytest.approx(0.4))


def test_a_spin_lasts_its_share_of_a_call_in_either_state() -> None:
    # The canary's 400 loops at their least: 20 µs, so 50 ns a loop, and a call of 100 µs:
    # a spin of 2,000 loops to match it. Timed in turn with the call, it reads alike but
    # once, when the call ran slow (x1.8) and the spin fast: a tenth is 200 loops.
    def sized(calls: list[int], canaries: list[int], spins: list[int]) -> int:
        spun: list[int] = []

        def timed_spin(loops: int) -> int:
            spun.append(loops)
            return spins[len(spun) - 1]

        loops = spin_loops_for(
            0.1, iter(calls).__next__, len(spins), iter(canaries).__next__, timed_spin
        )
        assert set(spun) == {round(calls[0] / (min(canaries) / CANARY_LOOPS))}
        return loops

    fast = sized([100_000, 100_000, 180_000, 100_000], [20_000] * 3, [100_000] * 3)
    slow = sized([180_000] * 4, [36_000] * 3, [180_000] * 3)  # all in the slow state
    assert fast == slow == 200
    # A spin's loop a tenth quicker than the canary's: the call's ratio to it corrects it.
    assert sized([100_000] * 4, [20_000] * 3, [90_000] * 3) == 222
    assert spin_loops_for(0.0, lambda: 1, 1, lambda: 1) == 0
    # In runs of the canary's length: the same arithmetic, on integers as small.
    one_canary = sum(i * i % 7 for i in range(CANARY_LOOPS))
    assert spin(2 * CANARY_LOOPS + 3) == 2 * one_canary + sum(i * i % 7 for i in range(3))


def test_the_calls_that_size_a_spin_are_timed_as_a_sample_times_them() -> None:
    seen: list[bool] = []
    assert gc.isenabled()
    assert case_benchmark._calls_ns(lambda: seen.append(gc.isenabled()), 3) > 0
    # The sample's calls back to back, the collector off for them, then on again.
    assert seen == [False] * 3 and gc.isenabled()
    seen.clear()
    # Where the sample has its warm call, one untimed call first: 1 + 3 made.
    assert case_benchmark._calls_ns(lambda: seen.append(gc.isenabled()), 3, warm=True) > 0
    assert seen == [False] * 4 and gc.isenabled()


def test_an_injected_pair_keeps_the_plain_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Extra | None] = []

    def timer(inner_loops: int, extra: Extra | None = None) -> Callable[[], float]:
        made.append(extra)
        return timeit.default_timer

    class Dumps(CaseBenchmark):
        operation = "dumps"

    # A sample of 3 x 7 = 21 calls, whatever this machine times: at +10 %, 2.1 calls more.
    monkeypatch.setattr(case_benchmark, "inner_loops_for", lambda call_s: 3)
    monkeypatch.setattr(case_benchmark, "bodies_per_sample", lambda calls, call_s: 7)
    monkeypatch.setattr(case_benchmark, "per_call_timer", timer)
    monkeypatch.setenv(INJECT_ENV, "0.1")
    bench = Dumps()
    assert bench.prepare_for("json", "small-dict") is None
    assert (bench.inner_loops, bench.number) == (3, 7)
    (extra,) = made
    assert extra is not None and extra.calls == 2 and extra.spin_loops >= 1
    monkeypatch.setenv(INJECT_ENV, "0")  # an A/A arm: nothing added
    assert Dumps().prepare_for("json", "small-dict") is None
    assert made[1] is None


def test_the_extra_work_falls_inside_each_sample_and_is_not_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    monkeypatch.setattr(canary, "spin", lambda loops: events.append(f"spin {loops}"))
    extra = Extra(lambda: events.append("extra"), 2, spin_loops=5)
    for clock in (per_call_timer(1, extra), CanaryClock(1, keep=2, extra=extra)):
        events.clear()
        timer = timeit.Timer("events.append('body')", timer=clock, globals={"events": events})
        timer.repeat(repeat=2, number=3)
        # Made after each sample's calls, before its end is read: timed, not divided by,
        # and the sample's own calls follow what a plain sample's follow.
        assert events == ["body", "body", "body", "extra", "extra", "spin 5"] * 2


def test_an_arm_is_judged_by_compares_rule(tmp_path: Path) -> None:
    plain, slowed = tmp_path / "plain", tmp_path / "slowed"
    per_process_tree(plain, [scaled(1)] * 4, [scaled(1)] * 4)  # each arm's tree: one run
    arm = [scaled(1.2)] * 3 + [scaled(1.06)]
    per_process_tree(slowed, arm, arm)
    row = judge_arm(SAME_RUN, 0.2, read_tree(plain), read_tree(slowed), 0.10)
    assert (row.called, row.pairs) == (3, 4)  # the 6 % step is within the floor: missed
    assert row.called_test_only == 4  # the test alone sees it: five processes within 2 %
    aa = judge_arm(SAME_RUN, 0.0, read_tree(plain), read_tree(plain), 0.10)
    assert (aa.called, aa.pairs) == (0, 4)


def test_arms_are_judged_as_runs_of_one_host(tmp_path: Path) -> None:
    """Two scratch runs of one code, the whole of the second in the slow state (its samples
    and its canary 1.8x). Read alone, the second's slow canary is its own fast one, and the
    A/A calls every pair; filed as runs of this host and read together, as `serkit compare`
    reads them, its samples are slow against the host's fast canary, corrected, and agree."""
    per_run = 60
    values = [10e-6 * (1 + 0.001 * i) for i in range(per_run)]
    together, alone = tmp_path / "together", []
    for arm, factor in (("plain", 1.0), ("plain again", 1.8)):
        suite = ScratchSuite(tmp_path)
        suite.commit = "0" * 40
        run = [v * factor for v in values]
        per_process_tree(suite.results, [run] * 4, [run] * 4, hosts=("vm", "unused"))
        shutil.rmtree(suite.results / "unused")
        _note_canaries(suite.results / "vm", run, [factor] * per_run)
        alone.append(suite.tree())
        suite.file_as(together, arm_machine(arm))
    apart = judge_arm(BETWEEN_RUNS, 0.0, alone[0], alone[1], 0.07)
    assert (apart.called, apart.pairs) == (4, 4) and apart.median_ratio == pytest.approx(1.8)
    trees = read_as_one_host(together, ["plain", "plain-again"])
    assert set(trees["plain-again"].machines) == {"plain-again"}  # one arm a tree
    aa = judge_arm(BETWEEN_RUNS, 0.0, trees["plain"], trees["plain-again"], 0.07)
    assert (aa.called, aa.pairs) == (0, 4) and aa.median_ratio == pytest.approx(1.0)
    # The tree `--keep` copies: each arm a machine, for `serkit compare plain plus10`.
    assert compare(read_tree(together), "plain", "plain-again").pairs


RECORD = PowerRecord(
    measured_at="2026-11-24T20:00:00+00:00",
    slice="json x small-dict",
    pairs=4,
    processes=5,
    floor=0.1,
    called={SAME_RUN: {"0": 0.0, "0.05": 0.25, "0.1": 0.75}, BETWEEN_RUNS: {"0": 0.0, "0.1": 0.5}},
)


def test_the_record_travels_with_the_machine_and_is_said_in_words(tmp_path: Path) -> None:
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1)] * 4)
    assert power_text(read_power(tmp_path / "a")) == POWER_NOT_MEASURED
    record_power(tmp_path / "a", RECORD)
    assert read_power(tmp_path / "a") == RECORD
    words = power_text(read_power(tmp_path / "a"))
    same_run = "within one run (no floor), a change of 5% is called in 25%, of 10% in 75%"
    assert f"{same_run} of pairs; A/A 0.0%" in words
    assert "between runs (a 10% floor), a change of 10% is called in 50% of pairs" in words
    described = describe_hosts(read_tree(tmp_path))
    hosts = {row["machine"]: row for row in described}
    assert hosts["a"]["power"] == RECORD and hosts["b"]["power"] is None  # data
    shown = {row["machine"]: row for row in worded(described)}
    assert shown["a"]["power"] == words and shown["b"]["power"] == POWER_NOT_MEASURED
    result = compare(read_tree(tmp_path), "a", "b")
    assert result.power == {"a": RECORD, "b": None}  # data; words only where shown
    assert as_json(result)["power"] == {"a": words, "b": POWER_NOT_MEASURED}
    (tmp_path / "b" / "serkit-power.yaml").write_text("- not a record\n")
    warnings: list[str] = []
    assert read_power(tmp_path / "b", warnings) is None
    assert "not a serkit power record" in warnings[0]


def test_the_record_says_how_many_arms_sampled_in_the_slow_state(tmp_path: Path) -> None:
    states = {
        BETWEEN_RUNS: {
            "plain": "fast state throughout (100 samples)",
            "+10%": "slow state in 40% of 100 samples, where the canary took x1.80 its fast time",
            # Judged by the canary, but no sample slow: not an arm in the slow state.
            "plain again": "slow state in 0% of 100 samples, where the canary took x1.64 its "
            "fast time",
        }
    }
    record = dataclasses.replace(RECORD, states=states)
    record_power(tmp_path, record)
    found = read_power(tmp_path)
    assert found == record
    assert found.in_words().endswith("2026-11-24; 1 of 3 arms partly in the slow state)")
    assert "slow state" not in RECORD.in_words()  # a record from before the canary


def test_sizes_must_be_whole_extra_calls(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:  # a bad value is a usage error, as argparse's
        main(["power", "--sizes", "3"])
    assert stopped.value.code == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert line.startswith("serkit power: error: argument --sizes: give percents")
