"""`serkit power`: what a verdict on this host can see, from slowdowns that really run.

An A/A run says how often verdicts call a difference that is not there; it says nothing
of the differences they miss. So this runs the slice in several arms: twice plain (an
A/A), and once for each known slowdown, where every timed sample makes that share more
work than its timer counts (serkit.suite.cases.INJECT_ENV: +5 % is one call more in
20, the same calls). Every arm samples as a real run does, its
bodies and asv's `number` calibrated per pair; where a sample's calls would not make
whole extra calls, the part of a call they cannot make is a spin of the canary's
arithmetic, timed against the call in its process (injected_sampling). Judged by
the rule the report and `serkit compare` use (serkit.compare.verdicts.judge_pair), in two
ways:

- same run: the arms' rounds interleaved (round 1 of every arm, in an order shuffled per
  round, then round 2), as a matrix run interleaves library releases and Pythons; judged
  with no floor, as the report judges two points of one run;
- between runs: each arm a whole run after the last, as two hosts or two days compare;
  judged with the host's floor between runs.

The share of pairs called slower at each size is the verdicts' power here; the share the
A/A arm called different, their false alarms. Both are kept for the host
(serkit.results.noise.PowerRecord). `serkit aa` and `noise` also say what their two runs
could have seen of the same sizes, applied to one run's values (serkit.trust.noise).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import random
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from serkit.compare.verdicts import FASTER, SLOWER, judge_pair
from serkit.files import atomic_write
from serkit.progress import progress
from serkit.results.hosts import load_text
from serkit.results.noise import BETWEEN_RUNS, SAME_RUN, PowerRecord
from serkit.results.tree import ResultsTree
from serkit.run.planning import QUICK_ROUNDS, QUICK_WARMUP_S
from serkit.run.precision import quick_precision
from serkit.suite.cases import (
    CODECS_ENV,
    FIXTURES_ENV,
    FULL_ROUNDS,
    FULL_SEES,
    INJECT_ENV,
    INJECTED_LOOPS,
    QUICK_SEES,
    ROUNDS_ENV,
    WARMUP_ENV,
    precision_needed,
)
from serkit.trust.agreement import ScratchSuite, read_as_one_host
from serkit.trust.noise import SLOWDOWNS, TIMINGS, PairAA, match
from serkit.units import plural

PLAIN, AGAIN = "plain", "plain again"


@dataclass(frozen=True)
class ArmSampling:
    """How each arm samples its pairs: as a quick run, or as a full (and matrix) run."""

    name: str
    processes: int
    sees: float  # the change its extra rounds aim to place a pair precisely enough for


PLANS = {
    "quick": ArmSampling("quick", QUICK_ROUNDS, QUICK_SEES),
    "full": ArmSampling("full", FULL_ROUNDS, FULL_SEES),
}


@dataclass(frozen=True)
class Called:
    """One mode and size: how many pairs the verdicts called, of how many."""

    mode: str
    size: float  # the injected slowdown; 0 for the A/A
    called: int
    pairs: int
    median_detectable: float | None
    median_ratio: float | None  # the judged ratio, over the pairs: what the injection read as
    missed_multimodal: int  # of the pairs not called, those whose processes fell in modes
    called_test_only: int  # ... by the test alone, at no floor

    @property
    def share(self) -> float:
        return self.called / self.pairs if self.pairs else 0.0


def arms(sizes: Sequence[float]) -> dict[str, float]:
    """Each arm's name and its injected share of extra calls."""
    return {PLAIN: 0.0, AGAIN: 0.0, **{f"+{size:.0%}": size for size in sizes}}


def run_arms(
    root: Path,
    codecs: Sequence[str],
    fixtures: Sequence[str],
    sizes: Sequence[float],
    *,
    plan: ArmSampling,
    interleaved: bool,
    environ: Mapping[str, str] | None = None,
    keep: Path | None = None,
    space_s: float = 0.0,
) -> dict[str, ResultsTree]:
    """Every arm's timings of the slice, its rounds interleaved with the others' or not;
    `environ` adds to the suite's SERKIT_BENCH_* (the pairs a quick run leaves out), and
    `keep` is where the arms' results tree is copied, each arm a machine of it (`arm_machine`),
    for a closer look (`serkit compare plain plus10 --results KEEP/between-runs`). Arms one after
    another wait `space_s` between them, so that they sample different stretches of the
    machine's state, as two runs on two days do."""
    base = {
        **os.environ,
        **(environ or {}),
        CODECS_ENV: ",".join(codecs),
        FIXTURES_ENV: ",".join(fixtures),
        ROUNDS_ENV: str(plan.processes),
        WARMUP_ENV: os.environ.get(WARMUP_ENV, QUICK_WARMUP_S),
    }
    shares = arms(sizes)
    # A quick run's aim, as serkit bench's; a full run's, the test's alone (it is judged
    # within a run).
    precision = quick_precision() if plan.name == "quick" else precision_needed(plan.sees)
    # The arms take their turns in a new order each round, the same order for every run
    # of serkit power: no arm is always the first after the machine has been idle.
    order = random.Random(20261125)
    with contextlib.ExitStack() as stack:
        suites = {
            name: stack.enter_context(
                ScratchSuite(root, {**base, INJECT_ENV: f"{share:g}"}, precision=precision)
            )
            for name, share in shares.items()
        }
        what = "rounds, arms interleaved" if interleaved else "arms, one after another"
        if interleaved:
            rounds = range(plan.processes)
            for round_index in progress(rounds, desc=what, unit="round", leave=True):
                for suite in order.sample(list(suites.values()), len(suites)):
                    suite.run_round([TIMINGS], round_index)
            # The extra rounds, interleaved likewise, each taken by every arm for the pairs
            # short in any: a side that alone sampled later, after the load fell, read
            # 1.4-1.7x faster than the others here.
            for _ in range(plan.processes):
                short: dict[str, set[tuple[str, ...]]] = {}
                for suite in suites.values():
                    for name, combos in suite.short_pairs().items():
                        short.setdefault(name, set()).update(combos)
                turn = order.sample(list(suites.values()), len(suites))
                if not [suite.run_extra_round(short=short) for suite in turn].count(True):
                    break
        else:
            for index, suite in enumerate(
                progress(list(suites.values()), desc=what, unit="arm", leave=True)
            ):
                if index and space_s:  # apart in time: across a change of the machine's state
                    time.sleep(space_s)
                suite.run_tree([TIMINGS], rounds=plan.processes)
        # One tree, each arm a run of this host in it: judged as `serkit compare` judges two
        # runs of one host, not each against its own fast canary reading.
        together = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="serkit-power-")))
        for name, suite in suites.items():
            suite.file_as(together, arm_machine(name), measured_as=plan.name)
        if keep is not None:
            for path in sorted(p for p in together.rglob("*") if p.is_file()):
                atomic_write(keep / path.relative_to(together), path.read_bytes(), within=keep)
        trees = read_as_one_host(together, [arm_machine(name) for name in suites])
        return {name: trees[arm_machine(name)] for name in suites}


def arm_machine(name: str) -> str:
    """An arm's machine in the results tree its arms are judged in (and kept in): "plain",
    "plain-again", "plus10"."""
    return name.replace(" ", "-").replace("+", "plus").replace("%", "")


def judge_arm(
    mode: str, size: float, plain: ResultsTree, other: ResultsTree, floor: float
) -> Called:
    """How many of the pairs the verdicts called: slower for a slowdown, different for A/A."""
    pairs: list[PairAA] = match(plain, other)
    called = multimodal = test_only = 0
    detectable: list[float] = []
    ratios: list[float] = []
    wanted = (SLOWER,) if size else (FASTER, SLOWER)
    for pair in pairs:
        benchmark = plain.benchmark(pair.benchmark)
        processes = (pair.processes_a, pair.processes_b)
        found = judge_pair(benchmark, pair.a, pair.b, processes, floor, pair.weights)
        test_only += (
            judge_pair(benchmark, pair.a, pair.b, processes, 0.0, pair.weights).verdict in wanted
        )
        hit = found.verdict in wanted
        called += hit
        multimodal += not hit and found.multimodal
        if found.detectable is not None:
            detectable.append(found.detectable)
        if found.ratio is not None:
            ratios.append(found.ratio)
    return Called(
        mode,
        size,
        called,
        len(pairs),
        statistics.median(detectable) if detectable else None,
        statistics.median(ratios) if ratios else None,
        multimodal,
        test_only,
    )


def measure(
    root: Path,
    codecs: Sequence[str],
    fixtures: Sequence[str],
    *,
    sizes: Sequence[float] = SLOWDOWNS,
    modes: Sequence[str] = (SAME_RUN, BETWEEN_RUNS),
    plan: ArmSampling = PLANS["quick"],
    floor: float,
    environ: Mapping[str, str] | None = None,
    keep: Path | None = None,
    space_s: float = 0.0,
) -> tuple[list[Called], PowerRecord]:
    """Run the arms in each mode and judge every arm against the plain one: with no floor
    within a run, with `floor` (the host's between runs) between runs."""
    before = load_text()
    rows: list[Called] = []
    states: dict[str, dict[str, str]] = {}
    pairs = 0
    for mode in modes:
        trees = run_arms(
            root,
            codecs,
            fixtures,
            sizes,
            plan=plan,
            interleaved=mode == SAME_RUN,
            environ=environ,
            keep=keep / mode.replace(" ", "-") if keep else None,
            space_s=0.0 if mode == SAME_RUN else space_s,
        )
        states[mode] = {name: tree.state_share().in_words() for name, tree in trees.items()}
        plain = trees[PLAIN]
        used = 0.0 if mode == SAME_RUN else floor
        for name, size in arms(sizes).items():
            if name != PLAIN:
                rows.append(judge_arm(mode, size, plain, trees[name], used))
        pairs = max(pairs, *(row.pairs for row in rows))
    record = PowerRecord(
        measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        slice=f"{', '.join(codecs)} x {', '.join(fixtures)}",
        pairs=pairs,
        processes=plan.processes,
        floor=floor,
        plan=plan.name,
        called={
            mode: {f"{row.size:g}": round(row.share, 4) for row in rows if row.mode == mode}
            for mode in modes
        },
        load_before=before,
        load_after=load_text(),
        states=states,
    )
    return rows, record


def arm_words(size: float) -> str:
    """An arm as the table names it: what was injected, in calls."""
    if not size:
        return "none (A/A)"
    return f"+{size:.0%} ({plural(round(size * INJECTED_LOOPS), 'call')} more in {INJECTED_LOOPS})"


def table(rows: Sequence[Called]) -> tuple[list[list[str]], list[str]]:
    headers = [
        "mode",
        "injected",
        "read as",
        "called",
        "share",
        "median detectable",
        "missed, in modes",
        "called by the test alone",
    ]
    out = []
    for row in rows:
        out.append(
            [
                row.mode,
                arm_words(row.size),
                f"x{row.median_ratio:.3f}" if row.median_ratio else "-",
                f"{row.called} of {row.pairs}",
                f"{row.share:.1%}",
                f"{row.median_detectable:.1%}" if row.median_detectable is not None else "-",
                str(row.missed_multimodal) if row.size else "-",
                f"{row.called_test_only} ({row.called_test_only / max(row.pairs, 1):.1%})",
            ]
        )
    return out, headers


def as_dict(rows: Sequence[Called], record: PowerRecord) -> Mapping[str, object]:
    return {
        "record": record.__dict__,
        "rows": [{**row.__dict__, "share": row.share} for row in rows],
    }
