"""serkit/results/asv_runs.py: what each `asv run` cost beyond what asv recorded of it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from results_factory import results_file

from serkit.results import asv_file, asv_runs

TIMED = "bench_time.Dumps.time_dumps"
SIZE = "bench_size.EncodedSize.track_bytes"


def _before() -> dict:
    data = results_file("box", {TIMED: [1e-6], SIZE: [10]}, started_at=1_000)
    data["durations"] = {"<build>": 4.0, "<setup_cache bench_instructions:17>": 30.0}
    return data


def _after(before: dict, *, timed_again: bool, cache_again: bool, build: float | None) -> dict:
    """asv's file after one more run: a benchmark it ran has a new start and duration."""
    after = copy.deepcopy(before)
    columns = after["result_columns"]
    started, duration = columns.index("started_at"), columns.index("duration")
    if timed_again:
        after["results"][TIMED][started] = 2_000
        after["results"][TIMED][duration] = 7.5
    if cache_again:
        after["durations"]["<setup_cache bench_instructions:17>"] = 31.0
    if build is not None:
        after["durations"]["<build>"] = build
    return after


def test_a_run_is_what_asv_stamped_anew_and_the_rest_of_its_wall_time_is_asvs_own() -> None:
    before = _before()
    run = asv_file.recorded_run(
        before, _after(before, timed_again=True, cache_again=True, build=None), 45.0
    )
    # The timed benchmark (7.5 s) and the setup_cache (31 s) ran; the size row did not.
    assert (run.wall_s, run.recorded_s, run.build_s) == (45.0, 38.5, 0.0)
    assert run.overhead_s == pytest.approx(6.5)


def test_a_build_in_the_run_is_kept_apart_from_asvs_own_cost() -> None:
    before = _before()
    after = _after(before, timed_again=True, cache_again=False, build=5.0)
    run = asv_file.recorded_run(before, after, 20.0)
    assert (run.recorded_s, run.build_s) == (7.5, 5.0)
    assert run.overhead_s == pytest.approx(7.5)


def test_the_first_run_counts_everything_it_wrote() -> None:
    after = _before()
    run = asv_file.recorded_run({}, after, 60.0)
    columns = after["result_columns"]
    durations = sum(row[columns.index("duration")] for row in after["results"].values())
    assert run.recorded_s == pytest.approx(durations + 30.0)
    assert run.build_s == 4.0


def test_an_overhead_never_reads_below_zero() -> None:
    assert asv_runs.AsvRun(wall_s=1.0, recorded_s=2.0, build_s=0.0).overhead_s == 0.0


def test_notes_survive_asvs_rewrite_of_the_results_file(tmp_path: Path) -> None:
    notes, results = tmp_path / "notes", tmp_path / "abcd1234-env.json"
    results.write_text(json.dumps(_before()))
    asv_runs.note(notes, asv_runs.AsvRun(10.0, 7.0, 0.0))
    asv_runs.note(notes, asv_runs.AsvRun(9.0, 5.0, 1.0))
    (notes / asv_runs.RUNS_FILE).open("a").write("{not json\n")  # a damaged line: itself only
    results.write_text(json.dumps(_before()))  # asv writes its own keys only
    assert asv_file.attach_notes(results, notes)
    runs = asv_runs.runs_of(json.loads(results.read_text()))
    assert [r.overhead_s for r in runs] == [3.0, 3.0]
    assert asv_runs.typical_overhead(runs) == 3.0
    assert asv_runs.typical_overhead([]) is None
    assert not asv_file.attach_notes(tmp_path / "missing.json", notes)
    assert asv_runs.runs_of({asv_runs.RUNS_KEY: "not a list"}) == []
    hostile = [{"wall_s": "nan", "recorded_s": 1, "build_s": 0}, {"wall_s": -5, "recorded_s": 1}]
    hostile.append({"wall_s": 1e400, "recorded_s": 0, "build_s": 0})  # inf, as JSON can say
    assert asv_runs.runs_of({asv_runs.RUNS_KEY: hostile}) == []


def test_what_a_runs_processes_waited_travels_with_its_results_file(tmp_path: Path) -> None:
    """The seconds a run's timed processes waited for the fast state (inside the durations
    asv recorded) are kept per `asv run`; older rows read as no waiting."""
    notes, results = tmp_path / "notes", tmp_path / "abcd1234-env.json"
    before = _before()
    after = _after(before, timed_again=True, cache_again=False, build=None)
    run = asv_file.recorded_run(before, after, 20.0, waited_s=3.04)
    assert (run.recorded_s, run.waited_s) == (7.5, 3.0)
    asv_runs.note(notes, run)
    asv_runs.note(notes, asv_runs.AsvRun(9.0, 5.0, 1.0))  # no wait: no key written
    results.write_text(json.dumps(after))
    assert asv_file.attach_notes(results, notes)
    rows = json.loads(results.read_text())[asv_runs.RUNS_KEY]
    assert rows[0]["waited_s"] == 3.0 and "waited_s" not in rows[1]
    assert [r.waited_s for r in asv_runs.runs_of({asv_runs.RUNS_KEY: rows})] == [3.0, 0.0]
    hostile = [{"wall_s": 1, "recorded_s": 1, "build_s": 0, "waited_s": v} for v in ("x", -1)]
    assert asv_runs.runs_of({asv_runs.RUNS_KEY: hostile}) == []


def test_what_each_codec_ran_with_is_written_with_the_notes(tmp_path: Path) -> None:
    """A run records, beside its notes, each codec's library and what it needs beside it,
    as its checkout declares them; a comparison reads them from there (serkit.compare)."""
    from serkit.codecs.spec import STDLIB
    from serkit.results.asv_file import CODECS_KEY, read_file
    from serkit.run.libraries import codec_libraries

    declared = codec_libraries()
    assert declared["json"] == (STDLIB,) and declared["orjson"][0] == "orjson"
    results = tmp_path / "abcd1234-env.json"
    results.write_text(json.dumps(_before()))
    assert asv_file.attach_notes(results, tmp_path / "no-notes", declared)
    assert json.loads(results.read_text())[CODECS_KEY]["json"] == [STDLIB]
    assert read_file(results).codecs == declared
