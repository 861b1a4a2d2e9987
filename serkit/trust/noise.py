"""A/A runs: how far two runs of the same code apart on this host, and what verdicts make of it.

The suite runs twice, one run after the other, in this interpreter, with the quick
run's settings (a few samples in each of several processes per pair, interleaved) and
results in a temporary folder. Nothing differs between the runs, so every "faster" or
"slower" between them is a false verdict:

- `serkit noise` runs a fixed panel (about a minute), then records in the machine's
  results folder the between-process spread, the noise floor and the false-verdict
  rates (serkit.results.noise). Verdicts on that machine use the floor from then on.
- `serkit aa` runs a slice the user picks, and reports the same rates without
  recording anything: the check that a change to the statistics keeps its promise.
  With `--instructions` both runs also count instructions per call, and it reports how
  many pairs' counts agree within INSTRUCTIONS_AGREEMENT.

Both also say what the same two runs could have seen: each known slowdown (SLOWDOWNS)
applied to one run's process values, then judged by the same rule against the other run,
both ways round. The slowdown did not run, but everything else did: the run's own
sampling (asv's calibrated `number`, the real processes), whatever state changes came
between the runs, and the rule that judges them. A slowdown that ran would be the code's
time times 1.1 in whatever state the machine was in, which is what scaling gives.
`serkit power` injects slowdowns that run, with the same sampling (serkit.trust.power).

The floor is the relative difference that two runs' medians of one pair exceed only 1 %
of the time here: 2.576 robust standard deviations (1.4826 x the median absolute log
ratio) of the panel's run-to-run log ratios, each the ratio of the medians of the pair's
processes as verdicts judge them (by the machine's state). It includes the processes'
own spread, so it errs on the side of calling a difference noise.
"""

from __future__ import annotations

import datetime
import math
import os
import statistics
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from serkit.compare.verdicts import FASTER, INSTRUCTIONS_UNIT, SLOWER, judge_overlap, judge_pair
from serkit.errors import SerkitError
from serkit.progress import progress
from serkit.results.hosts import load_text
from serkit.results.noise import NoiseRecord
from serkit.results.tree import Benchmark, Measurement, ResultsTree
from serkit.run.planning import QUICK_ROUNDS, QUICK_WARMUP_S
from serkit.stats import Z_99, log_std
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV, ROUNDS_ENV, WARMUP_ENV
from serkit.suite.instructions import opt_in_environment
from serkit.trust.agreement import ScratchSuite, read_as_one_host

# The fixed panel: cheap, common codecs (C and stdlib) on a small and a mid-sized
# document, both directions: 24 pairs, about a minute for two runs of 5 processes.
PANEL_CODECS = ("json", "orjson", "msgpack", "ujson", "pickle-p5", "cbor2")
PANEL_FIXTURES = ("small-dict", "senate-bios")
TIMINGS = r"^bench_time\.(Dumps|Loads)\."
INSTRUCTIONS = r"^bench_instructions\."
# Two runs' instruction counts of a pair should agree this closely, for 95 % of pairs.
INSTRUCTIONS_AGREEMENT = 0.005
INSTRUCTIONS_AGREEING_SHARE = 0.95
MAD_TO_SD = 1.4826  # a normal distribution's standard deviation per median absolute deviation
RUNS = ("A", "B")
# Known slowdowns an A/A's runs are judged against, and `serkit power` injects.
SLOWDOWNS = (0.05, 0.10, 0.20)


@dataclass(frozen=True)
class PairAA:
    """One pair measured in both runs."""

    benchmark: str
    params: tuple[str, ...]
    a: Measurement
    b: Measurement
    processes_a: tuple[float, ...]
    processes_b: tuple[float, ...]
    # What each process counts for in a verdict (serkit.sample_speed.judging_weight); () unknown.
    weights_a: tuple[float, ...] = ()
    weights_b: tuple[float, ...] = ()

    @property
    def weights(self) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """Both sides' weights for judge_pair, where both are known."""
        return (self.weights_a, self.weights_b) if self.weights_a and self.weights_b else None

    @property
    def log_ratio(self) -> float:
        """B over A: the medians of the processes as verdicts judge them (by the machine's
        state, serkit.sample_speed), where both runs kept them; else asv's values, which count
        every slow sample (two runs 79 % and 40 % slow read 1.6x apart, a floor of 501 %)."""
        if self.processes_a and self.processes_b:
            return math.log(
                statistics.median(self.processes_b) / statistics.median(self.processes_a)
            )
        assert self.a.value and self.b.value
        return math.log(self.b.value / self.a.value)


@dataclass(frozen=True)
class Seen:
    """A known slowdown applied to one run's values: how many pairs the rule called slower."""

    size: float  # 0.10: +10 %
    called: int
    judged: int

    @property
    def share(self) -> float:
        return self.called / self.judged if self.judged else 0.0

    def in_words(self) -> str:
        share = f"{self.share:.0%}"
        return f"+{self.size:.0%} called slower in {self.called} of {self.judged} ({share})"


@dataclass(frozen=True)
class AAResult:
    pairs: list[PairAA]
    processes: int
    floor: float  # the floor measured on these pairs
    between_process_cv: float
    false_new: int  # pairs called different with the floor used for verdicts
    false_test_only: int  # ... by the t-test alone (floor 0)
    false_overlap: int  # ... by the intervals rule
    used_floor: float
    load_before: str
    load_after: str
    # Run B's count over run A's, per counted pair; empty when instructions were not counted.
    instruction_ratios: tuple[float, ...] = ()
    # Each run's machine state while it sampled, in words (serkit.sample_speed).
    states: tuple[str, str] = ("", "")
    # Per SLOWDOWNS size: the timed pairs called slower with it applied to one run's
    # values, and how many were judged (each pair both ways round).
    seen: tuple[Seen, ...] = ()

    def rate(self, count: int) -> float:
        return count / len(self.pairs) if self.pairs else 0.0

    @property
    def instructions_agreeing(self) -> int:
        return sum(abs(r - 1) <= INSTRUCTIONS_AGREEMENT for r in self.instruction_ratios)

    @property
    def instructions_agree(self) -> bool:
        counted = len(self.instruction_ratios)
        return bool(counted) and self.instructions_agreeing >= INSTRUCTIONS_AGREEING_SHARE * counted

    def record(self, panel: str) -> NoiseRecord:
        return NoiseRecord(
            measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            panel=panel,
            pairs=len(self.pairs),
            processes=self.processes,
            between_process_cv=round(self.between_process_cv, 4),
            floor=round(self.floor, 4),
            false_verdicts=round(self.rate(self.false_new), 4),
            false_verdicts_old_rule=round(self.rate(self.false_overlap), 4),
            load_before=self.load_before,
            load_after=self.load_after,
        )


def panel_description() -> str:
    return (
        f"{len(PANEL_CODECS) * len(PANEL_FIXTURES) * 2} pairs: dumps and loads of "
        f"{', '.join(PANEL_CODECS)} on {', '.join(PANEL_FIXTURES)}"
    )


def run_twice(
    root: Path,
    codecs: Sequence[str],
    fixtures: Sequence[str],
    processes: int = QUICK_ROUNDS,
    instructions: bool = False,
) -> tuple[ResultsTree, ResultsTree]:
    """The suite's timings of the slice, run twice in a row, each pair in `processes`
    processes; with `instructions`, its instruction counts too."""
    env = {
        **os.environ,
        CODECS_ENV: ",".join(codecs),
        FIXTURES_ENV: ",".join(fixtures),
        ROUNDS_ENV: str(processes),
        WARMUP_ENV: os.environ.get(WARMUP_ENV, QUICK_WARMUP_S),
        **(opt_in_environment() if instructions else {}),
    }
    with ScratchSuite(root, env) as suite, tempfile.TemporaryDirectory() as together:
        for run in progress(RUNS, desc="A/A runs", unit="run", leave=True):
            counted = [INSTRUCTIONS] if instructions else []
            suite.run_tree([TIMINGS], rounds=processes, first_round_only=counted)
            suite.file_as(Path(together), run)
        # Judged as two runs of this host (read_as_one_host), as `serkit compare` would.
        trees = read_as_one_host(Path(together), RUNS)
    return trees[RUNS[0]], trees[RUNS[1]]


def _is_time(benchmark: Benchmark) -> bool:
    return benchmark.kind == "time"


def _is_count(benchmark: Benchmark) -> bool:
    return benchmark.unit == INSTRUCTIONS_UNIT


def _measured(
    tree: ResultsTree, keep: Callable[[Benchmark], bool]
) -> dict[tuple[str, tuple[str, ...]], Measurement]:
    """One run's values of the benchmarks `keep` picks, by benchmark and parameters."""
    return {
        (m.benchmark, m.params): m
        for machine in tree.machines.values()
        for m in machine.measurements
        if m.value and keep(tree.benchmark(m.benchmark))
    }


def match(tree_a: ResultsTree, tree_b: ResultsTree) -> list[PairAA]:
    """The timings both runs measured, with their per-process values."""
    on_a, on_b = _measured(tree_a, _is_time), _measured(tree_b, _is_time)
    return [
        PairAA(
            key[0],
            key[1],
            on_a[key],
            on_b[key],
            on_a[key].process_values,
            on_b[key].process_values,
            on_a[key].weights,
            on_b[key].weights,
        )
        for key in sorted(on_a.keys() & on_b.keys())
    ]


def instruction_ratios(tree_a: ResultsTree, tree_b: ResultsTree) -> tuple[float, ...]:
    """Run B's instruction count over run A's, for every pair both runs counted."""
    on_a, on_b = _measured(tree_a, _is_count), _measured(tree_b, _is_count)
    return tuple(
        float(on_b[key].value or 0) / float(on_a[key].value or 1)
        for key in sorted(on_a.keys() & on_b.keys())
    )


def measured_floor(pairs: Sequence[PairAA]) -> float:
    """The relative difference two runs' medians exceed 1 % of the time (module docstring)."""
    if not pairs:
        raise SerkitError("the A/A runs measured no pair twice; see asv's output above")
    spread = MAD_TO_SD * statistics.median(abs(p.log_ratio) for p in pairs)
    return math.exp(Z_99 * spread) - 1


def judge(
    tree_a: ResultsTree,
    tree_b: ResultsTree,
    *,
    floor: float | None = None,
    load_before: str = "",
    load_after: str = "",
) -> AAResult:
    """Every verdict the two runs give, where all should be "within noise" or "same".

    `floor` is the noise floor verdicts use; by default, the one these runs measure.
    """
    pairs = match(tree_a, tree_b)
    measured = measured_floor(pairs)
    used = measured if floor is None else floor
    false_new = false_test = false_overlap = 0
    for pair in pairs:
        benchmark = tree_a.benchmark(pair.benchmark)
        processes = (pair.processes_a, pair.processes_b)
        weights = pair.weights
        false_new += judge_pair(benchmark, pair.a, pair.b, processes, used, weights).verdict in (
            FASTER,
            SLOWER,
        )
        false_test += judge_pair(benchmark, pair.a, pair.b, processes, 0.0, weights).verdict in (
            FASTER,
            SLOWER,
        )
        false_overlap += judge_overlap(benchmark, pair.a, pair.b) in (FASTER, SLOWER)
    seen = tuple(known_slowdown(tree_a, pairs, size, used) for size in SLOWDOWNS)
    spreads = [log_std(v) for p in pairs for v in (p.processes_a, p.processes_b) if len(v) > 1]
    if not spreads:
        raise SerkitError(
            "the runs kept no per-process samples: is the suite's benchmarks.json current?"
        )
    counts = [len(v) for p in pairs for v in (p.processes_a, p.processes_b) if v]
    return AAResult(
        pairs,
        processes=min(counts),
        floor=measured,
        between_process_cv=statistics.median(spreads),
        false_new=false_new,
        false_test_only=false_test,
        false_overlap=false_overlap,
        used_floor=used,
        load_before=load_before,
        load_after=load_after,
        instruction_ratios=instruction_ratios(tree_a, tree_b),
        states=(tree_a.state_share().in_words(), tree_b.state_share().in_words()),
        seen=seen,
    )


def _swapped(
    weights: tuple[tuple[float, ...], tuple[float, ...]] | None,
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    return None if weights is None else (weights[1], weights[0])


def known_slowdown(tree: ResultsTree, pairs: Sequence[PairAA], size: float, floor: float) -> Seen:
    """How many timed pairs the verdicts call slower when one run's processes are `size`
    slower: B's over A, then A's over B (the module docstring)."""
    factor = 1 + size
    called = judged = 0
    for pair in pairs:
        benchmark = tree.benchmark(pair.benchmark)
        if not _is_time(benchmark) or len(pair.processes_a) < 2 or len(pair.processes_b) < 2:
            continue
        for base, slowed, on_base, on_slowed, weights in (
            (pair.a, pair.b, pair.processes_a, pair.processes_b, pair.weights),
            (pair.b, pair.a, pair.processes_b, pair.processes_a, _swapped(pair.weights)),
        ):
            assert slowed.value is not None
            slower = replace(slowed, value=slowed.value * factor)
            processes = (on_base, tuple(v * factor for v in on_slowed))
            found = judge_pair(benchmark, base, slower, processes, floor, weights)
            called += found.verdict == SLOWER
            judged += 1
    return Seen(size, called, judged)


def measure(
    root: Path,
    codecs: Sequence[str],
    fixtures: Sequence[str],
    *,
    processes: int = QUICK_ROUNDS,
    floor: float | None = None,
    instructions: bool = False,
) -> AAResult:
    """Run the slice twice and judge it (see `judge`)."""
    before = load_text()
    tree_a, tree_b = run_twice(root, codecs, fixtures, processes, instructions)
    return judge(tree_a, tree_b, floor=floor, load_before=before, load_after=load_text())


def summary_lines(result: AAResult, floor_source: str) -> list[str]:
    """What an A/A run found, in words and with units."""
    n = len(result.pairs)

    def share(count: int) -> str:
        return f"{count} of {n} pairs ({result.rate(count):.1%})"

    return [
        f"{n} pairs, each timed in {result.processes} processes per run, two runs in a row "
        f"(load {result.load_before} before, {result.load_after} after)",
        f"machine state: run A {result.states[0]}; run B {result.states[1]}",
        f"between-process spread: median CV {result.between_process_cv:.1%}",
        f"noise floor measured: {result.floor:.1%} (two runs' medians of a pair differ by "
        "more only 1 % of the time)",
        f"false verdicts, t-test and floor {result.used_floor:.1%} ({floor_source}): "
        f"{share(result.false_new)}",
        f"false verdicts, t-test alone: {share(result.false_test_only)}",
        f"false verdicts, overlapping-intervals rule on the same samples: "
        f"{share(result.false_overlap)}",
        *seen_lines(result),
        *instruction_lines(result),
    ]


def seen_lines(result: AAResult) -> list[str]:
    """What the two runs could have seen of a known slowdown (the module docstring)."""
    if not result.seen or not result.seen[0].judged:
        return []
    return [
        f"a known slowdown on one run's values, judged against the other run at the floor "
        f"{result.used_floor:.1%}, both ways round (the runs' own sampling; the slowdown did "
        f"not run): {'; '.join(s.in_words() for s in result.seen)}"
    ]


def instruction_lines(result: AAResult) -> list[str]:
    """How far the two runs' instruction counts agree, if they were counted."""
    ratios = result.instruction_ratios
    if not ratios:
        return []
    worst = max(abs(r - 1) for r in ratios)
    verdict = "agree" if result.instructions_agree else "DO NOT agree"
    return [
        f"instruction counts: {result.instructions_agreeing} of {len(ratios)} pairs within "
        f"{INSTRUCTIONS_AGREEMENT:.1%} between the runs, largest difference {worst:.3%}: "
        f"they {verdict} (at least {INSTRUCTIONS_AGREEING_SHARE:.0%} of pairs must)"
    ]


def as_dict(result: AAResult) -> Mapping[str, object]:
    return {
        "pairs": len(result.pairs),
        "processes": result.processes,
        "between_process_cv": result.between_process_cv,
        "floor": result.floor,
        "used_floor": result.used_floor,
        "false_verdicts": result.rate(result.false_new),
        "false_verdicts_t_test_only": result.rate(result.false_test_only),
        "false_verdicts_overlap_rule": result.rate(result.false_overlap),
        "load_before": result.load_before,
        "load_after": result.load_after,
        "machine_state": list(result.states),
        "known_slowdowns": [
            {"size": s.size, "called_slower": s.called, "judged": s.judged} for s in result.seen
        ],
        "instruction_pairs": len(result.instruction_ratios),
        "instructions_within": result.instructions_agreeing,
        "instructions_largest_difference": max(
            (abs(r - 1) for r in result.instruction_ratios), default=None
        ),
    }
