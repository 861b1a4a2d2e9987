"""Can timings be trusted: `agreement`, `validate`, `overhead`, `doctor`, `noise`, `aa`, `power`."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serkit.checkout import project_root, results_dir
from serkit.cli.exits import UsageError, checked
from serkit.cli.options import Option, Use, command
from serkit.errors import SerkitError
from serkit.units import plural

if TYPE_CHECKING:
    from serkit.results.noise import PowerRecord
    from serkit.run.quick import PairSelection
    from serkit.trust.agreement import Agreement
    from serkit.trust.power import Called

# `serkit agreement` with no --codec or --fixture: one fast, well-known pair.
AGREEMENT_CODEC, AGREEMENT_FIXTURE = "orjson", "small-dict"
PROCESSES_NOTE = "in each of the two runs, at least 2 (default: the quick run's)"


def _add_power(commands: Any) -> None:
    power = command(
        commands,
        "power",
        run_power,
        help="measure what verdicts here can see: known slowdowns that really run, and an A/A",
        description="Inject known slowdowns into a slice of the suite (each timed sample makes "
        "that share more calls than its timer counts, and otherwise samples as a real run "
        "does), run them beside an A/A pair, and "
        "record the share of pairs the verdicts call at each size "
        "(docs/trust.md#what-a-verdict-can-see-here).",
        options=(
            "--codec",
            "--fixture",
            Use("--machine", note="the result is filed under it, and its noise floor judges"),
            "--format",
        ),
    )
    power.add_argument(
        "--sizes",
        type=_sizes,
        default="5,10,20",
        help="the slowdowns to inject, in percent, each a multiple of 5 (default 5,10,20)",
    )
    power.add_argument(
        "--mode",
        choices=("both", "same-run", "between-runs"),
        default="both",
        help="interleave the arms' rounds (as a matrix run), run them one after another "
        "(as two hosts or days), or both (default)",
    )
    power.add_argument(
        "--plan",
        choices=("quick", "full"),
        default="full",
        help="sample each arm as a quick run (5 processes a pair, aiming at a 10 %% change) or "
        "as a full or matrix run (10, aiming at 5 %%; default)",
    )
    power.add_argument(
        "--space",
        type=_space,
        default=0.0,
        metavar="SECONDS",
        help="between runs: wait this long between arms, so that they sample different "
        "stretches of the machine's state, as two days do (default 0)",
    )
    power.add_argument(
        "--keep",
        metavar="DIR",
        help="copy the arms' results into DIR/<mode>, one tree with each arm a machine (plain, "
        "plain-again, plus10, ...), for a closer look: serkit compare plain plus10 --results "
        "DIR/between-runs",
    )


def _seconds(value: float) -> str:
    from serkit.units import format_value

    return format_value(value, "seconds")


def run_agreement(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json
    from serkit.codecs.registry import check_codecs
    from serkit.inputs.fixtures import check_fixtures
    from serkit.trust.agreement import TOLERANCE, measure_agreement

    codecs = check_codecs(args.codec or [AGREEMENT_CODEC])
    fixtures = check_fixtures(args.fixture or [AGREEMENT_FIXTURE])
    root = project_root()
    results = [
        measure_agreement(root, codec, fixture, args.operation, args.rounds)
        for codec in codecs
        for fixture in fixtures
    ]
    if args.format == "json":
        print_json([result.as_dict() for result in results])
    else:
        for result in results:
            _print_agreement(result, args.format, TOLERANCE)
    return checked(not all(result.within for result in results))


def _print_agreement(result: Agreement, fmt: str, tolerance: float) -> None:
    from serkit.cli.common import print_table

    rows = [
        [i + 1, f"{a * 1e9:,.0f}", f"{t * 1e9:,.0f}", f"{r:.3f}"]
        for i, (a, t, r) in enumerate(zip(result.asv_s, result.other_s, result.ratios))
    ]
    print(f"{result.operation} of {result.fixture} with {result.codec}, ns per call")
    print_table(rows, ["round", "asv suite (ns)", "timeit (ns)", "ratio"], fmt)
    verdict = "agree" if result.within else "DISAGREE"
    print(
        f"median of the rounds' ratios asv/timeit: {result.ratio:.3f} "
        f"(range {min(result.ratios):.3f}-{max(result.ratios):.3f}): {verdict}, "
        f"tolerance {tolerance:.0%}"
    )


def run_validate(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json, print_table
    from serkit.results.hosts import load_text
    from serkit.trust.agreement import TOLERANCE, run_validation

    validation = run_validation(project_root(), args.rounds, args.processes)
    if args.format == "json":
        print_json(validation.as_dict())
        return checked(not validation.within)
    rows = [
        [
            f"{r.codec} {r.operation} {r.fixture}",
            _seconds(statistics.median(r.asv_s)),
            _seconds(statistics.median(r.other_s)),
            f"{r.ratio:.3f}",
            f"{min(r.ratios):.3f}-{max(r.ratios):.3f}",
            "agree" if r.within else "DISAGREE",
        ]
        for r in validation.pairs
    ]
    print(
        f"The asv suite against pyperf ({args.processes} worker processes each), "
        f"{args.rounds} interleaved rounds; time per call, medians over the rounds"
    )
    headers = ["pair", "asv suite", "pyperf", "ratio asv/pyperf", "range", "verdict"]
    print_table(rows, headers, args.format, disable_numparse=True)
    print(
        f"ratio: the median of the rounds' ratios; tolerance {TOLERANCE:.0%}. "
        f"Load average: {load_text(validation.load_before)} before, "
        f"{load_text(validation.load_after)} after."
    )
    return checked(not validation.within)


def run_overhead(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json, print_table
    from serkit.codecs.registry import check_codecs
    from serkit.results.hosts import load_average, load_text
    from serkit.suite.overhead import FIXTURE
    from serkit.trust.overhead import TARGET_FLOOR_S, TARGET_RATIO, measure_overheads

    codecs = check_codecs(args.codec) if args.codec else None  # typos fail before asv starts
    load_before = load_average()
    results = measure_overheads(project_root(), codecs, args.rounds)
    if not results:
        raise SerkitError("asv recorded no overhead timings; see its output above")
    if args.format == "json":
        print_json([r.as_dict() for r in results])
        return checked(not all(r.within for r in results))
    rows = [
        [
            r.codec,
            r.operation,
            _seconds(r.adapter_median_s),
            _seconds(r.direct_median_s),
            f"{r.overhead_s * 1e9:+,.0f} ns",
            f"{r.ratio:.3f}",
            f"{min(r.ratios):.3f}-{max(r.ratios):.3f}",
            "within" if r.within else "OVER",
            r.variant,
        ]
        for r in results
    ]
    print(f"serkit's adapter against the direct library call, on {FIXTURE}, time per call")
    headers = [
        "codec",
        "op",
        "adapter",
        "direct",
        "overhead",
        "ratio",
        "range",
        "target",
        "variant",
    ]
    print_table(rows, headers, args.format, disable_numparse=True)
    print(
        f"target: overhead at most max({TARGET_RATIO:.0%} of direct, "
        f"{TARGET_FLOOR_S * 1e9:.0f} ns). adapter, direct: medians of {args.rounds} asv runs; "
        "ratio: the median of the runs' ratios, overhead: (ratio - 1) x direct.\n"
        f"Load average: {load_text(load_before)} before, {load_text()} after."
    )
    return checked(not all(r.within for r in results))


def run_doctor(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json, print_table
    from serkit.trust.doctor import as_json, diagnose

    items = diagnose()
    count = sum(1 for i in items if i.warning)
    if args.format == "json":
        print_json(as_json(items))
        return checked(count > 0)
    rows = [[i.name, i.value, f"WARNING: {i.warning}" if i.warning else ""] for i in items]
    print_table(rows, ["", "state", "for benchmarking"], args.format, disable_numparse=True)
    print(f"\n{plural(count, 'warning')}. A stable setup: docs/trust.md#a-stable-setup")
    return checked(count > 0)


def _processes(args: argparse.Namespace) -> int:
    from serkit.run.planning import QUICK_ROUNDS

    if args.processes is not None and args.processes < 2:
        raise UsageError("--processes: a spread between processes needs at least 2")
    return int(args.processes or QUICK_ROUNDS)


def _print_aa(args: argparse.Namespace, result: Any, floor_source: str, extra: list[str]) -> None:
    from serkit.cli.common import print_json
    from serkit.trust import noise

    if args.format == "json":
        print_json({**noise.as_dict(result), "floor_source": floor_source})
        return
    lines = [*noise.summary_lines(result, floor_source), *extra]
    if args.format == "markdown":
        print("\n".join(f"- {line}" for line in lines))
    else:
        print("\n".join(lines))


def run_noise(args: argparse.Namespace) -> int:
    from serkit.results.noise import record_noise
    from serkit.run.runner import machine_name
    from serkit.trust import noise

    root = project_root()
    machine = machine_name(["--machine", args.machine] if args.machine else [])
    result = noise.measure(
        root, noise.PANEL_CODECS, noise.PANEL_FIXTURES, processes=_processes(args)
    )
    record = result.record(noise.panel_description())
    path = record_noise(results_dir(root) / machine, record)
    _print_aa(args, result, "measured by this run", [f"{machine}: {record.in_words()}"])
    if args.format != "json":
        print(f"recorded in {path}; `serkit compare` and the report use it for {machine}")
    return 0


def run_aa(args: argparse.Namespace) -> int:
    from serkit.codecs.registry import check_codecs, codec_names
    from serkit.inputs.fixtures import FIXTURES, check_fixtures
    from serkit.results.noise import DEFAULT_FLOOR, read_noise
    from serkit.run.runner import machine_name
    from serkit.trust import noise

    root = project_root()
    codecs = check_codecs(args.codec) if args.codec else [c for c in codec_names() if c != "yaml"]
    fixtures = (
        check_fixtures(args.fixture)
        if args.fixture
        else [name for name, f in FIXTURES.items() if args.slow or not f.slow]
    )
    machine = machine_name(["--machine", args.machine] if args.machine else [])
    record = read_noise(results_dir(root) / machine)
    floor = record.verdict_floor if record else DEFAULT_FLOOR
    source = f"{machine}'s recorded floor" if record else "the default: no noise recorded"
    if args.instructions:
        from serkit.suite.instructions import MISSING_VALGRIND, valgrind_path

        if valgrind_path() is None:
            raise SerkitError(MISSING_VALGRIND)
    result = noise.measure(
        root, codecs, fixtures, processes=_processes(args), floor=floor,
        instructions=args.instructions,
    )  # fmt: skip
    missing = ["instruction counts: no pair was counted in both runs (see asv's output above)"]
    _print_aa(
        args, result, source, missing if args.instructions and not result.instruction_ratios else []
    )
    return checked(args.instructions and not result.instructions_agree)


def _sizes(text: str) -> list[float]:
    from serkit.suite.cases import INJECTED_LOOPS

    step = 100 // INJECTED_LOOPS
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        sizes = []
    if not sizes or any(size <= 0 or size % step or size > 200 for size in sizes):
        raise argparse.ArgumentTypeError(
            f"give percents, each a multiple of {step} from {step} to 200, not {text!r}"
        )
    return [size / 100 for size in sizes]


def _space(text: str) -> float:
    """argparse type for --space: seconds from 0 to an hour."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise argparse.ArgumentTypeError(f"give seconds from 0 to 3600, not {text!r}")
    return seconds


def _power_slice(args: argparse.Namespace) -> PairSelection:
    """The quick run's own slice by default: every codec on its fixtures, less the pairs it
    leaves to --full (serkit.run.quick)."""
    from serkit.codecs.registry import check_codecs
    from serkit.inputs.fixtures import check_fixtures
    from serkit.run.planning import QUICK_BUDGET_S, QUICK_ROUNDS
    from serkit.run.quick import plan_quick
    from serkit.suite.cases import Selection

    chosen = Selection(
        tuple(check_codecs(args.codec)) if args.codec else None,
        tuple(check_fixtures(args.fixture)) if args.fixture else None,
    )
    return plan_quick(chosen, rounds=QUICK_ROUNDS, budget_s=QUICK_BUDGET_S)


def run_power(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json
    from serkit.results.noise import BETWEEN_RUNS, DEFAULT_FLOOR, SAME_RUN, read_noise, record_power
    from serkit.run.planning import QUICK_WARMUP_S
    from serkit.run.runner import machine_name
    from serkit.trust import power

    root = project_root()
    sizes = args.sizes
    slice_ = _power_slice(args)
    codecs = list(dict.fromkeys(codec for codec, _ in slice_.pairs))
    fixtures = list(dict.fromkeys(fixture for _, fixture in slice_.pairs))
    modes = {"both": (SAME_RUN, BETWEEN_RUNS), "same-run": (SAME_RUN,)}.get(
        args.mode, (BETWEEN_RUNS,)
    )
    machine = machine_name(["--machine", args.machine] if args.machine else [])
    folder = results_dir(root) / machine
    noise_record = read_noise(folder)
    floor = noise_record.verdict_floor if noise_record else DEFAULT_FLOOR
    arms = 2 + len(sizes)
    plan = power.PLANS[args.plan]
    print(
        f"serkit power: {plural(len(codecs), 'codec')} x {plural(len(fixtures), 'fixture')}, "
        f"{arms} arms ({', '.join(power.arms(sizes))}) in {plural(len(modes), 'mode')}; "
        "verdicts within a run "
        f"with no floor, between runs at a {floor:.0%} floor; each arm samples the slice as "
        f"a {args.plan} run does ({plan.processes} processes a pair, extra rounds aiming at "
        f"{plan.sees:.0%}), with the quick run's {QUICK_WARMUP_S} s of warm-up",
        file=sys.stderr,
    )
    rows, record = power.measure(
        root,
        codecs,
        fixtures,
        sizes=sizes,
        modes=modes,
        plan=plan,
        floor=floor,
        environ=slice_.environment(),
        keep=Path(args.keep) if args.keep else None,
        space_s=args.space,
    )
    path = record_power(folder, record)
    if args.format == "json":
        print_json(power.as_dict(rows, record))
        return 0
    _print_power(rows, record, machine, path, args.format)
    return 0


def _print_power(
    rows: Sequence[Called], record: PowerRecord, machine: str, path: Path, fmt: str
) -> None:
    from serkit.cli.common import print_table
    from serkit.trust import power

    table, headers = power.table(rows)
    print_table(table, headers, fmt)
    print(f"load {record.load_before} before, {record.load_after} after")
    for mode, states in record.states.items():
        for arm, words in states.items():
            print(f"{mode}, arm {arm}: {words}")
    print(f"{machine}: {record.in_words()}")
    print(f"recorded in {path}; `serkit hosts`, `serkit compare` and the report say it")


@dataclass(frozen=True)
class _Command:
    """One trust command, declared as data: add_commands makes its parser."""

    name: str
    run: Callable[[argparse.Namespace], int]
    help: str
    description: str
    options: tuple[str | Use | Option, ...]


# In `serkit --help` order; `power`, whose options are its own, is added after them.
COMMANDS = (
    _Command(
        "agreement",
        run_agreement,
        help="check the asv suite's timing of one call against plain timeit",
        description="Time each codec on each fixture, one operation, through the asv suite "
        "and with plain timeit in the same interpreter, ROUNDS times each, and say whether "
        "the two agree within their spread: the suite adds nothing of its own to a timing "
        "(docs/trust.md#agreement-with-pyperf). Exit status 1 when a pair disagrees.",
        options=(
            Use("--codec", note=f"default {AGREEMENT_CODEC}"),
            Use("--fixture", note=f"default {AGREEMENT_FIXTURE}"),
            Use("--rounds", default=5),
            "--format",
            Option(
                ("--operation",),
                "the call timed",
                choices=("dumps", "loads", "round_trip"),
                default="dumps",
            ),
        ),
    ),
    _Command(
        "validate",
        run_validate,
        help="check the asv suite's timings of a fixed panel of calls against pyperf",
        description="Time a fixed panel of codec and fixture pairs through the asv suite and "
        "through pyperf (its own worker processes), and show each pair's ratio with a "
        "verdict: where they disagree, the suite's number is suspect "
        "(docs/trust.md#agreement-with-pyperf).",
        options=(
            Use("--rounds", default=3),
            Use("--processes", default=10, note="pyperf's worker processes"),
            "--format",
        ),
    ),
    _Command(
        "overhead",
        run_overhead,
        help="what serkit's adapter adds over the direct library call (asv, small-dict)",
        description="Time each codec's adapter call against the library's own call on "
        "small-dict, rounds interleaved in asv, and say whether the adapter's cost can be "
        "told from noise (docs/trust.md#adapter-overhead).",
        options=("--codec", Use("--rounds", default=5, note="one asv run each"), "--format"),
    ),
    _Command(
        "doctor",
        run_doctor,
        help="the state of this machine and Python that matters for benchmarking",
        description="Read what moves timings on this machine (CPU governor, turbo, load, "
        "pinning, the Python build, each codec's implementation) and warn about each "
        "state that makes timings noisier; measures nothing "
        "(docs/trust.md#a-stable-setup). Exit status 1 when it warns of anything.",
        options=("--format",),
    ),
    _Command(
        "noise",
        run_noise,
        help="A/A-run a fixed panel (about a minute) and record this host's noise floor",
        description="Run a fixed panel of pairs twice, A against A, and record the "
        "difference two runs of the same code show here (serkit-noise.yaml beside the "
        "machine's results): every verdict on this host then uses that floor "
        "(docs/trust.md#numbers-that-hold-up-on-a-noisy-machine).",
        options=(
            Use("--machine", note="the noise floor is filed under it"),
            Use("--processes", note=PROCESSES_NOTE),
            "--format",
        ),
    ),
    _Command(
        "aa",
        run_aa,
        help="run a slice of the suite twice and count the verdicts that call it different",
        description="Run a slice of the suite twice in a row and judge the second run "
        "against the first by `serkit compare`'s rule: every verdict of a difference is a "
        "false one (docs/trust.md#numbers-that-hold-up-on-a-noisy-machine). Then apply "
        "each known slowdown (+5, +10, +20 %) to one run's values and judge again, both "
        "ways round: the share called slower is what verdicts between two such runs can "
        "see, sampled as a real run samples.",
        options=(
            "--codec",
            "--fixture",
            "--slow",
            Use("--processes", note=PROCESSES_NOTE),
            Use("--machine", note="its recorded noise floor judges the verdicts"),
            Use("--instructions", note="in both runs, and say how far they agree"),
            "--format",
        ),
    ),
)


def add_commands(commands: Any) -> None:
    for declared in COMMANDS:
        command(
            commands,
            declared.name,
            declared.run,
            help=declared.help,
            description=declared.description,
            options=declared.options,
        )
    _add_power(commands)
