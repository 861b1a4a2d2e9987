"""Steps along an axis (library releases, Pythons): each measurement from one point to the next,
judged. Shared by the library-versions and Python-versions views."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from serkit.compare.comparison import COUNTED_BESIDE
from serkit.compare.verdicts import (
    INSTRUCTIONS_TOLERANCE,
    PEAK_TOLERANCE,
    SINGLE_SAMPLE,
    WITHIN_NOISE,
    Verdict,
    host_floor,
    judge_pair,
)
from serkit.report.runs import Run
from serkit.results.host_file import read_runs, same_run
from serkit.results.noise import BETWEEN_RUNS, SAME_RUN
from serkit.results.tree import Measurement, ResultsTree, sampled_apart
from serkit.suite.benchmark_names import ALLOCATIONS, DUMPS, INSTRUCTIONS, LOADS, PEAK, SIZE

MEASURE_NAMES = {
    DUMPS: "dumps time",
    LOADS: "loads time",
    SIZE: "encoded size",
    **{name: f"{operation} peak memory" for operation, name in PEAK.items()},
    **{name: f"{operation} allocations" for operation, name in ALLOCATIONS.items()},
}
# Counted, not timed: the same code and libraries give the same figure, so any change
# between two points is the axis's. A peak within compare's PEAK_TOLERANCE is the same.
EXACT_MEASURES = (SIZE, *ALLOCATIONS.values())
COUNTED_MEASURES = (*EXACT_MEASURES, *PEAK.values())
CODE_CHANGED = "not comparable: the benchmark's code or sampling plan changed"
# Shown beside the timings they explain (a time's row carries its operation's count).
INSTRUCTION_NAMES = {name: f"{operation} instructions" for operation, name in INSTRUCTIONS.items()}
# Verdicts that call no change: the step could not tell, or was not judged.
_NOT_CALLED = ("same", WITHIN_NOISE, CODE_CHANGED, SINGLE_SAMPLE)


@dataclass(frozen=True)
class Point:
    """One point on an axis: a library release or a Python version, and the run there."""

    version: str
    run: Run


def suite_commits(points: Iterable[Point]) -> list[str]:
    """The suite commits the points were measured at: more than one is a caveat."""
    return sorted({commit for p in points for commit in p.run.commits})


def any_counted(changes: Iterable[Change]) -> bool:
    """Whether any change carries instruction counts (the table then shows them)."""
    return any(c.instructions is not None for c in changes)


@dataclass(frozen=True)
class Change:
    """How one measurement moved from one point of an axis to the next."""

    benchmark: str
    codec: str
    fixture: str
    before: str  # the point's version: a library release, or a Python
    after: str
    a: float
    b: float
    # times: compare's judge_pair (same, within noise, faster, ...); counts: larger, smaller
    verdict: str
    detectable: float | None = None  # the smallest relative change the verdict could call
    multimodal: bool = False  # either point's processes fell into separate modes
    # A time's instructions per call (before, after), where both points counted them.
    instructions: tuple[float, float] | None = None
    # How the two points were measured: in one run, their rounds interleaved (no floor:
    # what moved the machine moved both), or in two runs (the host's floor between runs).
    context: str = SAME_RUN

    @property
    def percent(self) -> float:
        return (self.b / self.a - 1) * 100 if self.a else float("nan")

    @property
    def instructions_percent(self) -> float | None:
        if self.instructions is None or not self.instructions[0]:
            return None
        return (self.instructions[1] / self.instructions[0] - 1) * 100

    @property
    def called(self) -> bool:
        """The verdict called a change: beyond the noise, or a count that moved."""
        return self.verdict not in _NOT_CALLED

    @property
    def moved(self) -> bool:
        """Beyond the noise: the verdict called a change, or the count of instructions moved."""
        return self.called or self.instructions_verdict in ("more", "fewer")

    @property
    def instructions_verdict(self) -> str | None:
        """ "same", "more" or "fewer": counts are deterministic, so any change is real."""
        if self.instructions is None:
            return None
        return instruction_change(*self.instructions)


def judge_steps(
    tree: ResultsTree,
    points: Sequence[Point],
    codecs: Sequence[str],
    fixtures: Sequence[str],
    machine: str,
    measures: Sequence[str] = tuple(MEASURE_NAMES),
) -> list[Change]:
    """Every measure, codec and fixture both neighbouring points measured, judged step by step."""
    out = []
    floors = StepFloors(tree, machine)
    for before, after in zip(points, points[1:]):
        for benchmark in measures:
            for codec in codecs:
                for fixture in fixtures:
                    a = before.run.get(benchmark, codec, fixture)
                    b = after.run.get(benchmark, codec, fixture)
                    if a is None or b is None:
                        continue
                    assert a.value is not None and b.value is not None
                    found = Verdict("")
                    context, floor = floors.of(a, b)
                    if a.code_version != b.code_version or sampled_apart(a, b):
                        # Measured by different code (asv's hash of the benchmark) or
                        # sampling plan: the difference may be the suite's, not the axis's.
                        verdict = CODE_CHANGED
                    elif benchmark in COUNTED_MEASURES:
                        verdict = counted_change(benchmark, a.value, b.value)
                    else:
                        processes = (a.process_values, b.process_values)
                        weights = (a.weights, b.weights)
                        found = judge_pair(
                            tree.benchmark(benchmark), a, b, processes, floor, weights
                        )
                        verdict = found.verdict
                    out.append(
                        Change(
                            benchmark,
                            codec,
                            fixture,
                            before.version,
                            after.version,
                            a.value,
                            b.value,
                            verdict,
                            found.detectable,
                            found.multimodal,
                            _counted(before, after, benchmark, codec, fixture),
                            context,
                        )
                    )
    return out


class StepFloors:
    """The floor a step's timing verdict uses: none where one run measured both points, their
    rounds interleaved; else the machine's floor between runs, asked for (and its absence
    warned about) only then."""

    def __init__(self, tree: ResultsTree, machine: str) -> None:
        self._tree, self._machine = tree, machine
        self._runs = read_runs(tree.root / machine, tree.warnings) or []
        self._between: float | None = None

    def of(self, a: Measurement, b: Measurement) -> tuple[str, float]:
        if same_run(self._runs, a.file.name, b.file.name):
            return SAME_RUN, 0.0
        if self._between is None:
            self._between = host_floor(self._tree, [self._machine], self._tree.warnings)
        return BETWEEN_RUNS, self._between


def _counted(
    before: Point, after: Point, benchmark: str, codec: str, fixture: str
) -> tuple[float, float] | None:
    """The instructions per call of a time's operation at both points, where counted."""
    name = COUNTED_BESIDE.get(benchmark)
    if name is None:
        return None
    a, b = before.run.get(name, codec, fixture), after.run.get(name, codec, fixture)
    if a is None or b is None or a.code_version != b.code_version:
        return None
    assert a.value is not None and b.value is not None
    return (a.value, b.value)


def instruction_change(a: float, b: float) -> str:
    """Instructions per call between two points: within compare's tolerance, the same."""
    if abs(b - a) <= INSTRUCTIONS_TOLERANCE * a:
        return "same"
    return "more" if b > a else "fewer"


def counted_change(benchmark: str, a: float, b: float) -> str:
    """A counted measure between two points: any change is real, and neither is a regression."""
    tolerance = 0.0 if benchmark in EXACT_MEASURES else PEAK_TOLERANCE * a
    if abs(b - a) <= tolerance:
        return "same"
    return "larger" if b > a else "smaller"
