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
from serkit.cli.common import print_json, warn
from serkit.cli.exits import UsageError, checked
from serkit.cli.options import Option, Use, command, escaped
from serkit.cli.report import write_report
from serkit.errors import SerkitError
from serkit.report.summary import summary
from serkit.results import history
from serkit.run import runner
from serkit.run.console import AsvConsole, new_log_path
from serkit.run.lock import check_free
from serkit.run.points import measured_as
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
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV, SLOW_ENV, harness_record, split_ids
from serkit.text import diagnostic
from serkit.units import plural


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except BadShard as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


OWN = (  # the options only this command takes; --quick and --full are one choice, below
    Option(("--matrix",), "every environment of every Python found", action="store_true"),
    Option(("--python",), "with --matrix: these Pythons only", type=split_ids, metavar="VERSIONS"),
    Option(
        ("--memory",),
        "a quick run also measures memory per call (full runs always do; about 5 min)",
        action="store_true",
    ),
    Option(
        ("--shard",),
        "with --matrix: the K-th of N disjoint slices of the environments (2/3)",
        type=_shard,
        metavar="K/N",
    ),
    Option(
        ("--skip-measured",),
        "measure only new points: leave out each environment that DIR, a results tree "
        "(the CI store), holds a run of on this machine with the same library releases, "
        "Python, host identity and benchmark code, at any suite commit",
        metavar="DIR",
    ),
    Option(
        ("--sentinel",),
        "the sentinel pairs only (serkit/run/sentinel.py), full, in their environment, "
        "filed under this machine's name with -sentinel, "
        "measured on every scheduled run whatever the store holds: the runners' own drift",
        action="store_true",
    ),
    Option(
        ("--resume",),
        "go on with the run that was interrupted in this checkout, as it was started",
        action="store_true",
    ),
    Option(("--no-report",), "skip the HTML report (serkit report)", action="store_true"),
    Option(
        ("-v", "--verbose"),
        "show asv's own output as it runs (always kept in a log under .asv/logs/; "
        "without -v a progress bar per round stands for it)",
        action="store_true",
    ),
)


def add_commands(commands: Any) -> None:
    bench = command(
        commands,
        "bench",
        run_bench,
        help="run the asv suite: quick on this Python, or the whole matrix; then the report",
        description=(
            "Run the asv suite for the checked-out commit, record this host's facts beside "
            "the results, then write the HTML report (serkit report). "
            f"Narrow the grid with {CODECS_ENV}, {FIXTURES_ENV} and {SLOW_ENV}."
        ),
        options=(
            Use(
                "--instructions",
                note="a quick run, after its timings (full runs always do; minutes the first "
                "time, pairs counted before are read back from the facts store)",
            ),
            Use("--machine", note="given to asv run"),
            "--rank-by",  # the summary that ends the run
            "--exact-only",
            "--format",
            *OWN,
        ),
    )
    speed = bench.add_mutually_exclusive_group()
    speed.add_argument(
        "--quick",
        action="store_true",
        default=None,
        help=escaped(f"{runner.QUICK_DESCRIPTION} (default alone)"),
    )
    speed.add_argument(
        "--full",
        dest="quick",
        action="store_false",
        help=escaped(f"{runner.FULL_DESCRIPTION} (default --matrix)"),
    )
    bench.add_argument(
        "asv_args", nargs=argparse.REMAINDER, help="after --: passed on to `asv run`"
    )


def _resumed(args: argparse.Namespace, root: Path) -> tuple[runner.Plan, RunState]:
    given = args.matrix or args.python or args.shard or args.skip_measured or args.asv_args
    given = given or args.sentinel or args.machine
    if given or args.quick is not None or args.memory or args.instructions:
        raise UsageError("--resume goes on as the interrupted run was started: give it alone")
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
        print(f"serkit: warning: {diagnostic(warning)}", file=sys.stderr)
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
        raise UsageError("--sentinel measures the sentinel pairs as declared: give it alone")
    plan = runner.plan(root, matrix=True, pythons=[SENTINEL_PYTHON])
    wanted = sentinel_environment()
    if wanted not in plan.environments:
        raise SerkitError(f"--sentinel needs Python {SENTINEL_PYTHON}, not found here")
    os.environ.update(sentinel_selection())
    narrowed = dataclasses.replace(plan, environments=(wanted,))
    return narrowed, ["-b", SENTINEL_BENCHMARKS, *_asv_args(args)]


def _asv_args(args: argparse.Namespace) -> list[str]:
    """What `asv run` is given: the arguments after --, and --machine."""
    extra = list(args.asv_args[1:] if args.asv_args[:1] == ["--"] else args.asv_args)
    if args.machine is None:
        return extra
    if len(_without_machine(extra)) != len(extra):
        raise UsageError("--machine is given twice: once before -- and once after it")
    return [*extra, "--machine", args.machine]


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


def run_bench(args: argparse.Namespace) -> int:
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
        extra = _asv_args(args)  # a usage error, before any work
        plan = runner.plan(root, matrix=args.matrix, pythons=args.python, shard=args.shard)
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
        print(f"serkit: warning: {diagnostic(warning)}", file=sys.stderr)
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
        harness=harness_record(runner.run_warmup(quick, selection)),
    )
    # Report what was measured even when some benchmarks failed: nothing is lost.
    if not args.no_report:
        write_report(root, results_dir(root), reports_dir(root), with_asv=True, hosts=[machine])
    found = summary(results_dir(root), machine, measure=args.rank_by, exact_only=args.exact_only)
    if args.format == "json":
        print_json(found.as_dict() if found is not None else None)
    elif found is not None:
        print(found.text(markdown=args.format == "markdown"))  # the answer, last
    if status == 2:
        # asv also exits 2 when it refuses its arguments; its own message says which.
        failed = list(console.failed)
        what = "a benchmark failed or an environment was not built"
        if failed:
            more = " ..." if len(failed) > 5 else ""
            what = f"{plural(len(failed), 'benchmark')} failed ({', '.join(failed[:5])}{more})"
        print(f"serkit: {what}; asv's output: {shown}", file=sys.stderr)
    return checked(status != 0)
