"""A step along an axis (a release, a Python) judged by the run it was measured in."""

from __future__ import annotations

from pathlib import Path

from results_factory import PER_PROCESS, results_file, write_benchmarks, write_machine

from serkit.report.runs import latest_runs
from serkit.report.steps import Point, judge_steps
from serkit.results.host_file import write_runs
from serkit.results.noise import BETWEEN_RUNS, SAME_RUN
from serkit.results.tree import read_tree, version_order
from serkit.suite.benchmark_names import DUMPS
from serkit.suite.cases import LIBRARY_ENV

STEADY = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.002, 0.998]  # eight processes within 1 %
NEWER = {"python": "3.11", "requirements": {"orjson": "3.10.18"}}
OLDER = {
    "python": "3.11",
    "requirements": {"orjson": "3.9.15"},
    "env_vars": {LIBRARY_ENV: "orjson"},
}


def _step(root: Path, one_run: bool) -> tuple[str, str]:
    """orjson dumps of `small`, 6 % slower in the newer release: its verdict and context."""
    write_benchmarks(root, PER_PROCESS)
    files = []
    for env, factor in ((OLDER, 1.0), (NEWER, 1.06)):
        processes = [[v * factor * 1e-6 for v in STEADY]] * 4
        medians = [sorted(p)[len(p) // 2] for p in processes]
        files.append(
            results_file(
                "m", {DUMPS: medians}, env=env, benchmarks=PER_PROCESS, samples={DUMPS: processes}
            )
        )
    folder = write_machine(root, "m", files)
    if one_run:  # the host record of the run that wrote both files: their rounds interleaved
        names = sorted(p.name for p in folder.glob("*-env-*.json"))
        write_runs(
            folder / "serkit-host.yaml", "m", [{"recorded_at": "2026-11-25", "results": names}]
        )
    tree = read_tree(root)
    runs = sorted(
        latest_runs(tree), key=lambda run: version_order(dict(run.env.requirements)["orjson"])
    )
    points = [Point(dict(run.env.requirements)["orjson"], run) for run in runs]
    (change,) = judge_steps(tree, points, ["orjson"], ["small"], "m", (DUMPS,))
    return change.verdict, change.context


def test_a_step_within_one_run_has_no_floor_and_between_runs_the_hosts(tmp_path: Path) -> None:
    # One run interleaved both releases' rounds: what moved the machine moved both alike.
    assert _step(tmp_path / "one", one_run=True) == ("slower", SAME_RUN)
    # Two runs (no record says one run wrote both): the host's floor, 10 % unmeasured.
    assert _step(tmp_path / "two", one_run=False) == ("within noise", BETWEEN_RUNS)


def test_pythons_sort_by_number_and_a_free_threaded_build_after_its_default_one() -> None:
    pythons = ["3.14t", "3.10", "3.9", "3.14", "3.13"]
    assert sorted(pythons, key=version_order) == ["3.9", "3.10", "3.13", "3.14", "3.14t"]
