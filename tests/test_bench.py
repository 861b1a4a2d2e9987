from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import pytest

from serkit import bench, hostinfo
from serkit.cli import main
from serkit.interpreters import expose, find_python
from serkit.suite import CODECS_ENV, WARMUP_ENV

ROOT = Path(__file__).resolve().parents[1]
CURRENT = f"{sys.version_info[0]}.{sys.version_info[1]}"


def test_finds_a_real_interpreter_for_the_running_python() -> None:
    found = find_python(CURRENT)
    assert found is not None and "shims" not in found.parts


def test_a_missing_python_is_none() -> None:
    assert find_python("3.99") is None


def test_shims_are_never_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3.98"
    shim.write_text("#!/bin/sh\necho 3.98\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    assert find_python("3.98") is None


def test_expose_links_interpreters_first_on_path_without_shims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"/somewhere/.pyenv/shims{os.pathsep}/usr/bin")
    real = find_python(CURRENT)
    env = expose({CURRENT: real, "3.99": None}, tmp_path / "pythons")
    assert env["PATH"].split(os.pathsep) == [str(tmp_path / "pythons"), "/usr/bin"]
    assert (tmp_path / "pythons" / f"python{CURRENT}").resolve() == real.resolve()
    assert not (tmp_path / "pythons" / "python3.99").exists()


def test_quick_plan_is_the_baseline_of_this_python() -> None:
    plan = bench.plan(ROOT, matrix=False)
    assert [env.label for env in plan.environments] == [f"py{CURRENT} baseline"]


def test_matrix_plan_for_one_python_is_its_baseline_and_axes() -> None:
    plan = bench.plan(ROOT, matrix=True, pythons=[CURRENT])
    assert plan.environments[0].varied is None
    assert len(plan.environments) > 1
    assert {env.python for env in plan.environments} == {CURRENT}


def test_bench_refuses_a_mistyped_codec_before_building_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(CODECS_ENV, "orjsn")
    assert main(["bench", "--no-report"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("serkit: error: unknown codec 'orjsn'")
    assert "Traceback" not in err


def test_bench_refuses_a_python_outside_the_matrix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["bench", "--matrix", "--python", "2.7"]) == 1
    assert "not in the matrix: Python 2.7" in capsys.readouterr().err


def test_bench_outside_a_checkout_says_where_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report"]) == 1
    assert "run this in a serkit checkout" in capsys.readouterr().err


def test_bench_passes_what_follows_the_double_dash_to_asv(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, object] = {}

    def fake_run(root: Path, plan: bench.Plan, *, quick: bool, extra: list[str]) -> int:
        seen.update(quick=quick, extra=list(extra), envs=len(plan.environments))
        return 0

    def fake_record(results: Path, machine: str, pythons: dict[str, Path]) -> Path:
        seen.update(results=results, machine=machine, pythons=sorted(pythons))
        return results

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(hostinfo, "record_host", fake_record)
    args = ["bench", "--no-report", "--", "--skip-existing", "-b", "Dumps", "--machine", "m1"]
    assert main(args) == 0
    assert seen == {
        "quick": True,
        "extra": ["--skip-existing", "-b", "Dumps", "--machine", "m1"],
        "envs": 1,
        # The host's facts go beside the results asv just wrote, under asv's machine name.
        "results": ROOT / ".asv" / "results",
        "machine": "m1",
        "pythons": [CURRENT],
    }


def test_machine_name_is_the_one_asv_files_results_under(tmp_path: Path) -> None:
    assert bench.machine_name(["--machine=ci-1"], tmp_path) == "ci-1"
    assert bench.machine_name([], tmp_path) == platform.node()  # no profile yet
    profile = {"only-box": {"machine": "only-box", "cpu": "x"}, "version": 1}
    (tmp_path / ".asv-machine.json").write_text(json.dumps(profile))
    assert bench.machine_name([], tmp_path) == "only-box"  # asv's lone profile
    profile["second"] = {"machine": "second"}
    (tmp_path / ".asv-machine.json").write_text(json.dumps(profile))
    assert bench.machine_name([], tmp_path) == platform.node()


def test_the_quick_run_sets_its_warm_up_and_the_full_run_leaves_asvs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[list[str], dict[str, str]]] = []

    def fake_asv(root: Path, args: list[str], env: dict[str, str] | None = None) -> int:
        seen.append((list(args), dict(env or {})))
        return 0

    monkeypatch.delenv(WARMUP_ENV, raising=False)
    monkeypatch.setattr(bench, "asv", fake_asv)
    monkeypatch.setattr(bench, "ensure_machine", lambda root, env=None: None)
    plan = bench.plan(ROOT, matrix=False)
    bench.run(ROOT, plan, quick=True)
    bench.run(ROOT, plan, quick=False)
    (quick_args, quick_env), (full_args, full_env) = seen
    assert quick_env[WARMUP_ENV] == bench.QUICK_WARMUP_S and "repeat=(2,3,1.0)" in quick_args
    assert WARMUP_ENV not in full_env and "-a" not in full_args
