"""`serkit bench`: running the asv suite in the matrix's environments (serkit.cli.matrix)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serkit.checkout import project_root
from serkit.cli.exits import UsageError, checked
from serkit.cli.options import Option, Use, command, escaped
from serkit.run import planning
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV, SLOW_ENV, split_ids
from serkit.text import diagnostic
from serkit.units import plural

# What running needs is imported when the command runs: `serkit --help` and every other
# command only parse (cli/__init__.py).
if TYPE_CHECKING:
    from serkit.run import bench
    from serkit.run.bench import BenchRequest
    from serkit.run.shards import Shard


def _shard(text: str) -> Shard:
    from serkit.run.shards import BadShard, Shard

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
    parser = command(
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
            "--safe-only",
            "--format",
            *OWN,
        ),
    )
    speed = parser.add_mutually_exclusive_group()
    speed.add_argument(
        "--quick",
        action="store_true",
        default=None,
        help=escaped(f"{planning.QUICK_DESCRIPTION} (default alone)"),
    )
    speed.add_argument(
        "--full",
        dest="quick",
        action="store_false",
        help=escaped(f"{planning.FULL_DESCRIPTION} (default --matrix)"),
    )
    parser.add_argument(
        "asv_args", nargs=argparse.REMAINDER, help="after --: passed on to `asv run`"
    )


def _request(args: argparse.Namespace) -> BenchRequest:
    """What the command line asks, refused where its options do not go together."""
    from serkit.run.bench import BenchRequest

    if args.resume:
        given = args.matrix or args.python or args.shard or args.skip_measured or args.asv_args
        given = given or args.sentinel or args.machine
        if given or args.quick is not None or args.memory or args.instructions:
            raise UsageError("--resume goes on as the interrupted run was started: give it alone")
        return BenchRequest(resume=True)
    if args.sentinel:
        asked = args.matrix or args.python or args.shard or args.skip_measured or args.quick
        if asked or args.memory or args.instructions:
            raise UsageError("--sentinel measures the sentinel pairs as declared: give it alone")
    return BenchRequest(
        matrix=args.matrix,
        pythons=args.python,
        shard=args.shard,
        quick=args.quick,
        memory=args.memory,
        instructions=args.instructions,
        asv_args=_asv_args(args),
        skip_measured=Path(args.skip_measured) if args.skip_measured else None,
        sentinel=args.sentinel,
    )


def _asv_args(args: argparse.Namespace) -> list[str]:
    """What `asv run` is given: the arguments after --, and --machine."""
    from serkit.run.bench import without_machine

    extra = list(args.asv_args[1:] if args.asv_args[:1] == ["--"] else args.asv_args)
    if args.machine is None:
        return extra
    if len(without_machine(extra)) != len(extra):
        raise UsageError("--machine is given twice: once before -- and once after it")
    return [*extra, "--machine", args.machine]


def _say(line: str) -> None:
    from serkit.progress import PHASES

    PHASES.say(line)  # with the time since the command began


def _say_planned(planned: bench.BenchPlan) -> None:
    if (state := planned.state) is not None:
        where = state.round_text(state.next_round())
        kind = "quick" if state.quick else "full"
        _say(f"resuming the {kind} run of {state.commit[:8]} at {where}")
    if (skipped := planned.skipped) is not None:
        for warning in skipped.warnings:
            _say(f"warning: {diagnostic(warning)}")
        if skipped.measured:
            _say(
                f"{plural(skipped.measured, 'environment')} already measured on "
                f"{planned.machine} with these releases, Pythons, host and benchmark code, "
                f"in {skipped.store}: left out"
            )
        for label, reason in skipped.why.items():
            _say(f"measuring {label}: {reason}")


def _say_started(started: bench.Started, verbose: bool) -> None:
    _say(f"asv's output: {started.log}{'' if verbose else ' (-v shows it here)'}")
    if started.kept:
        _say(
            f"{plural(len(started.kept), 'results file')} of an earlier run that did not "
            "finish kept as that run's own point"
        )


def _say_filed(filed: bench.Filed) -> None:
    for warning in filed.warnings:
        _say(f"warning: {diagnostic(warning)}")
    if filed.machine_state is not None:
        _say(f"machine state during the run: {filed.machine_state['in_words']}")


def _report(root: Path, planned: bench.BenchPlan, args: argparse.Namespace) -> None:
    """The HTML report, then the answer: the summary table, last."""
    from serkit.checkout import reports_dir
    from serkit.cli.common import print_json
    from serkit.cli.report import write_report
    from serkit.report.summary import summary

    # Report what was measured even when some benchmarks failed: nothing is lost.
    results, machine = planned.results, planned.machine
    if not args.no_report:
        write_report(root, results, reports_dir(root), with_asv=True, hosts=[machine])
    found = summary(
        results,
        machine,
        measure=args.rank_by,
        exact_only=args.exact_only,
        safe_only=args.safe_only,
    )
    if args.format == "json":
        print_json(found.as_dict() if found is not None else None)
    elif found is not None:
        print(found.text(markdown=args.format == "markdown"))


def _say_failed(outcome: bench.BenchOutcome, started: bench.Started) -> None:
    # asv also exits 2 when it refuses its arguments; its own message says which.
    failed = list(outcome.failed)
    what = "a benchmark failed or an environment was not built"
    if failed:
        more = " ..." if len(failed) > 5 else ""
        what = f"{plural(len(failed), 'benchmark')} failed ({', '.join(failed[:5])}{more})"
    _say(f"{what}; asv's output: {started.log}")


def run_bench(args: argparse.Namespace) -> int:
    """The phases in order (serkit.run.bench), each one's answer printed, then the report."""
    from serkit.cli.common import warn
    from serkit.progress import PHASES
    from serkit.run import bench
    from serkit.run.releases import load, staleness

    root = project_root()
    PHASES.restart()
    # Read from installed metadata and the data file's date: no network on every run.
    warn(staleness(load()))
    planned = bench.plan(root, _request(args))
    _say_planned(planned)
    if planned.skipped is not None and not planned.plan.environments:
        _say("nothing left to measure")
        return 0
    if planned.state is None:
        for line in bench.plan_lines(planned):
            _say(line)
    started = bench.start(root, planned, verbose=args.verbose)
    _say_started(started, args.verbose)
    outcome = bench.run(root, planned, started)
    filed = bench.file(planned)
    _say_filed(filed)
    bench.record(planned, started, filed)
    _report(root, planned, args)
    if outcome.status == 2:
        _say_failed(outcome, started)
    return checked(outcome.status != 0)
