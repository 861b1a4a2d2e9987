"""A run from the future: forged or future-dated host records and results files never
displace nor hide the genuine runs, and dates out of range are one line, never a
traceback. Dates are compared as instants, with their offsets, never as text."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from results_factory import SUITE, two_hosts, write_benchmarks

from serkit.cli import main
from serkit.compare.comparison import compare
from serkit.results.host_file import MAX_RUNS, merge_incoming, read_runs, write_runs
from serkit.results.merge import merge
from serkit.results.tree import read_tree

UTC = datetime.timezone.utc
NOW = datetime.datetime.now(UTC).replace(microsecond=0)
GENUINE = "12345678-env-0.json"
YEAR_2100_MS = 4_102_444_800_000


def fake_discover(folder: Path) -> Path:
    write_benchmarks(folder, SUITE)
    return folder / "benchmarks.json"


def _iso(moment: datetime.datetime) -> str:
    return moment.isoformat(timespec="seconds")


def test_a_record_23_hours_ahead_in_another_offset_is_from_the_future() -> None:
    stored = [
        {"recorded_at": _iso(NOW - datetime.timedelta(hours=i + 1)), "results": [f"r{i}.json"]}
        for i in range(MAX_RUNS)
    ]
    files = {f"r{i}.json" for i in range(MAX_RUNS)}
    # 23 hours ahead, written in the offset of UTC-23, reads as a moment earlier today.
    ahead = NOW + datetime.timedelta(hours=23)
    shifted = _iso(ahead.astimezone(datetime.timezone(datetime.timedelta(hours=-23))))
    assert shifted < _iso(NOW + datetime.timedelta(hours=1))  # as text, before now + 1 h
    # And 199 records half an hour ahead (inside the clock skew), naming the store's files.
    soon = NOW + datetime.timedelta(minutes=30)
    forged = [{"recorded_at": shifted, "results": sorted(files), "forged": True}] + [
        {"recorded_at": _iso(soon), "results": [f"r{i}.json"], "forged": i} for i in range(199)
    ]
    merged = merge_incoming(stored, forged, files)
    assert merged.runs == sorted(stored, key=lambda r: r["recorded_at"])
    assert merged.future == 1 and merged.rotated == 0 and merged.claimed == 199


def test_a_stored_record_from_the_future_hides_no_genuine_run(tmp_path: Path) -> None:
    genuine = {"recorded_at": _iso(NOW - datetime.timedelta(days=1)), "hostname": "genuine"}
    ahead = NOW + datetime.timedelta(hours=23)
    forged = {
        "recorded_at": _iso(ahead.astimezone(datetime.timezone(datetime.timedelta(hours=-23)))),
        "hostname": "forged",
    }
    write_runs(tmp_path / "serkit-host.yaml", "box", [genuine, forged])
    warnings: list[str] = []
    assert read_runs(tmp_path, warnings) == [genuine]
    (warning,) = warnings
    assert "left out 1 host record(s) dated after now" in warning


def test_a_record_in_year_one_with_an_offset_is_read_as_the_oldest(tmp_path: Path) -> None:
    from serkit.report.template_env import moment_text
    from serkit.results.host_file import run_instant

    year_one = {"recorded_at": "0001-01-01T00:00:00+01:00", "hostname": "old"}
    genuine = {"recorded_at": _iso(NOW - datetime.timedelta(days=1)), "hostname": "genuine"}
    assert run_instant(year_one) is None
    assert moment_text(year_one["recorded_at"]) == year_one["recorded_at"]
    root = two_hosts(tmp_path / "results")
    write_runs(root / "b" / "serkit-host.yaml", "b", [genuine, year_one])
    assert read_runs(root / "b", []) == [year_one, genuine]
    assert main(["hosts", "--results", str(root)]) == 0


def _forged_2100(root: Path) -> Path:
    """Host b's genuine file, and beside it a run named and dated 2100, every value x10."""
    two_hosts(root)
    data = json.loads((root / "b" / GENUINE).read_text())
    column = data["result_columns"].index("started_at")
    result = data["result_columns"].index("result")
    for row in data["results"].values():
        row[column] = YEAR_2100_MS
        row[result] = [v * 10 if v else v for v in row[result]]
    forged = root / "b" / "12345678-env-0@21000101T000000Z.json"
    forged.write_text(json.dumps(data))
    return forged


def test_a_results_file_from_2100_is_skipped_and_compare_reads_the_genuine_one(
    tmp_path: Path,
) -> None:
    root = tmp_path / "results"
    forged = _forged_2100(root)
    tree = read_tree(root)
    assert any(str(forged) in w and "cannot come from the future" in w for w in tree.warnings)
    result = compare(tree, "a", "b")
    ratios = {round(p.ratio, 3) for p in result.pairs if p.ratio is not None}
    assert ratios == {1.0}


def test_a_merge_leaves_a_results_file_from_2100_out_and_names_it(tmp_path: Path) -> None:
    source = tmp_path / "results"
    forged = _forged_2100(source)
    result = merge([source], tmp_path / "store", fake_discover)
    assert not list((tmp_path / "store" / "b").glob("*@2100*"))
    assert any(f"left out {forged}" in w and "future" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("field", "value"), [("started_at", 1e18), ("date", 1e18), ("date", -1e15)]
)
def test_a_date_out_of_range_is_one_line_in_merge_and_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: float
) -> None:
    root = two_hosts(tmp_path / "results")
    path = root / "b" / GENUINE
    data = json.loads(path.read_text())
    if field == "started_at":
        column = data["result_columns"].index("started_at")
        for row in data["results"].values():
            row[column] = value
    else:
        data[field] = value
    path.write_text(json.dumps(data))
    result = merge([root], tmp_path / "store", fake_discover)
    assert any(f"left out {path}" in w for w in result.warnings)
    tree = read_tree(root)
    assert any(str(path) in w and "no moment" in w for w in tree.warnings)
    main(["compare", "a", "b", "--results", str(root)])
    assert "Traceback" not in capsys.readouterr().err


def test_a_run_named_for_another_moment_is_filed_under_its_own(tmp_path: Path) -> None:
    root = two_hosts(tmp_path / "results")
    genuine = root / "b" / GENUINE
    genuine.rename(root / "b" / "12345678-env-0@21000101T000000Z.json")
    merge([root], tmp_path / "store", fake_discover)
    (filed,) = [p.name for p in (tmp_path / "store" / "b").glob("12345678-*.json")]
    assert "@2100" not in filed and filed.endswith("@20231114T221320Z.json")


def test_records_naming_the_stores_own_files_displace_no_genuine_run(tmp_path: Path) -> None:
    from results_factory import RUNNERS, shard_results, write_results

    from serkit.results.host_file import HOST_FILE

    machine = next(iter(RUNNERS))
    store = tmp_path / "store"
    merge([shard_results(tmp_path / "genuine", machine, 1, 2)], store, fake_discover)
    (genuine,) = read_runs(store / machine, []) or []
    named = sorted(p.name for p in (store / machine).glob("12345678-*.json"))
    soon = _iso(NOW + datetime.timedelta(minutes=30))  # inside the clock skew
    forged = [
        {"recorded_at": soon, "hostname": f"forged{i}", "results": named} for i in range(MAX_RUNS)
    ]
    hostile = tmp_path / "hostile"
    write_runs(write_results(hostile, machine, []) / HOST_FILE, machine, forged)
    write_benchmarks(hostile, SUITE)
    merge([hostile], store, fake_discover)
    assert genuine in (read_runs(store / machine, []) or [])
