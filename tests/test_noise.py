"""Verdicts between processes and A/A judging, on synthetic results trees with known answers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from results_factory import (
    BASELINE,
    INSTRUCTIONS,
    NEW,
    SUITE,
    per_process_tree,
    results_file,
    write_benchmarks,
    write_machine,
)

from serkit import units
from serkit.compare.comparison import compare
from serkit.compare.in_words import warnings_of
from serkit.compare.verdicts import FASTER, SLOWER, WITHIN_NOISE
from serkit.results.noise import DEFAULT_FLOOR, NoiseRecord, read_noise, record_noise
from serkit.results.tree import read_tree
from serkit.trust import noise

STEADY = [1.00, 1.01, 0.99, 1.02, 0.98]  # five processes within 2 %


def scaled(factor: float, base: list[float] = STEADY, unit: float = 1e-6) -> list[float]:
    return [v * factor * unit for v in base]


def test_the_tree_reads_one_value_per_process(tmp_path: Path) -> None:
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1)] * 4)
    tree = read_tree(tmp_path)
    (m, *_) = tree.machines["a"].measurements
    assert m.process_values == tuple(scaled(1))


def test_a_clear_change_is_called_and_says_what_it_could_detect(tmp_path: Path) -> None:
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1.5)] * 3 + [scaled(1.01)])
    result = compare(read_tree(tmp_path), "a", "b")
    verdicts = [p.verdict for p in result.pairs]
    assert verdicts == [SLOWER, SLOWER, SLOWER, WITHIN_NOISE]
    assert all(p.detectable == pytest.approx(DEFAULT_FLOOR) for p in result.pairs)
    assert any("no noise measurement" in w for w in warnings_of(result))


def test_the_hosts_measured_floor_is_used(tmp_path: Path) -> None:
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1.3)] * 4)
    for host, floor in (("a", 0.2), ("b", 0.4)):
        record = NoiseRecord("2026-11-23T09:00:00+00:00", "test", 4, 5, 0.05, floor, 0.0, 0.1)
        record_noise(tmp_path / host, record)
    result = compare(read_tree(tmp_path), "a", "b")
    assert result.floor == 0.4  # the larger of the two hosts'
    assert {p.verdict for p in result.pairs} == {WITHIN_NOISE}
    assert not any("no noise measurement" in w for w in warnings_of(result))


def test_processes_in_two_modes_are_flagged_and_judged_by_the_fastest(tmp_path: Path) -> None:
    # Two processes a side slowed 1.9x by a neighbour: the fastest modes hold the change.
    split = [1.0, 1.01, 1.9, 1.9, 0.99]
    per_process_tree(tmp_path, [scaled(1, split)] * 4, [scaled(1.2, split)] * 4)
    result = compare(read_tree(tmp_path), "a", "b")
    assert all(p.multimodal and p.verdict == SLOWER for p in result.pairs)
    # Modes of one process each are no modes to judge by: all processes, within noise.
    lone = [1.0, 1.5, 1.9, 2.5, 3.2]
    per_process_tree(tmp_path, [scaled(1, lone)] * 4, [scaled(1.2, lone)] * 4)
    result = compare(read_tree(tmp_path), "a", "b")
    assert all(p.multimodal and p.verdict == WITHIN_NOISE for p in result.pairs)
    assert all(p.detectable is not None and p.detectable > 0.2 for p in result.pairs)


def test_a_faster_host_is_faster(tmp_path: Path) -> None:
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(0.5)] * 4)
    assert {p.verdict for p in compare(read_tree(tmp_path), "a", "b").pairs} == {FASTER}


def test_a_broken_noise_record_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "serkit-noise.yaml").write_text("- not\n- a mapping\n")
    warnings: list[str] = []
    assert read_noise(tmp_path, warnings) is None
    assert "not a serkit noise record" in warnings[0]


def test_aa_judging_counts_false_verdicts_and_measures_the_floor(tmp_path: Path) -> None:
    rng = random.Random(5)

    def run() -> list[list[float]]:
        return [[rng.lognormvariate(0, 0.1) * 1e-6 for _ in range(5)] for _ in range(4)]

    per_process_tree(tmp_path / "a", run(), run(), hosts=("vm", "other"))
    per_process_tree(tmp_path / "b", run(), run(), hosts=("vm", "other"))
    result = noise.judge(read_tree(tmp_path / "a", ["vm"]), read_tree(tmp_path / "b", ["vm"]))
    assert len(result.pairs) == 4 and result.processes == 5
    assert result.false_new == 0
    assert 0 < result.floor < 1
    assert 0.02 < result.between_process_cv < 0.3
    record = result.record(noise.panel_description())
    assert record.floor == round(result.floor, 4) and record.pairs == 4
    assert "cannot be told apart" in record.in_words()


def test_the_floor_is_measured_on_the_values_verdicts_judge(tmp_path: Path) -> None:
    """Run B was timed mostly in the slow state: asv's medians read it 1.8x slower, while
    its processes, judged by the canary, agree with A's. The floor comes from the
    processes; from asv's medians only where a run kept none."""
    values = [1e-6 * (1 + 0.01 * i) for i in range(5)]
    per_process_tree(tmp_path, [values] * 4, [[v * 1.8 for v in values]] * 4)
    tree = read_tree(tmp_path)
    on_a, on_b = (tree.machines[host].measurements for host in ("a", "b"))
    judged = [noise.PairAA(a.benchmark, a.params, a, b, tuple(values), tuple(values))
              for a, b in zip(on_a, on_b)]  # fmt: skip
    assert noise.measured_floor(judged) == 0.0
    unjudged = [noise.PairAA(p.benchmark, p.params, p.a, p.b, (), ()) for p in judged]
    assert noise.measured_floor(unjudged) > 1.0  # exp(3.82 * ln 1.8) - 1


def test_aa_says_which_known_slowdowns_its_runs_could_see(tmp_path: Path) -> None:
    """Two steady runs (processes within 2 %): a +5 % under the 7 % floor is never called,
    +10 % and +20 % always, both ways round. Processes 10 % apart hide most of a +10 %."""

    def judged(a: list[list[float]], b: list[list[float]], name: str) -> noise.AAResult:
        for run, processes in (("a", a), ("b", b)):
            per_process_tree(tmp_path / name / run, processes, processes, hosts=("vm", "other"))
        trees = (read_tree(tmp_path / name / run, ["vm"]) for run in ("a", "b"))
        return noise.judge(*trees, floor=0.07)

    result = judged([STEADY] * 4, [STEADY[::-1]] * 4, "steady")
    assert [(s.size, s.called, s.judged) for s in result.seen] == [
        (0.05, 0, 8), (0.10, 8, 8), (0.20, 8, 8)
    ]  # fmt: skip
    assert "+10% called slower in 8 of 8 (100%)" in "\n".join(noise.summary_lines(result, "x"))
    rng = random.Random(3)

    def noisy() -> list[list[float]]:
        return [[rng.lognormvariate(0, 0.10) * 1e-6 for _ in range(5)] for _ in range(4)]

    seen = judged(noisy(), noisy(), "noisy").seen
    assert seen[1].judged == 8 and seen[1].called <= 4
    assert noise.as_dict(result)["known_slowdowns"][1] == {
        "size": 0.10, "called_slower": 8, "judged": 8
    }  # fmt: skip


def test_aa_says_how_many_pairs_instruction_counts_agree(tmp_path: Path) -> None:
    counts_b = {**NEW, INSTRUCTIONS["dumps"]: [281425 * 1.01, 10004626, 105425, 2485553 * 1.004]}
    for run, values in (("a", NEW), ("b", counts_b)):
        write_benchmarks(tmp_path / run, SUITE)
        write_machine(
            tmp_path / run, "vm", [results_file("vm", values, env=BASELINE, benchmarks=SUITE)]
        )
    ratios = noise.instruction_ratios(read_tree(tmp_path / "a"), read_tree(tmp_path / "b"))
    assert sorted(ratios) == pytest.approx([1.0] * 6 + [1.004, 1.01])  # 2 calls x 4 pairs
    result = noise.AAResult([], 5, 0.1, 0.05, 0, 0, 0, 0.1, "", "", instruction_ratios=ratios)
    assert result.instructions_agreeing == 7  # the 1 % one is out, the 0.4 % one within 0.5 %
    assert not result.instructions_agree  # 7 of 8 is under 95 %
    (line,) = noise.instruction_lines(result)
    assert "7 of 8 pairs within 0.5%" in line and "largest difference 1.000%" in line
    assert "DO NOT agree" in line
    steady = noise.AAResult([], 5, 0.1, 0.05, 0, 0, 0, 0.1, "", "", instruction_ratios=(1.0,) * 20)
    assert steady.instructions_agree and noise.as_dict(steady)["instructions_within"] == 20


def test_hosts_say_each_machines_noise_in_words(tmp_path: Path) -> None:
    from serkit.report.hosts_table import render_hosts
    from serkit.results.hosts import describe_hosts

    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1)] * 4)
    record = NoiseRecord("2026-11-23T09:00:00+00:00", "test", 4, 5, 0.05, 0.12, 0.0, 0.1)
    record_noise(tmp_path / "a", record)
    text = render_hosts(describe_hosts(read_tree(tmp_path)))
    assert "differences under 12% cannot be told apart here" in text
    assert "not measured (`serkit noise`)" in text  # host b


def test_the_report_shows_the_spread_between_processes_and_their_modes(tmp_path: Path) -> None:
    from serkit.report.runs import latest_runs
    from serkit.report.template_env import spread_text, spread_title

    split = [1.0, 1.0, 1.9, 1.9, 1.0]
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1, split)] * 4)
    tree = read_tree(tmp_path)
    runs = {run.machine: run for run in latest_runs(tree)}
    steady = runs["a"].spread("bench_time.Dumps.time_dumps", "json", "small")
    two_modes = runs["b"].spread("bench_time.Dumps.time_dumps", "json", "small")
    assert steady is not None and two_modes is not None
    m = runs["a"].get("bench_time.Dumps.time_dumps", "json", "small")
    assert spread_text(m, steady) == "±1.0 %, 5 processes"
    assert "5 processes, each its least sample" in spread_title(m, steady)
    assert spread_text(m, two_modes) == "5 processes in 2 modes: 1.00 µs in 3, 1.90 µs in 2"
    # On the page the note wraps between phrases, never inside "1.00 µs" or "in 3".
    assert units.unbroken(spread_text(m, two_modes)).split(" ") == [
        "5\N{NO-BREAK SPACE}processes",
        "in\N{NO-BREAK SPACE}2\N{NO-BREAK SPACE}modes:",
        "1.00\N{NO-BREAK SPACE}µs",
        "in\N{NO-BREAK SPACE}3,",
        "1.90\N{NO-BREAK SPACE}µs",
        "in\N{NO-BREAK SPACE}2",
    ]


def test_a_floor_measured_under_the_least_is_raised_and_says_so(tmp_path: Path) -> None:
    from serkit.results.noise import LEAST_FLOOR

    quiet = NoiseRecord("2026-11-23T12:45:00+00:00", "test", 24, 5, 0.013, 0.016, 0.0, 0.0)
    assert quiet.verdict_floor == LEAST_FLOOR
    assert "differences under 7% cannot be told apart" in quiet.in_words()
    assert "measured 1.6% within a minute, raised to 7%" in quiet.in_words()
    per_process_tree(tmp_path, [scaled(1)] * 4, [scaled(1.05)] * 4)  # 5 %: under the least
    record_noise(tmp_path / "a", quiet)
    record_noise(tmp_path / "b", quiet)
    result = compare(read_tree(tmp_path), "a", "b")
    assert result.floor == LEAST_FLOOR
    assert {p.verdict for p in result.pairs} == {WITHIN_NOISE}


def test_each_process_is_the_least_of_its_samples() -> None:
    from serkit.results.tree import Benchmark

    timed = Benchmark("bench_time.Dumps.time_dumps", "time", "seconds", repeat=5)
    # Two rounds of five samples (--append-samples), the second process disturbed twice.
    first, second = [1.2, 1.0, 1.1, 1.05, 1.3], [2.0, 1.02, 1.9, 1.5, 1.1]
    samples = [*first, *second]
    assert timed.per_process(samples) == (1.0, 1.02)
    assert timed.per_process([14.0]) == (14.0,)  # a pair timed once (serkit.suite.budget)
    assert Benchmark("old", "time", "seconds", repeat=1).per_process([1.0, 2.0]) == (1.0, 2.0)
    # asv's own adaptive repeat mixes processes: none can be told apart.
    assert Benchmark("x", "time", "seconds", repeat=(1, 10, 20.0)).per_process(samples) == ()
    assert Benchmark("t", "track", "bytes", repeat=5).per_process(samples) == ()
