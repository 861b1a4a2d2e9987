"""A results tree someone else wrote: markup in benchmark names, a broken machine profile.

Every command that reads results (`compare`, `report`, `hosts`) skips what is unsafe or
malformed with one warning, shows no traceback, and passes nothing of it on to asv.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from results_factory import BENCHMARKS, COMMIT, results_file, two_hosts, write_benchmarks

from serkit.cli import main
from serkit.report import html as report_html
from serkit.results.publishable import publishable_copy
from serkit.results.tree import read_tree, safe_benchmark

SCRIPT = "<script>alert(1)</script>"
HOSTILE_NAME = f"bench_time.Dumps.time_{SCRIPT}"


def _with_hostile_rows(root: Path) -> Path:
    """Two hosts; host b's results also hold a benchmark named with markup, and a
    parameter with markup in a benchmark of a safe name."""
    two_hosts(root)
    grid = [[f"'{SCRIPT}'"], ["'small'"]]
    hostile = {
        HOSTILE_NAME: {"type": "time", "unit": "seconds", "grid": [["'json'"], ["'small'"]]},
        "bench_time.Loads.time_loads": {"type": "time", "unit": "seconds", "grid": grid},
    }
    write_benchmarks(root, {**BENCHMARKS, **hostile})
    data = results_file("b", {n: [1e-6] for n in hostile}, benchmarks=hostile)
    # asv keeps one file per commit and environment; this one is another environment.
    data["env_name"] += "-extra"
    (root / "b" / f"{COMMIT[:8]}-{data['env_name']}.json").write_text(json.dumps(data))
    return root


def test_names_and_parameters_outside_the_safe_sets_are_refused() -> None:
    assert safe_benchmark("bench_time.Dumps.time_dumps", ["'json'", "'random-dicts-1000'", "3"])
    assert not safe_benchmark(HOSTILE_NAME)
    assert not safe_benchmark("bench_time.Dumps.time_dumps", [f"'{SCRIPT}'"])
    assert not safe_benchmark("bench`x`.y")


def test_the_tree_skips_unsafe_rows_with_one_warning(tmp_path: Path) -> None:
    tree = read_tree(_with_hostile_rows(tmp_path))
    names = {m.benchmark for machine in tree.machines.values() for m in machine.measurements}
    params = {
        p for machine in tree.machines.values() for m in machine.measurements for p in m.params
    }
    assert HOSTILE_NAME not in names and HOSTILE_NAME not in tree.benchmarks
    assert not any(SCRIPT in p for p in params)
    assert "bench_time.Dumps.time_dumps" in names  # the safe rows stay
    (warning,) = [w for w in tree.warnings if "benchmark row" in w]
    assert warning.startswith("skipped 2 benchmark rows")


@pytest.mark.parametrize("fmt", ["markdown", "table", "json"])
def test_compare_shows_no_markup_from_a_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    root = _with_hostile_rows(tmp_path / "results")
    assert main(["compare", "a", "b", "--results", str(root), "--format", fmt]) == 0
    out, err = capsys.readouterr()
    assert "<script" not in out and "Traceback" not in err
    assert err.count("benchmark row") == 1


def test_markdown_escapes_markup_in_host_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "results"
    two_hosts(root)
    hostile = "b<img src=x onerror=alert(1)>"
    (root / "b").rename(root / hostile)
    for path in (root / hostile).iterdir():  # asv files each result under its machine
        data = json.loads(path.read_text())
        key = "machine" if path.name == "machine.json" else None
        if key:
            data[key] = hostile
        else:
            data["params"]["machine"] = hostile
        path.write_text(json.dumps(data))
    assert main(["compare", "a", hostile, "--results", str(root), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "<img" not in out and "&lt;img" in out


def test_asv_is_handed_only_what_serkit_read_soundly(tmp_path: Path) -> None:
    root = _with_hostile_rows(tmp_path / "results")
    (root / "a" / "machine.json").write_text('["not", "a", "profile"]')
    tree = read_tree(root)
    left_out = publishable_copy(tree, tmp_path / "clean")
    assert left_out == ["a: its machine.json is missing or not an asv machine profile"]
    assert not (tmp_path / "clean" / "a").exists()
    copied = (tmp_path / "clean").rglob("*.json")
    assert not any(SCRIPT in path.read_text() for path in copied)
    assert (tmp_path / "clean" / "b" / "machine.json").is_file()


def test_the_report_with_a_broken_profile_warns_once_and_writes_asvs_pages_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _with_hostile_rows(tmp_path / "results")
    (root / "a" / "machine.json").write_text('["not", "a", "profile"]')
    handed: list[Path] = []

    def fake_asv(where: Path, args: list[str]) -> int:
        config = json.loads(Path(args[args.index("--config") + 1]).read_text())
        handed.append(Path(config["results_dir"]))
        for path in Path(config["results_dir"]).rglob("*.json"):
            assert SCRIPT not in path.read_text()
        assert not (Path(config["results_dir"]) / "a").exists()
        Path(config["html_dir"]).mkdir()
        (Path(config["html_dir"]) / "index.html").write_text("asv")
        return 0

    written = report_html.write_report(tmp_path, root, tmp_path / "reports", asv_runner=fake_asv)
    assert handed and written.asv_pages
    assert (written.folder / "asv" / "index.html").read_text() == "asv"
    assert sum("machine profile" in w for w in written.warnings) == 2  # read, and left out
    assert not any(SCRIPT in p.read_text() for p in written.folder.glob("*.html"))


def test_a_failed_asv_publish_leaves_no_partial_folder(tmp_path: Path) -> None:
    root = two_hosts(tmp_path / "results")

    def failing_asv(where: Path, args: list[str]) -> int:
        config = json.loads(Path(args[args.index("--config") + 1]).read_text())
        Path(config["html_dir"]).mkdir()
        (Path(config["html_dir"]) / "half.html").write_text("cut short")
        return 1

    written = report_html.write_report(tmp_path, root, tmp_path / "reports", asv_runner=failing_asv)
    assert not written.asv_pages and not (written.folder / "asv").exists()
    assert any("asv publish failed" in w for w in written.warnings)
    assert (written.folder / "index.html").is_file()  # serkit's own pages, whole


@pytest.mark.slow
def test_serkit_report_with_real_asv_on_a_broken_profile_shows_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("asv")
    root = _with_hostile_rows(tmp_path / "results")
    (root / "a" / "machine.json").write_text('["not", "a", "profile"]')
    output = tmp_path / "reports"
    assert main(["report", "--results", str(root), "--into", str(output)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err, sys.executable
    assert captured.err.count("serkit: writing the report") == 1
    (folder,) = [p for p in output.iterdir() if p.is_dir()]
    asv_pages = folder / "asv"
    if asv_pages.exists():  # published whole, from the sound part only
        assert not any(SCRIPT in p.read_text(errors="replace") for p in asv_pages.rglob("*.json"))


PAYLOAD = "<img src=x onerror=alert(document.domain)>"


def _payload_tree(root: Path) -> Path:
    """Two hosts; a's machine.json carries markup in a value, a key and its code, and a
    third machine's folder is named with markup."""
    two_hosts(root)
    profile = json.loads((root / "a" / "machine.json").read_text())
    profile.update(cpu=PAYLOAD, os=f"Linux {PAYLOAD}", **{PAYLOAD: "key"})
    (root / "a" / "machine.json").write_text(json.dumps(profile))
    for path in (root / "a").glob("*-*.json"):  # asv copies the profile into each file
        data = json.loads(path.read_text())
        data["params"]["cpu"] = PAYLOAD
        path.write_text(json.dumps(data))
    listed = json.loads((root / "benchmarks.json").read_text())
    for name, row in listed.items():
        if isinstance(row, dict):
            row.update(code=f"def {name}(): {PAYLOAD}", pretty_name=PAYLOAD)
    (root / "benchmarks.json").write_text(json.dumps(listed))
    hostile = root / PAYLOAD.replace("/", "")
    hostile.mkdir()
    for path in (root / "b").iterdir():
        (hostile / path.name).write_bytes(path.read_bytes())
    return root


def real_asv(where: Path, args: list[str]) -> int:
    from serkit.run import runner

    return runner.asv(ROOT, args, quiet=True)


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_asvs_pages_hold_no_live_markup_from_a_machine_profile(tmp_path: Path) -> None:
    pytest.importorskip("asv")
    root = _payload_tree(tmp_path / "results")
    written = report_html.write_report(ROOT, root, tmp_path / "reports", asv_runner=real_asv)
    assert written.asv_pages, written.warnings
    index = json.loads((written.folder / "asv" / "index.json").read_text())
    text = json.dumps(index)
    assert "<img" not in text and "&lt;img src=x onerror" in text
    assert index["machines"]["a"]["cpu"] == PAYLOAD.replace("<", "&lt;").replace(">", "&gt;")
    assert sorted(index["machines"]) == ["a", "b"]  # the machine named with markup left out
    for path in (written.folder / "asv").rglob("*.json"):
        assert "<img" not in path.read_text(errors="replace"), path


def test_a_profile_with_markup_reaches_asv_as_text(tmp_path: Path) -> None:
    root = _payload_tree(tmp_path / "results")
    tree = read_tree(root)
    publishable_copy(tree, tmp_path / "clean")
    profile = json.loads((tmp_path / "clean" / "a" / "machine.json").read_text())
    assert profile["cpu"] == "&lt;img src=x onerror=alert(document.domain)&gt;"
    listed = (tmp_path / "clean" / "benchmarks.json").read_text()
    assert "<img" not in listed and "&lt;img" in listed


# --- one escaper for Markdown and the terminal ----------------------------------------------


def test_the_escaper_makes_markup_pipes_newlines_and_escape_sequences_text() -> None:
    from serkit.text import markdown_cell, markdown_text, terminal

    assert markdown_cell("<img src=x>|a\nb") == "&lt;img src=x&gt;\\|a<br>b"
    assert markdown_text("a < b & <b>") == "a &lt; b &amp; &lt;b&gt;"
    assert terminal("\x1b[2Jname\u202e.json\n") == "\\x1b[2Jname\\u202e.json\n"


def test_hosts_in_markdown_shows_a_host_files_markup_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.results.host_file import HOST_FILE, write_runs

    root = two_hosts(tmp_path / "results")
    run = {"recorded_at": "2026-01-01T00:00:00", "cpu_model": f"{PAYLOAD}|x\ny\x1b[2J"}
    write_runs(root / "b" / HOST_FILE, "b", [run])
    assert main(["hosts", "--results", str(root), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "<img" not in out and "&lt;img" in out and "\x1b" not in out
    row = next(line for line in out.splitlines() if line.startswith("| cpu model"))
    assert row.count(" | ") == 2  # the label, a and b: the pipe did not end a cell
    assert main(["hosts", "--results", str(root)]) == 0
    assert "\x1b" not in capsys.readouterr().out


@pytest.mark.slow
def test_fixtures_list_in_markdown_shows_a_description_as_text(tmp_path: Path) -> None:
    import os
    import subprocess

    from serkit.inputs.user_fixtures import FOLDER_ENV, add_document

    document = tmp_path / "orders.json"
    document.write_text('{"a": 1}')
    store = tmp_path / "store"
    add_document(document, where=store, description=f"{PAYLOAD}|x\ny")
    done = subprocess.run(
        [sys.executable, "-m", "serkit", "fixtures", "list", "--format", "markdown"],
        env={**os.environ, FOLDER_ENV: str(store), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("| orders@")]
    assert "<img" not in row and "&lt;img" in row and "\\|x<br>y" in row


def test_a_file_name_with_an_escape_sequence_is_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tmp_path / "\x1b[2Jorders.json"
    assert main(["try", str(name)]) == 3
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[2Jorders.json: no such file" in err
