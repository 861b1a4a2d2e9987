"""serkit/results/history.py: a store keyed by run, each run under its own name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from results_factory import ENV, results_file, values, write_benchmarks, write_results

from serkit.results.history import (
    dated_name,
    file_moment,
    file_run,
    file_runs,
    is_dated,
    plain_name,
    stamp,
    stored_runs,
)
from serkit.results.host_file import HOST_FILE, write_runs
from serkit.results.tree import read_tree

WEEK_MS = 7 * 86_400_000
FIRST = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def test_a_run_is_named_by_asvs_name_and_its_moment() -> None:
    assert stamp(FIRST) == "20231114T221320Z"
    name = "12345678-virtualenv-py3.11-orjson3.10.18.json"
    dated = dated_name(name, FIRST)
    assert dated == "12345678-virtualenv-py3.11-orjson3.10.18@20231114T221320Z.json"
    assert is_dated(dated) and not is_dated(name)
    assert plain_name(dated) == name and plain_name(name) == name
    assert dated_name(dated, FIRST + WEEK_MS).endswith("@20231121T221320Z.json")


def test_the_moment_is_the_latest_started_at_asv_recorded(tmp_path: Path) -> None:
    data = results_file("box", values(), started_at=FIRST)
    column = data["result_columns"].index("started_at")
    data["results"]["bench_plain.Startup.time_startup"][column] = FIRST + 5000  # a later round
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert file_moment(path) == FIRST + 5000
    for row in data["results"].values():
        row[column] = None
    path.write_text(json.dumps(data))
    assert file_moment(path) is None
    path.write_text("{not json")
    assert file_moment(path) is None


def test_filing_renames_each_finished_run_and_keeps_every_value(tmp_path: Path) -> None:
    folder = write_results(tmp_path, "box", [results_file("box", values(), started_at=FIRST)])
    (plain,) = [p.name for p in folder.glob("1234*.json")]
    before = read_tree(tmp_path).machines["box"].measurements
    (filed,) = file_runs(folder, [plain, "12345678-not-run-here.json"])
    assert filed.name == dated_name(plain, FIRST) and not (folder / plain).exists()
    after = read_tree(tmp_path).machines["box"].measurements
    assert [(m.benchmark, m.params, m.value) for m in after] == [
        (m.benchmark, m.params, m.value) for m in before
    ]
    assert {m.run_at for m in after} == {FIRST}
    assert file_run(filed) == filed  # filed once: it stays


def test_a_second_run_at_the_same_commit_is_a_second_file(tmp_path: Path) -> None:
    folder = write_results(tmp_path, "box", [results_file("box", values(), started_at=FIRST)])
    (plain,) = [p.name for p in folder.glob("1234*.json")]
    file_run(folder / plain)
    later = results_file("box", values(1.2), started_at=FIRST + WEEK_MS)
    (folder / plain).write_text(json.dumps(later))  # asv's name again, a week on
    file_run(folder / plain)
    names = sorted(p.name for p in folder.glob("1234*.json"))
    assert names == [dated_name(plain, FIRST), dated_name(plain, FIRST + WEEK_MS)]
    tree = read_tree(tmp_path)
    assert len({m.file for m in tree.machines["box"].measurements}) == 2 and not tree.warnings


def test_a_name_taken_by_another_run_of_the_same_moment_keeps_both(tmp_path: Path) -> None:
    folder = write_results(tmp_path, "box", [results_file("box", values(), started_at=FIRST)])
    (plain,) = [p.name for p in folder.glob("1234*.json")]
    other = results_file("box", values(2.0), started_at=FIRST)
    (folder / dated_name(plain, FIRST)).write_text(json.dumps(other))
    warnings: list[str] = []
    assert file_run(folder / plain, warnings) == folder / plain
    assert (folder / plain).exists() and "holds another run of the same moment" in warnings[0]
    # The same content under that name: the copy under asv's name goes.
    (folder / dated_name(plain, FIRST)).write_bytes((folder / plain).read_bytes())
    assert file_run(folder / plain) == folder / dated_name(plain, FIRST)
    assert not (folder / plain).exists()


def test_stored_runs_are_newest_first_with_the_host_that_filed_them(tmp_path: Path) -> None:
    older = results_file("box", values(), started_at=FIRST)
    newer = results_file("box", values(), started_at=FIRST + WEEK_MS)
    folder = write_results(tmp_path, "box", [older])
    (plain,) = [p.name for p in folder.glob("1234*.json")]
    file_run(folder / plain)
    (folder / plain).write_text(json.dumps(newer))
    filed = file_run(folder / plain)
    write_runs(folder / HOST_FILE, "box", [{"kernel": "6.8", "results": [filed.name]}])
    warnings: list[str] = []
    runs = stored_runs(tmp_path, "box", warnings)
    assert [r.run_at for r in runs] == [FIRST + WEEK_MS, FIRST] and not warnings
    assert runs[0].host == {"kernel": "6.8", "results": [filed.name]} and runs[1].host is None
    assert runs[0].env.python == ENV["python"]
    assert runs[0].code["bench_time.Dumps.time_dumps"] == "code-of-bench_time.Dumps.time_dumps"
    assert stored_runs(tmp_path, "nobody", warnings) == []


@pytest.mark.slow
def test_asvs_own_tools_read_a_store_of_filed_runs(tmp_path: Path) -> None:
    """asv publish plots the store: every filed run is read, none is skipped."""
    store = tmp_path / "results"
    write_benchmarks(store)
    folder = write_results(store, "box", [results_file("box", values(), started_at=FIRST)])
    (plain,) = [p.name for p in folder.glob("1234*.json")]
    file_run(folder / plain)
    (folder / plain).write_text(
        json.dumps(results_file("box", values(1.5), started_at=FIRST + WEEK_MS))
    )
    file_run(folder / plain)
    script = (
        "import sys\n"
        "from asv.results import iter_results, iter_results_for_machine_and_hash\n"
        "found = list(iter_results(sys.argv[1]))\n"
        "by_commit = list(iter_results_for_machine_and_hash(sys.argv[1], 'box', '12345678'))\n"
        "print(len(found), len(by_commit), sorted({r.commit_hash[:8] for r in found}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(store)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["2", "2", "['12345678']"]
