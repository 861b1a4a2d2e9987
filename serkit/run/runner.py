"""Running the asv suite: the quick run, the whole matrix, and publishing the HTML.

serkit drives asv as a user would, through its command line, after doing what asv
cannot do alone: find real interpreters (pyenv shims break asv's virtualenv plugin),
pick the matrix's environments by name, create the machine profile without a prompt,
and refuse a mistyped SERKIT_BENCH_* before an environment is built.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from serkit.checkout import (
    BENCH_NOTES,
    BENCH_STATE,
    CONFIG_NAME,
    PYTHONS_DIR,
    git_commit,
    results_dir,
)
from serkit.errors import SerkitError
from serkit.results.builds import BUILDS_ENV, BUILDS_FILE, read_builds
from serkit.results.tree import BENCHMARKS_FILE
from serkit.run.interpreters import expose, find_pythons
from serkit.run.lock import bench_lock
from serkit.run.matrix import PYTHONS, MatrixEnvironment, baseline, environments
from serkit.run.process import Interrupted, run_in_session
from serkit.run.rounds import RunState, later_selection, split_bench_args
from serkit.suite.budget import BUDGET_ENV, NOTES_ENV, read_singles
from serkit.suite.cases import (
    CODECS_ENV,
    FIXTURES_ENV,
    FULL_ROUNDS,
    ROUNDS_ENV,
    SLOW_ENV,
    WARMUP_ENV,
    Selection,
    rounds_from_env,
    warmup_from_env,
)

# Every timed pair takes one sample in each of `rounds` processes (serkit.suite.cases
# ROUNDS_ENV), one process per round, the rounds interleaved over the grid: serkit runs
# them, one `asv run` each (serkit.run.rounds), and asv keeps every sample: they are the
# per-process values that spreads and verdicts are computed from.
SAMPLE_ARGS = ("--record-samples",)
ONE_ROUND = ("-a", "rounds=1")
# The quick run: the fewest processes that still give a between-process spread and a
# test that can call a difference (with 5 processes a side, Welch's t on the logs).
QUICK_ROUNDS = 5
# Not `-a warmup_time`, which would also give a second warm-up to the long calls that
# their preparation already warmed up (serkit.suite.cases.WARMED_CALL_S).
QUICK_WARMUP_S = "0.02"
# What one timed pair may cost in the quick run, warm-up included (serkit.suite.budget):
# a pair over it is timed once, in one process, and shown as a single sample.
QUICK_BUDGET_S = 2.0
QUICK_DESCRIPTION = (
    f"{QUICK_ROUNDS} processes of 1 sample each per pair, 0.02 s of warm-up; "
    f"a pair that would cost over {QUICK_BUDGET_S:g} s: 1 process"
)
FULL_DESCRIPTION = f"{FULL_ROUNDS} processes of 1 sample each per pair, asv's warm-up"


def current_python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


@dataclass(frozen=True)
class Plan:
    """The environments one `asv run` covers, and the Pythons it has to leave out."""

    environments: tuple[MatrixEnvironment, ...]
    missing_pythons: tuple[str, ...]
    asv_env: dict[str, str]  # the process environment asv runs with
    pythons: dict[str, Path]  # the interpreters the environments are built from
    matrix: bool = False
    asked: tuple[str, ...] | None = None  # the Pythons asked for (--python), if any


def plan(root: Path, *, matrix: bool, pythons: Sequence[str] | None = None) -> Plan:
    """Which environments to run: the current Python's baseline, or the whole matrix."""
    Selection.from_env()  # a typo in SERKIT_BENCH_* fails here, before any env is built
    warmup_from_env()
    rounds_from_env()
    if not matrix:
        wanted: tuple[str, ...] = (current_python(),)
        if wanted[0] not in PYTHONS:
            raise SerkitError(f"Python {wanted[0]} is not in the matrix ({', '.join(PYTHONS)})")
    else:
        wanted = tuple(pythons or PYTHONS)
        unknown = [p for p in wanted if p not in PYTHONS]
        if unknown:
            raise SerkitError(f"not in the matrix: Python {', '.join(unknown)}")
    # asv builds an object for every environment in its config, then picks; exposing
    # every Python found keeps it from warning about the ones this run leaves out.
    found = find_pythons(PYTHONS)
    missing = tuple(p for p in wanted if found[p] is None)
    present = tuple(p for p in wanted if p not in missing)
    if not present:
        raise SerkitError(f"no interpreter found for Python {', '.join(wanted)}")
    chosen = environments(present) if matrix else (baseline(p) for p in present)
    asv_env = expose(found, root / PYTHONS_DIR)
    interpreters = {p: path for p in present if (path := found[p])}
    asked = tuple(pythons) if pythons else None
    return Plan(tuple(chosen), missing, asv_env, interpreters, matrix, asked)


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


def ensure_machine(root: Path, env: dict[str, str] | None = None) -> None:
    """Create asv's machine profile (CPU, OS, RAM) once, without asv's interactive prompt."""
    home = Path((env or os.environ).get("HOME") or Path.home())
    if not (home / ".asv-machine.json").exists() and asv(root, ["machine", "--yes"], env) != 0:
        raise SerkitError("asv machine --yes failed; run it yourself to see why")


def run(
    root: Path,
    plan_: Plan,
    *,
    quick: bool,
    extra: Sequence[str] = (),
    state: RunState | None = None,
) -> int:
    """The suite over the plan's environments for the checked-out commit, round by round.

    0 when everything ran; 2 when a benchmark failed or an environment could not be built
    (one line says which and why; the others go on). Raises Busy when another run holds
    the checkout, and Interrupted, its message saying what was kept, on SIGINT or SIGTERM.
    With `state` (see `resume`), goes on where that run stopped.
    """
    with bench_lock(root):
        for python in plan_.missing_pythons:
            print(f"serkit: skipping Python {python}: no interpreter found", file=sys.stderr)
        ensure_machine(root, plan_.asv_env)
        if state is None:
            state = _new_state(root, plan_, quick, extra)
        return _run_rounds(root, plan_, state)


def resume(root: Path) -> tuple[Plan, RunState]:
    """The plan and state of the interrupted run in this checkout, to pass to `run`."""
    state = RunState.load(root / BENCH_STATE)
    commit = git_commit(root) or ""
    if state.commit != commit:
        raise SerkitError(
            f"the interrupted run was of commit {state.commit[:8]}, the checkout is now at "
            f"{commit[:8]}: run `serkit bench` afresh"
        )
    os.environ.update(state.selection)  # the slice it began with, however this shell is set
    plan_ = plan(root, matrix=state.matrix, pythons=state.pythons)
    missing = set(state.environments) - {env.asv_name for env in plan_.environments}
    if missing:
        raise SerkitError(f"cannot resume: {len(missing)} environment(s) of that run are gone")
    return plan_, state


_SELECTION = (CODECS_ENV, FIXTURES_ENV, SLOW_ENV, WARMUP_ENV, ROUNDS_ENV)


def _new_state(root: Path, plan_: Plan, quick: bool, extra: Sequence[str]) -> RunState:
    selection = {k: os.environ[k] for k in _SELECTION if os.environ.get(k)}
    rounds = QUICK_ROUNDS if quick else FULL_ROUNDS
    if selection.get(ROUNDS_ENV):
        rounds = rounds_from_env(selection)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return RunState(
        commit=git_commit(root) or "",
        quick=quick,
        matrix=plan_.matrix,
        pythons=list(plan_.asked) if plan_.asked else None,
        rounds=rounds,
        environments=[env.asv_name for env in plan_.environments],
        selection=selection,
        extra=list(extra),
        notes=str(root / BENCH_NOTES / f"{stamp}-{os.getpid()}"),
    )


class _Stopped(Exception):
    """SIGTERM while serkit itself, not asv, was running."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


@dataclass
class _Round:
    """What every `asv run` of one `serkit bench` shares."""

    root: Path
    state: RunState
    base_env: dict[str, str]
    builds: Path  # the machine's record of environments not built
    labels: dict[str, str]
    regexes: list[str]  # the user's -b
    rest: list[str]  # the user's other asv arguments

    def run(self, round_index: int, name: str) -> int | None:
        """One round in one environment: asv's status, or None when nothing was left to run."""
        state = self.state
        notes = Path(state.notes) / hashlib.sha1(name.encode()).hexdigest()[:12]
        env = {**self.base_env, NOTES_ENV: str(notes)}
        # The commit the run began at: a commit made meanwhile is not what it measures.
        args = ["run", f"{state.commit or 'HEAD'}^!", "-E", name, *SAMPLE_ARGS, *ONE_ROUND]
        if round_index == 0:
            if state.quick:
                env[BUDGET_ENV] = f"{QUICK_BUDGET_S:g}"
            args += [part for regex in self.regexes for part in ("-b", regex)]
        else:
            benchmarks = _benchmarks(self.root)
            chosen = later_selection(benchmarks, round_index, self.regexes, read_singles(notes))
            if not chosen:
                return None
            args += ["--append-samples", *(part for r in chosen for part in ("-b", r))]
        where = f", {self.labels[name]}" if len(state.environments) > 1 else ""
        print(f"serkit: round {round_index + 1} of {state.rounds}{where}", file=sys.stderr)
        command = [sys.executable, "-m", "asv", *args, *self.rest]
        code = run_in_session(command, cwd=self.root, env=env)
        failure = read_builds(self.builds).get(name)
        if failure is not None:
            others = len(state.environments) - len(state.failed) > 1
            go_on = "; the other environments go on" if others else ""
            print(f"serkit: {failure.in_words()}{go_on}", file=sys.stderr)
            state.failed[name] = failure.cause
            return 2
        if code not in (0, 2):
            raise SerkitError(f"asv run failed (exit {code}); see its output above")
        return code


def _run_rounds(root: Path, plan_: Plan, state: RunState) -> int:
    home = Path(plan_.asv_env.get("HOME") or Path.home())
    builds = results_dir(root) / machine_name(state.extra, home) / BUILDS_FILE
    base = {**plan_.asv_env, **state.selection, ROUNDS_ENV: str(state.rounds)}
    base[BUILDS_ENV] = str(builds)
    if state.quick:
        base.setdefault(WARMUP_ENV, QUICK_WARMUP_S)
    regexes, rest = split_bench_args(state.extra)
    labels = {env.asv_name: env.label for env in plan_.environments}
    rounds = _Round(root, state, base, builds, labels, regexes, rest)
    state_path = root / BENCH_STATE
    status, where = 0, (0, "")
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        for round_index in range(state.next_round(), state.rounds):
            for name in state.environments:
                if name in state.failed or state.is_done(round_index, name):
                    continue
                where = (round_index, name)
                status = max(status, rounds.run(round_index, name) or 0)
                state.done.append((round_index, name))
                state.save(state_path)
    except (Interrupted, KeyboardInterrupt, _Stopped) as exc:
        signum: int = signal.SIGINT
        if isinstance(exc, (Interrupted, _Stopped)):
            signum = exc.signum
        state.save(state_path)
        raise Interrupted(signum, _interrupted(root, state, where, labels)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    state_path.unlink(missing_ok=True)
    shutil.rmtree(state.notes, ignore_errors=True)
    return status


def _benchmarks(root: Path) -> dict[str, object]:
    """asv's benchmarks.json, as the last `asv run` discovered the suite."""
    try:
        data = json.loads((results_dir(root) / BENCHMARKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _interrupted(
    root: Path, state: RunState, where: tuple[int, str], labels: dict[str, str]
) -> str:
    """The one line saying what an interrupted run kept and how to go on."""
    round_index, name = where
    runs = state.rounds * (len(state.environments) - len(state.failed))
    place = f"round {round_index + 1} of {state.rounds}"
    if len(state.environments) > 1 and name:
        place += f" ({labels.get(name, name)})"
    if not state.done:
        return f"interrupted in {place}, before any round had finished; nothing was kept"
    kept = results_dir(root).relative_to(root)
    return (
        f"interrupted in {place}: {len(state.done)} of {runs} asv runs finished, their values "
        f"kept in {kept}; `serkit bench --resume` goes on from there"
    )


def scratch_config(root: Path, scratch: Path) -> Path:
    """An asv config for running this checkout in the current interpreter, results in `scratch`.

    For checks that must not touch the real results: `existing` environments record no
    library versions, so their results do not belong beside the matrix's.
    """
    config = {
        "version": 1,
        "project": "serkit",
        "repo": str(root),
        "branches": ["main"],
        "environment_type": "existing",
        "launch_method": "forkserver",
        "benchmark_dir": str(root / "benchmarks"),
        "env_dir": str(scratch / "env"),
        "results_dir": str(scratch / "results"),
        "html_dir": str(scratch / "html"),
    }
    path = scratch / CONFIG_NAME
    path.write_text(json.dumps(config))
    return path


def machine_name(extra: Sequence[str] = (), home: Path | None = None) -> str:
    """The machine name `asv run` files its results under, as asv itself picks it:
    `--machine`, else the only profile in ~/.asv-machine.json, else the host name's."""
    for i, arg in enumerate(extra):
        if arg.startswith("--machine="):
            return arg.split("=", 1)[1]
        if arg in ("--machine", "-m") and i + 1 < len(extra):
            return extra[i + 1]
    node = platform.node()
    try:
        profiles = json.loads(((home or Path.home()) / ".asv-machine.json").read_text())
    except (OSError, ValueError):
        return node
    entries = {k: v for k, v in profiles.items() if k != "version" and isinstance(v, dict)}
    chosen = entries.get(node) or (next(iter(entries.values())) if len(entries) == 1 else None)
    return str(chosen.get("machine", node)) if chosen else node
