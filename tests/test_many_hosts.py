"""Many hosts at scale, without GitHub: three runner kinds x two shards, as bench.yml runs
them, merged into one store; then `serkit hosts`, `serkit compare` and the report over it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from results_factory import DUMPS, RUNNERS, shard_results

from serkit.cli import main
from serkit.results.host_file import HOST_FILE, read_runs, write_runs

# The store is merged once through the command line with the suite's real discovery: its
# module fixtures, built once on one xdist worker (noxfile.py's --dist loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("many_hosts")]

ROOT = Path(__file__).resolve().parents[1]
X86, ARM, MAC = RUNNERS
SHARDS = 2


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """What the six CI jobs upload: one results tree per runner kind and shard."""
    base = tmp_path_factory.mktemp("artifacts")
    return [
        shard_results(base / f"results-runner{i}-{k}", machine, k, SHARDS)
        for i, machine in enumerate(RUNNERS)
        for k in range(1, SHARDS + 1)
    ]


@pytest.fixture(scope="module")
def store(artifacts: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The publish job's merge, through the command line, with the suite's real discovery."""
    into = tmp_path_factory.mktemp("store") / "results"
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    try:
        assert main(["results", "merge", *map(str, artifacts), "--into", str(into)]) == 0
    finally:
        mp.undo()
    return into


def test_the_store_holds_every_host_and_shard(store: Path) -> None:
    assert sorted(p.name for p in store.iterdir() if p.is_dir()) == sorted(RUNNERS)
    for machine in RUNNERS:
        assert len(list((store / machine).glob("12345678-*.json"))) == 4  # both shards' envs
        runs = read_runs(store / machine, [])
        assert runs is not None and [r["shard"] for r in runs] == ["1/2", "2/2"]
    described = json.loads((store / "benchmarks.json").read_text())
    assert "stale.Old.time_gone" not in described and DUMPS in described  # the suite's


def test_merging_the_artifacts_again_changes_nothing(
    artifacts: list[Path],
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    monkeypatch.chdir(ROOT)
    code, _, err = run(capsys, "results", "merge", *map(str, artifacts), "--into", str(store))
    assert code == 0 and "0 results files added, 12 already there" in err
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before


def test_hosts_lists_all_three_and_no_mixed_cpus(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "hosts", "--results", str(store))
    assert code == 0 and "MIXED" not in out + err
    assert out.splitlines()[0].split() == sorted(RUNNERS)
    assert "ARM Neoverse-N2 (0x41:0xd49) x4: 2 runs" in out


def test_hosts_flags_shards_of_one_name_on_different_cpus(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mixed = tmp_path / "results"
    shutil.copytree(store, mixed)
    runs = read_runs(mixed / X86, []) or []
    runs[1]["cpu_model"] = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"
    write_runs(mixed / X86 / HOST_FILE, X86, runs)
    code, out, err = run(capsys, "hosts", "--results", str(mixed))
    assert code == 0
    assert f"serkit: warning: machine {X86}: its runs saw 2 different CPUs" in err
    assert f"MIXED CPUS: machine {X86}" in out


def test_compare_over_the_merged_store(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "compare", X86, ARM, "--results", str(store), "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    envs = {json.dumps(p["env"], sort_keys=True) for p in result["pairs"]}
    # Both shards' environments, from one machine folder each, each codec's values by
    # what it ran with: json on each Python, ujson at each of its releases on each.
    assert len(envs) == 6
    timed = [p for p in result["pairs"] if p["benchmark"] == DUMPS and p["ratio"] is not None]
    assert timed and all(p["ratio"] == pytest.approx(1.5) for p in timed)


def test_the_report_shows_every_host(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    output = tmp_path / "reports"
    code, _, err = run(capsys, "report", "--results", str(store), "--into", str(output), "--no-asv")
    assert code == 0, err
    (version,) = [p for p in output.iterdir() if p.is_dir()]
    hosts_page = (version / "hosts.html").read_text()
    for machine in RUNNERS:
        assert machine in hosts_page
    # Each machine against the first by name: here the macOS runner.
    assert f"{ARM} / {MAC}" in hosts_page and f"{X86} / {MAC}" in hosts_page
    assert hosts_page.count("2026-11-22 02:00 UTC") == 3  # each host's newest shard
    assert "Mixed CPUs" not in hosts_page
    # The list of every version says when each host last ran, and where to see it.
    index = (output / "reports.html").read_text()
    for machine in RUNNERS:
        row = index[index.index(f"<code>{machine}</code>") :].split("</tr>")[0]
        assert "2026-11-22 02:00 UTC" in row and f'href="{version.name}/index.html"' in row


def test_the_report_flags_mixed_cpus_and_keeps_older_hosts_in_the_index(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    output = tmp_path / "reports"
    older = output / "0.0.1-0123456789ab"  # a version written before run times were kept
    older.mkdir(parents=True)
    (older / "report.json").write_text(
        json.dumps(
            {
                "serkit_report": 1,
                "stamp": older.name,
                "serkit_version": "0.0.1",
                "commit": "0123456789ab" * 3 + "0123",
                "generated": "2025-01-01 00:00 UTC",
                "hosts": ["retired-box"],
                "result_commits": [],
            }
        )
    )
    mixed = tmp_path / "results"
    shutil.copytree(store, mixed)
    runs = read_runs(mixed / ARM, []) or []
    runs[0]["cpu_model"] = "ARM Neoverse-N1 (0x41:0xd0c)"
    write_runs(mixed / ARM / HOST_FILE, ARM, runs)
    code, _, err = run(capsys, "report", "--results", str(mixed), "--into", str(output), "--no-asv")
    assert code == 0, err
    (version,) = [p for p in output.iterdir() if p.is_dir() and p != older]
    hosts_page = (version / "hosts.html").read_text()
    assert f"Mixed CPUs: machine {ARM}: its runs saw 2 different CPUs" in hosts_page
    index = (output / "reports.html").read_text()
    row = index[index.index("<code>retired-box</code>") :].split("</tr>")[0]
    assert "not recorded" in row and f'href="{older.name}/index.html"' in row
