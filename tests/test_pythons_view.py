"""The report's Python-versions view: one machine's baseline on each Python, step by step.

The results tree (results_factory.python_baselines) holds one machine's baseline on
Pythons 3.9, 3.11 and 3.12 with known answers: a clear slowdown, a change within the
noise, instruction counts that moved both ways, a size that changed with the ujson
release 3.9 could not install, and a timing measured in a single process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from results_factory import python_baselines, serkit_tree

from serkit.report import html as report_html
from serkit.report.pythons import Releases
from serkit.report.steps import Change
from serkit.report.views import gather
from serkit.results.noise import DEFAULT_FLOOR
from serkit.results.tree import read_tree
from serkit.suite.benchmark_names import DUMPS, LOADS, SIZE


def _changes(changes: list[Change]) -> dict[tuple[str, str, str], Change]:
    return {(c.benchmark, c.codec, c.fixture): c for c in changes}


def test_the_baselines_are_in_python_order_and_each_step_is_judged(tmp_path: Path) -> None:
    data = gather(read_tree(python_baselines(tmp_path)))
    (view,) = data.pythons
    assert view.machine == "box-py"
    assert [p.version for p in view.points] == ["3.9", "3.11", "3.12"]  # not as strings sort
    assert view.has_instructions and view.commits == [view.points[0].run.commit]
    first, _ = view.steps
    assert (first.before.version, first.after.version) == ("3.9", "3.11")
    changes = _changes(first.changes)
    slower = changes[DUMPS, "json", "small-dict"]  # 10 µs -> 20 µs, processes ±0.5 %
    assert slower.verdict == "slower" and slower.percent == pytest.approx(100)
    assert slower.detectable is not None and slower.detectable >= DEFAULT_FLOOR
    steady = changes[DUMPS, "json", "random-dicts-10"]  # 1 %: under the 10 % floor
    assert steady.verdict == "within noise" and not steady.called
    assert changes[SIZE, "ujson", "small-dict"].verdict == "larger"
    assert changes[SIZE, "json", "small-dict"].verdict == "same"
    assert [c.benchmark for c in first.called] == [DUMPS, SIZE]


def test_instruction_counts_between_pythons_are_more_fewer_or_the_same(tmp_path: Path) -> None:
    data = gather(read_tree(python_baselines(tmp_path)))
    changes = _changes(data.pythons[0].steps[0].changes)
    fewer = changes[DUMPS, "json", "small-dict"]
    assert fewer.instructions == (300000, 281425) and fewer.instructions_verdict == "fewer"
    more = changes[LOADS, "json", "small-dict"]
    assert more.verdict == "same" and more.instructions_verdict == "more"
    assert more.moved and not more.called  # a count that moved is not a verdict on speed
    # One instruction more in 105,425: as two runs of one interpreter differ, the same.
    assert changes[DUMPS, "ujson", "small-dict"].instructions_verdict == "same"
    assert changes[SIZE, "json", "small-dict"].instructions is None  # counts go with times
    step = data.pythons[0].steps[0]
    assert len(step.counts_moved) == 2 and len(step.counted) == 8


def test_a_timing_from_one_process_gets_no_verdict(tmp_path: Path) -> None:
    data = gather(read_tree(python_baselines(tmp_path)))
    changes = _changes(data.pythons[0].steps[1].changes)  # 3.11 -> 3.12
    single = changes[DUMPS, "ujson", "small-dict"]  # 5 µs in five processes, 4.5 µs in one
    assert single.verdict == "single sample" and not single.called
    assert changes[DUMPS, "json", "small-dict"].verdict == "same"


def test_each_step_names_the_library_releases_that_differ(tmp_path: Path) -> None:
    (view,) = gather(read_tree(python_baselines(tmp_path))).pythons
    first, second = view.steps
    assert first.differing == [Releases("ujson", "5.10.0", "6.1.0")]
    assert first.releases("ujson") == Releases("ujson", "5.10.0", "6.1.0")
    assert first.releases("json") is None  # the standard library's: part of each Python
    assert second.differing == []
    assert Releases("orjson", None, "3.13.0").text == "orjson not installed → 3.13.0"


def test_the_page_shows_every_step_with_units_and_verdicts(tmp_path: Path) -> None:
    results = python_baselines(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    assert 'href="pythons.html"' in (written.folder / "index.html").read_text()
    html = (written.folder / "pythons.html").read_text()
    assert "Python 3.9 → 3.11" in html and "Python 3.11 → 3.12" in html
    assert html.index("Python 3.9 → 3.11") < html.index("Python 3.11 → 3.12")
    assert "ujson 5.10.0 → 6.1.0" in html  # the step's warning, and the rows' release
    assert '<td class="name mismatch"' in html
    assert "The same library releases on both Pythons." in html
    assert "<td>10.0 µs</td><td>20.0 µs</td><td>+100.0 %</td><td>10.0 %</td>" in html
    # No record says one run measured both Pythons: judged as two runs, and marked so.
    assert 'class="name slower">slower (two runs)<' in html and ">within noise (two runs)<" in html
    assert ">single sample<" in html
    assert "<td>1,400 B</td><td>1,500 B</td>" in html and ">larger<" in html
    assert "<td>300,000 → 281,425</td>" in html and "-6.19 % (fewer)" in html
    assert "(more)" in html and "compare the work each interpreter does, not speed" in html
    assert "2 changes beyond the noise, of " in html
    assert "instructions per call differ in 2 of 8 counted" in html
    assert "x newest Python" in html  # the chart


def test_without_two_pythons_the_page_says_what_to_run(tmp_path: Path) -> None:
    results = serkit_tree(tmp_path / "results")  # every baseline on Python 3.11
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    assert gather(read_tree(results)).pythons == []
    html = (written.folder / "pythons.html").read_text()
    assert "No machine has results on more than one Python" in html
    assert "<code>serkit bench --matrix</code>" in html


def test_a_machine_name_is_escaped(tmp_path: Path) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    results = python_baselines(tmp_path / "results", machine=hostile)
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    html = (written.folder / "pythons.html").read_text()
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_the_chart_gives_a_line_one_colour_in_every_panel(tmp_path: Path) -> None:
    from serkit.report.charts import steps_figure

    (view,) = gather(read_tree(python_baselines(tmp_path))).pythons
    figure = steps_figure(
        view.points, view.codecs, view.fixtures, axis="Python", newest="3.12", scale="x"
    )
    colours: dict[str, set[str]] = {}
    for trace in figure.data:
        colours.setdefault(trace.name, set()).add(trace.line.color)
    assert len(colours) == 4  # json and ujson on two fixtures
    assert all(len(found) == 1 for found in colours.values())
    assert len({next(iter(found)) for found in colours.values()}) == 4
    assert sorted(t.name for t in figure.data if t.showlegend) == sorted(colours)


def test_baselines_measured_at_different_suite_commits_carry_a_warning(tmp_path: Path) -> None:
    import json

    results = python_baselines(tmp_path / "results")
    newer = next((results / "box-py").glob("*-env-2.json"))  # the 3.12 baseline
    data = json.loads(newer.read_text())
    data["commit_hash"] = "f" * 40
    newer.write_text(json.dumps(data))
    (view,) = gather(read_tree(results)).pythons
    assert len(view.commits) == 2
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    html = (written.folder / "pythons.html").read_text()
    assert "measured at 2 suite commits" in html and "<code>ffffffff</code>" in html
