"""Running the asv suite over a planned run (serkit.run.planning): round by round, resumed,
and asv's own commands in the checkout.

serkit drives asv as a user would, through its command line, after doing what asv
cannot do alone: find real interpreters (pyenv shims break asv's virtualenv plugin),
pick the matrix's environments by name, create the machine profile without a prompt,
and refuse a mistyped SERKIT_BENCH_* before an environment is built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from serkit.checkout import (
    BENCH_STATE,
    CONFIG_NAME,
    RUN_CONFIG,
    git_commit,
    results_dir,
)
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.results.builds import BUILDS_ENV, BUILDS_FILE
from serkit.results.hosts import host_facts, python_build
from serkit.results.tree import BENCHMARKS_FILE
from serkit.run.console import AsvConsole
from serkit.run.lock import bench_lock
from serkit.run.machine_profile import PROFILES_FILE, asv_home, ensure_machine, given_machine
from serkit.run.machine_profile import machine_name as machine_name  # serkit.cli reads it here
from serkit.run.matrix import (
    MatrixEnvironment,
)
from serkit.run.planning import QUICK_BUDGET_S, QUICK_ROUNDS, QUICK_WARMUP_S, RunScope, plan
from serkit.run.points import Now
from serkit.run.precision import LEAST_PROCESSES, quick_precision
from serkit.run.quick import (
    PairSelection,
)
from serkit.run.releases import load
from serkit.run.rounds import drive
from serkit.run.run_progress import RunState, new_state
from serkit.run.shards import Shard
from serkit.suite.cases import (
    FULL_ROUNDS,
    FULL_SEES,
    ROUNDS_ENV,
    WARMUP_ENV,
    precision_needed,
    rounds_from_env,
)
from serkit.suite.instructions import opt_in_environment as instructions_environment
from serkit.suite.memory import MEMORY_ENV


def here_now(root: Path, plan_: RunScope, how: str) -> Now:
    """This host as a run now would record it, each planned Python's full version, the
    suite's benchmark code (asv's discovery in this interpreter, 2-3 s), and `how` the run
    measures (serkit.run.points.measured_as)."""
    host = host_facts()
    pythons = {p: str(python_build(path).get("version")) for p, path in plan_.pythons.items()}
    with tempfile.TemporaryDirectory(prefix="serkit-suite-") as scratch:
        listed = json.loads(discover_benchmarks(root, Path(scratch)).read_text())
    code = {
        name: str(info.get("version"))
        for name, info in listed.items()
        if isinstance(info, dict) and info.get("version") is not None
    }
    return Now(host, pythons, code, how)


def results_name(machine: str, commit: str, env: MatrixEnvironment) -> str:
    """The name asv gives an environment's results file (a long name becomes its hash)."""
    from asv.results import get_filename  # deferred: asv is only needed to run

    return Path(get_filename(machine, commit, env.asv_name)).name


def results_names(plan_: RunScope, machine: str, commit: str) -> list[str]:
    """The names asv gives the plan's results files."""
    return [results_name(machine, commit, env) for env in plan_.environments]


def asv(
    root: Path, args: Sequence[str], env: dict[str, str] | None = None, *, quiet: bool = False
) -> int:
    """Run one asv command in the checkout; its output goes to the user unless `quiet`,
    and then only when the command fails."""
    command = [sys.executable, "-m", "asv", *args]
    done = subprocess.run(command, cwd=root, env=env, check=False, capture_output=quiet, text=True)
    if quiet and done.returncode not in (0, 2):
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
    return done.returncode


def run(
    root: Path,
    plan_: RunScope,
    *,
    quick: bool,
    extra: Sequence[str] = (),
    memory: bool = False,
    instructions: bool = False,
    state: RunState | None = None,
    chosen: PairSelection | None = None,
    console: AsvConsole | None = None,
) -> int:
    """The suite over the plan's environments for the checked-out commit, round by round
    (serkit.run.rounds), filed under `machine_name` (serkit.run.naming's rule).

    0 when everything ran; 2 when a benchmark failed or an environment could not be built
    (one line says which and why; the others go on). Raises Busy when another run holds
    the checkout, and Interrupted, its message saying what was kept, on SIGINT or SIGTERM.
    With `state` (see `resume`), goes on where that run stopped. A full run also
    measures memory per call and counts instructions; a quick run only when asked. A quick
    run times `chosen`'s pairs (`quick_plan`), or, without one, the grid as a full run.
    """
    with bench_lock(root):
        for python in plan_.missing_pythons:
            print(f"serkit: skipping Python {python}: no interpreter found", file=sys.stderr)
        if state is None:
            if chosen:
                chosen = chosen.asking(memory=memory, instructions=instructions)
            rounds = QUICK_ROUNDS if quick else FULL_ROUNDS
            if os.environ.get(ROUNDS_ENV, "").strip():
                rounds = rounds_from_env()
            state = new_state(
                root,
                [env.asv_name for env in plan_.environments],
                quick=quick,
                rounds=rounds,
                extra=_with_config(_with_machine(root, plan_, extra)),
                budget_s=QUICK_BUDGET_S if quick else None,
                matrix=plan_.matrix,
                pythons=plan_.asked,
                memory=memory,
                instructions=instructions,
                shard=str(plan_.shard) if plan_.shard else None,
                extra_rounds=rounds,
                precision=quick_precision() if quick else precision_needed(FULL_SEES),
                # A full run's pairs past their first LEAST_PROCESSES: by their spread.
                least_rounds=0 if quick else min(LEAST_PROCESSES, rounds),
                parts=chosen.parts() if chosen else (),
                plan=chosen.as_record() if chosen else {"kind": "quick" if quick else "full"},
                uncounted=plan_.uncounted,
                own_codecs=plan_.own_codecs(),
            )
            if chosen:
                state.selection.update(chosen.environment())
        if RUN_CONFIG in state.extra:
            write_run_config(root, plan_)
        machine = given_machine(state.extra) or machine_name(home=asv_home(plan_.asv_env))
        env = {**plan_.asv_env, **state.selection, ROUNDS_ENV: str(state.rounds)}
        env[BUILDS_ENV] = str(results_dir(root) / machine / BUILDS_FILE)
        if state.quick:
            env.setdefault(WARMUP_ENV, QUICK_WARMUP_S)
        if state.memory or not state.quick:  # see serkit.suite.memory.MEMORY_ENV
            env[MEMORY_ENV] = "1"
        if state.instructions or not state.quick:  # about 3-6 minutes for the default grid
            env.update(instructions_environment())
        labels = {e.asv_name: e.label for e in plan_.environments}
        return drive(root, state, env, labels, console)


def _with_config(extra: list[str]) -> list[str]:
    """`extra` pointing asv at this run's config (write_run_config), unless it names one."""
    if any(arg == "--config" or arg.startswith("--config=") for arg in extra):
        return extra
    return [*extra, "--config", RUN_CONFIG]


def write_run_config(root: Path, plan_: RunScope) -> Path:
    """The checkout's asv config with only this run's environments and Pythons.

    asv makes an object of every environment in its config on every `asv run`, and says
    so once per environment whose Python is missing here: with the matrix's Pythons
    3.10 to 3.14t, a machine without 3.14 would print dozens of such lines per round.
    The names, folders and results are the same: only the list is shorter.
    """
    text = (root / CONFIG_NAME).read_text(encoding="utf-8")
    lines = (line for line in text.splitlines() if not line.lstrip().startswith("//"))
    try:
        config = json.loads("\n".join(lines))
        included = list(config["include"])
    except (ValueError, KeyError, TypeError) as exc:
        raise SerkitError(f"{CONFIG_NAME} is not serkit's asv config ({exc})") from None
    wanted = [env.as_include() for env in plan_.environments]
    # A Python the matrix does not list has no entry: its run's set is added here.
    listed = load().pythons
    unlisted = [e for env, e in zip(plan_.environments, wanted) if env.python not in listed]
    absent = [
        env.label
        for env, entry in zip(plan_.environments, wanted)
        if entry not in included and env.python in listed
    ]
    if absent:
        raise SerkitError(
            f"{CONFIG_NAME} does not name {', '.join(absent)}: it is older than "
            "serkit/run/releases.json; run `serkit matrix --write-config asv.conf.json`"
        )
    config["include"] = [entry for entry in included if entry in wanted] + unlisted
    config["pythons"] = [p for p in config.get("pythons", []) if p in plan_.pythons]
    config["pythons"] += [p for p in plan_.pythons if p not in config["pythons"]]
    # asv works in its config's folder: every path the checkout's config gives relative to
    # the checkout is given absolute here.
    for key in ("repo", "benchmark_dir", "env_dir", "results_dir", "html_dir"):
        if isinstance(config.get(key), str):
            config[key] = str((root / config[key]).resolve())
    path = root / RUN_CONFIG
    atomic_write(path, json.dumps(config, indent=1))
    return path


def _with_machine(root: Path, plan_: RunScope, extra: Sequence[str]) -> list[str]:
    """`extra` naming the machine every round files its results under, its profile made."""
    given = given_machine(extra)
    if given is not None:
        ensure_machine(root, plan_.asv_env, given)
        return list(extra)
    name = machine_name(extra, asv_home(plan_.asv_env))
    ensure_machine(root, plan_.asv_env, name)
    return ["--machine", name, *extra]


def resume(root: Path) -> tuple[RunScope, RunState]:
    """The plan and state of the interrupted run in this checkout, to pass to `run`."""
    state = RunState.load(root / BENCH_STATE)
    commit = git_commit(root) or ""
    if state.commit != commit:
        raise SerkitError(
            f"the interrupted run was of commit {state.commit[:8]}, the checkout is now at "
            f"{commit[:8]}: run `serkit bench` afresh"
        )
    os.environ.update(state.selection)  # the slice it began with, however this shell is set
    shard = Shard.parse(state.shard) if state.shard else None
    plan_ = plan(root, matrix=state.matrix, pythons=state.pythons, shard=shard)
    kept = tuple(env for env in plan_.environments if env.asv_name in state.environments)
    if len(kept) != len(state.environments):
        gone = len(state.environments) - len(kept)
        raise SerkitError(f"cannot resume: {gone} environment(s) of that run are gone")
    return replace(plan_, environments=kept), state


def scratch_config(root: Path, scratch: Path) -> Path:
    """An asv config for running this checkout in the current interpreter, results in `scratch`.

    For checks that must not touch the real results: `existing` environments record no
    library versions, so their results do not belong beside the matrix's.
    """
    config = {
        "version": 1,
        "project": "serkit",
        "repo": str(root),
        # The checked-out commit, whatever the branch: asv looks the branch up whenever it is
        # given --set-commit-hash, and a clone of another branch has no `main`.
        "branches": ["HEAD"],
        "environment_type": "existing",
        # serkit's plugin, for its atomic writes (asv imports it from the installed serkit).
        "plugins": [".serkit.run.asv_env"],
        "launch_method": "forkserver",
        "benchmark_dir": str(root / "benchmarks"),
        "env_dir": str(scratch / "env"),
        "results_dir": str(scratch / "results"),
        "html_dir": str(scratch / "html"),
    }
    path = scratch / CONFIG_NAME
    atomic_write(path, json.dumps(config), sync=False)  # a scratch folder's
    return path


def discover_benchmarks(root: Path, into: Path) -> Path:
    """Write the suite's benchmarks.json into `into`: `asv run --bench just-discover` in
    this interpreter (2-3 s), never a copy of an older one."""
    with tempfile.TemporaryDirectory(prefix="serkit-discover-") as scratch:
        folder = Path(scratch)
        config = scratch_config(root, folder)
        name = "serkit-discover"
        env = {**os.environ, "HOME": str(folder)}  # not the user's asv machine profile
        profile = {name: {"machine": name}, "version": 1}
        atomic_write(folder / PROFILES_FILE, json.dumps(profile), sync=False)
        args = ["run", "--bench", "just-discover", "--config", str(config)]
        args += ["-E", f"existing:{sys.executable}", "--machine", name]
        if asv(root, args, env, quiet=True) != 0:
            raise SerkitError("asv could not discover the suite's benchmarks; see its output")
        written = folder / "results" / BENCHMARKS_FILE
        if not written.is_file():
            raise SerkitError(f"asv discovered the suite but wrote no {BENCHMARKS_FILE}")
        target = into / BENCHMARKS_FILE
        atomic_write(target, written.read_bytes())
        return target
