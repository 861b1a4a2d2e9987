"""serkit's rounds: which benchmarks each `asv run` selects, and what a run keeps for --resume."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from serkit.checkout import BENCH_STATE
from serkit.errors import SerkitError
from serkit.results.history import is_dated
from serkit.results.tree import Benchmark
from serkit.run.precision import quick_precision
from serkit.run.round_selection import later_selection, split_bench_args
from serkit.run.run_progress import RunState
from serkit.stats import standard_error, typical_processes
from serkit.suite.budget import SingleSample
from serkit.suite.cases import (
    CODECS_ENV,
    FIXTURES_ENV,
    QUICK_SEES,
    ROUNDS_ENV,
    SAMPLES_PER_PROCESS,
    TYPICAL_PROCESSES,
    precision_needed,
)

# Its module fixture is a real run: every test of the module on one xdist worker runs it
# once (pytest -n auto --dist loadgroup, noxfile.py).
pytestmark = pytest.mark.xdist_group("rounds")


ROOT = Path(__file__).resolve().parents[1]
SUITE = {
    "bench_time.Loads.time_loads": {
        "rounds": 5,
        "params": [["'json'", "'yaml'"], ["'small-dict'", "'random-dicts-1000'"]],
    },
    "bench_import.ImportTime.timeraw_import": {"rounds": 2, "params": [["'json'", "'yaml'"]]},
    "bench_facts.Implementation.track_compiled": {"params": [["'json'", "'yaml'"]]},
    "plain.time_it": {"rounds": 3, "params": []},
}
LOADS = "bench_time.Loads.time_loads"


def _selects(regexes: list[str], name: str) -> bool:
    return any(re.search(r, name) for r in regexes)


def test_each_benchmark_takes_part_in_as_many_rounds_as_it_declares() -> None:
    assert later_selection(SUITE, 1, [], []) == [
        r"^bench_import\.ImportTime\.timeraw_import\(",
        r"^bench_time\.Loads\.time_loads\(",
        r"^plain\.time_it$",
    ]
    assert len(later_selection(SUITE, 2, [], [])) == 2  # import time has had its 2 rounds
    assert later_selection(SUITE, 5, [], []) == []


def test_a_pair_timed_once_is_left_out_of_the_later_rounds() -> None:
    once = SingleSample("bench_time.Loads", ("yaml", "random-dicts-1000"), 3.0, 14.0)
    (loads,) = [r for r in later_selection(SUITE, 1, [], [once]) if "Loads" in r]
    assert not _selects([loads], f"{LOADS}('yaml', 'random-dicts-1000')")
    for pair in ("'yaml', 'small-dict'", "'json', 'random-dicts-1000'"):
        assert _selects([loads], f"{LOADS}({pair})")


def test_the_later_rounds_leave_out_what_the_first_one_skipped(tmp_path: Path) -> None:
    from serkit.run.round_selection import first_round_values

    results = {
        "result_columns": ["result", "params"],
        "results": {LOADS: [[1e-6, float("nan"), None, 2e-6], SUITE[LOADS]["params"]]},
    }
    path = tmp_path / "abcd1234-env.json"
    path.write_text(json.dumps(results))  # NaN as asv writes it: a skip
    measured = first_round_values(path)
    assert measured[LOADS] == {("'json'", "'small-dict'"), ("'yaml'", "'random-dicts-1000'")}
    (loads,) = [r for r in later_selection(SUITE, 1, [], [], measured) if "Loads" in r]
    assert _selects([loads], f"{LOADS}('json', 'small-dict')")
    assert not _selects([loads], f"{LOADS}('json', 'random-dicts-1000')")  # skipped: left out
    assert first_round_values(tmp_path / "missing.json") == {}


def test_the_users_regex_still_holds_in_the_later_rounds() -> None:
    once = SingleSample("bench_time.Loads", ("yaml", "random-dicts-1000"), 3.0, 14.0)
    chosen = later_selection(SUITE, 1, ["yaml"], [once])
    assert _selects(chosen, f"{LOADS}('yaml', 'small-dict')")
    assert not _selects(chosen, f"{LOADS}('yaml', 'random-dicts-1000')")
    assert not _selects(chosen, f"{LOADS}('json', 'small-dict')")
    assert not _selects(chosen, "plain.time_it")


def test_bench_arguments_are_told_from_the_others() -> None:
    extra = ["-b", "Dumps", "--bench=Loads", "-bRound", "-e", "--machine", "m1"]
    assert split_bench_args(extra) == (["Dumps", "Loads", "Round"], ["-e", "--machine", "m1"])


def test_the_run_state_survives_a_round_trip_and_knows_where_to_go_on(tmp_path: Path) -> None:
    state = RunState("c0ffee", True, False, None, 5, ["env-a", "env-b"], {}, [], "notes")
    state.done += [(0, "env-a"), (0, "env-b"), (1, "env-a")]
    state.failed["env-b"] = "the disk is full"
    path = tmp_path / "bench-run.json"
    state.save(path)
    again = RunState.load(path)
    assert again == state
    assert again.next_round() == 2  # env-b failed: round 2 is the first left to do


def test_resuming_nothing_says_so(tmp_path: Path) -> None:
    with pytest.raises(SerkitError, match="nothing to resume"):
        RunState.load(tmp_path / "bench-run.json")
    (tmp_path / "bench-run.json").write_text("{")
    with pytest.raises(SerkitError, match="not a serkit run state"):
        RunState.load(tmp_path / "bench-run.json")


# --- real runs: `serkit bench` in a copy of this checkout, its own environment built ----

CURRENT = f"{sys.version_info[0]}.{sys.version_info[1]}"
ONE_PAIR = r"bench_time\.Dumps\.time_dumps\('json', 'small-dict'\)"
GATE_ENV = "SERKIT_TEST_GATE"
# A benchmark only the copied checkout has: its first process passes, and every later one
# waits, before it is timed, until the test opens the gate. So the test's Ctrl-C lands while
# round 2's asv run is surely going on, however slow or fast a loaded machine makes it.
GATE_BENCHMARK = f"""
import os, time
from pathlib import Path


def _wait_at_gate():
    folder = Path(os.environ.get({GATE_ENV!r}) or ".")
    if folder == Path("."):
        return
    with (folder / "arrivals").open("a") as arrivals:
        arrivals.write(f"{{os.getpid()}}\\n")
    if len(set((folder / "arrivals").read_text().split())) < 2:  # asv may set up twice
        return
    (folder / "waiting").touch()
    deadline = time.monotonic() + 600
    while not (folder / "open").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def time_gate():
    pass


time_gate.setup = _wait_at_gate
"""
GATED = r"^bench_gate\.time_gate$"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """This working tree, copied and committed (asv installs a commit), with a HOME of its own
    (the user's asv machine profile is neither read nor written) and the environment
    `serkit bench` runs in."""
    root = tmp_path_factory.mktemp("checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, root / name)
    (root / "benchmarks" / "bench_gate.py").write_text(GATE_BENCHMARK)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=root, check=True)
    home = root / ".home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), CODECS_ENV: "json", FIXTURES_ENV: "small-dict"}
    # The installers' caches, as the user has them: a wheel is not fetched again.
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    env.pop(ROUNDS_ENV, None)
    return root, env


def _results_file(root: Path) -> Path:
    """The run's results file: under asv's name while a run lasts, else the newest filed
    (serkit.results.history)."""
    files = sorted((root / ".asv" / "results").glob("*/*-*.json"))
    (path,) = [p for p in files if not is_dated(p.name)] or files[-1:]
    return path


def _results(root: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(_results_file(root).read_text())
    return {name: dict(zip(data["result_columns"], row)) for name, row in data["results"].items()}


def _planned_and_extra(processes: tuple[float, ...], planned: int = 5) -> bool:
    """Whether `processes` are the planned rounds' and, past them, only extra rounds that
    ran because the processes so far held too few typical ones or were too loose for the
    quick run's precision."""
    if not planned <= len(processes) <= 2 * planned:
        return False
    needed = quick_precision()
    ran_for = [processes[:k] for k in range(planned, len(processes))]
    return all(
        len(typical_processes(before)) < TYPICAL_PROCESSES or (standard_error(before) or 0) > needed
        for before in ran_for
    )


def _dumps_processes(root: Path) -> tuple[float, ...]:
    """The processes that timed json dumps of small-dict, as serkit reads them back."""
    row = _results(root)["bench_time.Dumps.time_dumps"]
    index = list(itertools.product(*row["params"])).index(("'json'", "'small-dict'"))
    timed = Benchmark("bench_time.Dumps.time_dumps", "time", "seconds", repeat=SAMPLES_PER_PROCESS)
    return timed.per_process(row["samples"][index] or [])


@pytest.mark.slow
def test_ctrl_c_stops_serkit_bench_keeps_the_finished_rounds_and_resume_goes_on(
    checkout: tuple[Path, dict[str, str]],
) -> None:
    root, env = checkout
    gate = root / ".gate"
    gate.mkdir()
    env = {**env, GATE_ENV: str(gate)}
    command = [sys.executable, "-m", "serkit", "bench", "--no-report", "--"]
    command += ["-b", ONE_PAIR, "-b", GATED]
    log = root / "bench.log"  # a file, not a pipe: asv writes more than a pipe holds
    with log.open("w") as out:
        # SIGINT ignored, as a background job or an xdist worker's child inherits it:
        # serkit must still stop on it.
        bench = subprocess.Popen(
            command, cwd=root, env=env, stdout=out, stderr=out,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )  # fmt: skip
    state = root / BENCH_STATE
    deadline = time.monotonic() + 600  # the first round builds the environment
    while time.monotonic() < deadline and bench.poll() is None:
        if (gate / "waiting").exists():  # round 1 is saved; round 2 waits at the gate
            break
        time.sleep(0.05)
    assert bench.poll() is None, log.read_text()[-3000:]
    bench.send_signal(signal.SIGINT)
    bench.wait(timeout=30)
    err = log.read_text()
    assert bench.returncode == 130, err[-3000:]
    # No bound on how long the stop took: it waits at most GRACE_S (serkit.run.process)
    # before it kills asv's session, and the rest is the machine's speed (2.96 s once at a
    # load of 10). The wait's timeout above catches a stop that never comes.
    (last,) = [line for line in err.splitlines() if line.startswith("serkit: interrupted")]
    assert "kept in .asv/results" in last and "`serkit bench --resume`" in last
    kept = RunState.load(state)
    assert len(kept.done) == 1  # round 1; round 2 was stopped at the gate
    assert len(_dumps_processes(root)) == len(kept.done)  # every finished round's process
    assert not is_dated(_results_file(root).name)  # not finished: asv's name, for --resume
    assert not [line for line in _processes() if str(root) in line]  # asv and its own: gone

    (gate / "open").touch()
    resumed = subprocess.run(
        [sys.executable, "-m", "serkit", "bench", "--resume", "--no-report"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "at round 2 of 5" in resumed.stderr
    assert _planned_and_extra(_dumps_processes(root))  # the quick run's processes, all of them
    assert not state.exists()  # finished: nothing left to resume
    (filed,) = (root / ".asv" / "results").glob("*/*-*.json")
    assert is_dated(filed.name)  # finished: filed as a point of its own


def _processes() -> list[str]:
    listed = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return listed.stdout.splitlines()


@pytest.mark.slow
def test_an_environment_that_cannot_be_built_is_one_line_and_the_others_go_on(
    checkout: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from serkit.results.builds import BUILDS_FILE, read_builds
    from serkit.run import planning, runner
    from serkit.run.matrix import CONFIG_HEADER, MatrixEnvironment, asv_config, newest_set

    root, env = checkout
    good = newest_set(CURRENT)
    bad = MatrixEnvironment.of(CURRENT, "msgpack", "9.9.9")
    config = asv_config()
    config["include"] = [good.as_include(), bad.as_include()]  # a test config: one cannot install
    (root / "asv.conf.json").write_text(CONFIG_HEADER + json.dumps(config, indent=4))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(root)
    plan = planning.plan(root, matrix=False)
    plan = dataclasses.replace(plan, environments=(bad, good))
    status = runner.run(root, plan, quick=True, extra=["-b", ONE_PAIR])
    err = capsys.readouterr().err
    assert status == 2
    lines = [line for line in err.splitlines() if "was not built" in line]
    (line,) = [line for line in lines if line.startswith("serkit:")]
    assert f"py{CURRENT} msgpack 9.9.9" in line and "msgpack==9.9.9" in line
    assert line.split(" [")[0].endswith("the other environments go on")  # then its time
    assert _planned_and_extra(_dumps_processes(root))  # the good environment ran every round
    (machine,) = [p for p in (root / ".asv" / "results").iterdir() if p.is_dir()]
    (failure,) = read_builds(machine / BUILDS_FILE).values()
    assert failure.label == f"py{CURRENT} msgpack 9.9.9"


def test_extra_rounds_take_only_the_pairs_short_of_typical_processes_or_precision(
    tmp_path: Path,
) -> None:
    from serkit.run.round_selection import imprecise_pairs

    timed = {**SUITE[LOADS], "type": "time", "repeat": 1}
    benchmarks = {
        LOADS: timed,
        "bench_import.ImportTime.timeraw_import": SUITE["bench_import.ImportTime.timeraw_import"],
    }
    quiet, contended, once = [1.0, 1.01, 0.99, 1.02, 1.0], [1.0, 1.6, 1.7, 1.01, 1.8], [9.0]
    loose = [1.0, 1.04, 0.97, 1.02, 0.98]  # five typical processes, 1.2 % of standard error
    results = {
        "result_columns": ["result", "params", "samples"],
        "results": {
            LOADS: [[1.0, 1.0, 9.0, 1.0], timed["params"], [quiet, contended, once, loose]]
        },
    }
    path = tmp_path / "abcd1234-env.json"
    path.write_text(json.dumps(results))
    short = imprecise_pairs(path, benchmarks, precision_needed(QUICK_SEES))
    assert short == {LOADS: {("'json'", "'random-dicts-1000'")}}
    tighter = imprecise_pairs(path, benchmarks, precision_needed(0.05))  # a full run's aim
    assert tighter == {
        LOADS: {("'json'", "'random-dicts-1000'"), ("'yaml'", "'random-dicts-1000'")}
    }
    chosen = later_selection(benchmarks, 7, [], [], short, extra=True)
    assert _selects(chosen, f"{LOADS}('json', 'random-dicts-1000')")
    assert not _selects(chosen, f"{LOADS}('json', 'small-dict')")  # five in its fastest mode
    assert not _selects(chosen, "bench_import.ImportTime.timeraw_import()")
    assert later_selection(benchmarks, 7, [], [], {}, extra=True) == []


def test_the_first_round_is_split_so_a_ctrl_c_keeps_its_finished_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from serkit.run import rounds

    asked: list[list[str]] = []

    def fake_asv(command: list[str], *, cwd: Path, env: dict[str, str], **_: Any) -> int:
        asked.append(command)
        if len(asked) == 2:  # Ctrl-C during the second part
            raise rounds.Interrupted(signal.SIGINT)
        return 0

    monkeypatch.setattr(rounds, "run_in_session", fake_asv)
    state = RunState("c0ffee", True, False, None, 5, ["env-a"], {}, [], str(tmp_path / "n"))
    env = {"SERKIT_BUILDS": str(tmp_path / "results" / "m" / "builds.yaml")}
    monkeypatch.setattr(rounds, "BUILDS_ENV", "SERKIT_BUILDS")
    monkeypatch.setattr(rounds, "results_dir", lambda root: root / "results")
    with pytest.raises(rounds.Interrupted, match="1 part of round 1 finished"):
        rounds.drive(tmp_path, state, env, {"env-a": "py3.11"})
    kept = RunState.load(tmp_path / BENCH_STATE)
    assert kept.first_round_parts == [("env-a", 0)] and kept.done == []
    first = asked[0][asked[0].index("-b") + 1]
    assert first == rounds.FIRST_ROUND_PARTS[0]
    # --resume: the finished part is not run again; the round ends with its last part.
    asked.clear()
    monkeypatch.setattr(rounds, "run_in_session", lambda command, **_: asked.append(command) or 0)
    monkeypatch.setattr(rounds, "_benchmarks", lambda root: {})
    assert rounds.drive(tmp_path, kept, env, {"env-a": "py3.11"}) == 0
    parts = [c[c.index("-b") + 1] for c in asked if "--append-samples" not in c]
    assert parts == list(rounds.FIRST_ROUND_PARTS[1:])


def test_a_round_stopped_before_asv_wrote_leaves_the_results_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C stops asv before it saves its round: the results file is as the last round
    left it, serkit's notes in it, and rewriting it (12 MB in a quick run here, read and
    written three times) cost seconds of the 2 s a stop may take. A round asv did save
    gets serkit's notes again."""
    from serkit.run import rounds

    state = RunState("c0ffee", True, False, None, 5, ["env-a"], {}, [], str(tmp_path / "n"))
    env = {"SERKIT_BUILDS": str(tmp_path / "results" / "m" / "builds.yaml")}
    monkeypatch.setattr(rounds, "BUILDS_ENV", "SERKIT_BUILDS")
    monkeypatch.setattr(rounds, "results_dir", lambda root: root / "results")
    monkeypatch.setattr(rounds, "_benchmarks", lambda root: {})
    results = tmp_path / "results" / "m" / rounds.results_file_name("c0ffee", "env-a")
    results.parent.mkdir(parents=True)
    columns = ["result", "samples", "duration"]
    rows = {"b.time_x": [[1.0], [[1.0]], 30.0]}
    results.write_text(json.dumps({"result_columns": columns, "results": rows}))
    attached: list[Path] = []
    monkeypatch.setattr(rounds, "attach_notes", lambda path, *_: attached.append(path))

    def stopped(command: list[str], **_: Any) -> int:
        raise rounds.Interrupted(signal.SIGINT)

    monkeypatch.setattr(rounds, "run_in_session", stopped)
    before = results.stat()
    with pytest.raises(rounds.Interrupted):
        rounds.drive(tmp_path, state, env, {"env-a": "py3.11"})
    after = results.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert attached == []

    def saved(command: list[str], **_: Any) -> int:  # asv appends a round, its own keys only
        rows["b.time_x"] = [[1.0], [[1.0, 1.1]], 0.4]
        tmp = results.with_suffix(".tmp")
        tmp.write_text(json.dumps({"result_columns": columns, "results": rows}))
        tmp.replace(results)
        return 0

    monkeypatch.setattr(rounds, "run_in_session", saved)
    kept = RunState.load(tmp_path / BENCH_STATE)
    assert rounds.drive(tmp_path, kept, env, {"env-a": "py3.11"}) == 0
    assert attached and set(attached) == {results}


def test_an_interrupt_in_an_extra_round_says_so(tmp_path: Path) -> None:
    from serkit.run.rounds import _interrupted

    (tmp_path / ".asv" / "results").mkdir(parents=True)
    state = RunState("c0ffee", True, False, None, 5, ["env-a"], {}, [], str(tmp_path / "n"))
    state.extra_rounds = 5
    state.done = [(index, "env-a") for index in range(7)]  # 5 planned rounds, 2 extra
    line = _interrupted(tmp_path, state, (7, "env-a"), {})
    assert line.startswith(
        "interrupted in round 8 of at most 10 (an extra round): every planned round and 2 extra"
    )
    assert "of 5" not in line


def test_an_extra_round_keeps_the_planned_rounds_durations(tmp_path: Path) -> None:
    """asv writes the last run's duration; an extra round's covers a few pairs only."""
    from serkit.run.rounds import _durations_kept

    path = tmp_path / "results.json"
    columns = ["result", "samples", "duration"]
    path.write_text(
        json.dumps({"result_columns": columns, "results": {"b.time_x": [[1.0], [[1.0]], 30.0]}})
    )
    with _durations_kept(path):  # as asv appends the extra round's samples
        path.write_text(
            json.dumps(
                {"result_columns": columns, "results": {"b.time_x": [[1.0], [[1.0, 1.1]], 0.4]}}
            )
        )
    (row,) = json.loads(path.read_text())["results"].values()
    assert row == [[1.0], [[1.0, 1.1]], 30.0]
    before = path.stat()
    with _durations_kept(path):  # a round stopped before asv saved: nothing to restore
        pass
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_resumed_run_past_its_rounds_names_the_extra_round() -> None:
    state = RunState("c0ffee", True, False, None, 5, ["env-a"], {}, [], "notes")
    state.extra_rounds = 5
    assert state.round_text(2) == "round 3 of 5 planned"
    assert state.round_text(5) == "round 6 of at most 10 (an extra round)"
    assert "6 of 5" not in state.round_text(state.rounds + state.extra_rounds)


def test_rounds_past_the_plan_are_numbered_on_never_after_a_last_round() -> None:
    """After "round 5 of 5" came "extra round 1 of at most 5": a reader took it for a new run."""
    state = RunState("c0ffee", True, False, None, 5, ["env-a"], {}, [], "notes")
    assert [state.round_text(i) for i in range(5)][-1] == "round 5 of 5"  # no extra rounds
    state.extra_rounds = 5
    words = [state.round_text(i) for i in range(10)]
    assert words[4] == "round 5 of 5 planned"
    assert all(f"round {i + 1} of at most 10" in words[i] for i in range(5, 10))
    assert not any(line.startswith("extra round") for line in words)


def test_a_full_runs_rounds_past_its_least_processes_take_only_the_pairs_short_of_precision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Precision paid for where it buys something (serkit.run.precision): every pair gets
    the least processes, then each planned round only the pairs still short of the aim."""
    from serkit.run import rounds
    from serkit.run.precision import LEAST_PROCESSES

    timed = {**SUITE[LOADS], "type": "time", "repeat": 1, "rounds": 7}  # as ROUNDS_ENV sets
    monkeypatch.setattr(rounds, "_benchmarks", lambda root: {LOADS: timed})
    monkeypatch.setattr(rounds, "BUILDS_ENV", "SERKIT_BUILDS")
    monkeypatch.setattr(rounds, "results_dir", lambda root: root / "results")
    # Five processes each so far: json x small-dict agrees within 1 %, json x
    # random-dicts-1000 scatters, yaml x small-dict agrees, yaml x random-dicts-1000 is
    # loose for a full run's aim (1.2 % of standard error against 0.84 %).
    quiet, contended = [1.0, 1.01, 0.99, 1.02, 1.0], [1.0, 1.6, 1.7, 1.01, 1.8]
    loose = [1.0, 1.04, 0.97, 1.02, 0.98]
    folder = tmp_path / "results" / "m"
    folder.mkdir(parents=True)
    path = folder / rounds.results_file_name("c0ffee", "env-a")
    path.write_text(
        json.dumps(
            {
                "result_columns": ["result", "params", "samples", "duration"],
                "results": {
                    LOADS: [[1.0] * 4, timed["params"], [quiet, contended, quiet, loose], 3.0]
                },
            }
        )
    )
    asked: list[list[str]] = []
    monkeypatch.setattr(rounds, "run_in_session", lambda command, **_: asked.append(command) or 0)
    state = RunState("c0ffee", False, False, None, 7, ["env-a"], {}, [], str(tmp_path / "n"))
    state.precision = precision_needed(0.05)
    state.least_rounds = LEAST_PROCESSES
    env = {"SERKIT_BUILDS": str(folder / "builds.yaml")}
    assert rounds.drive(tmp_path, state, env, {"env-a": "py3.11"}) == 0
    later = [c for c in asked if "--append-samples" in c]
    selected = [[c[i + 1] for i, arg in enumerate(c) if arg == "-b"] for c in later]
    assert len(selected) == 6  # rounds 2 to 7
    for regexes in selected[: LEAST_PROCESSES - 1]:  # rounds 2 to 5: every pair
        assert _selects(regexes, f"{LOADS}('json', 'small-dict')")
    for regexes in selected[LEAST_PROCESSES - 1 :]:  # rounds 6 and 7: the short pairs
        assert _selects(regexes, f"{LOADS}('json', 'random-dicts-1000')")
        assert _selects(regexes, f"{LOADS}('yaml', 'random-dicts-1000')")
        assert not _selects(regexes, f"{LOADS}('json', 'small-dict')")
        assert not _selects(regexes, f"{LOADS}('yaml', 'small-dict')")
    # A quick run (no least rounds) keeps every pair in every planned round.
    asked.clear()
    state = RunState("c0ffee", True, False, None, 7, ["env-a"], {}, [], str(tmp_path / "q"))
    state.precision = precision_needed(0.05)
    assert rounds.drive(tmp_path, state, env, {"env-a": "py3.11"}) == 0
    later = [c for c in asked if "--append-samples" in c]
    selected = [[c[i + 1] for i, arg in enumerate(c) if arg == "-b"] for c in later]
    assert len(selected) == 6
    assert all(_selects(regexes, f"{LOADS}('json', 'small-dict')") for regexes in selected)


def test_an_environment_another_counts_for_runs_without_memory_or_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matrix run's uncounted environments (serkit.run.matrix.counted) run with memory
    per call and instruction counts off; the others as the run asked."""
    from serkit.run import rounds
    from serkit.suite.cases import INSTRUCTIONS_ENV
    from serkit.suite.memory import MEMORY_ENV

    seen: dict[str, dict[str, str]] = {}

    def fake_asv(command: list[str], *, cwd: Path, env: dict[str, str], **_: Any) -> int:
        name = command[command.index("-E") + 1]
        seen[name] = env
        # asv's file, its own keys only, as every run rewrites it
        results = tmp_path / "results" / "m" / rounds.results_file_name("c0ffee", name)
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps({"result_columns": [], "results": {}}))
        return 0

    monkeypatch.setattr(rounds, "run_in_session", fake_asv)
    monkeypatch.setattr(rounds, "_benchmarks", lambda root: {})
    state = RunState("c0ffee", False, True, None, 1, ["a", "b"], {}, [], str(tmp_path / "n"))
    state.uncounted = ["b"]
    env = {"SERKIT_BUILDS": str(tmp_path / "results" / "m" / "builds.yaml")}
    env |= {MEMORY_ENV: "1", INSTRUCTIONS_ENV: "1"}
    monkeypatch.setattr(rounds, "BUILDS_ENV", "SERKIT_BUILDS")
    monkeypatch.setattr(rounds, "results_dir", lambda root: root / "results")
    assert rounds.drive(tmp_path, state, env, {"a": "py3.12 a", "b": "py3.13 b"}) == 0
    assert (seen["a"][MEMORY_ENV], seen["a"][INSTRUCTIONS_ENV]) == ("1", "1")
    assert (seen["b"][MEMORY_ENV], seen["b"][INSTRUCTIONS_ENV]) == ("0", "0")
    # Each asv run's record, written back into the file asv rewrote (serkit.results.asv_runs):
    # the first round's three parts.
    from serkit.results.asv_runs import runs_of

    for name in ("a", "b"):
        results = tmp_path / "results" / "m" / rounds.results_file_name("c0ffee", name)
        assert len(runs_of(json.loads(results.read_text()))) == 3


def test_an_environment_of_one_library_selects_its_own_codecs_parameters_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asv forks a process for each parameter combination it selects: a matrix environment's
    first round names its own codecs' (every benchmark's first parameter is the codec)."""
    from serkit.run import rounds

    parts = rounds.own_parts(["orjson", "orjson-dataclass"])
    assert len(parts) == len(rounds.FIRST_ROUND_PARTS)

    def part_of(name: str) -> int | None:
        found = [i for i, (regex,) in enumerate(parts) if re.search(regex, name)]
        assert len(found) <= 1, name
        return found[0] if found else None

    assert part_of("bench_facts.Implementation.track_compiled('orjson-dataclass')") == 0
    assert part_of("bench_size.CompressedSize.track_bytes('orjson', 'twitter', 'gzip-6')") == 0
    assert part_of("bench_time.Dumps.time_dumps('orjson', 'small-dict')") == 1
    assert part_of("bench_memory.PeakMemory.track_dumps_peak('orjson', 'twitter')") == 2
    assert part_of("bench_import.ImportTime.timeraw_import('orjson')") == 2
    for other in ("'json'", "'orjsonx'", "'cattrs-orjson'"):
        assert part_of(f"bench_time.Dumps.time_dumps({other}, 'small-dict')") is None
    # The run uses them for an environment it knows the codecs of; the others as before.
    asked: list[list[str]] = []
    monkeypatch.setattr(rounds, "run_in_session", lambda command, **_: asked.append(command) or 0)
    monkeypatch.setattr(rounds, "_benchmarks", lambda root: {})
    monkeypatch.setattr(rounds, "BUILDS_ENV", "SERKIT_BUILDS")
    monkeypatch.setattr(rounds, "results_dir", lambda root: root / "results")
    state = RunState("c0ffee", False, True, None, 1, ["a", "b"], {}, [], str(tmp_path / "n"))
    state.own_codecs = {"a": ["orjson", "orjson-dataclass"]}
    env = {"SERKIT_BUILDS": str(tmp_path / "results" / "m" / "builds.yaml")}
    assert rounds.drive(tmp_path, state, env, {"a": "py3.12 orjson", "b": "py3.12"}) == 0
    chosen = {
        (c[c.index("-E") + 1], c[c.index("-b") + 1]) for c in asked if "--append-samples" not in c
    }
    assert chosen == {("a", regex) for (regex,) in parts} | {
        ("b", regex) for regex in rounds.FIRST_ROUND_PARTS
    }


def test_a_quick_run_aims_past_the_floor_and_the_spread_runs_add() -> None:
    # Within a run, the test alone: a +10 % called in 90 % of pairs at 1.65 %.
    assert precision_needed(0.10) == pytest.approx(0.01648, abs=1e-5)
    # Past a 7 % floor, only the 2.8 % above it counts; the test's own bar is then looser.
    past_floor = precision_needed(0.10, floor=0.07)
    assert past_floor == pytest.approx(math.log(1.10 / 1.07) / 1.282 / math.sqrt(2))
    assert past_floor < precision_needed(0.10)
    assert precision_needed(0.10, floor=0.01) == precision_needed(0.10)  # the test binds
    # Two runs' values spread 1.34 x their standard errors here: aimed that much tighter.
    assert quick_precision() == pytest.approx(past_floor / 1.34)
    assert 0.011 < quick_precision() < 0.0115
