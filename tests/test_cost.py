"""serkit/run/cost.py: the matrix's time from the durations asv recorded."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from results_factory import results_file, write_benchmarks, write_results

from serkit.cli import main
from serkit.run.cost import (
    ASV_RUN_S,
    BUILD_S,
    CALLS_PER_PROCESS,
    FIRST_ROUND_RUNS,
    PAIR_FLOOR_S,
    SHARD_BUDGET_S,
    Estimate,
    estimate,
    fewest_shards,
    grid_pairs,
    leave_out,
    read_costs,
    read_durations,
    read_predictions,
    runner_costs,
)
from serkit.run.matrix import MatrixEnvironment
from serkit.run.precision import processes_for
from serkit.run.quick import FULL_BUDGET_S, over_budget
from serkit.run.releases import Library, Release, Releases, load
from serkit.run.sentinel import sentinel_pairs
from serkit.run.weekly_cost import stdlib_timed_pairs, weekly_costs
from serkit.suite.cases import FULL_ROUNDS, LIBRARY_ENV, TYPICAL_PROCESSES, precision_needed

GRID = [["'json'", "'ujson'"], ["'small-dict'"]]
TIMED = "bench_time.Dumps.time_dumps"
TRACK = "bench_size.EncodedSize.track_bytes"
IMPORT = "bench_import.ImportTime.timeraw_import"
SUITE = {
    # one sample per process, as serkit's timed benchmarks keep them
    TIMED: {"type": "time", "unit": "seconds", "grid": GRID, "repeat": 1},
    TRACK: {"type": "track", "unit": "bytes", "grid": GRID},
    IMPORT: {"type": "time", "unit": "seconds", "grid": [["'ujson'"]], "repeat": 0},
}


def _env(python: str, library: str, version: str | None) -> dict[str, Any]:
    requirements = {library: version} if version else {}
    return {"python": python, "requirements": requirements, "env_vars": {LIBRARY_ENV: library}}


def _file(python: str, library: str, version: str | None, processes: int) -> dict[str, Any]:
    """A results file whose timed pairs took `processes` processes; every row's duration
    (asv's, of its last run) is 1.5 s."""
    samples = {TIMED: [[1e-6] * processes, [2e-6] * processes]}
    data = results_file(
        "box",
        {TIMED: [1e-6, 2e-6], TRACK: [10, 20], IMPORT: [0.01]},
        env=_env(python, library, version),
        benchmarks=SUITE,
        samples=samples,
    )
    data["env_name"] = f"virtualenv-py{python}-{library}{version or ''}"
    return data


def _tree(root: Path, files: list[dict[str, Any]]) -> Path:
    write_benchmarks(root, SUITE)
    described = json.loads((root / "benchmarks.json").read_text())
    described[IMPORT]["rounds"] = 2  # asv's attribute: import time runs in two rounds
    (root / "benchmarks.json").write_text(json.dumps(described))
    write_results(root, "box", files)
    return root


def test_a_benchmark_costs_its_duration_times_its_processes(tmp_path: Path) -> None:
    data = _file("3.12", "ujson", "6.1.0", processes=10)
    data["durations"] = {"<setup_cache bench_instructions:20>": 7.0}  # counted once
    root = _tree(tmp_path / "results", [data])
    (m,) = read_costs(root)[0]
    # timed: 1.5 s x 10 processes; track: 1.5 s once; import: 1.5 s x its 2 rounds
    assert m.benchmarks_s == pytest.approx(1.5 * 10 + 1.5 + 1.5 * 2 + 7.0)
    assert m.processes == 10
    runs = FIRST_ROUND_RUNS + 9  # the first round's parts, then one asv run a round
    assert m.total_s() == pytest.approx(m.benchmarks_s + runs * ASV_RUN_S + BUILD_S)
    # From a shorter run, a longer one: the timed pairs' one-process cost times 20.
    runs = FIRST_ROUND_RUNS + 19
    assert m.total_s(20) == pytest.approx(1.5 * 20 + 1.5 + 3 + 7 + runs * ASV_RUN_S + BUILD_S)
    assert (m.library, m.version, m.python) == ("ujson", "6.1.0", "3.12")


def test_a_timed_processs_wait_for_the_fast_state_is_not_priced_as_its_cost(
    tmp_path: Path,
) -> None:
    """Waiting happens inside the durations asv records of a timed process: the model
    takes it out of the timed pairs' cost in proportion to what the run recorded."""
    from serkit.results.asv_runs import RUNS_KEY

    data = _file("3.12", "ujson", "6.1.0", processes=10)
    # A fifth of what asv recorded over the run's two asv runs was waiting.
    data[RUNS_KEY] = [
        {"wall_s": 12.0, "recorded_s": 10.0, "build_s": 0.0, "waited_s": 3.0},
        {"wall_s": 12.0, "recorded_s": 10.0, "build_s": 0.0, "waited_s": 1.0},
    ]
    (m,) = read_costs(_tree(tmp_path / "results", [data]))[0]
    assert m.per_process_s == pytest.approx(1.5 * 0.8)
    assert m.benchmarks_s == pytest.approx(1.5 * 0.8 * 10 + 1.5 + 1.5 * 2)


def test_a_broken_results_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    root = _tree(tmp_path / "results", [_file("3.12", "ujson", "6.1.0", processes=5)])
    (root / "box" / "12345678-broken.json").write_text("{")
    found, warnings = read_costs(root)
    assert len(found) == 1 and len(warnings) == 1 and "12345678-broken.json" in warnings[0]


def test_an_environment_not_measured_borrows_from_the_nearest_measured(tmp_path: Path) -> None:
    files = [
        _file("3.12", "ujson", "6.1.0", processes=10),
        _file("3.11", "ujson", "6.1.0", processes=5),
        _file("3.12", "ujson", "5.10.0", processes=2),
    ]
    measured, _ = read_costs(_tree(tmp_path / "results", files))
    wanted = [
        MatrixEnvironment.of("3.12", "ujson", "6.1.0"),
        MatrixEnvironment.of("3.13", "ujson", "6.1.0"),  # nearest Python with 6.1.0: 3.12
        MatrixEnvironment.of("3.14t", "ujson", "6.1.0"),
        MatrixEnvironment.of("3.12", "ujson", "6.0.0"),  # another release, same Python
        MatrixEnvironment.of("3.12", "orjson", "3.13.0"),
    ]
    found = {e.env.label: (e.source, e.seconds) for e in estimate(wanted, measured)}
    by_python = {m.python + (m.version or ""): m.total_s() for m in measured}
    assert found["py3.12 ujson 6.1.0"] == ("measured", by_python["3.126.1.0"])
    assert found["py3.13 ujson 6.1.0"] == ("from py3.12", by_python["3.126.1.0"])
    assert found["py3.14t ujson 6.1.0"][0] == "from py3.12"
    assert found["py3.12 ujson 6.0.0"][0] in ("from 6.1.0", "from 5.10.0")
    assert found["py3.12 orjson 3.13.0"] == ("not measured", None)


def _matrix(libraries: int) -> Releases:
    everywhere = {p: ("3.12", "3.13") for p in ("linux-x86_64", "linux-aarch64", "macos-arm64")}
    return Releases(
        ("3.12", "3.13"),
        3,
        tuple(
            Library(f"lib{i}", (Release("1.0", None, everywhere),), "1.0") for i in range(libraries)
        ),
    )


def test_the_shard_count_is_the_fewest_that_keeps_every_shard_within_budget(
    tmp_path: Path,
) -> None:
    # One measured environment of lib0, borrowed by every lib0 environment: 2 Pythons.
    files = [_file("3.12", "lib0", "1.0", processes=10)]
    measured, _ = read_costs(_tree(tmp_path / "results", files))
    kinds = runner_costs(_matrix(1), measured)
    one = measured[0].total_s()
    assert all(kind.total_s == pytest.approx(2 * one) for kind in kinds)
    assert [len(kind.shards) for kind in kinds] == [1, 1, 1]  # far below the budget
    # Twelve environments of an hour each: 12 h, in shards of at most 5 h, is 3 shards.
    hours = [Estimate(MatrixEnvironment.of("3.12", f"l{i}", "1"), 3600.0, "") for i in range(12)]
    assert SHARD_BUDGET_S == 5 * 3600 and fewest_shards([hours]) == 3


def test_the_cost_command_prints_each_runner_kind_and_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [_file("3.12", "ujson", "6.1.0", processes=10)]
    root = _tree(tmp_path / "results", files)
    # --every-pair: no codec predicted here (the pairs left out have tests of their own).
    assert main(["matrix", "--cost", "--results", str(root), "--shards", "2", "--every-pair"]) == 0
    out = capsys.readouterr().out
    for runner in ("ubuntu-latest", "ubuntu-24.04-arm", "macos-14"):
        assert f"{runner}" in out
    assert "1/2" in out and "2/2" in out
    json_out = ["--format", "json", "--every-pair"]
    assert main(["matrix", "--cost", "--results", str(root), *json_out]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [k["runner"] for k in data["runner_kinds"]] == [
        "ubuntu-latest",
        "ubuntu-24.04-arm",
        "macos-14",
    ]


def test_without_matrix_results_the_cost_command_says_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results").mkdir()
    assert main(["matrix", "--cost", "--results", str(tmp_path / "results")]) == 3
    assert "run `serkit bench --matrix`" in capsys.readouterr().err


# A durations table as `--durations` reads it: pinned, so the weekly figures are checked.
PINNED = {
    "machine": "pinned",
    "environments": [
        {"python": "3.12", "library": "stdlib", "version": None, "per_process_s": 36.0,
         "other_s": 200.0, "processes": 2},
        {"python": "3.12", "library": "lib0", "version": "1.0", "per_process_s": 10.0,
         "other_s": 100.0, "processes": 2},
        {"python": "3.12", "library": "lib1", "version": "1.0", "per_process_s": 400.0,
         "other_s": 300.0, "processes": 2},
    ],
}  # fmt: skip


def _pinned(tmp_path: Path) -> Path:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps(PINNED))
    return path


def test_a_weekly_run_costs_one_library_release_and_the_sentinel(tmp_path: Path) -> None:
    measured = read_durations(_pinned(tmp_path))
    kinds = weekly_costs(_matrix(2), measured, processes=10)
    runs = FIRST_ROUND_RUNS + 9
    # lib0's new release: its environment on 3.12 (measured) and on 3.13 (borrowed).
    lib0 = 10.0 * 10 + 100.0 + runs * ASV_RUN_S + BUILD_S
    # The sentinel: its 12 pairs' share of the standard library's dumps and loads pairs.
    share = len(sentinel_pairs()) / stdlib_timed_pairs()
    assert 0 < share < 1
    sentinel = 36.0 * share * 10 + runs * ASV_RUN_S + BUILD_S
    for kind in kinds:
        assert [len(kind.new_release[lib]) for lib in ("lib0", "lib1")] == [2, 2]
        assert kind.release_s("lib0") == pytest.approx(2 * lib0)
        assert kind.sentinel.seconds == pytest.approx(sentinel)
        assert kind.week_s("lib0") == pytest.approx(2 * lib0 + sentinel)
        assert kind.costliest == "lib1"
        # A full re-measure: both Pythons' standard-library and both libraries' environments.
        whole = 2 * (lib0 + 400.0 * 10 + 300.0 + 2 * (runs * ASV_RUN_S + BUILD_S))
        whole += 2 * (36.0 * 10 + 200.0)
        assert kind.full_s == pytest.approx(whole)


def test_the_weekly_command_prints_each_library_against_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import serkit.cli.cost

    monkeypatch.setattr(serkit.cli.cost, "load", lambda: _matrix(2))
    path = str(_pinned(tmp_path))
    assert main(["matrix", "--cost", "--schedule", "weekly", "--durations", path]) == 0
    out = capsys.readouterr().out
    runs = FIRST_ROUND_RUNS + 9
    lib0 = 2 * (10.0 * 10 + 100.0 + runs * ASV_RUN_S + BUILD_S)
    assert f"{lib0 / 3600:.1f} h" in out
    # lib1: 2 x (4,000 + 300 + its runs) s, over the 2 h target; lib0 within it.
    assert "a week with a new release of lib0. Over it: lib1." in out
    assert main(["matrix", "--cost", "--schedule", "weekly", "--durations", path, "--format",
                 "json"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["sentinel"]["pairs"] == len(sentinel_pairs())
    assert data["runner_kinds"][0]["new_release"]["lib0"]["seconds"] == pytest.approx(lib0, 0.01)


def test_a_durations_table_that_is_not_one_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"environments": [{"python": "3.12"}]}))
    assert main(["matrix", "--cost", "--durations", str(path)]) == 3
    assert "not a durations table" in capsys.readouterr().err


def test_the_saved_table_of_the_measured_run_reads_as_its_ten_environments() -> None:
    table = Path(__file__).parent.parent / "docs" / "cost-durations-2026-11-25.json"
    measured = read_durations(table)
    assert len(measured) == 10 and {m.python for m in measured} == {"3.11"}
    pyyaml = next(m for m in measured if m.library == "pyyaml")
    assert round(pyyaml.total_s(10)) == 4553  # docs/cost.md's table, 10 processes a pair


def test_each_pair_gets_the_processes_its_spread_needs(tmp_path: Path) -> None:
    # Ten processes each: a slow pair whose processes agree within about 0.5 %, a fast
    # one whose processes spread about 5 % (as microsecond calls do on a shared VM).
    steady = [2e-3 * (1 + 0.005 * (i % 5 - 2)) for i in range(10)]
    spread = [1e-6 * (1 + 0.05 * (i % 5 - 2)) for i in range(10)]
    data = _file("3.12", "ujson", "6.1.0", processes=10)
    timed = results_file(
        "box",
        {TIMED: [steady[0], spread[0]]},
        env=_env("3.12", "ujson", "6.1.0"),
        benchmarks=SUITE,
        samples={TIMED: [steady, spread]},
    )
    data["results"][TIMED] = timed["results"][TIMED]  # the timed row, with these samples
    (m,) = read_costs(_tree(tmp_path / "results", [data]))[0]
    assert m.processes == 10 and len(m.spreads) == 2
    sees_5 = precision_needed(0.05)  # the full run's aim: a standard error of about 0.84 %
    assert [processes_for(sd, sees_5) for sd in m.spreads] == [TYPICAL_PROCESSES, 20]
    # The timed benchmark's one process (1.5 s) is shared equally: 5 processes of one
    # pair and 20 of the other, 12.5 on average; 20 rounds, so 22 asv runs.
    runs = FIRST_ROUND_RUNS + 19
    expected = 1.5 * 12.5 + 1.5 + 1.5 * 2 + runs * ASV_RUN_S + BUILD_S
    assert m.total_s(10, sees_5) == pytest.approx(expected)
    assert m.total_s(10) < expected  # ten for each is cheaper, and leaves the fast pair short
    # A saved table has no samples: --detect asks for results instead, in one line.
    assert processes_for(None, sees_5) == 10


def test_detect_needs_results_with_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_pinned(tmp_path))
    assert main(["matrix", "--cost", "--durations", path, "--detect", "5"]) == 2
    assert "--detect needs each pair's processes" in capsys.readouterr().err
    files = [_file("3.12", "ujson", "6.1.0", processes=10)]
    root = _tree(tmp_path / "results", files)
    assert main(["matrix", "--cost", "--results", str(root), "--detect", "5", "--every-pair"]) == 0
    assert "standard error of 0.84%" in capsys.readouterr().out


# The saved table's inputs, pinned: the measured run's durations and the predictions a
# full run would make of each pair (docs/cost.md, "Before and after").
TABLE = Path(__file__).parent.parent / "docs" / "cost-durations-2026-11-25.json"


def test_a_full_run_leaves_out_the_pairs_predicted_over_its_budget_and_the_model_prices_it() -> (
    None
):
    predicted = read_predictions(TABLE)
    assert predicted is not None
    left = leave_out(["stdlib", "pyyaml", "orjson"], predicted)
    # The run's own rule (serkit.run.quick.over_budget) on the saved predictions, at 25
    # samples a process: pure-Python YAML on seven default documents, C YAML on three.
    assert left.left == {
        ("yaml", "random-dicts-10"),
        ("yaml", "random-dicts-100"),
        ("yaml", "random-dicts-1000"),
        ("yaml", "twitter"),
        ("yaml", "senate-bios"),
        ("yaml", "sensor-stream"),
        ("yaml", "github"),
        ("yaml-c", "random-dicts-100"),
        ("yaml-c", "random-dicts-1000"),
        ("yaml-c", "twitter"),
    }
    assert all(
        over_budget(predicted[f"{codec} {fixture}"], FULL_ROUNDS, FULL_BUDGET_S)
        for codec, fixture in left.left
    )
    # Their share of the PyYAML environment's timed time: their predicted calls' weight.
    pairs = grid_pairs("pyyaml")
    assert {codec for codec, _ in pairs} == {"yaml", "yaml-c"}

    def weight(pair: tuple[str, str]) -> float:
        found = predicted[f"{pair[0]} {pair[1]}"]
        return PAIR_FLOOR_S + CALLS_PER_PROCESS * (found.dumps_s + found.loads_s)

    share = sum(weight(p) for p in pairs if p in left.left) / sum(weight(p) for p in pairs)
    assert left.share("pyyaml") == pytest.approx(share)
    assert left.share("stdlib") == 0.0 and left.share("orjson") == 0.0
    # The PyYAML environment at 10 processes a pair: 4,553 s with every pair, 587 s without
    # the ten (its other benchmarks counted whole, which errs high).
    pyyaml = next(m for m in read_durations(TABLE) if m.library == "pyyaml")
    runs = FIRST_ROUND_RUNS + 9
    expected = 400.1 * 10 * (1 - share) + 391.0 + runs * ASV_RUN_S + BUILD_S
    assert pyyaml.total_s(10, None, share) == pytest.approx(expected)
    assert (round(pyyaml.total_s(10)), round(expected)) == (4553, 587)


def test_a_week_with_a_pyyaml_release_is_its_environments_without_the_left_out_pairs() -> None:
    from serkit.run.releases import load

    measured = read_durations(TABLE)
    data = load()
    libraries = ["stdlib", *(library.name for library in data.libraries)]
    left = leave_out(libraries, read_predictions(TABLE))
    before = weekly_costs(data, measured, 10)[0]
    (after,) = weekly_costs(data, measured, 10, None, left)[:1]
    pyyaml = next(m for m in measured if m.library == "pyyaml")
    envs = len(after.new_release["pyyaml"])
    # Each of its environments borrows the measured one (the newest release on py3.11).
    assert after.release_s("pyyaml") == pytest.approx(
        envs * pyyaml.total_s(10, None, left.share("pyyaml"))
    )
    assert before.release_s("pyyaml") == pytest.approx(envs * pyyaml.total_s(10))
    assert after.week_s("pyyaml") <= 2 * 3600 < before.week_s("pyyaml")  # issue 32's target
    assert after.full_s < before.full_s


def test_a_library_never_measured_is_priced_by_its_pairs(tmp_path: Path) -> None:
    measured = read_durations(TABLE)
    # pydantic's one codec is timed on twitter alone: one pair at the median measured
    # environment's cost a pair (its timed time and the rest, each over its pairs).
    (pair,) = grid_pairs("pydantic")
    assert pair == ("pydantic-json", "twitter")
    per_pair = statistics.median(
        m.per_process_s / len(grid_pairs(m.library or "")) for m in measured
    )
    rest = statistics.median(m.other_s / len(grid_pairs(m.library or "")) for m in measured)
    (found,) = estimate([MatrixEnvironment.of("3.12", "pydantic", "2.0")], measured, 10)
    runs = FIRST_ROUND_RUNS + 9
    assert found.seconds == pytest.approx(per_pair * 10 + rest + runs * ASV_RUN_S + BUILD_S)
    assert found.source == "1 pair at the median pair of 10 measured libraries"
    # cattrs times nothing on the default grid: its environment is its build and asv runs.
    assert grid_pairs("cattrs") == []
    (none,) = estimate([MatrixEnvironment.of("3.12", "cattrs", "1.0")], measured, 10)
    assert none.seconds == pytest.approx(runs * ASV_RUN_S + BUILD_S)


def test_a_saved_table_without_predictions_leaves_nothing_out_and_predicts_nothing() -> None:
    left = leave_out(["pyyaml"], {})
    assert left.left == frozenset() and left.share("pyyaml") == 0.0
    assert left.unpredicted == {"yaml", "yaml-c"}


def test_a_run_that_already_left_pairs_out_has_none_of_their_time_to_take_away() -> None:
    predicted = read_predictions(TABLE)
    assert predicted is not None
    left = leave_out(["pyyaml"], predicted)
    kept = frozenset(p for p in grid_pairs("pyyaml") if p not in left.left)
    assert left.share("pyyaml", kept) == 0.0


def test_the_model_and_the_run_ask_the_same_processes_of_a_pair() -> None:
    from serkit.run.precision import LEAST_PROCESSES, MOST_PROCESSES, by_precision

    aim = precision_needed(0.05)
    assert processes_for(0.001, aim) == LEAST_PROCESSES  # millisecond calls that agree
    assert processes_for(0.03, aim) == math.ceil((0.03 / aim) ** 2)  # 13
    assert processes_for(0.2, aim) == MOST_PROCESSES
    # The run: rounds from the least processes on take only the pairs short of the aim.
    assert [by_precision(r, 10, LEAST_PROCESSES) for r in range(10)] == [False] * 5 + [True] * 5
    assert not any(by_precision(r, 10, 0) for r in range(10))  # a quick run: every pair


def test_the_tree_s_recorded_runs_price_each_asv_run(tmp_path: Path) -> None:
    """The model's cost per `asv run` is the median of the runs the tree records
    (serkit.results.asv_runs), every file's together; without them, ASV_RUN_S."""
    from serkit.results.asv_runs import RUNS_KEY

    one = _file("3.12", "ujson", "6.1.0", processes=10)
    other = _file("3.12", "orjson", "3.13.0", processes=10)
    one[RUNS_KEY] = [{"wall_s": 10.0, "recorded_s": 8.0, "build_s": 0.0}]  # 2 s
    other[RUNS_KEY] = [
        {"wall_s": 10.0, "recorded_s": 6.0, "build_s": 0.0},  # 4 s
        {"wall_s": 30.0, "recorded_s": 20.0, "build_s": 4.0},  # 6 s: its build apart
    ]
    measured = read_costs(_tree(tmp_path / "results", [one, other]))[0]
    assert {m.asv_run_s for m in measured} == {4.0}
    m = measured[0]
    runs = FIRST_ROUND_RUNS + 9
    assert m.total_s() == pytest.approx(m.benchmarks_s + runs * 4.0 + BUILD_S)
    plain = read_costs(_tree(tmp_path / "plain", [_file("3.12", "ujson", "6.1.0", 10)]))[0]
    assert plain[0].asv_run_s == ASV_RUN_S


def test_the_cost_command_says_where_its_cost_per_asv_run_comes_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.results.asv_runs import RUNS_KEY

    data = _file("3.12", "ujson", "6.1.0", processes=10)
    data[RUNS_KEY] = [{"wall_s": 10.0, "recorded_s": 7.5, "build_s": 0.0}]
    root = _tree(tmp_path / "results", [data])
    assert main(["matrix", "--cost", "--results", str(root)]) == 0
    assert (
        "2.5 s per asv run (the median of the 1 asv run the tree records)"
        in capsys.readouterr().out
    )
    table = tmp_path / "table.json"
    table.write_text(
        json.dumps(
            {
                "asv_run_s": 3.5,
                "environments": [
                    {
                        "python": "3.12",
                        "library": "ujson",
                        "version": "6.1.0",
                        "per_process_s": 1.0,
                        "other_s": 2.0,
                        "processes": 2,
                    }
                ],
            }
        )
    )
    assert {m.asv_run_s for m in read_durations(table)} == {3.5}
    assert main(["matrix", "--cost", "--results", str(table)]) == 0
    assert "3.5 s per asv run (as the table states)" in capsys.readouterr().out


def test_an_environment_another_counts_for_is_priced_without_its_counts(tmp_path: Path) -> None:
    """A results file splits memory per call and instruction counts (bench_memory,
    bench_instructions and their setup_cache) from the rest; the model leaves them out of
    the environments a matrix run does not count in (serkit.run.matrix.counted)."""
    memory = "bench_memory.PeakMemory.track_dumps_peak"
    suite = {**SUITE, memory: {"type": "track", "unit": "bytes", "grid": GRID}}
    data = results_file(
        "box",
        {TIMED: [1e-6, 2e-6], TRACK: [10, 20], memory: [100, 200]},
        env=_env("3.12", "lib0", "1.0"),
        benchmarks=suite,
        samples={TIMED: [[1e-6] * 10, [2e-6] * 10]},
    )
    data["durations"] = {"<setup_cache bench_instructions:21>": 7.0, "<build>": 2.0}
    write_benchmarks(tmp_path / "r", suite)
    write_results(tmp_path / "r", "box", [data])
    (m,) = read_costs(tmp_path / "r")[0]
    assert m.counted_s == pytest.approx(1.5 + 7.0)  # the memory row once, the setup_cache
    assert m.other_s == pytest.approx(1.5 + 1.5 + 7.0 + 2.0)
    assert m.total_s(10) - m.total_s(10, counts=False) == pytest.approx(m.counted_s)
    # A matrix of two releases on two Pythons: lib0 1.0 is the newest on both (counted);
    # lib0 0.9 counts on 3.12 only.
    everywhere = {p: ("3.12", "3.13") for p in ("linux-x86_64", "linux-aarch64", "macos-arm64")}
    two = Releases(
        ("3.12", "3.13"),
        3,
        (Library("lib0", (Release("1.0", None, everywhere), Release("0.9", None, everywhere))),),
    )
    now, before = (
        runner_costs(two, [m], processes=10, counted_everywhere=flag)[0] for flag in (False, True)
    )
    seconds = {e.env.label: e.seconds for e in now.estimates}
    assert seconds["py3.13 lib0 0.9"] == pytest.approx(m.total_s(10, counts=False))
    assert seconds["py3.12 lib0 0.9"] == pytest.approx(m.total_s(10))
    assert before.total_s - now.total_s == pytest.approx(m.counted_s)
    # A saved table states it per row, or it is not known (0).
    table = tmp_path / "table.json"
    row = {"python": "3.12", "library": "lib0", "version": "1.0", "per_process_s": 1.0}
    row |= {"other_s": 9.0, "processes": 2, "counted_s": 4.0}
    table.write_text(json.dumps({"environments": [row]}))
    assert read_durations(table)[0].counted_s == 4.0


def test_a_tree_saved_as_a_table_prices_the_matrix_as_the_tree_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--save-durations writes what --durations reads: the same model, wherever the tree
    is not."""
    from serkit.results.asv_runs import RUNS_KEY

    data = _file("3.12", "ujson", "6.1.0", processes=10)
    data[RUNS_KEY] = [{"wall_s": 10.0, "recorded_s": 7.0, "build_s": 0.0}]
    data["durations"] = {"<setup_cache bench_instructions:21>": 7.0}
    root = _tree(tmp_path / "results", [data])
    table = tmp_path / "saved.json"
    assert main(["matrix", "--cost", "--results", str(root), "--save-durations", str(table)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {table}: 1 environment, 3.0 s per asv run")
    (tree,), (saved,) = read_costs(root)[0], read_durations(table)
    for field in ("python", "library", "version", "processes", "asv_run_s", "timed_pairs"):
        assert getattr(saved, field) == getattr(tree, field)
    for field in ("per_process_s", "other_s", "counted_s"):
        assert getattr(saved, field) == pytest.approx(getattr(tree, field), abs=1e-3)
    assert saved.counted_s == pytest.approx(7.0)
    assert read_predictions(table)  # every ujson pair of the grid, predicted here
    cost = ["matrix", "--cost", "--processes", "10", "--format", "json"]
    assert main([*cost, "--results", str(root)]) == 0
    from_tree = json.loads(capsys.readouterr().out)["runner_kinds"][0]["total_s"]
    assert main([*cost, "--durations", str(table)]) == 0
    assert json.loads(capsys.readouterr().out)["runner_kinds"][0]["total_s"] == pytest.approx(
        from_tree, rel=1e-3
    )
    assert main(["matrix", "--cost", "--durations", str(table), "--save-durations", "x"]) == 2


def test_the_saved_table_of_2026_11_26_gives_the_first_fill_the_manual_states() -> None:
    """docs/cost.md quotes the model on this table: 10.9 h a runner kind at 10 processes
    and 25 samples a process (11.8 h at 5 samples, before 2026-11-27)."""
    table = Path(__file__).parent.parent / "docs" / "cost-durations-2026-11-26.json"
    measured = read_durations(table)
    assert len(measured) == 16 and {m.python for m in measured} == {"3.11"}
    assert all(0 < m.counted_s <= m.other_s for m in measured)
    assert {round(m.asv_run_s, 1) for m in measured} == {3.5}
    libraries = [m.library or "" for m in measured]
    left = leave_out(libraries, read_predictions(table))
    (kind, *_) = runner_costs(load(), measured, 16, 10, None, left)
    assert round(kind.total_s / 3600, 1) == 10.9
