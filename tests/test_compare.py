"""`serkit compare`: two machines' asv results, matched, judged and summarized.

Most result trees are written here, the way asv writes them (results_factory); one
test reads the output of a real, tiny `asv run`.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from results_factory import (
    COMMIT,
    ENV,
    OLDER,
    RSS,
    SIZES,
    TIMES,
    results_file,
    two_hosts,
    values,
    write_benchmarks,
    write_machine,
)

from serkit.cli import main
from serkit.compare.comparison import compare, geometric_mean
from serkit.compare.render import render
from serkit.compare.verdicts import FASTER, NO_SPREAD, SAME, SIZE_MISMATCH, SLOWER, WITHIN_NOISE
from serkit.results.tree import read_tree
from serkit.run.runner import scratch_config
from serkit.suite.cases import LIBRARY_ENV
from serkit.units import format_value

ROOT = Path(__file__).resolve().parents[1]
TIMING = "bench_time.Dumps.time_dumps"
SIZE = "bench_size.Size.track_bytes"
MEMORY = "bench_memory.Peak.track_dumps_rss"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def compare_json(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run(
        capsys, "compare", "a", "b", "--results", str(root), "--format", "json", *extra
    )
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def pairs_of(data: dict[str, Any], benchmark: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(p["params"].values()): p for p in data["pairs"] if p["benchmark"] == benchmark}


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 3  # an error, told apart from a check that found a problem (1)
    errors = [line for line in err.splitlines() if line.startswith("serkit: error:")]
    assert len(errors) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in errors[0], errors[0]


# --- matching and ratios ----------------------------------------------------------------


def test_scaling_every_time_by_k_gives_ratio_k_and_equal_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    k = 1.7
    data = compare_json(capsys, two_hosts(tmp_path, time_factor=k))
    timings = pairs_of(data, TIMING)
    assert len(timings) == 4
    for (codec, _), pair in timings.items():
        assert pair["ratio"] == pytest.approx(k)
        assert pair["b"] == pytest.approx(pair["a"] * k)
        assert pair["unit"] == "seconds" and pair["group"] == codec
    (startup,) = pairs_of(data, "bench_plain.Startup.time_startup").values()
    assert startup["ratio"] == pytest.approx(k) and startup["group"] == startup["benchmark"]
    groups = {g["group"]: g for g in data["summary"]["groups"]}
    assert set(groups) == {"json", "orjson", "bench_plain.Startup.time_startup"}
    assert all(g["geomean"] == pytest.approx(k) for g in groups.values())
    assert groups["json"]["timings"] == 2
    assert data["summary"]["overall"]["geomean"] == pytest.approx(k)
    assert data["summary"]["overall"]["timings"] == 5  # sizes are a check, not in the mean
    sizes = pairs_of(data, SIZE)
    assert [p["a"] for p in sizes.values()] == SIZES
    assert all(p["verdict"] == SAME and p["ratio"] == 1 for p in sizes.values())
    assert data["size_mismatches"] == 0


def test_environments_match_without_the_hosts_own_fields(tmp_path: Path) -> None:
    tree = read_tree(two_hosts(tmp_path))  # a and b differ in cpu, os, num_cpu and ram
    result = compare(tree, "a", "b")
    envs = {p.env for p in result.pairs}
    # A codec's values by the releases it ran with (json: the Python's own); a value of no
    # codec by its whole environment.
    assert {e.requirements for e in envs} == {
        (),
        (("orjson", "3.10.18"),),
        tuple(sorted(ENV["requirements"].items())),  # type: ignore[attr-defined]
    }
    assert all(env.python == "3.11" and env.other == () for env in envs)  # no machine.json
    assert not result.only_envs["a"] and not result.only_envs["b"]


def test_a_changed_size_is_flagged_loudly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = [*SIZES[:3], SIZES[3] + 1]
    root = two_hosts(tmp_path, b_changes={SIZE: changed, MEMORY: [r * 2 for r in RSS]})
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 1
    assert "did not run the same thing" in out and "did not run the same thing" in err
    assert "48,000 B on a, 48,001 B on b" in out
    assert out.count(SIZE_MISMATCH) == 2  # the alarm above the tables, and the row
    result = compare(read_tree(root), "a", "b")
    (mismatch,) = result.size_mismatches
    assert mismatch.params == {"codec": "orjson", "fixture": "large"}
    # Resident memory is measured, not counted: it differs, and that is no alarm.
    memory = [p for p in result.pairs if p.benchmark.name == MEMORY]
    assert memory and all(p.verdict == "differs" and p.ratio == 2 for p in memory)


ALLOCATIONS = "bench_memory.Allocations.track_dumps_allocations"
PEAK = "bench_memory.PeakMemory.track_dumps_peak"


def test_memory_counted_at_the_allocator_is_judged_exactly_and_never_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = [["'json'", "'orjson'"], ["'small'", "'large'"]]
    suite = {
        ALLOCATIONS: {"type": "track", "unit": "allocations", "grid": grid},
        PEAK: {"type": "track", "unit": "bytes", "grid": grid},
    }
    write_benchmarks(tmp_path, suite)
    a = {ALLOCATIONS: [502, 7278, 3, 1096], PEAK: [26749, 265661, 32481, 71165]}
    # b: one allocation more, one fewer; one peak 0.5 % up (the same), one 5 % down.
    b = {ALLOCATIONS: [503, 7278, 2, 1096], PEAK: [26749 * 1.005, 265661, 32481 * 0.95, 71165]}
    for host, found in (("a", a), ("b", b)):
        write_machine(tmp_path, host, [results_file(host, found, benchmarks=suite, spread=None)])
    result = compare(read_tree(tmp_path), "a", "b")
    verdicts = {
        (p.benchmark.name, p.params["codec"], p.params["fixture"]): p.verdict for p in result.pairs
    }
    assert verdicts[ALLOCATIONS, "json", "small"] == "higher"
    assert verdicts[ALLOCATIONS, "orjson", "small"] == "lower"
    assert verdicts[ALLOCATIONS, "json", "large"] == SAME
    assert verdicts[PEAK, "json", "small"] == SAME  # within 1 %
    assert verdicts[PEAK, "orjson", "small"] == "lower"
    assert not result.size_mismatches  # another Python patch release may allocate otherwise
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(tmp_path))
    assert code == 0 and "503 allocations" in out


INSTRUCTIONS = "bench_instructions.Instructions.track_dumps"


def _instruction_hosts(root: Path, b_arch: str = "x86_64") -> None:
    grid = [["'json'", "'orjson'"], ["'small'", "'large'"]]
    suite = {
        INSTRUCTIONS: {"type": "track", "unit": "instructions", "grid": grid},
        TIMING: {"type": "time", "unit": "seconds", "grid": grid},
        SIZE: {"type": "track", "unit": "bytes", "grid": grid},
    }
    write_benchmarks(root, suite)
    # Counted here (serkit.suite.instructions): json and orjson dumps of small-dict.
    a = {INSTRUCTIONS: [281_425, 10_004_626, 27_139, 659_004], TIMING: TIMES, SIZE: SIZES}
    # b: 0.005 % more (the same: two runs differ by up to 0.002 %), 2 % more, 5 % fewer.
    counted = [281_425 * 1.00005, 10_004_626 * 1.02, 27_139 * 0.95, 659_004]
    b = {INSTRUCTIONS: counted, TIMING: [t * 2 for t in TIMES], SIZE: SIZES}
    for host, found, arch in (("a", a, "x86_64"), ("b", b, b_arch)):
        profile = {"arch": arch, "cpu": "cpu", "num_cpu": "2", "os": "Linux", "ram": "8GB"}
        data = results_file(host, found, benchmarks=suite, profile=profile)
        write_machine(root, host, [data], profile)


def test_instruction_counts_are_judged_as_counts_beside_the_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _instruction_hosts(tmp_path)
    result = compare(read_tree(tmp_path), "a", "b")
    verdicts = {
        (p.benchmark.name, p.params["codec"], p.params["fixture"]): p.verdict for p in result.pairs
    }
    assert verdicts[INSTRUCTIONS, "json", "small"] == SAME  # within 0.01 %
    assert verdicts[INSTRUCTIONS, "json", "large"] == "higher"
    assert verdicts[INSTRUCTIONS, "orjson", "small"] == "lower"
    assert verdicts[INSTRUCTIONS, "orjson", "large"] == SAME
    # The counts follow the timings they explain, before the other tracks.
    order = [p.benchmark.name for p in result.pairs]
    assert order.index(INSTRUCTIONS) > max(i for i, n in enumerate(order) if n == TIMING)
    assert order.index(INSTRUCTIONS) < order.index(SIZE)
    summary = result.instruction_summary()
    assert summary.timings == 4 and summary.verdicts == {SAME: 2, "higher": 1, "lower": 1}
    every = ("--all", "--explain")
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(tmp_path), *every)
    assert code == 0 and "25,782 instructions" in out  # orjson small on b
    assert "compare work, not speed" in out and "never that one host is faster" in out
    assert "4 counts compared" in out
    data = compare_json(capsys, tmp_path)
    assert data["instructions"]["verdicts"] == {SAME: 2, "higher": 1, "lower": 1}
    assert "not speed" in data["instructions_rule"]
    # Beside each timing, its own call's count: whatever the time's verdict, the work moved.
    beside = {
        (p["params"]["codec"], p["params"]["fixture"]): p["instructions"]
        for p in data["pairs"]
        if p["benchmark"] == TIMING
    }
    assert beside["json", "large"]["verdict"] == "higher"
    assert beside["json", "small"]["verdict"] == SAME
    assert "+2.00 % (higher)" in out and "-5.00 % (lower)" in out
    from serkit.report.html import write_report

    written = write_report(tmp_path, tmp_path, tmp_path / "reports", asv_runner=None)
    hosts = (written.folder / "hosts.html").read_text()
    assert "the count still says whether the work moved" in hosts
    assert "+2.00 % (higher)" in hosts


def test_instruction_counts_of_different_architectures_are_not_compared(tmp_path: Path) -> None:
    _instruction_hosts(tmp_path, b_arch="aarch64")
    result = compare(read_tree(tmp_path), "a", "b")
    assert not [p for p in result.pairs if p.benchmark.name == INSTRUCTIONS]
    left_out = [v for v in result.not_comparable if v.benchmark == INSTRUCTIONS]
    assert len(left_out) == 4
    assert all("different architectures" in v.reason and "aarch64" in v.reason for v in left_out)
    assert [p for p in result.pairs if p.benchmark.name == TIMING]  # the times still are


def test_one_sided_benchmarks_environments_and_values_get_no_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_benchmarks(tmp_path)
    write_machine(tmp_path, "a", [results_file("a", values())])
    b_values = values()
    b_values[TIMING] = [None, *TIMES[1:]]  # (json, small) skipped on b
    b_values["bench_extra.New.time_new"] = [1e-3]  # a benchmark only b has
    other_env = {"python": "3.12", "requirements": ENV["requirements"]}
    b_files = [results_file("b", b_values), results_file("b", values(), env=other_env)]
    write_machine(tmp_path, "b", b_files)
    data = compare_json(capsys, tmp_path)
    assert data["only_b"]["benchmarks"] == ["bench_extra.New.time_new"]
    assert {e["python"] for e in data["only_b"]["environments"]} == {"3.12"}
    (only_a,) = data["only_a"]["values"]
    assert only_a["benchmark"] == TIMING and only_a["params"] == {
        "codec": "json",
        "fixture": "small",
    }
    assert only_a["value"] == TIMES[0] and "ratio" not in only_a
    compared = {(p["benchmark"], tuple(p["params"].values())) for p in data["pairs"]}
    assert (TIMING, ("json", "small")) not in compared
    assert not any(p["benchmark"] == "bench_extra.New.time_new" for p in data["pairs"])
    assert {p["env"]["python"] for p in data["pairs"]} == {"3.11"}
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(tmp_path), "--all")
    assert code == 0
    # json, orjson 3.10.18, and the benchmark of no codec: each as it ran on Python 3.12.
    assert "Environments only b ran (3), not compared" in out
    assert "Benchmarks only b ran (1), not compared" in out
    assert "Measured only on a (1)" in out


# --- noise ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factor", "spread", "verdict"),
    [
        (1.02, 0.05, WITHIN_NOISE),  # 2 % apart, 99 % CIs of +-5 %: they overlap
        (0.5, 0.05, FASTER),
        (1.5, 0.05, SLOWER),
        (1.15, 0.10, WITHIN_NOISE),  # +-10 % each side: 1.035 overlaps 1.1
        (2.0, 0.40, WITHIN_NOISE),  # twice as slow, but noisier still: never called slower
        (0.6, 0.25, WITHIN_NOISE),  # 40 % faster, within +-25 % each: never called faster
        (1.5, None, NO_SPREAD),  # no statistics recorded: no verdict on the difference
    ],
)
def test_noise_marking(tmp_path: Path, factor: float, spread: float | None, verdict: str) -> None:
    write_benchmarks(tmp_path)
    write_machine(tmp_path, "a", [results_file("a", values(), spread=spread)])
    write_machine(tmp_path, "b", [results_file("b", values(factor), spread=spread)])
    result = compare(read_tree(tmp_path), "a", "b")
    timings = [p for p in result.pairs if p.benchmark.kind == "time"]
    assert timings and {p.verdict for p in timings} == {verdict}
    _, overall = result.summary()
    assert overall.verdicts == {verdict: len(timings)}


def test_interquartile_ranges_judge_where_one_host_recorded_no_confidence_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path, time_factor=1.04)
    (path,) = (root / "b").glob("*-env-*.json")  # drop b's CIs, keep its IQRs of +-2.5 %
    data = json.loads(path.read_text())
    for row in data["results"].values():
        if len(row) > 6:
            row[5] = row[6] = None
    path.write_text(json.dumps(data))
    result = compare(read_tree(root), "a", "b")
    timings = [p for p in result.pairs if p.benchmark.kind == "time"]
    # 1.04 against 1.0 with +-2.5 %: 1.014 lies below 1.025, so the IQRs overlap, and
    # a's CI is not set against b's IQR.
    assert timings and all(p.verdict == WITHIN_NOISE for p in timings)
    assert all(p.a.ci_99 is not None and p.b.ci_99 is None for p in timings)
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root), "--all")
    row = next(line for line in out.splitlines() if "orjson, large" in line and TIMING in line)
    assert code == 0 and "97.5 µs to 102 µs (IQR)" in row and "101 µs to 107 µs (IQR)" in row


# --- commits ---------------------------------------------------------------------------------


def test_newest_commit_on_both_sides_is_used_unless_one_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_benchmarks(tmp_path)
    old, new = 1_600_000_000_000, 1_700_000_000_000
    a_files = [
        results_file("a", values(), commit=OLDER, date=old),
        results_file("a", values(2.0), commit=COMMIT, date=new),
    ]
    b_files = [results_file("b", values(3.0), commit=OLDER, date=old)]
    write_machine(tmp_path, "a", a_files)
    write_machine(tmp_path, "b", b_files)
    data = compare_json(capsys, tmp_path)
    assert {p["commit"] for p in data["pairs"]} == {OLDER}  # b has not run the newer one
    assert data["summary"]["overall"]["geomean"] == pytest.approx(3.0)
    write_machine(
        tmp_path, "b", [*b_files, results_file("b", values(3.0), commit=COMMIT, date=new)]
    )
    data = compare_json(capsys, tmp_path)
    assert {p["commit"] for p in data["pairs"]} == {COMMIT}
    assert data["summary"]["overall"]["geomean"] == pytest.approx(1.5)
    data = compare_json(capsys, tmp_path, "--commit", OLDER[:6])
    assert data["commit"] == OLDER and {p["commit"] for p in data["pairs"]} == {OLDER}
    assert data["summary"]["overall"]["geomean"] == pytest.approx(3.0)


def test_an_unknown_or_ambiguous_commit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_benchmarks(tmp_path)
    twins = ["abc1" + "0" * 36, "abc2" + "0" * 36]
    for host in ("a", "b"):
        write_machine(tmp_path, host, [results_file(host, values(), commit=c) for c in twins])
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(tmp_path), "--commit", "abc")
    assert_one_line_error(code, err, "ambiguous", "abc10000", "abc20000")
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(tmp_path), "--commit", "fff")
    assert_one_line_error(code, err, "no results for commit fff", "abc10000")


# --- output ----------------------------------------------------------------------------------


def test_json_output_is_documented_and_stable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = compare_json(capsys, two_hosts(tmp_path, time_factor=2.0))
    assert data["schema"] == "serkit-compare/4"
    assert {
        "machine_a",
        "machine_b",
        "commit",
        "commit_rule",
        "noise_rule",
        "pairs",
        "summary",
    } <= set(data)
    assert {"size_mismatches", "only_a", "only_b", "not_comparable", "warnings"} <= set(data)
    pair = pairs_of(data, TIMING)["orjson", "small"]
    assert set(pair) == {
        *("benchmark", "params", "env", "commit", "kind", "unit", "a", "b", "ratio"),
        *("a_spread", "b_spread", "verdict", "detectable", "multimodal", "group"),
        "instructions",  # the same call's count on both hosts, or null where not counted
        "cycles",  # likewise its estimated cycles
        "disagreement",  # where time and cycles disagree about a change, why; else null
    }
    assert pair["instructions"] is None and pair["cycles"] is None
    assert pair["disagreement"] is None
    # Matched by what orjson ran with, not by the rest its environment installed.
    assert pair["env"] == {"python": "3.11", "requirements": {"orjson": "3.10.18"}, "env_vars": {}}
    assert pair["a"] == TIMES[2] and pair["b"] == 2 * TIMES[2]
    assert pair["a_spread"]["ci_99"] == pytest.approx([TIMES[2] * 0.95, TIMES[2] * 1.05])
    assert pair["a_spread"]["iqr"] == pytest.approx([TIMES[2] * 0.975, TIMES[2] * 1.025])
    assert pair["verdict"] == SLOWER
    assert set(data["only_a"]) == {"environments", "benchmarks", "values"}
    assert set(data["summary"]) == {"groups", "overall"}
    assert set(data["summary"]["overall"]) == {"group", "timings", "geomean", "verdicts"}


def test_table_and_markdown_show_units_spreads_and_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path, time_factor=2.0)
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root), "--all", "--explain")
    assert code == 0
    assert "A = a, B = b" in out and "within noise when the 99% confidence intervals" in out
    row = next(
        line for line in out.splitlines() if "orjson, large" in line and "time_dumps" in line
    )
    assert "100 µs" in row and "200 µs" in row and "95.0 µs to 105 µs" in row
    assert "2.000" in row and SLOWER in row
    size_row = next(line for line in out.splitlines() if "json, large" in line and SIZE in line)
    assert "50.8 KiB" in size_row and SAME in size_row
    assert "geometric mean of B/A" in out and "overall" in out
    markdown = ("--format", "markdown", "--all")
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root), *markdown)
    assert code == 0
    assert "### py3.11, orjson 3.10.18, ujson 5.10.0 (commit 12345678)" in out
    assert "| bench_time.Dumps.time_dumps" in out


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (1.234e-6, "seconds", "1.23 µs"),
        (460e-9, "seconds", "460 ns"),
        (0.0123, "seconds", "12.3 ms"),
        (2.5, "seconds", "2.50 s"),
        (921, "bytes", "921 B"),
        (52003, "bytes", "50.8 KiB"),
        (3_223_269, "bytes", "3.07 MiB"),
        (1, "1 = compiled, 0 = pure Python", "1"),
        (109008.0, "allocations", "109,008 allocations"),
        (293241.2, "instructions", "293,241 instructions"),
        (None, "seconds", "-"),
    ],
)
def test_values_are_shown_in_their_units(value: float | None, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


def test_geometric_mean() -> None:
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert geometric_mean([]) is None


# --- bad input -----------------------------------------------------------------------------


def test_a_truncated_results_file_is_skipped_with_a_warning_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    good = results_file("b", values(), commit=OLDER, date=1)
    write_machine(
        root, "a", [results_file("a", values()), results_file("a", values(), commit=OLDER, date=1)]
    )
    write_machine(root, "b", [results_file("b", values()), good])
    (broken,) = (root / "b").glob(f"{COMMIT[:8]}-*.json")
    broken.write_text(broken.read_text()[:300])
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(root), "--format", "json")
    assert code == 0
    assert f"serkit: warning: skipped {broken}: not valid JSON" in err
    assert {p["commit"] for p in json.loads(out)["pairs"]} == {OLDER}  # the rest still compared


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (
            '{"version": 1, "results": {}}',
            "not an asv results file of version 2 (version: 1); `asv update`",
        ),
        ("[1, 2, 3]", "not an asv results file of version 2"),
        ('{"version": 2, "results": {}}', "not an asv results file: no commit_hash"),
        ("\x00\x01garbage", "not valid JSON"),
    ],
)
def test_a_foreign_file_is_skipped_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str
) -> None:
    root = two_hosts(tmp_path)
    foreign = root / "b" / "0badf00d-foreign.json"
    foreign.write_text(content)
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 0
    assert f"skipped {foreign}: {why}" in err


def test_results_filed_under_the_wrong_machine_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    stray = root / "b" / "0badf00d-stray.json"
    stray.write_text(json.dumps(results_file("a", values(5.0))))
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 0 and "holds results of machine 'a', not 'b'" in err


def test_a_machine_whose_only_results_are_broken_has_nothing_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    (only,) = (root / "b").glob("*-env-*.json")
    only.write_text(only.read_text()[:-40])
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(root))
    assert "serkit: warning: skipped" in err
    assert_one_line_error(code, err, "machine b has no readable results")


def test_a_machine_with_no_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_hosts(tmp_path)
    write_machine(root, "empty")
    code, _, err = run(capsys, "compare", "a", "empty", "--results", str(root))
    assert_one_line_error(code, err, "machine empty has no readable results")


def test_an_unknown_machine_lists_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_hosts(tmp_path)
    code, _, err = run(capsys, "compare", "a", "c", "--results", str(root))
    assert_one_line_error(code, err, "no machine 'c'", "known: a, b")


def test_no_results_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(tmp_path / "nowhere"))
    assert_one_line_error(code, err, "no asv results in", "nowhere")


def test_hosts_without_a_common_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_benchmarks(tmp_path)
    write_machine(tmp_path, "a", [results_file("a", values())])
    other = {"python": "3.12", "requirements": {"orjson": "3.13.0", "ujson": "5.10.0"}}
    write_machine(tmp_path, "b", [results_file("b", values(), env=other)])
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(tmp_path))
    assert_one_line_error(code, err, "share no environment", "orjson 3.10.18", "orjson 3.13.0")
    assert out == ""


def test_a_codec_pairs_wherever_it_ran_with_the_same_releases(tmp_path: Path) -> None:
    """A quick run's environment of every newest release on a, the matrix's environments of
    one library release on b: json pairs on the Python alone, orjson on its release; the
    other orjson release on b is b's alone; the values each matrix environment skipped
    (another library's codecs) are no environment of their own."""
    write_benchmarks(tmp_path)
    newest = {"python": "3.11", "requirements": {"orjson": "3.13.0", "ujson": "5.10.0"}}
    write_machine(tmp_path, "a", [results_file("a", values(), env=newest)])
    stdlib = {"python": "3.11", "requirements": {}, "env_vars": {LIBRARY_ENV: "stdlib"}}
    orjson = {"python": "3.11", "requirements": {"orjson": "3.13.0"}}
    older = {"python": "3.11", "requirements": {"orjson": "3.12.0"}}
    only_json, only_orjson = values(), values()
    for name in (TIMING, SIZE):  # (json, small), (json, large), (orjson, small), ...
        only_json[name] = [*only_json[name][:2], None, None]
        only_orjson[name] = [None, None, *only_orjson[name][2:]]
    files = [
        results_file("b", only_json, env=stdlib),
        results_file("b", only_orjson, env={**orjson, "env_vars": {LIBRARY_ENV: "orjson"}}),
        results_file("b", only_orjson, env={**older, "env_vars": {LIBRARY_ENV: "orjson"}}),
    ]
    write_machine(tmp_path, "b", files)
    result = compare(read_tree(tmp_path), "a", "b")
    paired = {(p.benchmark.name, p.params["codec"], p.env.label) for p in result.pairs}
    assert {(TIMING, "json", "py3.11"), (TIMING, "orjson", "py3.11, orjson 3.13.0")} <= paired
    only_b = [e.label for e in result.only_envs["b"]]
    assert "py3.11, orjson 3.12.0" in only_b and "py3.11, orjson 3.13.0" not in only_b
    assert not result.only_envs["a"] or all("ujson" in e.label for e in result.only_envs["a"])


def test_changed_benchmark_code_is_not_compared(tmp_path: Path) -> None:
    root = two_hosts(tmp_path, time_factor=2.0)
    (path,) = (root / "b").glob("*-env-*.json")
    data = json.loads(path.read_text())
    data["results"][TIMING][2] = "another-code-hash"
    path.write_text(json.dumps(data))
    result = compare(read_tree(root), "a", "b")
    assert not [p for p in result.pairs if p.benchmark.name == TIMING]
    assert len(result.not_comparable) == 4
    assert all("code differs" in entry.reason for entry in result.not_comparable)


@pytest.mark.parametrize(
    ("content", "warning"),
    [(None, "is not described in"), ("{ truncated", "benchmarks.json: not valid JSON")],
)
def test_without_benchmarks_json_units_come_from_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, warning: str
) -> None:
    root = two_hosts(tmp_path, time_factor=2.0)
    if content is None:
        (root / "benchmarks.json").unlink()
    else:
        (root / "benchmarks.json").write_text(content)
    data = compare_json(capsys, root)
    pair = pairs_of(data, "bench_time.Dumps.time_dumps")["orjson", "small"]
    assert pair["unit"] == "seconds" and pair["ratio"] == pytest.approx(2.0)
    assert set(pair["params"]) == {"param1", "param2"}  # asv's own names, when none are known
    assert any(warning in w for w in data["warnings"])


# --- real asv output -------------------------------------------------------------------------

TINY_SUITE = """
class Work:
    params = (["a", "bb", "skip"],)
    param_names = ("codec",)

    def setup(self, codec):
        if codec == "skip":
            raise NotImplementedError  # asv records a NaN

    def time_sum(self, codec):
        sum(range(200))

    def track_bytes(self, codec):
        return len(codec) * 10

    track_bytes.unit = "bytes"
"""


@pytest.mark.slow
def test_reads_the_results_of_a_real_asv_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tiny suite, not serkit's, run by asv in this interpreter; its machine folder is
    then copied as a second host with every timing doubled."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_work.py").write_text(TINY_SUITE)
    config_path = scratch_config(ROOT, tmp_path)  # this checkout's commits, this interpreter
    config = json.loads(config_path.read_text())
    config_path.write_text(json.dumps({**config, "benchmark_dir": str(suite)}))
    env = {**os.environ, "HOME": str(tmp_path)}  # not the user's asv machine profile
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    asv = [sys.executable, "-m", "asv"]
    for args in (
        ["machine", "--yes", "--machine", "real-a"],
        [
            *("run", "--config", str(config_path)),
            *("-E", f"existing:{sys.executable}", "--set-commit-hash", commit),
            *("--machine", "real-a", "-a", "rounds=1", "-a", "repeat=3"),
        ],
    ):
        done = subprocess.run(asv + args, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = tmp_path / "results"
    (produced,) = (results / "real-a").glob(f"{commit[:8]}-*.json")
    assert "NaN" in produced.read_text()  # the skipped parameter, as asv writes it
    shutil.copytree(results / "real-a", results / "real-b")
    copy = results / "real-b" / produced.name
    data = json.loads(copy.read_text())
    data["params"]["machine"] = "real-b"
    columns = data["result_columns"]
    for name, row in data["results"].items():
        if ".time_" in name:
            for column in ("result", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75"):
                i = columns.index(column)
                row[i] = [None if v is None or math.isnan(v) else 2 * v for v in row[i]]
    copy.write_text(json.dumps(data))
    machine = json.loads((results / "real-b" / "machine.json").read_text())
    (results / "real-b" / "machine.json").write_text(json.dumps({**machine, "machine": "real-b"}))

    code, out, err = run(
        capsys, "compare", "real-a", "real-b", "--results", str(results), "--format", "json"
    )
    assert code == 0, err
    report = json.loads(out)
    timings = {
        p["params"]["codec"]: p
        for p in report["pairs"]
        if p["benchmark"] == "bench_work.Work.time_sum"
    }
    assert set(timings) == {"a", "bb"}  # "skip" was NaN on both: nothing to compare
    assert all(
        p["ratio"] == pytest.approx(2.0) and p["unit"] == "seconds" for p in timings.values()
    )
    assert all(p["a_spread"]["ci_99"] is not None for p in timings.values())
    sizes = {
        p["params"]["codec"]: p
        for p in report["pairs"]
        if p["benchmark"] == "bench_work.Work.track_bytes"
    }
    assert {c: (p["a"], p["b"], p["verdict"]) for c, p in sizes.items()} == {
        "a": (10, 10, SAME),
        "bb": (20, 20, SAME),
    }
    assert report["summary"]["overall"]["geomean"] == pytest.approx(2.0)
    assert report["pairs"][0]["env"]["python"] == sys.executable


def test_a_timing_from_a_single_process_gets_no_verdict_and_no_spread(tmp_path: Path) -> None:
    from results_factory import per_process_tree

    from serkit.compare.verdicts import SAME, SINGLE_SAMPLE

    steady = [1.00e-6, 1.01e-6, 0.99e-6, 1.02e-6, 0.98e-6]
    # A pair over the quick run's budget on host b: timed once, in one process.
    per_process_tree(tmp_path, [steady] * 4, [[3.0e-6]] + [steady] * 3)
    result = compare(read_tree(tmp_path), "a", "b")
    assert [p.verdict for p in result.pairs] == [SINGLE_SAMPLE] + [SAME] * 3  # equal medians
    assert result.pairs[0].detectable is None and result.pairs[0].ratio == pytest.approx(3.0)
    table = render(result, every=True)
    assert "single sample (1 process)" in table and "inf" not in table


def test_a_codecs_values_pair_by_what_its_run_recorded_it_ran_with(tmp_path: Path) -> None:
    """Host a ran every library in one environment, host b an environment of one library
    and what its codec needs beside it. Their files say what the codec ran with, so its
    values pair by those releases, whatever the codecs of the serkit reading them (here
    it knows no such codec); without that record, each stays in its own environment."""
    from results_factory import results_file, write_benchmarks, write_machine

    from serkit.compare.comparison import NothingToCompare
    from serkit.results.asv_file import CODECS_KEY

    name = "bench_time.Dumps.time_dumps"
    suite = {name: {"type": "time", "unit": "seconds", "grid": [["'fastjson-x'"], ["'tiny'"]]}}
    every = {"python": "3.11", "requirements": {"fastjson": "1.0", "simd": "2.0", "other": "3"}}
    alone = {
        "python": "3.11",
        "requirements": {"fastjson": "1.0", "simd": "2.0"},
        "env_vars": {LIBRARY_ENV: "fastjson"},
    }
    for recorded in (True, False):
        root = tmp_path / str(recorded)
        write_benchmarks(root, suite)
        for machine, env in (("a", every), ("b", alone)):
            data = results_file(machine, {name: [1e-6]}, env=env, benchmarks=suite)
            if recorded:
                data[CODECS_KEY] = {"fastjson-x": ["fastjson", "simd"]}
            write_machine(root, machine, [data])
        if recorded:
            (pair,) = compare(read_tree(root), "a", "b").pairs
            assert pair.env.requirements == (("fastjson", "1.0"), ("simd", "2.0"))
            assert pair.env.env_vars == ()
        else:
            with pytest.raises(NothingToCompare, match="share no environment"):
                compare(read_tree(root), "a", "b")
