"""serkit report: what it reads from a results tree, and the pages it writes.

The tree is written here the way asv writes it, with serkit's benchmark names: two hosts,
each with a baseline environment and one ujson axis environment.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from results_factory import TWITTER_SCHEMA, typed_tree, verdict_tree, write_machine
from results_factory import serkit_tree as write_tree

from serkit.cli import main
from serkit.report import html as report_html
from serkit.report import template_env
from serkit.report.views import gather
from serkit.results.tree import read_tree
from serkit.suite.benchmark_names import ALLOCATIONS, DUMPS, INSTRUCTIONS, LOADS, PEAK, SIZE


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_snapshot_rows_carry_values_ratios_and_facts(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path)))
    assert list(data.snapshots) == ["random-dicts-10", "small-dict"]  # the registry's order
    table = data.snapshots["small-dict"][0]  # box-a's baseline
    assert table.run.machine == "box-a" and table.run.library is None
    json_row, ujson_row = table.rows
    assert json_row.dumps_vs_reference == 1.0
    assert ujson_row.dumps_vs_reference == pytest.approx(0.5)
    assert ujson_row.version == "6.1.0" and json_row.version == "Python 3.11"
    assert ujson_row.compiled is True and ujson_row.exact is True
    assert data.snapshots["random-dicts-10"][0].rows[0].exact is False  # lossy: int keys


def test_library_view_puts_releases_in_order_and_judges_changes_by_noise(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path)))
    views = [v for v in data.libraries if v.machine == "box-a"]
    assert [(v.library, [p.version for p in v.points]) for v in views] == [
        ("ujson", ["5.10.0", "6.1.0"])
    ]
    verdicts = {(c.benchmark, c.fixture): c.verdict for c in views[0].changes}
    assert verdicts[DUMPS, "small-dict"] == "faster"  # 10 µs -> 5 µs, spreads of ±5 %
    assert verdicts[DUMPS, "random-dicts-10"] == "within noise"  # 1 %: never "slower"
    assert verdicts[SIZE, "small-dict"] == "larger"  # sizes are counts: any change is real
    assert verdicts[SIZE, "random-dicts-10"] == "same"


def test_snapshot_rows_carry_memory_per_call_and_its_check(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path)))
    table = data.snapshots["small-dict"][0]
    assert table.has_memory
    json_row, ujson_row = table.rows
    assert json_row.peak == {"dumps": 26749, "loads": 15019}
    assert json_row.allocations == {"dumps": 502, "loads": 343}
    assert json_row.peak_per_byte("dumps") == pytest.approx(26749 / 1762)
    assert ujson_row.memory_sane == {"dumps": True, "loads": False}  # below its floor


def test_library_view_judges_memory_as_counts(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path)))
    (view,) = [v for v in data.libraries if v.machine == "box-a"]
    verdicts = {(c.benchmark, c.fixture): c.verdict for c in view.changes}
    # Allocations are exact: 120 -> 100 is a change, however small.
    assert verdicts[ALLOCATIONS["dumps"], "small-dict"] == "smaller"
    assert verdicts[ALLOCATIONS["dumps"], "random-dicts-10"] == "same"
    assert verdicts[PEAK["dumps"], "small-dict"] == "same"  # 0.2 %: within 1 %
    assert verdicts[PEAK["dumps"], "random-dicts-10"] == "smaller"  # 2.7 %


def test_snapshot_rows_carry_instruction_counts_where_counted(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path)))
    table = data.snapshots["small-dict"][0]
    assert table.has_instructions
    json_row, ujson_row = table.rows
    assert json_row.instructions == {"dumps": 281425, "loads": 245293}
    assert ujson_row.instructions == {"dumps": 105425, "loads": 128463}


def test_library_view_puts_the_instruction_count_beside_the_time(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path)))
    (view,) = [v for v in data.libraries if v.machine == "box-a"]
    assert view.has_instructions
    changes = {(c.benchmark, c.fixture): c for c in view.changes}
    faster = changes[DUMPS, "small-dict"]
    assert faster.verdict == "faster" and faster.instructions == (118000, 105425)
    assert faster.instructions_verdict == "fewer"
    assert faster.instructions_percent == pytest.approx(-10.657, abs=0.001)
    # 1 % faster is within the noise; 0.002 % more instructions is how two runs differ.
    steady = changes[DUMPS, "random-dicts-10"]
    assert steady.verdict == "within noise" and steady.instructions_verdict == "same"
    assert not steady.moved
    assert changes[LOADS, "small-dict"].instructions_verdict == "same"
    assert changes[SIZE, "small-dict"].instructions is None  # counts go with the times
    assert not any(c.benchmark in INSTRUCTIONS.values() for c in view.changes)


def test_instruction_counts_are_shown_beside_the_times(tmp_path: Path) -> None:
    results = write_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    html = (written.folder / "fixture-small-dict.html").read_text()
    times = html.index("<th>vs json</th><th>instructions, dumps</th><th>instructions, loads</th>")
    assert times < html.index("<th>size</th>")
    assert "<td>281,425</td><td>245,293</td>" in html and "compare work, not speed" in html
    versions = (written.folder / "versions.html").read_text()
    assert "<td>118,000 → 105,425</td>" in versions and "-10.66 % (fewer)" in versions
    assert "dumps instructions" in versions  # the chart's panel
    # Where a matrix run counts them (serkit.run.matrix.counted), said where they are missing.
    assert "compare memory and instructions between releases on Python 3.12" in versions


@pytest.mark.slow
def test_report_writes_versioned_pages_and_keeps_older_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results, output = write_tree(tmp_path / "results"), tmp_path / "reports"
    monkeypatch.setattr(report_html, "git_commit", lambda root: "a" * 40)
    args = ("report", "--results", str(results), "--into", str(output), "--no-asv")
    code, _, err = run(capsys, *args)
    assert code == 0, err
    first = output / f"0.1.0-{'a' * 12}"
    names = {p.name for p in first.iterdir()}
    assert {"index.html", "versions.html", "hosts.html", "fidelity.html"} <= names
    assert {"fixture-small-dict.html", "fixture-random-dicts-10.html", "plotly.min.js"} <= names
    # Provenance on every page: version, suite commit, hosts, library versions.
    for page in first.glob("*.html"):
        html = page.read_text()
        assert "serkit 0.1.0" in html and "a" * 40 in html, page.name
        assert "box-a, box-b" in html and "ujson 5.10.0, 6.1.0" in html, page.name
        assert "cdn" not in html.lower(), page.name  # the charting library is the report's own
    monkeypatch.setattr(report_html, "git_commit", lambda root: "b" * 40)
    assert run(capsys, *args)[0] == 0
    listing = (output / "reports.html").read_text()
    assert f"0.1.0-{'a' * 12}/index.html" in listing and f"0.1.0-{'b' * 12}/index.html" in listing
    # The folder's front door opens the newest version, by a redirect and by a plain link.
    index = (output / "index.html").read_text()
    newest = f"0.1.0-{'b' * 12}/index.html"
    assert f'content="0; url={newest}"' in index and f'<a href="{newest}">' in index
    assert '<a href="reports.html">' in index and "0.1.0-" + "a" * 12 not in index
    assert (first / "fixture-small-dict.html").is_file()  # the older report is untouched


def test_snapshot_page_shows_units_spread_and_lossy(tmp_path: Path) -> None:
    results = write_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    # A value's note keeps a number with its unit by a no-break space (units.unbroken).
    html = (written.folder / "fixture-random-dicts-10.html").read_text().replace("\xa0", " ")
    assert "40.0 µs" in html and "±2.5 %" in html  # the median, and half its IQR
    assert "2,800 B" in html and 'class="lossy"' in html
    versions = (written.folder / "versions.html").read_text()
    assert "1 change beyond the noise" not in versions  # both the time and the size moved
    # The time, the size, an allocation count and a peak moved; a 0.2 % peak did not.
    assert re.search(r"4 changes beyond the noise, of \d+ compared", versions)


@pytest.mark.slow
def test_a_quick_run_says_what_it_left_to_full_on_the_overview_and_the_fixture_page(
    tmp_path: Path,
) -> None:
    from serkit.results.host_file import write_runs
    from serkit.run.quick import LeftOut, PairSelection
    from serkit.suite.prediction import Prediction

    results = write_tree(tmp_path / "results", machines=("box-a",))
    slow = LeftOut("yaml", "random-dicts-10", Prediction(0.25, 0.7))
    plan = PairSelection((("json", "random-dicts-10"),), (slow,), ("github",)).as_record()
    wrote = sorted(p.name for p in (results / "box-a").glob("*-*.json"))
    run = {"recorded_at": "2026-11-25T10:00:00+00:00", "results": wrote, "plan": plan}
    write_runs(results / "box-a" / "serkit-host.yaml", "box-a", [run])
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    overview = (written.folder / "index.html").read_text()
    assert "What the runs left out" in overview
    # Each run's machine state: these results were written with no canary.
    assert '<th class="name">machine state</th>' in overview
    assert "machine state unknown (no canary recorded)" in overview
    assert "the round trip, import time" in overview and "the fixtures github" in overview
    page = (written.folder / "fixture-random-dicts-10.html").read_text()
    assert "yaml x random-dicts-10: not timed, predicted 0.7 s a call" in page
    assert "A quick run: the round trip, import time, the adapter" in page
    # A quick run asked to count instructions does not say it left them out.
    counted = PairSelection((("json", "random-dicts-10"),)).asking(memory=False, instructions=True)
    run["plan"] = counted.as_record()
    write_runs(results / "box-a" / "serkit-host.yaml", "box-a", [run])
    again = report_html.write_report(tmp_path, results, tmp_path / "again", asv_runner=None)
    page = (again.folder / "fixture-random-dicts-10.html").read_text()
    assert (
        "A quick run: " in page and "instruction counts" not in page.split("A quick run: ")[1][:200]
    )
    full = tmp_path / "full"
    write_tree(full / "results", machines=("box-a",))
    plain = report_html.write_report(full, full / "results", full / "reports", asv_runner=None)
    assert "What the runs left out" not in (plain.folder / "index.html").read_text()


def test_a_full_run_says_which_pairs_it_predicted_not_worth_timing(tmp_path: Path) -> None:
    from serkit.results.host_file import write_runs
    from serkit.run.quick import LeftOut, PairSelection
    from serkit.suite.prediction import Prediction

    results = write_tree(tmp_path / "results", machines=("box-a",))
    slow = LeftOut("yaml", "random-dicts-10", Prediction(2.5, 7.0))
    plan = PairSelection((("json", "random-dicts-10"),), (slow,), kind="full", budget_s=60.0)
    wrote = sorted(p.name for p in (results / "box-a").glob("*-*.json"))
    run = {"recorded_at": "2026-11-25T10:00:00+00:00", "results": wrote, "plan": plan.as_record()}
    write_runs(results / "box-a" / "serkit-host.yaml", "box-a", [run])
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    overview = (written.folder / "index.html").read_text()
    assert "What the runs left out" in overview and "(full run, " in overview
    line = (
        "yaml x random-dicts-10: not timed, predicted 7 s a call, over the full run&#39;s "
        "budget of 60 s a pair (asv&#39;s -b times it)"
    )
    basis = (
        "each call predicted from its codec&#39;s cost per byte on a small document, at "
        "serkit&#39;s reference speed: the same on any host, in either state"
    )
    assert f"<li>{line}</li><li>{basis}</li>" in overview  # how, said once after the pairs
    page = (written.folder / "fixture-random-dicts-10.html").read_text()
    assert f"A full run: {line} ({basis})." in page and "A quick run" not in page
    # A full run that left nothing out says nothing.
    run["plan"] = PairSelection((("json", "random-dicts-10"),), kind="full").as_record()
    write_runs(results / "box-a" / "serkit-host.yaml", "box-a", [run])
    again = report_html.write_report(tmp_path, results, tmp_path / "again", asv_runner=None)
    assert "What the runs left out" not in (again.folder / "index.html").read_text()


def test_snapshot_page_shows_peak_allocations_and_the_chart_of_peak_per_byte(
    tmp_path: Path,
) -> None:
    results = write_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    html = (written.folder / "fixture-small-dict.html").read_text()
    assert "<th>peak, dumps</th><th>allocations, dumps</th>" in html
    assert "26.1 KiB" in html and "<td>502</td>" in html  # json's dumps peak and count
    assert "15.2x the encoded size" in html  # 26,749 B peak / 1,762 B encoded
    assert (
        html.count('<br><span class="lossy">suspect</span>') == 2
    )  # ujson's loads, in box-a's and box-b's tables
    assert "peak memory ÷ encoded size" in html
    versions = (written.folder / "versions.html").read_text()
    assert "dumps allocations" in versions and "<td>120</td><td>100</td>" in versions
    assert "dumps peak memory" in versions and "58.6 KiB" in versions


def test_names_from_results_are_escaped(tmp_path: Path) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    results = write_tree(tmp_path / "results", machines=(hostile, "box-b"))
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    for page in written.pages:
        html = page.read_text()
        assert "<img src=x" not in html, page.name
    assert "&lt;img src=x" in (written.folder / "index.html").read_text()


def test_a_corrupt_results_file_is_named_and_the_rest_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_tree(tmp_path / "results")
    broken = next((results / "box-b").glob("*-env-0.json"))
    broken.write_text(broken.read_text()[:100])  # cut short
    args = ("report", "--results", str(results), "--into", str(tmp_path / "r"), "--no-asv")
    code, _, err = run(capsys, *args)
    assert code == 0
    assert f"skipped {broken}: not valid JSON" in err
    index = next((tmp_path / "r").glob("*/index.html")).read_text()
    assert "not valid JSON" in index  # the warning is on the page too


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: None, "no asv results folder"),
        (lambda root: root.mkdir(), "no measured value"),
        (lambda root: write_machine(root, "empty-box"), "no measured value"),
    ],
)
def test_nothing_to_report_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, message: str
) -> None:
    results = tmp_path / "results"
    make(results)
    args = ("report", "--results", str(results), "--into", str(tmp_path / "r"), "--no-asv")
    code, _, err = run(capsys, *args)
    assert code == 3 and f"serkit: error: {message}" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_a_single_host_says_there_is_nothing_to_compare(tmp_path: Path) -> None:
    results = write_tree(tmp_path / "results", machines=("only-box",))
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    assert "Only one machine has results" in (written.folder / "hosts.html").read_text()


def test_hosts_page_gives_ratios_against_the_first_host(tmp_path: Path) -> None:
    written = report_html.write_report(
        tmp_path, write_tree(tmp_path / "results"), tmp_path / "reports", asv_runner=None
    )
    html = (written.folder / "hosts.html").read_text()
    assert "box-b / box-a" in html and "<td>2.00x</td>" in html  # baseline timings doubled
    manifest = json.loads((written.folder / "report.json").read_text())
    assert manifest["hosts"] == ["box-a", "box-b"]


@pytest.mark.slow
def test_replication_page_from_a_saved_document_and_a_bad_one_is_a_warning(
    tmp_path: Path,
) -> None:
    from serkit.replicate import posts as replicate

    results = write_tree(tmp_path / "results")
    saved = tmp_path / "replication.json"  # where `serkit replicate` saves, beside results/
    replicate.save(replicate.run(["002"], replicate.Options(rounds=3)), saved)
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    html = (written.folder / "replication.html").read_text()
    assert "Post 002" in html and "msgpack-ext" in html
    assert 'href="replication.html"' in (written.folder / "index.html").read_text()
    saved.write_text('{"schema": 1')  # cut short
    again = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    assert not (again.folder / "replication.html").exists()
    assert any(w.startswith(f"skipped {saved}") for w in again.warnings)


def test_overhead_page_judges_each_adapter_against_its_target(tmp_path: Path) -> None:
    data = gather(read_tree(write_tree(tmp_path / "results")))
    run, rows = data.overhead[0]
    assert run.machine == "box-a"
    verdicts = {(r.result.codec, r.result.operation): r.verdict for r in rows}
    # json: 100 ns over a 1 µs call, beyond the noise; ujson: 10 ns, within 50 ns.
    assert verdicts == {("json", "dumps"): "over target", ("ujson", "dumps"): "within target"}
    written = report_html.write_report(
        tmp_path, tmp_path / "results", tmp_path / "r", asv_runner=None
    )
    html = (written.folder / "overhead.html").read_text()
    assert "+100 ns" in html and "over target" in html and "5 % or 50.0 ns" in html


def test_releases_measured_by_different_benchmark_code_are_not_compared(tmp_path: Path) -> None:
    from serkit.report.versions import CODE_CHANGED

    results = write_tree(tmp_path / "results", machines=("box-a",))
    axis_file = next((results / "box-a").glob("*-env-1.json"))  # the older ujson release
    data = json.loads(axis_file.read_text())
    data["results"][DUMPS][data["result_columns"].index("version")] = "older-code"
    axis_file.write_text(json.dumps(data))
    (view,) = gather(read_tree(results)).libraries
    verdicts = {(c.benchmark, c.fixture): c.verdict for c in view.changes}
    assert verdicts[DUMPS, "small-dict"] == CODE_CHANGED  # was "faster" with the same code
    assert verdicts[SIZE, "small-dict"] == "larger"  # the size track's code did not change


def _conformance_results() -> dict[str, Any]:
    from serkit.checks.conformance import (
        ACCEPTED,
        RAN,
        REJECTED,
        CodecConformance,
        FileOutcome,
    )
    from serkit.checks.workers import NOT_INSTALLED

    def files(*outcomes: tuple[str, str, str]) -> list[FileOutcome]:
        from serkit.inputs.jsontestsuite import expectation

        return [FileOutcome(name, expectation(name), out, detail) for name, out, detail in outcomes]

    return {
        "json": CodecConformance(
            "json",
            RAN,
            "3.11.7",
            "c",
            files(
                ("y_array_empty.json", ACCEPTED, "list"),
                ("n_number_NaN.json", ACCEPTED, "list"),
                ("n_array_extra_comma.json", REJECTED, "JSONDecodeError"),
                ("i_number_huge_exp.json", ACCEPTED, "<b>list</b>"),  # escaped, never HTML
            ),
        ),
        "orjson": CodecConformance(
            "orjson",
            RAN,
            "3.13.0",
            "c",
            files(
                ("y_array_empty.json", ACCEPTED, "list"),
                ("n_number_NaN.json", REJECTED, "orjson.JSONDecodeError"),
                ("n_array_extra_comma.json", REJECTED, "orjson.JSONDecodeError"),
                ("i_number_huge_exp.json", REJECTED, "orjson.JSONDecodeError"),
            ),
        ),
        "ujson": CodecConformance("ujson", NOT_INSTALLED, detail="pip install ujson"),
    }


@pytest.mark.slow
def test_conformance_page_from_a_saved_matrix_and_a_bad_one_is_a_warning(tmp_path: Path) -> None:
    from serkit.checks import conformance_document

    results = write_tree(tmp_path / "results")
    saved = tmp_path / "conformance.json"  # where `serkit conformance` saves, beside results/
    found = _conformance_results()
    conformance_document.save(conformance_document.document(found, wall_s=1.5), saved)

    view = gather_conformance(saved)
    assert view.codecs == ["json", "orjson"]  # ujson did not run: no column
    assert [row.file for row in view.matrix] == ["i_number_huge_exp.json", "n_number_NaN.json"]
    assert view.findings == [
        "json accepts 1 invalid: n_number_NaN.json",
        "ujson: not installed: pip install ujson",
    ]
    assert view.verdict("json") == "accepts 1 invalid" and view.verdict("orjson") == "conforms"

    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    page = (written.folder / "conformance.html").read_text()
    assert 'href="conformance.html"' in (written.folder / "index.html").read_text()
    assert "json accepts 1 invalid: n_number_NaN.json" in page
    assert "1 of 2" in page and "2 of 2" in page  # n_ files rejected, by json and orjson
    assert "1.00 GiB" in page and "5.00 s" in page  # the limits, with units
    assert 'class="mismatch" title="list">accepted' in page  # json on n_number_NaN.json
    assert "n_array_extra_comma.json" not in page  # every codec agreed, as the rule asks
    assert "<b>list" not in page and 'title="&lt;b&gt;list&lt;/b&gt;"' in page

    saved.write_text('{"kind": "serkit conformance", "schema": 99}')
    again = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    assert not (again.folder / "conformance.html").exists()
    assert any(w.startswith(f"skipped {saved}") and "schema" in w for w in again.warnings)


def gather_conformance(path: Path) -> Any:
    from serkit.checks.conformance_document import load
    from serkit.report.views import conformance_view

    return conformance_view(*load(path))


def test_the_overview_names_each_environment_that_could_not_be_built(tmp_path: Path) -> None:
    from serkit.results.builds import BUILDS_FILE, note_failure

    results = write_tree(tmp_path / "results", machines=("only-box",))
    quiet = report_html.write_report(tmp_path, results, tmp_path / "r1", asv_runner=None)
    assert "not built" not in (quiet.folder / "index.html").read_text()
    cause = "nothing installable for this Python (there is no version of msgpack==9.9.9)"
    note_failure(
        results / "only-box" / BUILDS_FILE, "virtualenv-py3.11-x", "py3.11 msgpack 9.9.9", cause
    )
    written = report_html.write_report(tmp_path, results, tmp_path / "r2", asv_runner=None)
    page = (written.folder / "index.html").read_text()
    assert "Environments not built" in page and "py3.11 msgpack 9.9.9" in page
    assert "there is no version of msgpack==9.9.9" in page


def test_the_schema_column_and_the_typed_chart_come_from_the_results(tmp_path: Path) -> None:
    data = gather(read_tree(typed_tree(tmp_path / "results")))
    (table,) = data.snapshots["twitter"]
    rows = {row.codec: row for row in table.rows}
    assert rows["json"].schema == "none" and rows["msgspec-json"].schema_sha256 is None
    assert rows["msgspec-struct-json"].schema == "derived"
    assert rows["msgspec-struct-json"].schema_sha256 == TWITTER_SCHEMA
    assert table.has_typed  # json has typed and untyped codecs; protobuf has no untyped peer
    written = report_html.write_report(
        tmp_path, tmp_path / "results", tmp_path / "reports", asv_runner=None
    )
    page = (written.folder / "fixture-twitter.html").read_text()
    assert "derived <code" in page and TWITTER_SCHEMA in page
    assert "Typed against untyped decoding" in page and 'id="typed-0-0"' in page
    assert "json: loads, typed against untyped" in page
    assert "protobuf: loads" not in page  # no schemaless protobuf codec to set it beside


def test_a_schema_the_user_supplied_is_named_so(tmp_path: Path) -> None:
    data = gather(read_tree(typed_tree(tmp_path / "results", supplied=True)))
    (table,) = data.snapshots["twitter"]
    rows = {row.codec: row for row in table.rows}
    assert rows["json"].schema == "none"
    assert rows["pydantic-json"].schema == "user-supplied" and rows["pydantic-json"].typed
    assert rows["pydantic-json"].schema_sha256 == TWITTER_SCHEMA


# --- the ranked verdict -----------------------------------------------------------------


def test_the_verdict_ranks_exact_codecs_first_with_ties_and_lossy_ones_apart(
    tmp_path: Path,
) -> None:
    from serkit.compare.ranking import DUMPS as BY_DUMPS
    from serkit.compare.verdict_words import verdict_line

    data = gather(read_tree(verdict_tree(tmp_path / "results")))
    (table,) = data.snapshots["twitter"]
    ranking = table.verdict
    assert [t.fidelity for t in ranking.tiers] == ["exact", "key order only", "lossy"]
    exact = ranking.tiers[0]
    assert [g.codecs for g in exact.groups] == [("orjson", "msgspec-json"), ("ujson",), ("json",)]
    assert [round(m.ratio, 2) for m in exact.margins] == [2.0, 2.0]
    assert ranking.leaders == ("orjson", "msgspec-json")
    assert verdict_line(ranking).startswith(
        "fastest exact, by round trip (dumps + loads): orjson and msgspec-json: tied within 1 % "
        "(500 µs); "
        "2.00x ± 0.01 faster than ujson; then 1 more. Faster, but ranked apart: "
        "msgspec-struct-json (lossy in dict key order only), protobuf (lossy)"
    )
    # By dumps alone, and exact only: the lossy ones are listed, not ranked.
    dumps_only = table.ranking(BY_DUMPS, exact_only=True)
    assert [t.fidelity for t in dumps_only.tiers] == ["exact"]
    assert {codec for codec, _ in dumps_only.left_out} == {"msgspec-struct-json", "protobuf"}


def test_the_overview_opens_with_one_verdict_line_per_fixture(tmp_path: Path) -> None:
    results = verdict_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    overview = (written.folder / "index.html").read_text()
    # Each fixture's verdict in its own block, beside its chart.
    blocks = re.findall(r'<ul class="verdict">(.*?)</ul>', overview, re.S)
    lines = [line for block in blocks for line in re.findall(r"<li>(.*?)</li>", block, re.S)]
    assert len(lines) == 2  # small-dict and twitter, one machine
    small, twitter = (re.sub(r"<[^>]+>", "", line) for line in lines)
    assert small.startswith("small-dict: fastest exact, by round trip (dumps + loads): ")
    assert "orjson and msgspec-json: tied" in small
    assert twitter.startswith("twitter: fastest exact, by round trip (dumps + loads): orjson")
    assert "msgspec-struct-json (lossy in dict key order only), protobuf (lossy)" in twitter
    assert "Ranked by the round trip (dumps + loads) the table shows" in overview


def test_a_fixture_page_ranks_every_codec_and_says_why_a_schema_codec_did_not_run(
    tmp_path: Path,
) -> None:
    results = verdict_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    twitter = (written.folder / "fixture-twitter.html").read_text()
    assert "lossy in dict key order only: msgspec-struct-json" in twitter
    assert '<span class="lossy">lossy in dict key order only</span>' in twitter
    # The wide table scrolls, its codec column in view: no column is cut.
    assert '<div class="wide codecs">' in twitter
    small = (written.folder / "fixture-small-dict.html").read_text().replace("\xa0", " ")
    assert "not run: timed on twitter only by default; SERKIT_BENCH_FIXTURES=small-dict" in small
    assert "not ranked: msgspec-struct-json and protobuf (timed on twitter only by default" in small
    table = small[small.index('<div class="wide codecs">') :]
    assert "no schema recorded" not in table[: table.index("</div>")]
    # The table reads as the verdict does: the ranked codecs in its order (the registry's
    # order is json first), the lossy ones after them, then those not run.
    rows = re.findall(r'<tr>\n<th class="name" scope="row">([^<]+)</th>', twitter)
    assert rows == ["orjson", "msgspec-json", "ujson", "json", "msgspec-struct-json", "protobuf"]
    rows = re.findall(r'<tr>\n<th class="name" scope="row">([^<]+)</th>', small)
    assert rows == ["orjson", "msgspec-json", "ujson", "json", "msgspec-struct-json", "protobuf"]


# ---- Every pointer leads somewhere real -------------------------------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs"
# A pointer to the manual, as pages and help texts write one: docs/page.md#heading.
DOCS_POINTER = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def _slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (Python-Markdown's toc slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def broken_docs_pointers(text: str) -> list[str]:
    """Each docs/page.md#anchor in `text` whose page or heading does not exist."""
    broken = []
    for page, anchor in DOCS_POINTER.findall(text):
        path = DOCS / page
        if not path.is_file():
            broken.append(f"docs/{page}")
            continue
        headings = re.findall(r"^#+\s+(.*?)\s*$", path.read_text(), flags=re.M)
        if anchor and anchor not in {_slug(h) for h in headings}:
            broken.append(f"docs/{page}#{anchor}")
    return broken


def broken_links(folder: Path) -> list[str]:
    """Each href or src of every page under `folder` that leads nowhere: a file that is not
    there, an #anchor no element has, or an address off this machine."""
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.links: list[str] = []
            self.ids: set[str] = set()

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            for name, value in attrs:
                if name in ("href", "src") and value:
                    self.links.append(value)
                if name in ("id", "name") and value:
                    self.ids.add(value)

    pages: dict[Path, Page] = {}
    for path in sorted(folder.rglob("*.html")):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = page
    broken = []
    for path, page in pages.items():
        for link in page.links:
            if link.startswith(("data:", "mailto:")):
                continue
            where = f"{path.relative_to(folder.resolve())}: {link}"
            if re.match(r"^[a-z]+:", link) or link.startswith("//"):
                broken.append(f"{where} (leaves the report)")
                continue
            target, _, anchor = link.partition("#")
            resolved = (path.parent / target).resolve() if target else path
            if not resolved.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and resolved in pages and anchor not in pages[resolved].ids:
                broken.append(f"{where} (no such anchor)")
        text = re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))
        broken += [f"{path.name}: {p}" for p in broken_docs_pointers(text)]
    return broken


def test_every_link_of_a_built_report_leads_somewhere_real(tmp_path: Path) -> None:
    """Three pointers led to README sections that do not exist."""
    for machines in (("box-a", "box-b"), ("only-box",)):
        results = write_tree(tmp_path / machines[0] / "results", machines=machines)
        written = report_html.write_report(
            tmp_path, results, tmp_path / machines[0] / "reports", asv_runner=None
        )
        assert len(written.pages) > 3
        assert broken_links(written.folder.parent) == [], machines
    assert "README" not in (written.folder / "hosts.html").read_text()


def test_the_link_walk_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(
        '<a href="b.html#top">b</a> <a href="c.html">c</a> <a href="https://x.org/">x</a>'
        '<p id="here">see docs/report.md#no-such-heading and docs/nowhere.md</p>'
        '<a href="#here">here</a>'
    )
    (tmp_path / "b.html").write_text('<h1 id="bottom">b</h1>')
    assert broken_links(tmp_path) == [
        "a.html: b.html#top (no such anchor)",
        "a.html: c.html (no such file)",
        "a.html: https://x.org/ (leaves the report)",
        "a.html: docs/report.md#no-such-heading",
        "a.html: docs/nowhere.md",
    ]


def test_every_help_text_that_points_at_the_manual_leads_somewhere_real(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from test_cli import _every_command

    from serkit.cli import build_parser

    pointed = 0
    for words in _every_command(build_parser()):
        with pytest.raises(SystemExit):
            main([*words, "--help"])
        out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
        # ... and may break a pointer after a hyphen
        while (joined := re.sub(r"(docs/[\w.#-]*-) (?=\w)", r"\1", out)) != out:
            out = joined
        assert not re.search(r"see (the )?README", out, flags=re.I), words  # no such sections
        assert broken_docs_pointers(out) == [], words
        pointed += bool(DOCS_POINTER.search(out))
    assert pointed >= 10


def test_a_page_with_nothing_to_show_is_out_of_the_menu_and_says_what_fills_it(
    tmp_path: Path,
) -> None:
    results = write_tree(tmp_path / "results", machines=("only-box",))
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    overview = (written.folder / "index.html").read_text()
    menu = re.search(r"<nav>.*?</nav>", overview, flags=re.S)
    assert menu is not None
    assert 'href="versions.html"' in menu.group(0)  # a ujson release axis: filled
    assert 'href="history.html"' not in menu.group(0) and 'href="pythons.html"' not in menu.group(0)
    assert (
        '<a href="pythons.html">Python versions</a> (filled by <code>serkit bench --matrix</code>)'
        in overview
    )
    assert (
        '<a href="history.html">History</a> (filled by <code>serkit bench</code> run a second time)'
        in overview
    )
    history = (written.folder / "history.html").read_text()
    assert "a second <code>serkit bench</code> fills this page" in history


def test_the_overview_says_how_to_serve_asvs_pages_which_need_the_network(
    tmp_path: Path,
) -> None:
    """asv's pages load jQuery and flot from CDNs; no maintained PyPI package ships them."""

    def fake_asv(where: Path, args: list[str]) -> int:
        config = json.loads(Path(args[args.index("--config") + 1]).read_text())
        Path(config["html_dir"]).mkdir()
        (Path(config["html_dir"]) / "index.html").write_text("asv")
        return 0

    results = write_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=fake_asv)
    overview = " ".join((written.folder / "index.html").read_text().split())
    assert "They need internet access" in overview
    serve = f"python -m http.server -b 127.0.0.1 -d {written.folder / 'asv'}"
    assert f"<code>{serve}</code>" in overview


def _axes(figure: Any) -> dict[str, Any]:
    """Each x axis of a figure by its trace name (x, x2, ...)."""
    layout = figure.layout
    return {name.replace("axis", ""): layout[name] for name in layout if name.startswith("xaxis")}


def test_charts_never_draw_bars_on_a_log_axis_and_read_in_one_unit(tmp_path: Path) -> None:
    """Log bars made a 2.6x difference look 20x; ticks mixed 10µ, 100µ and 0.001."""
    from serkit.report.snapshot_charts import snapshot_figure, typed_figure

    typed = gather(read_tree(typed_tree(tmp_path / "typed")))
    plain = gather(read_tree(write_tree(tmp_path / "plain")))
    figures = [snapshot_figure(t) for tables in plain.snapshots.values() for t in tables]
    figures += [snapshot_figure(t) for tables in typed.snapshots.values() for t in tables]
    figures += [f for t in typed.snapshots["twitter"] if (f := typed_figure(t)) is not None]
    assert len(figures) >= 3
    for figure in figures:
        axes = _axes(figure)
        for trace in figure.data:
            axis = axes[trace.xaxis]
            if trace.type == "bar":
                assert axis.type != "log" and axis.rangemode == "tozero", trace.name
            # One unit, written out: no SI prefixes on the ticks, the unit in the title.
            assert axis.exponentformat == "none", trace.name
            assert axis.title.text, trace.name
    times = snapshot_figure(plain.snapshots["small-dict"][0])
    dumps = next(t for t in times.data if t.name == "dumps")
    assert dumps.mode == "markers"
    unit = _axes(times)[dumps.xaxis].title.text
    assert unit == "µs per call (log scale)"  # the fixtures' times are 5-10 µs
    assert min(v for v in dumps.x if v) >= 1 and max(v for v in dumps.x if v) < 1000
    assert dumps.customdata[0].endswith("µs")


def test_the_size_chart_shows_the_compressed_sizes(tmp_path: Path) -> None:
    from serkit.report.snapshot_charts import snapshot_figure

    data = gather(read_tree(write_tree(tmp_path)))
    table = data.snapshots["small-dict"][0]
    figure = snapshot_figure(table)
    sizes = {t.name: list(t.x) for t in figure.data if t.name.startswith("size")}
    assert set(sizes) == {"size: encoded", "size: gzip-6", "size: zstd-3"}
    for name, compressor in (("size: gzip-6", "gzip-6"), ("size: zstd-3", "zstd-3")):
        assert sizes[name] == [
            r.compressed[compressor] for r in table.rows_in_verdict_order if r.measured
        ]


def test_small_slips_one_word_per_meaning_units_and_plurals(tmp_path: Path) -> None:
    """'-', 'not run' and 'n/a' meant the same; two columns were titled 'round trip'; the
    commit date read 'newest'; RAM read 25276063744; '1 runs'."""
    results = write_tree(tmp_path / "results")
    profile = json.loads((results / "box-a" / "machine.json").read_text())
    profile["ram"] = "25276063744"
    (results / "box-a" / "machine.json").write_text(json.dumps(profile))
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    pages = {p.name: p.read_text() for p in written.folder.glob("*.html")}
    for name, page in pages.items():
        assert "n/a" not in page, name  # "not run", "-" and "not recorded" each say one thing
        assert not re.search(r"\b1 (runs|files|environments)\b", page), name
    snapshot = pages["fixture-small-dict.html"]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", snapshot)
    assert "round trip fidelity" in headers
    assert [h for h in headers if h.startswith("round trip time, ")]
    assert "round trip" not in headers
    assert ", commit date 20" in snapshot and ", newest 20" not in snapshot
    assert (
        "<em>not run</em>: the codec did not run" in snapshot
        and "<em>-</em>: no value:" in snapshot
    )
    hosts = pages["hosts.html"]
    assert "23.5 GiB" in hosts and "25276063744" not in hosts


def test_the_fidelity_page_names_the_fixtures_nothing_ran_on_instead_of_empty_columns(
    tmp_path: Path,
) -> None:
    """A quick run's fidelity grid was 9 of 14 columns of blanks."""
    import itertools

    from serkit.suite.benchmark_names import ROUND_TRIP_EXACT

    results = write_tree(tmp_path / "results", machines=("only-box",))
    for path in (results / "only-box").glob("*-env-*.json"):  # nothing ran on random-dicts-10
        data = json.loads(path.read_text())
        row = data["results"][ROUND_TRIP_EXACT]
        combos = list(itertools.product(*row[1]))
        row[0] = [None if "random-dicts-10" in c[1] else v for c, v in zip(combos, row[0])]
        path.write_text(json.dumps(data))
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    page = (written.folder / "fidelity.html").read_text()
    assert "<th>random-dicts-10</th>" not in page and "<th>small-dict</th>" in page
    assert "Not run here: random-dicts-10 (<code>serkit bench --full</code>" in page
    assert "not run</td>" not in page  # every cell shown holds exact or lossy


def _git(where: Path, *args: str) -> None:
    import subprocess

    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    subprocess.run(command, cwd=where, check=True, capture_output=True)


def test_asv_publish_is_given_only_branches_the_checkout_has(tmp_path: Path) -> None:
    """A clone of another branch has no `main`, and asv publish stopped on it with a
    traceback: it is handed the branch checked out instead, or HEAD when detached."""
    from serkit.checkout import branches_here

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "feature")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    assert branches_here(repo, ["main"]) == ["feature"]
    _git(repo, "branch", "main")
    assert branches_here(repo, ["main", "gone"]) == ["main"]
    _git(repo, "branch", "-D", "main")
    _git(repo, "checkout", "-q", "--detach")
    assert branches_here(repo, ["main"]) == ["HEAD"]
    # What asv publish is handed: the config's own branches, narrowed so.
    handed: list[Any] = []

    def fake_asv(root: Path, args: list[str]) -> int:
        handed.append(json.loads(Path(args[args.index("--config") + 1]).read_text())["branches"])
        return 1

    results = write_tree(tmp_path / "results")
    tree = read_tree(results)
    assert not report_html.asv_publish(repo, tree, tmp_path / "asv", fake_asv, [])
    assert handed == [["HEAD"]]


def test_asv_publish_is_given_the_branch_checked_out_when_it_is_ahead_of_the_configs(
    tmp_path: Path,
) -> None:
    """asv plots results only at its branches' commits: a report made on a feature branch
    ahead of `main` plotted nothing, silently. That branch is handed to asv too, and where
    no result's commit is on a branch asv is given, one line says asv's pages are empty."""
    from serkit.checkout import branches_here

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    _git(repo, "checkout", "-q", "-b", "feature")
    assert branches_here(repo, ["main"]) == ["main"]  # the same commit: on main
    _git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    assert branches_here(repo, ["main"]) == ["main", "feature"]
    warnings: list[str] = []
    tree = read_tree(write_tree(tmp_path / "results"))  # commits of no branch here
    report_html.asv_publish(repo, tree, tmp_path / "asv", lambda root, args: 1, warnings)
    (why,) = [w for w in warnings if "asv's pages show no results" in w]
    assert "(main, feature)" in why


# ---- Issue 57: the front door and a table that shows what the verdict ranks by ----------


TIMES = "\N{MULTIPLICATION SIGN}"  # as people write a factor


def test_the_ratio_to_json_reads_as_faster_or_slower() -> None:
    assert template_env.than_json(0.0993) == f"10.1{TIMES} faster"
    assert template_env.than_json(2.3) == f"2.3{TIMES} slower"
    assert template_env.than_json(0.5) == f"2{TIMES} faster"
    assert template_env.than_json(1.0004) == "as fast"
    assert template_env.than_json(None) == "-"


def test_the_round_trip_column_is_dumps_plus_loads_as_the_verdict_ranks_it(
    tmp_path: Path,
) -> None:
    """A quick run times no round trip itself: the column sums each process's dumps and
    loads, says so, and its leader's figure is the verdict's."""
    results = verdict_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    small = (written.folder / "fixture-small-dict.html").read_text().replace("\xa0", " ")
    assert "<th" in small and ">round trip time, dumps + loads</th>" in small
    assert "fastest exact, by round trip (dumps + loads): orjson and msgspec-json: tied" in small
    assert "(25.0 µs)" in small  # the verdict's figure for orjson, 10 µs + 15 µs
    row = small[small.index('scope="row">orjson</th>') :]
    row = row[: row.index("</tr>")]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    assert cells[0] == "exact" and cells[1].startswith("25.0 µs<br>")
    assert "8 processes" in cells[1]
    assert f"4{TIMES} faster" in row  # vs json: json takes 4x as long
    json_row = small[small.index('scope="row">json</th>') :]
    assert "<td>reference</td>" in json_row[: json_row.index("</tr>")]
    assert "<th>vs json</th>" in small and "<th>x json</th>" not in small


def test_fidelity_is_worded_alike_on_the_fidelity_page_and_the_fixture_page(
    tmp_path: Path,
) -> None:
    results = verdict_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    key_order = '<span class="lossy">lossy in dict key order only</span>'
    fidelity = (written.folder / "fidelity.html").read_text()
    twitter = (written.folder / "fixture-twitter.html").read_text()
    row = fidelity[fidelity.index('scope="row">msgspec-struct-json</th>') :]
    assert key_order in row[: row.index("</tr>")]
    assert key_order in twitter


def test_the_hosts_page_shows_code_as_code_and_links_the_manual(tmp_path: Path) -> None:
    """Raw backticks, and an unlinked docs/comparing-hosts.md#..., were shown as text."""
    results = verdict_tree(tmp_path / "results")
    guide = tmp_path / "docs" / "comparing-hosts.md"
    guide.parent.mkdir()
    guide.write_text("# Comparing hosts\n")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    hosts = (written.folder / "hosts.html").read_text()
    body = hosts[hosts.index("<main>") :]
    assert "`" not in body
    assert "<code>serkit noise</code>" in body and "<code>serkit power</code>" in body
    link = re.search(r'<a href="([^"]+)">Results from N hosts by hand</a>', body)
    assert link is not None
    target, anchor = link.group(1).split("#")
    assert (written.folder / target).resolve() == guide.resolve()
    assert anchor == "results-from-n-hosts-by-hand"
    # Away from a checkout's manual, the section is named, not linked to nowhere.
    elsewhere = report_html.write_report(
        tmp_path / "results", results, tmp_path / "elsewhere", asv_runner=None
    )
    hosts = (elsewhere.folder / "hosts.html").read_text()
    assert "“Results from N hosts by hand” in <code>docs/comparing-hosts.md</code>" in hosts


def test_the_overview_charts_each_verdict_beside_its_words(tmp_path: Path) -> None:
    results = verdict_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    overview = (written.folder / "index.html").read_text()
    sections = re.findall(r'<section class="answer">(.*?)</section>', overview, re.S)
    assert len(sections) == 2  # small-dict and twitter
    for section in sections:
        assert '<ul class="verdict">' in section and '<figure class="answer-chart">' in section
        assert "Bars: each codec's round trip per call, the table's dumps + loads" in section
        assert "whiskers: the interquartile range between its processes" in section
    assert '<script src="plotly.min.js"></script>' in overview  # the report's own copy
    assert "values with a number" in overview and "Values with a number: asv lists" in overview


def test_the_verdict_chart_shows_the_leaders_round_trips_by_class(tmp_path: Path) -> None:
    from serkit.report.snapshot_charts import verdict_figure

    data = gather(read_tree(verdict_tree(tmp_path / "results")))
    figure = verdict_figure(data.snapshots["twitter"][0])
    assert [(trace.name, list(trace.y)) for trace in figure.data] == [
        ("exact", ["orjson", "msgspec-json", "ujson", "json"]),
        ("lossy in dict key order only", ["msgspec-struct-json"]),
        ("lossy", ["protobuf"]),
    ]
    assert figure.data[0].x[0] == pytest.approx(500, rel=1e-3)  # 200 + 300 µs, in µs
    assert figure.layout.xaxis.title.text == "round trip, dumps + loads (µs per call)"


# --- the verdict's words: unsafe said wherever ranked, ties within 10 %, the table's numbers ---

UNSAFE_CODECS = ["json", "orjson", "pickle-p5", "pickle-p4", "marshal", "msgspec-msgpack"]
# sensor-record, as the issue found it: msgspec-msgpack (lossy: it turns the namedtuple into
# a list) and pickle (unsafe) both ahead of the fastest exact safe codec.
UNSAFE_DUMPS = [20e-6, 3e-6, 2e-6, 2.01e-6, 1.5e-6, 0.4e-6]


def _unsafe_tree(root: Path) -> Path:
    from results_factory import VERDICT_SHAPE, results_file, write_benchmarks

    from serkit.suite.benchmark_names import ROUND_TRIP_EXACT, ROUND_TRIP_KEY_ORDER_ONLY

    grid = [[repr(c) for c in UNSAFE_CODECS], [repr("sensor-record")]]
    suite: dict[str, dict[str, Any]] = {
        DUMPS: {"type": "time", "unit": "seconds", "grid": grid, "repeat": 1},
        LOADS: {"type": "time", "unit": "seconds", "grid": grid, "repeat": 1},
        ROUND_TRIP_EXACT: {"type": "track", "unit": "1 = exact", "grid": grid},
        ROUND_TRIP_KEY_ORDER_ONLY: {"type": "track", "unit": "1 = key order", "grid": grid},
    }
    write_benchmarks(root, suite)
    loads = [v * 1.5 for v in UNSAFE_DUMPS]
    values: dict[str, list[float | None]] = {
        DUMPS: list(UNSAFE_DUMPS),
        LOADS: list(loads),
        ROUND_TRIP_EXACT: [1, 1, 1, 1, 0, 0],
        ROUND_TRIP_KEY_ORDER_ONLY: [None, None, None, None, 0, 0],
    }
    samples = {
        name: [[v * f for f in VERDICT_SHAPE] for v in found]
        for name, found in ((DUMPS, UNSAFE_DUMPS), (LOADS, loads))
    }
    env = {"python": "3.11", "requirements": {"msgspec": "0.22.0", "orjson": "3.10.18"}}
    data = results_file("box-unsafe", values, env=env, benchmarks=suite, samples=samples)
    write_machine(root, "box-unsafe", [data])
    return root


def _said(html: str, tag: str) -> list[str]:
    """Each `tag` element's text, tags stripped: one verdict line or table row each."""
    found = re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", html, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", item)).split()) for item in found]


def test_no_verdict_line_or_row_names_pickle_or_marshal_without_unsafe(tmp_path: Path) -> None:
    from serkit.report.summary import summary

    results = _unsafe_tree(tmp_path / "results")
    written = report_html.write_report(tmp_path, results, tmp_path / "reports", asv_runner=None)
    overview = (written.folder / "index.html").read_text()
    page = (written.folder / report_html.page_name("sensor-record")).read_text()
    fidelity = (written.folder / "fidelity.html").read_text()
    (verdict,) = [line for line in _said(overview, "li") if "fastest" in line]
    assert verdict.endswith(
        "Faster, but ranked apart: msgspec-msgpack (lossy: namedtuple->list), "
        "pickle-p5 (exact, unsafe on untrusted bytes), marshal (lossy, unsafe on untrusted bytes)"
    )
    found = summary(results)
    assert found is not None
    lines = [
        *_said(overview, "li"),
        *_said(page, "li"),
        *_said(page, "tr"),
        *_said(fidelity, "tr"),
        *(" ".join(row) for row in found.rows),
    ]
    named = [line for line in lines if "pickle" in line or "marshal" in line]
    assert len(named) >= 11  # the Overview, the page's verdict and rows, Fidelity, the summary
    for line in named:
        assert "unsafe on untrusted bytes" in line, line
    assert "exact, unsafe on untrusted bytes: pickle-p5 and pickle-p4: tied within 1 %" in page
    assert "msgspec-msgpack (namedtuple-&gt;list" in page  # what it lost, escaped in HTML
    assert "ranked apart after all the safe ones" in overview  # the legend says which
    # ... and so does the Overview's chart, in its legend and beside each such codec's bar.
    from serkit.report.snapshot_charts import verdict_figure

    figure = verdict_figure(gather(read_tree(results)).snapshots["sensor-record"][0])
    charted = [(trace.name, label) for trace in figure.data for label in trace.y]
    named = [(name, label) for name, label in charted if "pickle" in label or "marshal" in label]
    assert named and all(
        "unsafe on untrusted bytes" in name and label.endswith("(unsafe)") for name, label in named
    )


def test_the_verdicts_numbers_are_the_tables_and_its_ties_within_10_pct(tmp_path: Path) -> None:
    from serkit.compare.ranking import TIE_SPAN
    from serkit.compare.verdict_words import ranking_lines, verdict_line
    from serkit.units import seconds

    data = gather(read_tree(verdict_tree(tmp_path / "results")))
    for tables in data.snapshots.values():
        for table in tables:
            rows = {row.codec: row for row in table.rows}
            ranked = table.verdict
            lines = ranking_lines(ranked)
            for tier, line in zip(ranked.tiers, lines):
                for group in tier.groups:
                    times = rows[group.codecs[0]].times
                    assert group.median == times["dumps"] + times["loads"]  # the table's
                    if group.resolved and len(group.codecs) > 1:
                        assert group.within is not None and group.within <= TIE_SPAN
                assert f"{seconds(tier.groups[0].median)})" in line
                for margin, (a, b) in zip(tier.margins, zip(tier.groups, tier.groups[1:])):
                    assert margin.ratio == b.median / a.median
            assert f"{seconds(ranked.tiers[0].groups[0].median)})" in verdict_line(ranked)
