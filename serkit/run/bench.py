"""`serkit bench`'s work as phases, each a small function from data to data: plan, start,
run, file, record. The command line (serkit.cli.bench) checks what it is asked, calls
them in this order, prints what each returns, and ends with the report."""

from __future__ import annotations

import dataclasses
import datetime
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.checkout import git_commit, results_dir
from serkit.errors import SerkitError
from serkit.results import history, hosts
from serkit.run import planning, runner
from serkit.run.console import AsvConsole, new_log_path
from serkit.run.lock import check_free
from serkit.run.planning import RunScope
from serkit.run.points import measured_as
from serkit.run.quick import PairSelection
from serkit.run.run_progress import SELECTION, RunState
from serkit.run.sentinel import (
    SENTINEL_BENCHMARKS,
    SENTINEL_PYTHON,
    sentinel_environment,
    sentinel_machine,
    sentinel_selection,
)
from serkit.run.shards import Shard
from serkit.suite.cases import harness_record


@dataclass(frozen=True)
class BenchRequest:
    """What the command line asks of one run, its options checked to go together."""

    matrix: bool = False
    pythons: Sequence[str] | None = None
    shard: Shard | None = None
    quick: bool | None = None  # None: quick alone, full with --matrix
    memory: bool = False
    instructions: bool = False
    asv_args: Sequence[str] = ()  # given to `asv run`: what follows --, and --machine
    skip_measured: Path | None = None  # a store: measure only the points it lacks
    sentinel: bool = False
    resume: bool = False


@dataclass(frozen=True)
class Skipped:
    """What --skip-measured left out of the plan, and why each environment left in runs."""

    store: Path
    measured: int  # the environments left out: the store holds their point
    why: Mapping[str, str]  # each environment measured (its label): why
    warnings: Sequence[str]  # what reading the store said


@dataclass(frozen=True)
class BenchPlan:
    """What one run measures and how, and where it files its results: the plan phase's answer."""

    plan: RunScope
    machine: str  # the name asv files the results under
    quick: bool
    memory: bool
    instructions: bool
    extra: Sequence[str]  # what `asv run` is given
    selection: Mapping[str, str]  # the run's SERKIT_BENCH_* settings
    how: str  # how it measures (serkit.run.points.measured_as)
    commit: str | None
    results: Path  # the results tree it files into
    files: Sequence[str]  # the names asv gives its results files
    state: RunState | None = None  # an interrupted run's, gone on with (--resume)
    chosen: PairSelection | None = (
        None  # the pairs a run of the whole grid times (serkit.run.quick)
    )
    skipped: Skipped | None = None

    @property
    def folder(self) -> Path:
        return self.results / self.machine

    def record(self) -> Mapping[str, Any]:
        """The plan the host record states: what the run left out, predicted."""
        if self.state is not None:
            return self.state.plan
        return self.chosen.as_record() if self.chosen else {"kind": _kind(self.quick)}


@dataclass(frozen=True)
class Started:
    """A run under way: its log, when it began, and an unfinished run's files it kept apart."""

    console: AsvConsole
    log: Path  # asv's output, as it is shown (relative to the checkout where it can be)
    started_at: str
    kept: Sequence[Path] = ()  # files of an earlier run that did not finish, filed as its own


@dataclass(frozen=True)
class BenchOutcome:
    """How asv's runs ended: 0 all ran, 2 a benchmark failed or an environment was not built."""

    status: int
    failed: Sequence[str] = ()  # the benchmarks asv said failed, in order


@dataclass(frozen=True)
class Filed:
    """The run's results files, each filed as its own point, and the machine's state then."""

    paths: Sequence[Path]
    warnings: Sequence[str] = ()
    machine_state: Mapping[str, Any] | None = None

    @property
    def names(self) -> list[str]:
        return [path.name for path in self.paths]


@dataclass(frozen=True)
class _Asked:
    """A run's plan and settings, before its machine is named."""

    plan: RunScope
    quick: bool
    extra: list[str]
    selection: dict[str, str]
    memory: bool = False
    instructions: bool = False
    state: RunState | None = None
    sentinel: bool = False


def _kind(quick: bool) -> str:
    return "quick" if quick else "full"


def _selection() -> dict[str, str]:
    return {k: os.environ[k] for k in SELECTION if os.environ.get(k)}


def _resumed(root: Path) -> _Asked:
    check_free(root)  # refused before it says it resumes: another run holds the checkout
    plan_, state = runner.resume(root)
    return _Asked(
        plan_,
        state.quick,
        list(state.extra),
        state.selection,
        memory=state.memory,
        instructions=state.instructions,
        state=state,
    )


def _sentinel(root: Path, asv_args: Sequence[str]) -> _Asked:
    """The sentinel's run: its environment alone, its grid narrowed to its pairs (through
    the SERKIT_BENCH_* settings the run keeps, so that --resume narrows it the same way)."""
    plan_ = planning.plan(root, matrix=True, pythons=[SENTINEL_PYTHON])
    wanted = sentinel_environment()
    if wanted not in plan_.environments:
        raise SerkitError(f"--sentinel needs Python {SENTINEL_PYTHON}, not found here")
    os.environ.update(sentinel_selection())
    narrowed = dataclasses.replace(plan_, environments=(wanted,))
    extra = ["-b", SENTINEL_BENCHMARKS, *asv_args]
    return _Asked(narrowed, False, extra, _selection(), sentinel=True)


def _asked(root: Path, request: BenchRequest) -> _Asked:
    quick = request.quick if request.quick is not None else not request.matrix
    plan_ = planning.plan(root, matrix=request.matrix, pythons=request.pythons, shard=request.shard)
    return _Asked(
        plan_,
        quick,
        list(request.asv_args),
        _selection(),
        memory=request.memory,
        instructions=request.instructions,
    )


def without_machine(extra: Sequence[str]) -> list[str]:
    """asv's arguments less a machine name given in them."""
    out: list[str] = []
    skip = False
    for arg in extra:
        if skip:
            skip = False
        elif arg in ("--machine", "-m"):
            skip = True
        elif not arg.startswith("--machine="):
            out.append(arg)
    return out


def only_new_points(
    root: Path, plan_: RunScope, store: Path, machine: str, how: str
) -> tuple[RunScope, Skipped]:
    """The plan less the environments `store` holds a point of as a run now would make it."""
    now = runner.here_now(root, plan_, how)
    narrowed, why, warnings = planning.skip_measured(plan_, store, machine, now)
    return narrowed, Skipped(store, len(narrowed.measured), why, warnings)


def plan(root: Path, request: BenchRequest) -> BenchPlan:
    """What the run measures: resumed, the sentinel's, or as asked; its machine named;
    with --skip-measured, less what the store holds; the pairs it leaves out, predicted."""
    if request.resume:
        asked = _resumed(root)
    elif request.sentinel:
        asked = _sentinel(root, request.asv_args)
    else:
        asked = _asked(root, request)
    how = measured_as(
        quick=asked.quick,
        memory=asked.memory,
        instructions=asked.instructions,
        selection=asked.selection,
        asv_args=asked.extra,
    )
    # The name asv files the results under (serkit.run.naming): derived from the hardware
    # on a CI runner, so that every shard of one runner kind lands under one name.
    home = Path(asked.plan.asv_env.get("HOME") or Path.home())
    machine, extra = runner.machine_name(asked.extra, home), asked.extra
    if asked.sentinel:  # filed apart from the runner kind's own points (serkit.run.sentinel)
        machine = sentinel_machine(machine)
        extra = [*without_machine(extra), "--machine", machine]
    plan_, skipped = asked.plan, None
    if request.skip_measured and not request.resume:
        plan_, skipped = only_new_points(root, plan_, request.skip_measured, machine, how)
    chosen = None
    if asked.state is None and plan_.environments:  # the pairs left out (serkit.run.quick)
        chosen = planning.quick_plan(extra) if asked.quick else planning.full_plan(extra, plan_)
    commit = git_commit(root)
    files = runner.results_names(plan_, machine, commit) if commit else []
    return BenchPlan(
        plan_,
        machine,
        quick=asked.quick,
        memory=asked.memory,
        instructions=asked.instructions,
        extra=extra,
        selection=asked.selection,
        how=how,
        commit=commit,
        results=results_dir(root),
        files=files,
        state=asked.state,
        chosen=chosen,
        skipped=skipped,
    )


def plan_lines(planned: BenchPlan) -> list[str]:
    """What the run measures, in a few lines (serkit.run.planning.plan_lines)."""
    return planning.plan_lines(
        planned.plan,
        planned.machine,
        quick=planned.quick,
        chosen=planned.chosen,
        extra=planned.extra,
    )


def start(root: Path, planned: BenchPlan, *, verbose: bool) -> Started:
    """asv's log opened; a new run's point kept apart from an unfinished one's.

    Each run is a point of its own (serkit.results.history): asv's files under their plain
    names, left by a run that did not finish, are filed as that run's first, so that asv
    does not mix their values into this run's."""
    console = AsvConsole(new_log_path(root), verbose=verbose)
    log = console.log.relative_to(root) if console.log.is_relative_to(root) else console.log
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    kept = [] if planned.state else history.file_runs(planned.folder, planned.files)
    return Started(console, log, started_at, kept)


def run(root: Path, planned: BenchPlan, started: Started) -> BenchOutcome:
    """The suite over the plan, round by round (serkit.run.runner.run); asv's failure to
    run at all is an error, a benchmark that failed is the outcome's."""
    try:
        status = runner.run(
            root,
            planned.plan,
            quick=planned.quick,
            extra=planned.extra,
            memory=planned.memory,
            instructions=planned.instructions,
            state=planned.state,
            chosen=planned.chosen,
            console=started.console,
        )
    finally:
        started.console.close()
    if status not in (0, 2):
        raise SerkitError(f"asv run failed (exit {status}); see its output in {started.log}")
    return BenchOutcome(status, tuple(started.console.failed))


def file(planned: BenchPlan) -> Filed:
    """The run's results files filed as its point, and the machine's state during it."""
    warnings: list[str] = []
    paths = history.file_runs(planned.folder, planned.files, warnings)
    state = hosts.run_state(planned.results, planned.machine, [path.name for path in paths])
    return Filed(paths, warnings, state)


def record(planned: BenchPlan, started: Started, filed: Filed) -> Path:
    """What asv does not record (governor, turbo, Python builds, the host's identity),
    beside the results, one entry per run, naming the results files it filed."""
    plan_ = planned.plan
    return hosts.record_host(
        planned.results,
        planned.machine,
        plan_.pythons,
        shard=str(plan_.shard) if plan_.shard else None,
        commit=planned.commit,
        environments=[env.label for env in plan_.environments],
        filed=filed.names,
        measured_as=planned.how,
        started_at=started.started_at,
        plan=planned.record(),
        state=filed.machine_state,
        harness=harness_record(planning.run_warmup(planned.quick, planned.selection)),
    )
