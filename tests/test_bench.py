from __future__ import annotations

import dataclasses
import json
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from serkit.cli import main
from serkit.codecs.spec import STDLIB
from serkit.errors import SerkitError
from serkit.results import hosts as hostinfo
from serkit.run import planning, rounds
from serkit.run import runner as bench
from serkit.run.interpreters import expose, find_python
from serkit.run.libraries import companions
from serkit.run.matrix import EVERY_LIBRARY, counted, environments, newest_set
from serkit.suite.canary import CANARY_HARNESS
from serkit.suite.cases import (
    CODECS_ENV,
    INSTRUCTIONS_ENV,
    ROUNDS_ENV,
    WARMUP_ENV,
    warmup_words,
)
from serkit.units import plural

ROOT = Path(__file__).resolve().parents[1]
CURRENT = f"{sys.version_info[0]}.{sys.version_info[1]}"


def test_finds_a_real_interpreter_for_the_running_python() -> None:
    found = find_python(CURRENT)
    assert found is not None and "shims" not in found.parts


def test_a_missing_python_is_none() -> None:
    assert find_python("3.99") is None


def test_a_free_threaded_build_is_never_a_stand_in_nor_stood_in_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyenv keeps 3.14.0 and 3.14.0t side by side; each answers only to its own name."""
    for folder, says in (("3.14.0", "3.14"), ("3.14.0t", "3.14t")):
        bin_dir = tmp_path / "versions" / folder / "bin"
        bin_dir.mkdir(parents=True)
        for name in ("python3.14", "python3.14t"):  # a t build may carry both names
            exe = bin_dir / name
            exe.write_text(f"#!/bin/sh\necho {says}\n")
            exe.chmod(0o755)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert find_python("3.14") == tmp_path / "versions/3.14.0/bin/python3.14"
    assert find_python("3.14t") == tmp_path / "versions/3.14.0t/bin/python3.14t"


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


def test_quick_plan_is_the_newest_set_of_this_python_in_one_environment() -> None:
    plan = planning.plan(ROOT, matrix=False)
    assert [env.label for env in plan.environments] == [f"py{CURRENT} {EVERY_LIBRARY}"]
    (env,) = plan.environments
    assert env.library is None and len(env.requirements) > 1


def test_matrix_plan_for_one_python_is_one_environment_per_library_release() -> None:
    plan = planning.plan(ROOT, matrix=True, pythons=[CURRENT])
    assert plan.environments[0].library == STDLIB and not plan.environments[0].requirements
    for env in plan.environments[1:]:  # the library, and what its codecs need beside it
        assert set(env.requirements) == {env.library, *companions(str(env.library))}
    assert len(plan.environments) > 1
    assert {env.python for env in plan.environments} == {CURRENT}
    # Each environment of one library selects its own codecs' parameters (rounds.own_parts).
    own = plan.own_codecs()
    stdlib = plan.environments[0].asv_name
    assert "json" in own[stdlib] and "orjson" not in own[stdlib]
    assert all(own[e.asv_name] for e in plan.environments if e.library != "genson")
    # Memory per call and instructions: where the whole matrix's rule counts them.
    counting = counted(environments(platform=plan.platform))
    assert set(plan.uncounted) == {e.asv_name for e in plan.environments if e not in counting}
    if plan.uncounted:  # the plan says which environments leave them to another
        full = "\n".join(planning.plan_lines(plan, "box", quick=False, chosen=None, extra=[]))
        assert "memory per call and instructions: not in" in full


def test_bench_refuses_a_mistyped_codec_before_building_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(CODECS_ENV, "orjsn")
    assert main(["bench", "--no-report"]) == 3
    err = capsys.readouterr().err
    # The refusal is an error line of its own; a warning may come first (a library newer
    # than the matrix knows, as msgspec 0.23.0 was on the day it came out).
    errors = [line for line in err.splitlines() if line.startswith("serkit: error:")]
    assert errors and errors[0].startswith("serkit: error: unknown codec 'orjsn'")
    assert "Traceback" not in err


def test_bench_refuses_a_python_outside_the_matrix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["bench", "--matrix", "--python", "2.7"]) == 3
    assert "not in the matrix: Python 2.7" in capsys.readouterr().err


def test_bench_outside_a_checkout_says_where_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report"]) == 3
    assert "run this in a serkit checkout" in capsys.readouterr().err


def test_bench_passes_what_follows_the_double_dash_to_asv(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, object] = {}

    def fake_run(root: Path, plan: planning.RunScope, **run: Any) -> int:
        seen.update(quick=run["quick"], extra=list(run["extra"]), envs=len(plan.environments))
        assert not run["memory"] and not run["instructions"]  # a quick run, not asked for either
        return 0

    def fake_record(results: Path, machine: str, pythons: dict[str, Path], **run: object) -> Path:
        seen.update(results=results, machine=machine, pythons=sorted(pythons), shard=run["shard"])
        seen.update(harness=run["harness"])
        return results

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(hostinfo, "record_host", fake_record)
    monkeypatch.delenv(WARMUP_ENV, raising=False)
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
        "shard": None,
        # What ran around the canary: it moves the canary's reading (serkit.suite.canary).
        "harness": f"harness {CANARY_HARNESS}, {planning.QUICK_WARMUP_S} s of warm-up",
    }
    assert planning.run_warmup(False, {}) is None  # a full run: asv's warm-up
    assert warmup_words(planning.run_warmup(False, {WARMUP_ENV: "0.01"})) == "0.01 s of warm-up"


def test_bench_instructions_asks_the_quick_run_to_count_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: dict[str, bool] = {}

    def fake_run(root: Path, plan: planning.RunScope, **options: object) -> int:
        asked.update(quick=bool(options["quick"]), instructions=bool(options["instructions"]))
        return 0

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(hostinfo, "record_host", lambda results, *a, **k: results)
    assert main(["bench", "--instructions", "--no-report"]) == 0
    assert asked == {"quick": True, "instructions": True}


def test_bench_runs_one_shard_and_records_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.checkout import git_commit
    from serkit.run.matrix import environments
    from serkit.run.shards import Shard, shard_slice

    seen: dict[str, object] = {}

    def fake_run(root: Path, plan: planning.RunScope, **run: Any) -> int:
        seen.update(quick=run["quick"], labels=[env.label for env in plan.environments])
        return 0

    def fake_record(results: Path, machine: str, pythons: dict[str, Path], **run: object) -> Path:
        seen.update(machine=machine, **run)
        return results

    from serkit.run.quick import LeftOut, PairSelection
    from serkit.suite.prediction import Prediction

    # The full run's plan: what it leaves out, predicted (here, as if so predicted).
    slow = LeftOut("yaml", "random-dicts-1000", Prediction(12.0, 25.0))
    full = PairSelection((("json", "small-dict"),), (slow,), kind="full", budget_s=60.0)
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(planning, "full_plan", lambda extra, plan_=None: full)
    monkeypatch.setattr(hostinfo, "record_host", fake_record)
    monkeypatch.delenv(WARMUP_ENV, raising=False)
    argv = ["bench", "--matrix", "--python", CURRENT, "--shard", "2/3", "--no-report"]
    assert main([*argv, "--", "--machine", "kind-1"]) == 0
    chosen = shard_slice(environments((CURRENT,)), Shard(2, 3))
    expected = [env.label for env in chosen]
    started = seen.pop("started_at")
    assert isinstance(started, str) and started[:2] == "20"
    commit = git_commit(ROOT)
    assert seen == {
        "quick": False,  # --matrix runs the full statistics
        "labels": expected,
        "machine": "kind-1",
        "shard": "2/3",
        "commit": commit,
        "environments": expected,
        "filed": [],  # the fake run wrote no results file
        "measured_as": "full",  # how, for --skip-measured: the machine's name is not how
        "plan": full.as_record(),  # what the report states it left out
        "state": None,  # no samples, no canary: no machine state to record
        "harness": f"harness {CANARY_HARNESS}, asv's warm-up",  # a full run: asv warms up
    }
    assert "serkit: machine kind-1, shard 2/3: " in capsys.readouterr().err


def test_the_sentinel_runs_its_pairs_in_its_environment_whatever_the_store_holds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import serkit.run.bench
    import serkit.run.sentinel
    from serkit.suite.cases import FIXTURES_ENV

    seen: dict[str, object] = {}

    def fake_run(root: Path, plan: planning.RunScope, **run: Any) -> int:
        seen.update(labels=[env.label for env in plan.environments], extra=run["extra"])
        seen.update(codecs=os.environ.get(CODECS_ENV), fixtures=os.environ.get(FIXTURES_ENV))
        return 0

    def fake_record(results: Path, machine: str, pythons: dict[str, Path], **run: object) -> Path:
        seen.update(measured_as=run["measured_as"], machine=machine)
        return results

    monkeypatch.chdir(ROOT)
    for module in (serkit.run.bench, serkit.run.sentinel):  # a Python found here
        monkeypatch.setattr(module, "SENTINEL_PYTHON", CURRENT)
    for name in (CODECS_ENV, FIXTURES_ENV):
        monkeypatch.setenv(name, "")  # restored after: the run sets them
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(hostinfo, "record_host", fake_record)
    assert main(["bench", "--sentinel", "--no-report", "--", "--machine", "kind-1"]) == 0
    assert seen["labels"] == [f"py{CURRENT} {STDLIB}"]
    assert seen["codecs"] == "json,marshal,pickle-p5"
    assert seen["fixtures"] == "small-dict,random-dicts-100"
    extra = seen["extra"]
    assert extra == ["-b", serkit.run.sentinel.SENTINEL_BENCHMARKS, "--machine", "kind-1-sentinel"]
    assert seen["machine"] == "kind-1-sentinel"  # apart from the runner kind's own points
    how = str(seen["measured_as"])
    assert how.startswith("full, ") and "json,marshal,pickle-p5" in how and "asv -b" in how
    capsys.readouterr()
    assert main(["bench", "--sentinel", "--matrix", "--no-report"]) == 2
    assert "give it alone" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_ends_with_the_summary_table_read_from_the_results_tree(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from results_factory import verdict_tree

    import serkit.run.bench as bench_phases

    results = verdict_tree(tmp_path / "results", machine="kind-1")
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench, "run", lambda root, plan, **run: 0)
    monkeypatch.setattr(hostinfo, "record_host", lambda *args, **kwargs: tmp_path)
    monkeypatch.setattr(bench_phases, "results_dir", lambda root: results)
    argv = ["bench", "--matrix", "--python", CURRENT, "--shard", "2/3", "--no-report"]
    assert main([*argv, "--rank-by", "dumps", "--", "--machine", "kind-1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("The answer: the fastest codec per fixture, by dumps")
    rows = {line.split()[0]: line for line in out.splitlines() if line[:1].isalpha()}
    assert "orjson and msgspec-json: tied" in rows["twitter"]
    assert "2.00x ± 0.01 faster than ujson" in rows["twitter"]
    assert "msgspec-struct-json (lossy in dict" in rows["twitter"]
    assert " ".join(out.split()).endswith("each class ranked apart.")  # however it wraps


def test_the_bench_phases_take_and_return_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`serkit bench`'s work without its command line: plan, start, run, file, record."""
    from serkit.run import bench as phases
    from serkit.run.bench import BenchOutcome, BenchRequest

    monkeypatch.setattr(phases, "results_dir", lambda root: tmp_path)
    request = BenchRequest(asv_args=("-b", "Dumps", "--machine", "m1"))
    planned = phases.plan(ROOT, request)
    assert (planned.machine, planned.quick, planned.how) == ("m1", True, "quick, asv -b Dumps")
    assert planned.folder == tmp_path / "m1" and len(planned.files) == 1
    assert planned.chosen is None and planned.record() == {"kind": "quick"}  # -b chooses
    assert planned.state is None and planned.skipped is None
    assert phases.plan_lines(planned)[0].startswith("machine m1: 1 environment")
    started = phases.start(tmp_path, planned, verbose=False)
    assert started.kept == [] and started.log.parts[:2] == (".asv", "logs")

    def fails_one(root: Path, plan: planning.RunScope, **run: Any) -> int:
        run["console"].failed["bench_time.Dumps.time_dumps"] = None
        return 2

    monkeypatch.setattr(bench, "run", fails_one)
    outcome = phases.run(ROOT, planned, started)
    assert outcome == BenchOutcome(2, ("bench_time.Dumps.time_dumps",))
    monkeypatch.setattr(bench, "run", lambda root, plan, **run: 1)
    with pytest.raises(SerkitError, match=r"asv run failed \(exit 1\)"):
        phases.run(ROOT, planned, started)
    filed = phases.file(planned)  # the fake runs wrote no results file
    assert (filed.names, filed.warnings, filed.machine_state) == ([], [], None)
    recorded: dict[str, Any] = {}

    def fake_record(results: Path, machine: str, pythons: dict[str, Path], **run: Any) -> Path:
        recorded.update(run, results=results, machine=machine)
        return results

    monkeypatch.setattr(hostinfo, "record_host", fake_record)
    assert phases.record(planned, started, filed) == tmp_path
    assert recorded["machine"] == "m1" and recorded["plan"] == {"kind": "quick"}
    assert recorded["started_at"] == started.started_at and recorded["filed"] == []


def test_a_machine_given_to_asv_is_taken_out_in_each_spelling() -> None:
    from serkit.run.bench import without_machine

    given = ["-b", "x", "--machine", "m", "-m", "n", "--machine=o", "-e"]
    assert without_machine(given) == ["-b", "x", "-e"]


def _stored_point(store: Path, machine: str, env: Any, commit: str, run_at: int) -> str:
    """One run of a matrix environment in a store, as `serkit bench` files it: its name."""
    from results_factory import results_file

    from serkit.results.history import dated_name
    from serkit.suite.cases import LIBRARY_ENV

    shape: dict[str, Any] = {"python": env.python, "requirements": env.requirements}
    if env.library:
        shape["env_vars"] = {LIBRARY_ENV: env.library}
    plain = {DUMPS: {"type": "time", "unit": "seconds", "grid": []}}
    data = results_file(
        machine, {DUMPS: [1e-6]}, env=shape, commit=commit, benchmarks=plain, started_at=run_at
    )
    name = dated_name(bench.results_name(machine, commit, env), run_at)
    (store / machine).mkdir(parents=True, exist_ok=True)
    (store / machine / name).write_text(json.dumps(data))
    return name


DUMPS = "bench_time.Dumps.time_dumps"
NOW_HOST = {"cpu_model": "AMD EPYC", "logical_cpus": 2, "kernel": "6.8.0", "cpu_flags": "avx2"}


def test_bench_measures_only_new_points(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.results.host_file import HOST_FILE, write_runs
    from serkit.run.points import Now
    from serkit.run.shards import Shard

    planned = planning.plan(ROOT, matrix=True, pythons=[CURRENT], shard=Shard(1, 9))
    first, *rest = planned.environments
    # Every environment but the first measured at an older suite commit, on this host.
    older = "fedcba0987654321fedcba0987654321fedcba09"
    names = [_stored_point(tmp_path, "kind-1", env, older, 1_700_000_000_000) for env in rest]
    pythons = {CURRENT: {"version": "3.11.7"}}
    write_runs(
        tmp_path / "kind-1" / HOST_FILE,
        "kind-1",
        [{**NOW_HOST, "pythons": pythons, "results": names, "measured_as": "full"}],
    )
    now = Now(NOW_HOST, {CURRENT: "3.11.7"}, {DUMPS: f"code-of-{DUMPS}"})
    ran: list[list[str]] = []

    def fake_run(root: Path, plan: planning.RunScope, **run: Any) -> int:
        ran.append([env.label for env in plan.environments])
        return 0

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench, "here_now", lambda root, plan, how: now)
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(hostinfo, "record_host", lambda results, *a, **k: results)
    argv = ["bench", "--matrix", "--python", CURRENT, "--shard", "1/9", "--no-report"]
    argv += ["--skip-measured", str(tmp_path), "--", "--machine", "kind-1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert ran == [[first.label]]
    assert f"{plural(len(rest), 'environment')} already measured on kind-1" in err
    assert f"serkit: measuring {first.label}: never measured here" in err
    # The first measured too: nothing is left, and nothing runs.
    names.append(_stored_point(tmp_path, "kind-1", first, older, 1_700_000_100_000))
    write_runs(
        tmp_path / "kind-1" / HOST_FILE,
        "kind-1",
        [{**NOW_HOST, "pythons": pythons, "results": names, "measured_as": "full"}],
    )
    assert main(argv) == 0
    assert "nothing left to measure" in capsys.readouterr().err and len(ran) == 1
    # A new kernel: every environment is a new point.
    newer = Now({**NOW_HOST, "kernel": "6.11.0"}, now.pythons, now.code)
    monkeypatch.setattr(bench, "here_now", lambda root, plan, how: newer)
    assert main(argv) == 0
    assert ran[-1] == [env.label for env in planned.environments]
    assert "new host: kernel 6.8.0 → 6.11.0" in capsys.readouterr().err


def test_each_finished_run_is_filed_as_a_point_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from results_factory import results_file, values

    from serkit.checkout import git_commit
    from serkit.results.history import dated_name
    from serkit.run import bench as bench_phases

    commit = git_commit(ROOT)
    assert commit is not None
    plan = planning.plan(ROOT, matrix=False)
    (name,) = bench.results_names(plan, "m1", commit)
    folder = tmp_path / "m1"
    folder.mkdir()
    # An earlier run that did not finish left its values under asv's name.
    unfinished = results_file("m1", values(), commit=commit, started_at=1_700_000_000_000)
    (folder / name).write_text(json.dumps(unfinished))
    recorded: dict[str, Any] = {}

    def fake_run(root: Path, plan: planning.RunScope, **run: Any) -> int:
        assert not (folder / name).exists()  # asv starts afresh: nothing of the earlier run
        data = results_file("m1", values(), commit=commit, started_at=1_700_600_000_000)
        (folder / name).write_text(json.dumps(data))
        return 0

    def fake_record(results: Path, machine: str, pythons: dict[str, Path], **run: Any) -> Path:
        recorded.update(run)
        return results

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(bench_phases, "results_dir", lambda root: tmp_path)
    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(hostinfo, "record_host", fake_record)
    assert main(["bench", "--no-report", "--", "--machine", "m1"]) == 0
    earlier, this = dated_name(name, 1_700_000_000_000), dated_name(name, 1_700_600_000_000)
    assert sorted(p.name for p in folder.iterdir()) == sorted([earlier, this])
    assert recorded["filed"] == [this]  # the host record names the run's own file
    assert "1 results file of an earlier run that did not finish" in capsys.readouterr().err


def test_machine_name_is_the_one_asv_files_results_under(tmp_path: Path) -> None:
    assert bench.machine_name(["--machine=ci-1"], tmp_path) == "ci-1"
    assert bench.machine_name([], tmp_path) == platform.node()  # no profile yet
    profile = {"only-box": {"machine": "only-box", "cpu": "x"}, "version": 1}
    (tmp_path / ".asv-machine.json").write_text(json.dumps(profile))
    assert bench.machine_name([], tmp_path) == "only-box"  # asv's lone profile
    profile["second"] = {"machine": "second"}
    (tmp_path / ".asv-machine.json").write_text(json.dumps(profile))
    assert bench.machine_name([], tmp_path) == platform.node()


def _fake_rounds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, benchmarks: dict[str, Any]
) -> list[tuple[list[str], dict[str, str]]]:
    """Record each `asv run` serkit would start, in a checkout whose asv discovered `benchmarks`."""
    seen: list[tuple[list[str], dict[str, str]]] = []

    def fake_session(command: list[str], *, cwd: Path, env: dict[str, str], **_: Any) -> int:
        seen.append((list(command[3:]), dict(env)))
        return 0

    monkeypatch.delenv(WARMUP_ENV, raising=False)
    monkeypatch.delenv(ROUNDS_ENV, raising=False)
    monkeypatch.delenv(INSTRUCTIONS_ENV, raising=False)
    monkeypatch.setattr(rounds, "run_in_session", fake_session)
    monkeypatch.setattr(bench, "ensure_machine", lambda root, env=None, name=None: None)
    (tmp_path / ".asv" / "results").mkdir(parents=True)
    (tmp_path / ".asv" / "results" / "benchmarks.json").write_text(json.dumps(benchmarks))
    (tmp_path / "asv.conf.json").write_text((ROOT / "asv.conf.json").read_text())
    return seen


@pytest.mark.slow
def test_each_asv_run_gets_a_config_of_only_its_environments(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """asv would otherwise say, in every round, that each Python missing here is missing."""
    from serkit.checkout import RUN_CONFIG

    seen = _fake_rounds(monkeypatch, tmp_path, SUITE)
    plan = planning.plan(ROOT, matrix=True, pythons=[CURRENT])
    bench.run(tmp_path, plan, quick=True, extra=["-b", "nothing"])
    assert seen and all(args[args.index("--config") + 1] == RUN_CONFIG for args, _ in seen)
    config = json.loads((tmp_path / RUN_CONFIG).read_text())
    assert config["include"] == [env.as_include() for env in plan.environments]
    assert config["pythons"] == [CURRENT]
    # asv works in the config's folder, .asv/: the checkout's own paths, made absolute.
    assert config["repo"] == str(tmp_path.resolve())
    assert config["results_dir"] == str((tmp_path / ".asv" / "results").resolve())
    everything = (ROOT / "asv.conf.json").read_text()
    paths = ("include", "pythons", "repo", "benchmark_dir", "env_dir", "results_dir", "html_dir")
    assert {k: v for k, v in config.items() if k not in paths} == {
        k: v for k, v in json.loads(everything[everything.index("{") :]).items() if k not in paths
    }


def test_a_config_older_than_the_releases_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serkit.run.matrix import MatrixEnvironment

    _fake_rounds(monkeypatch, tmp_path, SUITE)
    plan = planning.plan(ROOT, matrix=False)
    unknown = MatrixEnvironment.of(CURRENT, "cbor2", "99.0.0")
    plan = dataclasses.replace(plan, environments=(unknown,))
    with pytest.raises(SerkitError, match=r"run `serkit matrix --write-config asv\.conf\.json`"):
        bench.run(tmp_path, plan, quick=True)


SUITE = {
    "bench_time.Dumps.time_dumps": {
        "rounds": 5,
        "params": [["'json'", "'yaml'"], ["'small-dict'", "'random-dicts-1000'"]],
    },
    "bench_import.ImportTime.timeraw_import": {"rounds": 2, "params": [["'json'", "'yaml'"]]},
    "bench_size.EncodedSize.track_bytes": {"params": [["'json'"], ["'small-dict'"]]},
    "version": 2,
}


def test_the_quick_run_runs_each_round_itself_with_its_budget_in_the_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serkit.suite.budget import BUDGET_ENV, NOTES_ENV, SingleSample, note_single

    seen = _fake_rounds(monkeypatch, tmp_path, SUITE)
    plan = planning.plan(ROOT, matrix=False)

    def first_round_times_yaml_once(
        command: list[str], *, cwd: Path, env: dict[str, str], **_: Any
    ) -> int:
        if not seen:  # the first round's process notes the pair it timed once
            pair = SingleSample("bench_time.Dumps", ("yaml", "random-dicts-1000"), 3.0, 3.0)
            note_single(Path(env[NOTES_ENV]), pair)
        seen.append((list(command[3:]), dict(env)))
        return 0

    monkeypatch.setattr(rounds, "run_in_session", first_round_times_yaml_once)
    assert bench.run(tmp_path, plan, quick=True) == 0
    parts = len(rounds.FIRST_ROUND_PARTS)
    assert len(seen) == parts + planning.QUICK_ROUNDS - 1
    first_round, later = seen[:parts], seen[parts:]
    for (first, first_env), regex in zip(first_round, rounds.FIRST_ROUND_PARTS):
        assert first_env[WARMUP_ENV] == planning.QUICK_WARMUP_S
        assert first_env[ROUNDS_ENV] == str(planning.QUICK_ROUNDS)
        assert first_env[BUDGET_ENV] == f"{planning.QUICK_BUDGET_S:g}"
        # every benchmark afresh, one part of the suite per `asv run`
        assert "--append-samples" not in first
        assert [a for i, a in enumerate(first) if first[i - 1] == "-b"] == [regex]
    for args, env in later:
        assert BUDGET_ENV not in env  # decided once, in the first round
        assert {"--record-samples", "--append-samples"} <= set(args)
        assert args[args.index("-a") + 1] == "rounds=1"
    chosen = [a for args, _ in later for i, a in enumerate(args) if args[i - 1] == "-b"]
    # The import time takes its 2 rounds, tracks only the first, and yaml's slow dumps,
    # timed once, is left out of every later round.
    assert sum("ImportTime" in r for r in chosen) == 1
    assert not any("EncodedSize" in r for r in chosen)
    dumps = [r for r in chosen if "Dumps" in r]
    assert len(dumps) == planning.QUICK_ROUNDS - 1
    name = "bench_time.Dumps.time_dumps"
    assert re.search(dumps[0], f"{name}('yaml', 'small-dict')")
    assert not re.search(dumps[0], f"{name}('yaml', 'random-dicts-1000')")
    assert not (tmp_path / ".asv" / "bench-run.json").exists()  # finished: nothing to resume


def test_the_quick_run_times_its_plans_pairs_in_one_first_round_and_only_them_after(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serkit.run.quick import LeftOut, PairSelection
    from serkit.suite.cases import FIXTURES_ENV, LEAVE_OUT_ENV
    from serkit.suite.prediction import Prediction

    seen = _fake_rounds(monkeypatch, tmp_path, SUITE)
    slow = LeftOut("yaml", "random-dicts-1000", Prediction(2.4, 4.9))
    chosen = PairSelection((("json", "small-dict"), ("yaml", "small-dict")), (slow,))
    plan = planning.plan(ROOT, matrix=False)
    assert bench.run(tmp_path, plan, quick=True, chosen=chosen) == 0
    assert len(seen) == planning.QUICK_ROUNDS  # the first round is one `asv run`, its pairs named
    (first, env), later = seen[0], seen[1:]
    assert [a for i, a in enumerate(first) if first[i - 1] == "-b"] == chosen.regexes()
    assert env[FIXTURES_ENV] == "small-dict" and env[LEAVE_OUT_ENV] == "yaml@random-dicts-1000"
    name = "bench_time.Dumps.time_dumps"
    for args, _ in later:
        dumps = [a for i, a in enumerate(args) if args[i - 1] == "-b" and "Dumps" in a]
        assert any(re.search(r, f"{name}('yaml', 'small-dict')") for r in dumps)
        assert not any(re.search(r, f"{name}('json', 'random-dicts-1000')") for r in dumps)
        assert not any(re.search(r, f"{name}('yaml', 'random-dicts-1000')") for r in dumps)
        assert not any("ImportTime" in a for a in args)  # import time is left to --full


def test_extra_rounds_stop_when_they_bring_too_few_pairs_within_precision(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.run.rounds import results_file_name

    timed = {**SUITE[LOOSE], "type": "time", "repeat": 1}
    seen = _fake_rounds(monkeypatch, tmp_path, {**SUITE, LOOSE: timed})
    plan = planning.plan(ROOT, matrix=False)
    (env,) = plan.environments
    # One pair whose processes are half slowed 2-3x, as under a load of 7 here: the fake
    # asv adds nothing, so every extra round leaves it as short as before.
    slowed = [1.0, 2.1, 1.02, 2.6, 0.99, 2.3, 1.01, 2.8, 2.0, 2.2]
    results = {
        "result_columns": ["result", "params", "samples"],
        "results": {LOOSE: [[1.0, None, None, None], SUITE[LOOSE]["params"], [slowed, [], [], []]]},
    }
    path = tmp_path / ".asv" / "results" / "m" / results_file_name("", env.asv_name)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(results))
    assert bench.run(tmp_path, plan, quick=True, extra=["--machine", "m"]) == 0
    extra = [args for args, _ in seen if "--append-samples" in args][planning.QUICK_ROUNDS - 1 :]
    assert len(extra) == 1  # the second brought nothing within precision: no third
    err = capsys.readouterr().err
    assert (
        "serkit: round 6 of at most 10 (an extra round): 1 timing (a codec's dumps or loads of one "
        "fixture) short of 5 typical processes" in err
    )
    # Which pair, and why, in one line (no canary kept here: only that it scatters).
    (short,) = [line for line in err.splitlines() if "not resolved" in line]
    assert short.startswith(
        "serkit: 1 timing short of precision after 1 extra round (1 before the last), so not "
        "resolved: dumps "
    )
    assert "(their processes scatter; no canary kept); load average" in short
    # Every round's line ends in the time since the run began; no guess of the time left
    # off a terminal, and no round after "round 5 of 5" read as a new first one.
    rounds = [line for line in err.splitlines() if line.startswith("serkit: round ")]
    assert len(rounds) >= planning.QUICK_ROUNDS + 1
    assert all(re.search(r" \[\d+:\d\d elapsed\]$", line) for line in rounds)
    assert "extra round 1" not in err


def test_a_run_that_took_every_extra_round_names_the_pairs_still_short(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every extra round ran (each counted as progress here) and the pair is still short:
    the run ends by naming it, and why, in one line."""
    from serkit.run.rounds import results_file_name

    timed = {**SUITE[LOOSE], "type": "time", "repeat": 1}
    seen = _fake_rounds(monkeypatch, tmp_path, {**SUITE, LOOSE: timed})
    monkeypatch.setattr(rounds, "LEAST_PROGRESS", -1.0)  # no extra round stops the rest
    plan = planning.plan(ROOT, matrix=False)
    (env,) = plan.environments
    slowed = [1.0, 2.1, 1.02, 2.6, 0.99, 2.3, 1.01, 2.8, 2.0, 2.2]
    results = {
        "result_columns": ["result", "params", "samples"],
        "results": {LOOSE: [[1.0, None, None, None], SUITE[LOOSE]["params"], [slowed, [], [], []]]},
    }
    path = tmp_path / ".asv" / "results" / "m" / results_file_name("", env.asv_name)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(results))
    assert bench.run(tmp_path, plan, quick=True, extra=["--machine", "m"]) == 0
    extra = [args for args, _ in seen if "--append-samples" in args][planning.QUICK_ROUNDS - 1 :]
    assert len(extra) == planning.QUICK_ROUNDS
    (short,) = [line for line in capsys.readouterr().err.splitlines() if "not resolved" in line]
    assert short.startswith(
        f"serkit: 1 timing short of precision after {planning.QUICK_ROUNDS} extra rounds, so not "
        "resolved: dumps "
    )


LOOSE = "bench_time.Dumps.time_dumps"


def test_every_environment_takes_the_extra_rounds_a_pair_needs_in_any(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serkit.run.matrix import environments
    from serkit.run.rounds import results_file_name

    timed = {**SUITE[LOOSE], "type": "time", "repeat": 1}
    seen = _fake_rounds(monkeypatch, tmp_path, {**SUITE, LOOSE: timed})
    plan = planning.plan(ROOT, matrix=False)
    (first,) = plan.environments
    second = next(env for env in environments((first.python,)) if env.library == "ujson")
    plan = dataclasses.replace(plan, environments=(first, second))
    steady = [1.0, 1.01, 0.99, 1.0, 1.005]  # placed well enough on its own
    slowed = [1.0, 2.1, 1.02, 2.6, 0.99, 2.3, 1.01, 2.8, 2.0, 2.2]  # four typical processes
    for env, samples in ((first, slowed), (second, steady)):
        results = {
            "result_columns": ["result", "params", "samples"],
            "results": {
                LOOSE: [[1.0, 1.0, None, None], SUITE[LOOSE]["params"], [samples, steady, [], []]]
            },
        }
        path = tmp_path / ".asv" / "results" / "m" / results_file_name("", env.asv_name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results))
    assert bench.run(tmp_path, plan, quick=True, extra=["--machine", "m"]) == 0
    appended = [args for args, _ in seen if "--append-samples" in args]
    extra = appended[2 * (planning.QUICK_ROUNDS - 1) :]
    # Both environments take the extra round of the pair short in one: the two sides of a
    # step sample the same stretch of time.
    assert len(extra) == 2
    for args in extra:
        chosen = [a for i, a in enumerate(args) if args[i - 1] == "-b"]
        assert any(re.search(r, f"{LOOSE}('json', 'small-dict')") for r in chosen)
        assert not any(re.search(r, f"{LOOSE}('json', 'random-dicts-1000')") for r in chosen)


def test_the_full_run_gives_every_pair_its_least_processes_then_the_short_ones_more(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serkit.run.precision import LEAST_PROCESSES
    from serkit.suite.budget import BUDGET_ENV

    # asv discovers the timed classes with the full run's rounds (serkit.suite.cases).
    suite = {**SUITE, "bench_time.Dumps.time_dumps": {"rounds": 10, "params": [["'json'"]]}}
    seen = _fake_rounds(monkeypatch, tmp_path, suite)
    bench.run(tmp_path, planning.plan(ROOT, matrix=False), quick=False)
    # The fake asv kept no samples: past its least processes no pair is short of precision
    # (serkit.run.precision), so no later round runs (tests/test_rounds.py has the rule).
    assert len(seen) == len(rounds.FIRST_ROUND_PARTS) + LEAST_PROCESSES - 1
    assert all(WARMUP_ENV not in env and BUDGET_ENV not in env for _, env in seen)
    assert all(env[ROUNDS_ENV] == str(bench.FULL_ROUNDS) for _, env in seen)


def test_the_users_bench_regex_narrows_every_round(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _fake_rounds(monkeypatch, tmp_path, SUITE)
    bench.run(tmp_path, planning.plan(ROOT, matrix=False), quick=True, extra=["-b", "yaml", "-e"])
    (first, _), (second, _), *_ = seen
    assert first[first.index("-b") + 1] == "yaml" and "-e" in first
    chosen = [a for i, a in enumerate(second) if second[i - 1] == "-b"]
    assert len(chosen) == 2 and all("yaml" in r and "json" not in r for r in chosen)
    assert "-e" in second


def test_instructions_are_counted_in_full_runs_and_in_a_quick_run_when_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    counted: list[bool] = []
    for i, (quick, asked) in enumerate([(True, False), (False, False), (True, True)]):
        checkout = tmp_path / str(i)
        seen = _fake_rounds(monkeypatch, checkout, SUITE)
        bench.run(checkout, planning.plan(ROOT, matrix=False), quick=quick, instructions=asked)
        counted.append(all(env.get(INSTRUCTIONS_ENV) == "1" for _, env in seen))
    assert counted == [False, True, True]


@pytest.fixture
def one_call_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> object:
    """The config's environment for this Python's newest set, as asv builds the object."""
    from asv import environment
    from asv.config import Config
    from asv.plugin_manager import plugin_manager

    monkeypatch.setenv("PATH", expose({CURRENT: Path(sys.executable)}, tmp_path)["PATH"])
    monkeypatch.chdir(ROOT)
    conf = Config.load(str(ROOT / "asv.conf.json"))
    for plugin in conf.plugins:
        plugin_manager.import_plugin(plugin)
    assert environment.get_environment_class(conf, CURRENT).__name__ == "OneCallVirtualenv"
    name = newest_set(CURRENT).asv_name
    return next(e for e in environment.get_environments(conf, [name], verbose=False))


def test_the_environment_installs_every_pinned_requirement_in_one_uv_call(
    one_call_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asv import util

    from serkit.run import asv_env

    calls: list[list[str]] = []
    monkeypatch.setattr(asv_env, "find_uv", lambda: "/x/uv")
    monkeypatch.setattr(util, "check_output", lambda args, **kw: calls.append(list(args)))
    monkeypatch.setenv("PIP_FIND_LINKS", "/some/wheels")
    one_call_env._install_requirements()
    assert len(calls) == 1
    command = calls[0]
    assert command[:3] == ["/x/uv", "pip", "install"]
    assert command[command.index("--python") + 1].startswith(one_call_env._path)
    # pip's wheel folder reaches uv, which reads no PIP_* setting itself.
    assert command[command.index("--find-links") + 1] == "/some/wheels"
    pins = {f"{lib}=={v}" for lib, v in newest_set(CURRENT).requirements.items()}
    assert pins <= set(command)
    assert {"wheel", "build", "asv_runner", "pympler"} <= set(command)
    # Each pinned library from its wheels only: never a source build under its label.
    only = {command[i + 1] for i, arg in enumerate(command) if arg == "--only-binary"}
    assert only == set(newest_set(CURRENT).requirements)


def test_without_uv_the_environment_installs_in_one_pip_call(
    one_call_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from serkit.run import asv_env

    calls: list[list[str]] = []
    monkeypatch.setattr(asv_env, "find_uv", lambda: None)
    monkeypatch.setattr(one_call_env, "_run_pip", lambda args, **kw: calls.append(list(args)))
    one_call_env._install_requirements()
    assert len(calls) == 1 and calls[0][:2] == ["install", "--upgrade"]
    pins = {f"{lib}=={v}" for lib, v in newest_set(CURRENT).requirements.items()}
    assert pins <= set(calls[0])


def test_a_failed_install_is_an_error_naming_the_installer(
    one_call_env: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from asv import util

    from serkit.run import asv_env

    def fail(args: list[str], **kw: object) -> None:
        raise util.ProcessError(args, 1, "", "No solution found")

    monkeypatch.setattr(asv_env, "find_uv", lambda: "/x/uv")
    monkeypatch.setattr(util, "check_output", fail)
    with pytest.raises(util.ProcessError):
        one_call_env._install_requirements()
    assert "uv could not install the requirements of" in caplog.text


def test_uv_gets_pips_index_settings() -> None:
    from serkit.run.asv_env import uv_index_options

    environ = {
        "PIP_INDEX_URL": "https://mirror/simple",
        "PIP_EXTRA_INDEX_URL": "https://a/simple https://b/simple",
        "PIP_FIND_LINKS": "/w1 /w2",
        "PIP_NO_INDEX": "1",
    }
    assert uv_index_options(environ) == [
        "--index-url", "https://mirror/simple",
        "--extra-index-url", "https://a/simple", "--extra-index-url", "https://b/simple",
        "--find-links", "/w1", "--find-links", "/w2",
        "--no-index",
    ]  # fmt: skip
    assert uv_index_options({"PIP_NO_INDEX": "0"}) == []


def test_uv_installs_the_checkout_fresh_and_other_install_commands_run_as_configured(
    one_call_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asv import util
    from asv.plugins.virtualenv import Virtualenv

    from serkit.run import asv_env

    class Repo:
        def get_decorated_hash(self, commit: str, length: int) -> str:
            return commit[:length]

    calls: list[tuple[list[str], object]] = []
    monkeypatch.setattr(asv_env, "find_uv", lambda: "/x/uv")
    monkeypatch.setattr(util, "check_output", lambda a, **kw: calls.append((list(a), kw["cwd"])))
    one_call_env._install_project(Repo(), "0123456789", "/checkout")
    [(command, cwd)] = calls
    # The same folder holds every commit's checkout: uv must build it afresh.
    assert command[command.index("--refresh-package") + 1] == "serkit"
    # With the extras every environment needs (memray, for memory per call).
    assert command[-1] == "/checkout[memory]" and cwd == one_call_env._path

    seen: list[str] = []
    monkeypatch.setattr(one_call_env, "_install_command", ["python -m pip install -e ."])
    monkeypatch.setattr(Virtualenv, "_install_project", lambda self, *a: seen.append("asv's"))
    one_call_env._install_project(Repo(), "0123456789", "/checkout")
    assert seen == ["asv's"] and len(calls) == 1


def test_asvs_json_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asv import util

    from serkit.run import asv_env

    assert util.write_json is asv_env.write_json_atomically  # every asv module goes through it
    path = tmp_path / "results" / "abc.json"
    util.write_json(str(path), {"result": [1.5, float("nan")]}, api_version=2, compact=True)
    written = json.loads(path.read_text())  # Python's json reads asv's NaN token
    assert written["version"] == 2 and written["result"][0] == 1.5
    before = path.read_text()

    def dies_half_way(data: object, out: Any, **kw: object) -> None:
        out.write('{"result": [1.')  # what a kill in the middle of asv's write would leave
        raise KeyboardInterrupt

    monkeypatch.setattr(asv_env.json, "dump", dies_half_way)
    with pytest.raises(KeyboardInterrupt):
        util.write_json(str(path), {"result": [2.0]}, api_version=2)
    assert path.read_text() == before  # the old file, whole
    assert [p.name for p in path.parent.iterdir()] == ["abc.json"]  # no temporary left


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        (
            "error: No solution found when resolving dependencies\n  cause: Because there is no "
            "version of msgpack==9.9.9 and you require msgpack==9.9.9, we can conclude that your "
            "requirements are unsatisfiable.",
            "nothing installable for this Python (there is no version of msgpack==9.9.9)",
        ),
        (
            "ERROR: Could not find a version that satisfies the requirement ujson==4.0.0\n"
            "ERROR: No matching distribution found for ujson==4.0.0",
            "nothing installable for this Python (Could not find a version that satisfies",
        ),
        (
            "error: Failed to fetch: `https://pypi.org/simple/orjson/`\n  Caused by: dns error",
            "a network failure (Failed to fetch: `https://pypi.org/simple/orjson/`)",
        ),
        ("OSError: [Errno 28] No space left on device: '/x'", "the disk is full ("),
        ("something odd\nerror: the build backend crashed", "the installer failed (the build"),
    ],
)
def test_a_failed_build_is_told_in_one_line(output: str, cause: str) -> None:
    from serkit.run.asv_env import build_cause

    found = build_cause(output)
    assert found.startswith(cause) and "\n" not in found and len(found) < 200


def test_a_failed_environment_is_noted_with_its_cause_and_cleared_once_built(
    one_call_env: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from asv import util
    from asv.plugins.virtualenv import Virtualenv

    from serkit.results.builds import BUILDS_ENV, read_builds

    record = tmp_path / "serkit-builds.yaml"
    monkeypatch.setenv(BUILDS_ENV, str(record))

    def no_wheel(self: object) -> None:
        raise util.ProcessError(["uv"], 1, "", "  cause: Because there is no version of x==9")

    monkeypatch.setattr(Virtualenv, "_setup", no_wheel)
    with pytest.raises(util.UserError, match=f"py{CURRENT} {EVERY_LIBRARY} was not built: nothing"):
        one_call_env._setup()
    (failure,) = read_builds(record).values()
    assert failure.env == one_call_env.name and failure.label == f"py{CURRENT} {EVERY_LIBRARY}"
    assert failure.cause.startswith("nothing installable") and "x==9" in failure.output
    monkeypatch.setattr(Virtualenv, "_setup", lambda self: None)
    one_call_env._setup()
    assert read_builds(record) == {} and not record.exists()


@pytest.mark.slow
def test_a_python_the_matrix_does_not_list_runs_with_the_releases_installed_beside_serkit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """3.9 left the matrix; the main command still runs on it (the README's Python 3.9+)."""
    from importlib import metadata

    from serkit.checkout import RUN_CONFIG

    monkeypatch.setattr(planning, "current_python", lambda: "3.9")
    monkeypatch.setattr(
        planning, "find_pythons", lambda versions: dict.fromkeys(versions, Path(sys.executable))
    )
    monkeypatch.setattr(planning, "expose", lambda found, folder: {})
    plan = planning.plan(ROOT, matrix=False)
    (env,) = plan.environments
    assert env.python == "3.9" and env.library is None
    assert env.requirements["msgpack"] == metadata.version("msgpack")  # as installed here
    assert "Python 3.9 is not in the matrix" in capsys.readouterr().err
    (tmp_path / "asv.conf.json").write_text((ROOT / "asv.conf.json").read_text())
    written = json.loads(bench.write_run_config(tmp_path, plan).read_text())
    assert written["include"] == [env.as_include()] and (tmp_path / RUN_CONFIG).exists()


# asv's own output of one round, as `asv run` printed it here (the grid rows shortened).
ASV_ROUND = """\
· Creating environments
· Discovering benchmarks
· Running 3 total benchmarks (1 commits * 1 environments * 3 benchmarks)
[ 0.00%] · For serkit commit 15b576ff <main>:
[ 0.00%] ·· Benchmarking virtualenv-py3.11-orjson3.13.0
[33.33%] ··· Setting up suite.facts:177                                      ok
[33.33%] ··· bench_facts.Fidelity.track_exact                                ok
[33.33%] ··· ======================== ===================== =====
                       bson              random-dicts-10     n/a
                       json                 small-dict        1
[66.67%] ··· bench_time.Dumps.time_dumps                                 failed
[100.00%] ··· bench_size.EncodedSize.track_bytes                             ok
""".splitlines()


def test_asv_output_goes_to_the_log_and_moves_the_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from serkit.run import console as console_module

    bars: list[Any] = []

    class Bar:
        def __init__(self, **kw: Any) -> None:
            self.total, self.n, self.closed = kw.get("total"), 0, False
            bars.append(self)

        def update(self, n: int) -> None:
            self.n += n

        def set_postfix_str(self, text: str, refresh: bool = True) -> None:
            pass

        def close(self) -> None:
            self.closed = True

        def refresh(self) -> None:
            pass

    monkeypatch.setattr(console_module, "progress", lambda **kw: Bar(**kw))
    shown: list[str] = []
    log = tmp_path / "logs" / "bench.log"
    out = console_module.AsvConsole(log, stream=None)
    monkeypatch.setattr("sys.stderr", type("E", (), {"write": shown.append, "flush": id})())
    out.start("round 1 of 5")
    for line in ASV_ROUND:
        out.line(line)
    out.close()
    assert shown == []  # nothing of asv's on the console: a bar stands for it
    # asv's set-up (building, discovering), then its benchmarks one by one.
    assert [(b.total, b.n, b.closed) for b in bars] == [(None, 0, True), (3, 3, True)]
    assert log.read_text().splitlines() == ["=== serkit: round 1 of 5", *ASV_ROUND]
    assert list(out.failed) == ["bench_time.Dumps.time_dumps"]
    assert out.tail()[-1] == ASV_ROUND[-1]


def test_verbose_shows_asv_output_as_it_comes(tmp_path: Path) -> None:
    import io

    from serkit.run.console import AsvConsole

    stream = io.StringIO()
    out = AsvConsole(tmp_path / "bench.log", verbose=True, stream=stream)
    out.start("round 1 of 5")
    for line in ASV_ROUND:
        out.line(line)
    out.close()
    assert stream.getvalue().splitlines() == ASV_ROUND
    assert (tmp_path / "bench.log").read_text().splitlines()[1:] == ASV_ROUND


def test_a_run_of_many_rounds_prints_a_few_lines_and_keeps_asv_output_in_its_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The main command printed 7,776 lines, mostly asv's `n/a` rows, again each round."""
    from serkit.run.console import AsvConsole

    grid = [f"{'codec':>20} {'fixture':>20}   n/a"] * 400

    def asv_prints_the_grid(command: list[str], *, output: Any = None, **_: Any) -> int:
        assert output is not None
        for line in [*ASV_ROUND[:3], *grid, *ASV_ROUND[3:]]:
            output(line)
        return 0

    _fake_rounds(monkeypatch, tmp_path, SUITE)
    monkeypatch.setattr(rounds, "run_in_session", asv_prints_the_grid)
    monkeypatch.setenv(ROUNDS_ENV, "5")
    plan = planning.plan(ROOT, matrix=False)
    log = tmp_path / ".asv" / "logs" / "bench.log"
    console = AsvConsole(log)
    assert bench.run(tmp_path, plan, quick=True, extra=["-b", "Dumps"], console=console) == 0
    console.close()
    err = capsys.readouterr().err.splitlines()
    assert len(err) <= 12, err  # a line per round or part, and no grid
    assert not any("n/a" in line for line in err)
    assert log.read_text().count("n/a") >= 400 * 5


def test_timed_processes_place_their_samples_and_the_run_says_how_many_moved(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each `asv run` hands its processes the host's probe and one ledger, and never waits;
    the samples they moved to the other vCPU, read from it, are said at the run's end."""
    from serkit.suite.state_watch import LEDGER_ENV, MOVED, PROBE_FILE_ENV

    given: list[dict[str, str]] = []

    def processes_that_move(command: list[str], *, env: dict[str, str], **_: Any) -> int:
        given.append(env)
        with open(env[LEDGER_ENV], "ab") as ledger:  # 3 samples moved a run
            ledger.write(MOVED * 3)
        return 0

    _fake_rounds(monkeypatch, tmp_path, SUITE)
    monkeypatch.setattr(rounds, "run_in_session", processes_that_move)
    monkeypatch.setenv(ROUNDS_ENV, "2")
    plan = planning.plan(ROOT, matrix=False)
    assert bench.run(tmp_path, plan, quick=True, extra=["-b", "Dumps"]) == 0
    assert len(given) == 2
    assert {env[PROBE_FILE_ENV] for env in given} == {str(tmp_path / ".asv" / "canary-probe.json")}
    err = capsys.readouterr().err
    assert "6 samples taken on the other vCPU" in err
    assert "wait" not in err


def test_a_failed_asv_run_shows_its_last_lines_and_names_the_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from serkit.run.console import AsvConsole

    def asv_fails(command: list[str], *, output: Any = None, **_: Any) -> int:
        output("· Discovering benchmarks")
        output("asv: error: the config is broken")
        return 1

    _fake_rounds(monkeypatch, tmp_path, SUITE)
    monkeypatch.setattr(rounds, "run_in_session", asv_fails)
    plan = planning.plan(ROOT, matrix=False)
    log = tmp_path / "bench.log"
    with pytest.raises(SerkitError, match=f"see its output in {re.escape(str(log))}"):
        bench.run(tmp_path, plan, quick=True, extra=["-b", "Dumps"], console=AsvConsole(log))
    assert "asv: error: the config is broken" in capsys.readouterr().err


def test_plan_lines_are_short_and_true_for_a_narrowed_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first line was a 600-character sentence naming every codec and five fixtures,
    whatever SERKIT_BENCH_CODECS and SERKIT_BENCH_FIXTURES narrowed the run to."""
    from serkit.run.quick import PairSelection
    from serkit.suite.cases import FIXTURES_ENV, SAMPLES_PER_PROCESS

    monkeypatch.setenv(CODECS_ENV, "json,orjson")
    monkeypatch.setenv(FIXTURES_ENV, "small-dict")
    monkeypatch.delenv(ROUNDS_ENV, raising=False)
    plan = planning.plan(ROOT, matrix=False)
    chosen = PairSelection((("json", "small-dict"), ("orjson", "small-dict")))
    lines = planning.plan_lines(plan, "box", quick=True, chosen=chosen, extra=[])
    assert 2 <= len(lines) <= 4 and all(len(line) <= 150 for line in lines), lines
    text = "\n".join(lines)
    assert "machine box: 1 environment (" in text
    assert "2 pairs of 2 codecs on small-dict" in text
    assert "every codec" not in text and "twitter" not in text
    assert f"5 processes of {SAMPLES_PER_PROCESS} samples" in text
    full = planning.plan_lines(plan, "box", quick=False, chosen=None, extra=[])
    assert "full run: 2 codecs on 1 fixture (small-dict)" in "\n".join(full)
    asked = planning.plan_lines(plan, "box", quick=True, chosen=None, extra=["-b", "Dumps"])
    assert "the benchmarks your -b selects" in asked[1]
