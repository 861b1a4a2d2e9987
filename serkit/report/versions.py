"""The library-versions view: per axis library, each release against the next, judged."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from serkit.codecs.registry import codec_names
from serkit.compare.comparison import (
    INSTRUCTIONS_TOLERANCE,
    PEAK_TOLERANCE,
    SINGLE_SAMPLE,
    WITHIN_NOISE,
    Verdict,
    host_floor,
    judge_pair,
)
from serkit.inputs.fixtures import fixture_names
from serkit.report.runs import Run, in_registry_order, library_of
from serkit.results.tree import ResultsTree, version_order
from serkit.run.matrix import LIBRARIES
from serkit.suite.benchmark_names import ALLOCATIONS, DUMPS, INSTRUCTIONS, LOADS, PEAK, SIZE

AXIS_LIBRARIES = tuple(lib.name for lib in LIBRARIES if lib.axis)
MEASURE_NAMES = {
    DUMPS: "dumps time",
    LOADS: "loads time",
    SIZE: "encoded size",
    **{name: f"{operation} peak memory" for operation, name in PEAK.items()},
    **{name: f"{operation} allocations" for operation, name in ALLOCATIONS.items()},
}
# Counted, not timed: the same code and libraries give the same figure, so any change
# between releases is the library's. A peak within compare's PEAK_TOLERANCE is the same.
EXACT_MEASURES = (SIZE, *ALLOCATIONS.values())
COUNTED_MEASURES = (*EXACT_MEASURES, *PEAK.values())
CODE_CHANGED = "not comparable: the benchmark's code changed"
# Shown beside the timings they explain (a time's row carries its operation's count).
INSTRUCTION_NAMES = {name: f"{operation} instructions" for operation, name in INSTRUCTIONS.items()}
_COUNTED_BESIDE = {DUMPS: INSTRUCTIONS["dumps"], LOADS: INSTRUCTIONS["loads"]}


@dataclass(frozen=True)
class VersionPoint:
    version: str
    run: Run


@dataclass(frozen=True)
class Change:
    """How one measurement moved from one release to the next."""

    benchmark: str
    codec: str
    fixture: str
    before: str  # release
    after: str
    a: float
    b: float
    # times: compare's judge_pair (same, within noise, faster, ...); counts: larger, smaller
    verdict: str
    detectable: float | None = None  # the smallest relative change the verdict could call
    multimodal: bool = False  # either release's processes fell into separate modes
    # A time's instructions per call (before, after), where both releases counted them.
    instructions: tuple[float, float] | None = None

    @property
    def percent(self) -> float:
        return (self.b / self.a - 1) * 100 if self.a else float("nan")

    @property
    def instructions_percent(self) -> float | None:
        if self.instructions is None or not self.instructions[0]:
            return None
        return (self.instructions[1] / self.instructions[0] - 1) * 100

    @property
    def moved(self) -> bool:
        """Beyond the noise: the verdict called a change, or the count of instructions moved."""
        called = self.verdict not in ("same", WITHIN_NOISE, CODE_CHANGED, SINGLE_SAMPLE)
        return called or self.instructions_verdict in ("more", "fewer")

    @property
    def instructions_verdict(self) -> str | None:
        """ "same", "more" or "fewer": counts are deterministic, so any change is real."""
        if self.instructions is None:
            return None
        return instruction_change(*self.instructions)


@dataclass(frozen=True)
class LibraryView:
    """One axis library on one machine and Python: its releases, oldest first."""

    library: str
    machine: str
    python: str
    points: list[VersionPoint]
    codecs: list[str]
    fixtures: list[str]
    changes: list[Change]

    @property
    def has_instructions(self) -> bool:
        return any(c.instructions is not None for c in self.changes)

    @property
    def commits(self) -> list[str]:
        """The suite commits the releases were measured at: more than one is a caveat."""
        return sorted({p.run.commit for p in self.points})


def library_views(runs: Sequence[Run], tree: ResultsTree) -> list[LibraryView]:
    """Per machine, Python and axis library: the baseline and every axis env of it."""
    by_place: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        by_place[run.machine, run.env.python].append(run)
    views = []
    for (machine, python), place_runs in sorted(
        by_place.items(), key=lambda kv: (kv[0][0], version_order(kv[0][1]))
    ):
        for library in AXIS_LIBRARIES:
            points: dict[str, Run] = {}
            for run in place_runs:
                if run.library not in (None, library):
                    continue
                version = dict(run.env.requirements).get(library)
                if version and (version not in points or run.library is not None):
                    points[version] = run
            if len(points) < 2:
                continue  # one release is no axis
            ordered = [VersionPoint(v, points[v]) for v in sorted(points, key=version_order)]
            codecs = [c for c in codec_names() if library_of(c) == library]
            fixtures = in_registry_order(
                {f for p in ordered for f in p.run.fixtures}, fixture_names()
            )
            views.append(
                LibraryView(
                    library,
                    machine,
                    python,
                    ordered,
                    codecs,
                    fixtures,
                    _changes(tree, ordered, codecs, fixtures, machine),
                )
            )
    return views


def _changes(
    tree: ResultsTree,
    points: Sequence[VersionPoint],
    codecs: Sequence[str],
    fixtures: Sequence[str],
    machine: str,
) -> list[Change]:
    out = []
    floor = host_floor(tree, [machine], tree.warnings)
    for before, after in zip(points, points[1:]):
        for benchmark in MEASURE_NAMES:
            for codec in codecs:
                for fixture in fixtures:
                    a = before.run.get(benchmark, codec, fixture)
                    b = after.run.get(benchmark, codec, fixture)
                    if a is None or b is None:
                        continue
                    assert a.value is not None and b.value is not None
                    found = Verdict("")
                    if a.code_version != b.code_version:
                        # Measured by different code (asv's hash of the benchmark): the
                        # difference may be the suite's, not the library's.
                        verdict = CODE_CHANGED
                    elif benchmark in COUNTED_MEASURES:
                        verdict = counted_change(benchmark, a.value, b.value)
                    else:
                        processes = (tree.processes(a), tree.processes(b))
                        found = judge_pair(tree.benchmark(benchmark), a, b, processes, floor)
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
                        )
                    )
    return out


def _counted(
    before: VersionPoint, after: VersionPoint, benchmark: str, codec: str, fixture: str
) -> tuple[float, float] | None:
    """The instructions per call of a time's operation in both releases, where counted."""
    name = _COUNTED_BESIDE.get(benchmark)
    if name is None:
        return None
    a, b = before.run.get(name, codec, fixture), after.run.get(name, codec, fixture)
    if a is None or b is None or a.code_version != b.code_version:
        return None
    assert a.value is not None and b.value is not None
    return (a.value, b.value)


def instruction_change(a: float, b: float) -> str:
    """Instructions per call between releases: within compare's tolerance, the same."""
    if abs(b - a) <= INSTRUCTIONS_TOLERANCE * a:
        return "same"
    return "more" if b > a else "fewer"


def counted_change(benchmark: str, a: float, b: float) -> str:
    """A counted measure between releases: any change is real, and neither is a regression."""
    tolerance = 0.0 if benchmark in EXACT_MEASURES else PEAK_TOLERANCE * a
    if abs(b - a) <= tolerance:
        return "same"
    return "larger" if b > a else "smaller"
