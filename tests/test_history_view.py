"""serkit/report/history.py and the report's History page: every run over calendar time."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from history_factory import HISTORY_MACHINE, weekly_run, weekly_store
from results_factory import (
    COMMIT,
    OLDER,
    PYTHONS_SUITE,
    results_file,
    values,
    write_benchmarks,
    write_results,
)

from serkit.compare.comparison import compare
from serkit.report import html as report_html
from serkit.report.charts import history_figure
from serkit.report.history import history_views
from serkit.report.runs import latest_runs
from serkit.results.history import file_run
from serkit.results.tree import read_tree
from serkit.suite.benchmark_names import DUMPS, LOADS, SIZE


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six weekly runs: three of one commit (the third on a new image), then a new commit
    with a new ujson release, and new microcode in the last week (history_factory.WEEKS)."""
    return weekly_store(tmp_path_factory.mktemp("history") / "store")


def test_three_runs_of_one_commit_are_three_points(store: Path) -> None:
    (view,) = history_views(read_tree(store))
    assert view.machine == HISTORY_MACHINE and view.python == "3.11"
    assert [p.label for p in view.points] == [
        "2026-10-05 03:17",
        "2026-10-12 03:17",
        "2026-10-19 03:17",
        "2026-10-26 03:17",
        "2026-11-02 03:17",
        "2026-11-09 03:17",
    ]
    assert [p.run.commit for p in view.points[:3]] == [OLDER] * 3
    assert all(p.host is not None for p in view.points)  # each run's host, by its file


def test_each_step_says_what_changed_and_is_judged(store: Path) -> None:
    (view,) = history_views(read_tree(store))
    assert [s.marks for s in view.steps] == [[], ["host"], ["release"], [], ["host"]]
    assert view.steps[1].host == [
        "kernel 6.8.0-1014-azure → 6.8.0-1017-azure",
        "image ubuntu24 20260928.1.0 → ubuntu24 20261012.1.0",
    ]
    assert view.steps[2].releases == ["ujson 6.1.0 → 6.2.0"]
    assert view.steps[4].host == ["cpu microcode 0xa0011d5 → 0xa0011d7"]
    # An unchanged week, and a new image that moved nothing: within the 10 % floor.
    assert not view.steps[0].called and not view.steps[1].called
    release = {(c.benchmark, c.codec, c.fixture): c.verdict for c in view.steps[2].called}
    assert release == {
        (DUMPS, "ujson", "small-dict"): "faster",
        (DUMPS, "ujson", "random-dicts-10"): "faster",
    }
    # The microcode week: every time 15 % slower, beyond the floor; sizes the same.
    slower = view.steps[4].called
    assert len(slower) == 8 and {c.verdict for c in slower} == {"slower"}
    assert {c.benchmark for c in slower} == {DUMPS, LOADS}
    # Sensitivity, as the hosts page states it: no noise or power record here.
    assert view.floor == pytest.approx(0.10) and "not measured" in view.noise
    assert "not measured" in view.power
    assert view.steps[4].detectable == pytest.approx(0.10)


def test_the_chart_plots_every_run_at_its_date_and_marks_each_change(store: Path) -> None:
    (view,) = history_views(read_tree(store))
    figure = history_figure(view)
    dumps = next(t for t in figure.data if t.name == "ujson / small-dict" and t.xaxis == "x")
    assert list(dumps.x) == [
        f"2026-{month}T03:17:00" for month in ("10-05", "10-12", "10-19", "10-26", "11-02", "11-09")
    ]
    # 20 % faster since the release, 15 % slower since the microcode, each within 2 %.
    assert dumps.y[-1] == 1.0 and dumps.y[0] == pytest.approx(1 / 0.8 / 1.15, rel=0.05)
    marks = {a.text: a.hovertext for a in figure.layout.annotations if a.hovertext is not None}
    assert set(marks) == {"host", "release"}
    assert "ujson 6.1.0 → 6.2.0" in marks["release"]
    lines = [s for s in figure.layout.shapes if s.type == "line"]
    assert len(lines) == 3 * 3  # three steps marked, a line in each of the three panels


def test_the_report_has_a_history_page(store: Path, tmp_path: Path) -> None:
    written = report_html.write_report(tmp_path, store, tmp_path / "reports", asv_runner=None)
    page = (written.folder / "history.html").read_text()
    assert "6 runs, 2026-10-05 03:17 to 2026-11-09 03:17 UTC, at 2 suite commits" in page
    assert "release: ujson 6.1.0 → 6.2.0" in page
    assert "host: cpu microcode 0xa0011d5 → 0xa0011d7" in page
    assert "8 of 28" in page  # the microcode week: 8 changes beyond the noise
    assert 'href="history.html"' in (written.folder / "index.html").read_text()
    hosts = (written.folder / "hosts.html").read_text()
    assert "2026-11-09 03:18 UTC: cpu microcode 0xa0011d5 → 0xa0011d7" in hosts
    assert '<td class="name">6.8.0-1017-azure</td>' in hosts  # the newest run's kernel


def test_one_run_is_no_history(tmp_path: Path) -> None:
    assert history_views(read_tree(weekly_run(tmp_path / "one", 0))) == []


def test_the_snapshot_shows_the_newest_run_each_value_from_the_newest_that_has_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "results"
    write_benchmarks(root, PYTHONS_SUITE)
    first = weekly_run(root, 3)  # a full run at COMMIT
    folder = first / HISTORY_MACHINE
    (plain,) = [p for p in folder.glob("1234*.json")]
    file_run(plain)
    # A later run of the same commit that measured only dumps (`serkit bench -- -b Dumps`).
    data = json.loads(next(folder.glob("1234*.json")).read_text())
    data["results"] = {DUMPS: data["results"][DUMPS]}
    column = data["result_columns"].index("result")
    before = data["results"][DUMPS][column]
    data["results"][DUMPS][column] = [v * 2 for v in before]
    data["results"][DUMPS][data["result_columns"].index("started_at")] += 86_400_000
    (folder / plain.name).write_text(json.dumps(data))
    file_run(folder / plain.name)
    (run,) = latest_runs(read_tree(root))
    assert run.commit == COMMIT
    assert run.value(DUMPS, "json", "small-dict") == 2 * before[0]  # the newer run's
    older = run.get(LOADS, "json", "small-dict")  # measured by the earlier run only
    assert older is not None and older.run_at < run.ran_at
    assert run.value(SIZE, "json", "small-dict") == 1762


def test_compare_takes_the_newest_run_of_a_commit_without_a_warning(tmp_path: Path) -> None:
    write_benchmarks(tmp_path)
    write_results(tmp_path, "a", [results_file("a", values())])
    folder = write_results(tmp_path, "b", [results_file("b", values(), started_at=1)])
    (plain,) = [p for p in folder.glob("1234*.json")]
    file_run(plain)
    plain.write_text(json.dumps(results_file("b", values(3.0), started_at=2)))
    file_run(plain)
    tree = read_tree(tmp_path)
    result = compare(tree, "a", "b")
    timings = [p for p in result.pairs if p.benchmark.name == "bench_time.Dumps.time_dumps"]
    assert {round(p.ratio, 6) for p in timings} == {3.0}
    assert not [w for w in tree.warnings if "recorded twice" in w]


def test_only_the_newest_steps_are_judged_every_run_is_shown(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from serkit.report import history

    monkeypatch.setattr(history, "JUDGED_STEPS", 2)
    (view,) = history_views(read_tree(store))
    assert len(view.points) == 6 and view.unjudged == 3
    assert [s.judged for s in view.steps] == [False, False, False, True, True]
    assert view.steps[2].changes == [] and view.steps[2].marks == ["release"]  # still marked
    assert len(view.steps[4].called) == 8


def test_host_facts_and_releases_reach_the_chart_as_text_never_as_html(tmp_path: Path) -> None:
    from serkit.results.host_file import HOST_FILE, read_runs, write_runs

    store = weekly_store(tmp_path / "store", weeks=3)
    folder = store / HISTORY_MACHINE
    runs = read_runs(folder, []) or []
    runs[-1]["kernel"] = "<img src=x onerror=alert(1)>"  # a host file someone else wrote
    write_runs(folder / HOST_FILE, HISTORY_MACHINE, runs)
    (view,) = history_views(read_tree(store))
    marks = [a.hovertext for a in history_figure(view).layout.annotations if a.hovertext]
    assert any("&lt;img src=x onerror=alert(1)&gt;" in m for m in marks)
    assert not any("<img" in m for m in marks)


# --- per-library environments: the baseline composed at every run ------------------------


def _env_file(
    folder: Path, env: dict[str, Any], codec: str, moment: int, dumps_factor: float = 1.0
) -> str:
    """One matrix environment's run: `codec`'s values only (the grid's other codec skipped,
    as a library's environment skips it), filed under its run's moment. Its name."""
    from results_factory import NEW, _processes

    from serkit.results.history import dated_name

    first = 0 if codec == "json" else 2  # (json, *) then (ujson, *) in grid order
    measured: dict[str, list[float | None]] = {}
    for name, all_values in NEW.items():
        kept = [v if first <= i < first + 2 else None for i, v in enumerate(all_values)]
        if name == DUMPS:
            kept = [v * dumps_factor if v else v for v in kept]
        measured[name] = kept if len(all_values) == 4 else list(all_values)
    samples = {n: [_processes(v, False) for v in measured[n]] for n in (DUMPS, LOADS)}
    data = results_file(
        HISTORY_MACHINE,
        measured,
        env=env,
        benchmarks=PYTHONS_SUITE,
        samples=samples,
        started_at=moment,
    )
    name = dated_name(f"{COMMIT[:8]}-{data['env_name']}-{codec}.json", moment)
    (folder / name).write_text(json.dumps(data))
    return name


def test_per_library_environments_make_one_point_per_run_and_a_workflows_shards_one_run(
    tmp_path: Path,
) -> None:
    from history_factory import FIRST_RUN_MS, HOST_V1, WEEK_MS

    from serkit.results.host_file import HOST_FILE, write_runs
    from serkit.suite.cases import LIBRARY_ENV

    root = tmp_path / "store"
    write_benchmarks(root, PYTHONS_SUITE)
    folder = write_results(root, HISTORY_MACHINE, [])
    stdlib = {"python": "3.11", "requirements": {}, "env_vars": {LIBRARY_ENV: "stdlib"}}

    def ujson(release: str) -> dict[str, Any]:
        return {
            "python": "3.11",
            "requirements": {"ujson": release},
            "env_vars": {LIBRARY_ENV: "ujson"},
        }

    def entry(
        files: list[str], at: int, ci_run: str | None = None, shard: str | None = None
    ) -> dict[str, Any]:
        moment = datetime.datetime.fromtimestamp(at / 1000 + 60, datetime.timezone.utc)
        return {
            "recorded_at": moment.isoformat(timespec="seconds"),
            "ci_run": ci_run,
            "shard": shard,
            "results": files,
            "measured_as": "full",
            **HOST_V1,
        }

    week = [FIRST_RUN_MS + i * WEEK_MS for i in range(4)]
    # Week 0: one `serkit bench --matrix` here: the standard library's and ujson 6.1.0's.
    first = [
        _env_file(folder, stdlib, "json", week[0]),
        _env_file(folder, ujson("6.1.0"), "ujson", week[0] + 60_000),
    ]
    # Week 1: a workflow run in two shards: ujson's new release (dumps 20 % faster) on one,
    # the standard library's again on the other, minutes apart.
    shard_1 = [_env_file(folder, ujson("6.2.0"), "ujson", week[1], dumps_factor=0.8)]
    shard_2 = [_env_file(folder, stdlib, "json", week[1] + 300_000)]
    # Week 2: a workflow run that measured ujson's older release again: the baseline
    # shows 6.2.0, so nothing it shows changed, and it is no point.
    older = [_env_file(folder, ujson("6.1.0"), "ujson", week[2])]
    # Week 3: a `serkit bench` of the standard library's environment only.
    last = [_env_file(folder, stdlib, "json", week[3])]
    entries = [
        entry(first, week[0]),
        entry(shard_1, week[1], "org/serkit#7", "1/2"),
        entry(shard_2, week[1] + 300_000, "org/serkit#7", "2/2"),
        entry(older, week[2], "org/serkit#8", "1/2"),
        entry(last, week[3]),
    ]
    write_runs(folder / HOST_FILE, HISTORY_MACHINE, entries)
    (view,) = history_views(read_tree(root))
    assert [p.label for p in view.points] == [
        "2026-10-05 03:18",
        "2026-10-12 03:22",
        "2026-10-26 03:17",
    ]
    # Each point is every library's newest release as it stood after that run.
    assert [p.run.version_of("ujson") for p in view.points] == ["6.1.0", "6.2.0", "6.2.0"]
    assert [len(p.run.parts) for p in view.points] == [2, 2, 2]
    first_step, second_step = view.steps
    assert first_step.releases == ["ujson 6.1.0 → 6.2.0"] and first_step.marks == ["release"]
    called = {(c.benchmark, c.codec, c.fixture): c.verdict for c in first_step.called}
    assert called == {
        (DUMPS, "ujson", "small-dict"): "faster",
        (DUMPS, "ujson", "random-dicts-10"): "faster",
    }
    # The last run brought json's values only: only they are judged, and none moved.
    assert {c.codec for c in second_step.changes} == {"json"} and not second_step.called
    assert second_step.releases == []


def test_the_chart_shows_the_noise_band_the_verdicts_use(store: Path) -> None:
    """The y-axis auto-scaled to 0.86-1.0 with no band: a drop within noise looked real."""
    (view,) = history_views(read_tree(store))
    figure = history_figure(view)
    bands = [s for s in figure.layout.shapes if s.type == "rect"]
    assert len(bands) == 2  # dumps and loads time; sizes are counts
    for band in bands:
        assert band.y0 == pytest.approx(1 - view.floor) and band.y1 == pytest.approx(1 + view.floor)
    assert any("noise floor ±10 %" in str(a.text) for a in figure.layout.annotations)
