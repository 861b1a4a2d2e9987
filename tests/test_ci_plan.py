"""The CI workflow proved before it runs (serkit/run/ci_plan.py), and its shards merged
end to end: two shards' results trees, `serkit results merge`, the report."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import yaml
from results_factory import RUNNERS, SUITE, shard_results, write_benchmarks

from serkit.cli import main
from serkit.report import html as report_html
from serkit.results.host_file import HOST_FILE, read_runs, write_runs
from serkit.run import runner
from serkit.run.ci_plan import WORKFLOW, ci_plan
from serkit.run.index import PLATFORMS
from serkit.run.matrix import environments
from serkit.run.releases import load

ROOT = Path(__file__).resolve().parents[1]
X86 = next(iter(RUNNERS))


def _workflow() -> str:
    return (ROOT / WORKFLOW).read_text()


def test_the_workflow_fits_together_before_it_runs() -> None:
    data = load()
    checked = ci_plan(_workflow(), data)
    assert checked.problems == []
    for platform in PLATFORMS:
        jobs = [job for job in checked.jobs if job.runner == platform.runner]
        assert [str(job.shard) for job in jobs] == [f"{k}/{len(jobs)}" for k in range(1, 17)]
        measured = [env for job in jobs for env in job.environments]
        everything = list(environments(platform=platform.name, data=data))
        assert sorted(measured, key=str) == sorted(everything, key=str)  # each exactly once
        assert [job.artifact for job in jobs] == [
            f"results-{platform.runner}-{k}" for k in range(1, 17)
        ]
        assert [job.sentinel for job in jobs] == [True] + [False] * 15
    assert sorted(checked.merged) == sorted(job.artifact or "" for job in checked.jobs)


def test_the_ci_plan_command_says_the_workflow_fits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--ci-plan", "--workflow", str(ROOT / WORKFLOW)]) == 0
    captured = capsys.readouterr()
    assert "48 jobs" in captured.out and "ubuntu-24.04-arm shard 16/16" in captured.out
    assert "every environment in exactly one shard" in captured.err


def _broken(tmp_path: Path, edit: str) -> Path:
    doc = yaml.safe_load(_workflow())
    bench, publish = doc["jobs"]["bench"], doc["jobs"]["publish"]
    matrix = bench["strategy"]["matrix"]
    upload = next(s for s in bench["steps"] if "upload-artifact" in str(s.get("uses")))
    if edit == "a shard dropped":
        matrix["shard"] = matrix["shard"][:-1]
    elif edit == "one artifact name for every shard":
        upload["with"]["name"] = "results-${{ matrix.runner }}"
    elif edit == "a pattern that misses the shards":
        download = next(s for s in publish["steps"] if "download-artifact" in str(s.get("uses")))
        download["with"]["pattern"] = "shard-*"
    elif edit == "the sentinel in every shard":
        sentinel = next(s for s in bench["steps"] if "--sentinel" in str(s.get("run")))
        del sentinel["if"]
    elif edit == "a runner kind left out":
        matrix["runner"] = matrix["runner"][:2]
    path = tmp_path / "bench.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ("a shard dropped", "in no shard"),
        ("one artifact name for every shard", "artifact names shared by two jobs"),
        ("a pattern that misses the shards", "uploaded but never merged"),
        ("the sentinel in every shard", "the sentinel runs in 16 jobs, not 1"),
        ("a runner kind left out", "runner kind macos-14 has no job"),
    ],
)
def test_a_workflow_that_does_not_fit_is_refused_before_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, said: str
) -> None:
    path = _broken(tmp_path, edit)
    assert main(["matrix", "--ci-plan", "--workflow", str(path)]) == 1
    assert said in capsys.readouterr().err


def test_a_file_that_is_not_the_workflow_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bench.yml"
    path.write_text("jobs: [1, 2]\n")
    # The command could not look: an error (3), not a finding (1).
    assert main(["matrix", "--ci-plan", "--workflow", str(path)]) == 3
    err = capsys.readouterr().err
    assert "no jobs" in err and "Traceback" not in err


def _pages(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*.html"))}


@pytest.mark.slow
def test_two_shards_merged_give_the_report_of_one_tree_holding_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two CI jobs' artifacts, as the workflow downloads them: one folder each.
    artifacts = tmp_path / "artifacts"
    for k in (1, 2):
        shard_results(artifacts / f"results-ubuntu-latest-{k}", X86, k, 2)

    def fake_discover(root: Path, folder: Path) -> Path:  # the real discovery takes seconds
        write_benchmarks(folder, SUITE)
        return folder / "benchmarks.json"

    monkeypatch.setattr(runner, "discover_benchmarks", fake_discover)
    sources = [str(p) for p in sorted(artifacts.iterdir())]
    store = tmp_path / "store" / "results"
    assert main(["results", "merge", *sources, "--into", str(store)]) == 0
    # One tree holding both: every file of both shards in one folder, as one run of the
    # same environments on the same machine would have written them.
    one = tmp_path / "one" / "results"
    for source in sources:
        shutil.copytree(source, one, dirs_exist_ok=True)
    # Its host record: both jobs' runs, as the runner kind's one record of them.
    both = [run for source in sources for run in read_runs(Path(source) / X86, []) or []]
    assert [run["shard"] for run in both] == ["1/2", "2/2"]
    write_runs(one / X86 / HOST_FILE, X86, both)
    write_benchmarks(one, SUITE)
    # Both reports stamped with one minute: written one after the other, on a busy machine
    # the clock's minute can turn between them (16:33 and 16:34 in one CI run).
    real = report_html.provenance
    monkeypatch.setattr(
        report_html,
        "provenance",
        lambda data, root: dataclasses.replace(real(data, root), generated="2026-11-25 12:00 UTC"),
    )
    written = {
        name: report_html.write_report(tmp_path, tree, tmp_path / name, asv_runner=None)
        for name, tree in (("merged", store), ("one", one))
    }
    assert written["merged"].warnings == written["one"].warnings
    merged, single = (_pages(w.folder) for w in written.values())
    assert merged.keys() == single.keys() and len(merged) > 3
    for page in merged:
        assert merged[page].replace(str(store), str(one)) == single[page], page
