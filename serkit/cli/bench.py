"""`serkit bench`: running the asv suite in the matrix's environments (serkit.cli.matrix)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import sys
from pathlib import Path
from typing import Any

from serkit.checkout import git_commit, project_root, reports_dir, results_dir
from serkit.cli.common import add_ranking, warn
from serkit.cli.results import write_report
from serkit.errors import SerkitError
from serkit.report.summary import summary_table
from serkit.results import history
from serkit.run import runner
from serkit.run.console import AsvConsole, new_log_path
from serkit.run.lock import check_free
from serkit.run.points import measured_as
from serkit.run.process import Interrupted
from serkit.run.releases import load, staleness
from serkit.run.rounds import SELECTION, RunState
from serkit.run.sentinel import (
    SENTINEL_BENCHMARKS,
    SENTINEL_PYTHON,
    sentinel_environment,
    sentinel_machine,
    sentinel_selection,
)
from serkit.run.shards import BadShard, Shard
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV, SLOW_ENV, split_ids
from serkit.units import plural


def _escaped(text: str) -> str:
    """Help text built from prose: argparse reads a bare % as a format."""
    return text.replace("%", "%%")


def add_commands(commands: Any) -> None:
    bench = commands.add_parser(
        "bench",
        help="run the asv suite: quick on this Python, or the whole matrix; then the report",
        description=(
            "Run the asv suite for the checked-out commit, record this host's facts beside "
            "the results, then write the HTML report (serkit report). "
            f"Narrow the grid with {CODECS_ENV}, {FIXTURES_ENV} and {SLOW_ENV}."
        ),
    )
    bench.add_argument(
        "--matrix", action="store_true", help="every environment of every Python found"
    )
    bench.add_argument(
        "--python", type=split_ids, action="extend", help="with --matrix: these Pythons only"
    )
    speed = bench.add_mutually_exclusive_group()
    speed.add_argument(
        "--quick",
        action="store_true",
        default=None,
        help=_escaped(f"{runner.QUICK_DESCRIPTION} (default alone)"),
    )
    speed.add_argument(
        "--full",
        dest="quick",
        action="store_false",
        help=_escaped(f"{runner.FULL_DESCRIPTION} (default --matrix)"),
    )
    bench.add_argument(
        "--memory",
        action="store_true",
        help="a quick run also measures memory per call (full runs always do; about 5 min)",
    )
    bench.add_argument(
        "--instructions",
        action="store_true",
        help="a quick run also counts instructions and estimated cycles per call under "
        "valgrind, after its timings (full runs always do; minutes the first time, pairs "
        "counted before are read back from the facts store)",
    )
    bench.add_argument(
        "--shard",
        type=_shard,
        metavar="K/N",
        help="with --matrix: the K-th of N disjoint slices of the environments (2/3)",
    )
    bench.add_argument(
        "--skip-measured",
        metavar="DIR",
        help="measure only new points: leave out each environment that DIR, a results tree "
        "(the CI store), holds a run of on this machine with the same library releases, "
        "Python, host identity and benchmark code, at any suite commit",
    )
    bench.add_argument(
        "--sentinel",
        action="store_true",
        help="the sentinel pairs only (serkit/run/sentinel.py), full, in their environment, "
        "filed under this machine's name with -sentinel, "
        "measured on every scheduled run whatever the store holds: the runners' own drift",
    )
    bench.add_argument(
        "--resume",
        action="store_true",
        help="go on with the run that was interrupted in this checkout, as it was started",
    )
    bench.add_argument(
        "--no-report", action="store_true", help="skip the HTML report (serkit report)"
    )
    add_ranking(bench)  # the summary table that ends the run
    bench.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show asv's own output as it runs (always kept in a log under .asv/logs/; "
        "without -v a progress bar per round stands for it)",
    )
    bench.add_argument(
        "asv_args", nargs=argparse.REMAINDER, help="after --: passed on to `asv run`"
    )
    bench.set_defaults(run=run_bench)


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except BadShard as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_bench(args: argparse.Namespace) -> int:
    try:
        return _bench(args)
    except Interrupted as exc:  # asv and its processes are stopped; exc says what was kept
        print(f"serkit: {exc}", file=sys.stderr)
        return exc.exit_status


def _resumed(args: argparse.Namespace, root: Path) -> tuple[runner.Plan, RunState]:
    given = args.matrix or args.python or args.shard or args.skip_measured or args.asv_args
    given = given or args.sentinel
    if given or args.quick is not None or args.memory or args.instructions:
        raise SerkitError("--resume goes on as the interrupted run was started: give it alone")
    check_free(root)  # refused before it says it resumes: another run holds the checkout
    plan, state = runner.resume(root)
    print(
        f"serkit: resuming the {'quick' if state.quick else 'full'} run of {state.commit[:8]} "
        f"at {state.round_text(state.next_round())}",
        file=sys.stderr,
    )
    return plan, state


def _only_new_points(
    root: Path, plan: runner.Plan, store: Path, machine: str, how: str
) -> runner.Plan:
    """The plan less the environments `store` holds a point of as a run now would make it."""
    now = runner.here_now(root, plan, how)
    plan, why, warnings = runner.skip_measured(plan, store, machine, now)
    for warning in warnings:
        print(f"serkit: warning: {warning}", file=sys.stderr)
    if plan.measured:
        print(
            f"serkit: {plural(len(plan.measured), 'environment')} already measured on "
            f"{machine} with these releases, Pythons, host and benchmark code, in {store}: "
            "left out",
            file=sys.stderr,
        )
    for label, reason in why.items():
        print(f"serkit: measuring {label}: {reason}", file=sys.stderr)
    return plan


def _sentinel_plan(args: argparse.Namespace, root: Path) -> tuple[runner.Plan, list[str]]:
    """The sentinel's run: its environment alone, its grid narrowed to its pairs (through
    the SERKIT_BENCH_* settings the run keeps, so that --resume narrows it the same way)."""
    asked = args.matrix or args.python or args.shard or args.skip_measured or args.quick
    if asked or args.memory or args.instructions:
        raise SerkitError("--sentinel measures the sentinel pairs as declared: give it alone")
    plan = runner.plan(root, matrix=True, pythons=[SENTINEL_PYTHON])
    wanted = sentinel_environment()
    if wanted not in plan.environments:
        raise SerkitError(f"--sentinel needs Python {SENTINEL_PYTHON}, not found here")
    os.environ.update(sentinel_selection())
    extra = args.asv_args[1:] if args.asv_args[:1] == ["--"] else list(args.asv_args)
    return dataclasses.replace(plan, environments=(wanted,)), ["-b", SENTINEL_BENCHMARKS, *extra]


def _without_machine(extra: list[str]) -> list[str]:
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


def _bench(args: argparse.Namespace) -> int:
    from serkit.results.hosts import record_host, run_state

    root = project_root()
    # Read from installed metadata and the data file's date: no network on every run.
    warn(staleness(load()))
    state = None
    if args.resume:
        plan, state = _resumed(args, root)
        quick, extra, memory = state.quick, state.extra, state.memory
        instructions, selection = state.instructions, state.selection
    elif args.sentinel:
        plan, extra = _sentinel_plan(args, root)
        quick, memory, instructions = False, False, False
        selection = {k: os.environ[k] for k in SELECTION if os.environ.get(k)}
    else:
        quick = args.quick if args.quick is not None else not args.matrix
        plan = runner.plan(root, matrix=args.matrix, pythons=args.python, shard=args.shard)
        extra = args.asv_args[1:] if args.asv_args[:1] == ["--"] else args.asv_args
        memory = args.memory
        instructions = args.instructions
        selection = {k: os.environ[k] for k in SELECTION if os.environ.get(k)}
    how = measured_as(
        quick=quick, memory=memory, instructions=instructions, selection=selection, asv_args=extra
    )
    # The name asv files the results under (serkit.run.naming): derived from the hardware
    # on a CI runner, so that every shard of one runner kind lands under one name.
    machine = runner.machine_name(extra, Path(plan.asv_env.get("HOME") or Path.home()))
    if args.sentinel:  # filed apart from the runner kind's own points (serkit.run.sentinel)
        machine = sentinel_machine(machine)
        extra = [*_without_machine(extra), "--machine", machine]
    commit = git_commit(root)
    if args.skip_measured and not args.resume:
        plan = _only_new_points(root, plan, Path(args.skip_measured), machine, how)
        if not plan.environments:
            print("serkit: nothing left to measure", file=sys.stderr)
            return 0
    chosen = None
    if state is None:  # the pairs the run leaves out, predicted (serkit.run.quick)
        chosen = runner.quick_plan(extra) if quick else runner.full_plan(extra, plan)
    if not args.resume:
        for line in runner.plan_lines(plan, machine, quick=quick, chosen=chosen, extra=extra):
            print(f"serkit: {line}", file=sys.stderr)
    console = AsvConsole(new_log_path(root), verbose=args.verbose)
    shown = console.log.relative_to(root) if console.log.is_relative_to(root) else console.log
    print(
        f"serkit: asv's output: {shown}{'' if args.verbose else ' (-v shows it here)'}",
        file=sys.stderr,
    )
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    # Each run is a point of its own (serkit.results.history): asv's files under their
    # plain names, left by a run that did not finish, are filed as that run's first, so
    # that asv does not mix their values into this run's.
    files = runner.results_names(plan, machine, commit) if commit else []
    folder = results_dir(root) / machine
    if not args.resume and (left := history.file_runs(folder, files)):
        print(
            f"serkit: {plural(len(left), 'results file')} of an earlier run that did not "
            "finish kept as that run's own point",
            file=sys.stderr,
        )
    try:
        status = runner.run(
            root,
            plan,
            quick=quick,
            extra=extra,
            memory=memory,
            instructions=instructions,
            state=state,
            chosen=chosen,
            console=console,
        )
    finally:
        console.close()
    if state is not None:
        kept = state.plan
    else:
        kept = chosen.as_record() if chosen else {"kind": "quick" if quick else "full"}
    if status not in (0, 2):
        raise SerkitError(f"asv run failed (exit {status}); see its output in {shown}")
    warnings: list[str] = []
    filed = history.file_runs(folder, files, warnings)
    for warning in warnings:
        print(f"serkit: warning: {warning}", file=sys.stderr)
    machine_state = run_state(results_dir(root), machine, [path.name for path in filed])
    if machine_state is not None:
        print(f"serkit: machine state during the run: {machine_state['in_words']}", file=sys.stderr)
    # What asv does not record (governor, turbo, Python builds, the host's identity)
    # travels with the results, one entry per run, naming the results files it filed.
    record_host(
        results_dir(root),
        machine,
        plan.pythons,
        shard=str(plan.shard) if plan.shard else None,
        commit=commit,
        environments=[env.label for env in plan.environments],
        filed=[path.name for path in filed],
        measured_as=how,
        started_at=started_at,
        plan=kept,
        state=machine_state,
    )
    # Report what was measured even when some benchmarks failed: nothing is lost.
    if not args.no_report:
        write_report(root, results_dir(root), reports_dir(root), with_asv=True, hosts=[machine])
    ranked = {"measure": args.rank_by, "exact_only": args.exact_only}
    if summary := summary_table(results_dir(root), machine, **ranked):
        print(summary)  # the answer, last
    if status == 2:
        # asv also exits 2 when it refuses its arguments; its own message says which.
        failed = list(console.failed)
        what = "a benchmark failed or an environment was not built"
        if failed:
            more = " ..." if len(failed) > 5 else ""
            what = f"{plural(len(failed), 'benchmark')} failed ({', '.join(failed[:5])}{more})"
        print(f"serkit: {what}; asv's output: {shown}", file=sys.stderr)
    return 0 if status == 0 else 1
