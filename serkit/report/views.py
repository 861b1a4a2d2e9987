"""What serkit's report shows, read from an asv results tree: data only.

`report_html` renders these views; nothing here formats or writes a page. The views:

- runs: per machine and environment, the newest commit that measured anything there;
- snapshot: per fixture, every codec against the suite's timings, sizes, memory per call
  (peak and allocations, with their check) and facts, from each baseline environment
  (the newest release of every library);
- library versions: per axis library, the same measurements per release, the release on
  the x axis, from the baseline plus that library's axis environments;
- fidelity: exact or lossy, per codec and fixture, as the suite's fact track recorded it;
- hosts: `serkit compare` of each machine against the first, in one view.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from serkit.codecs.registry import codec_names, registry
from serkit.compare.comparison import (
    PEAK_TOLERANCE,
    Comparison,
    NothingToCompare,
    Verdict,
    compare,
    decode_param,
    host_floor,
    judge_pair,
)
from serkit.errors import SerkitError
from serkit.inputs.fixtures import fixture_names
from serkit.results.tree import Environment, Measurement, ResultsTree, version_order
from serkit.run.matrix import LIBRARIES
from serkit.stats import Spread, spread
from serkit.suite.benchmark_names import (
    ALLOCATIONS,
    COMPILED,
    COMPRESSED,
    DUMPS,
    IMPORT,
    LOADS,
    MEMORY_CHECK,
    OVERHEAD,
    PEAK,
    ROUND_TRIP,
    ROUND_TRIP_EXACT,
    SIZE,
    TIME,
)
from serkit.suite.cases import LIBRARY_ENV
from serkit.suite.overhead import ADAPTER, DIRECT
from serkit.suite.overhead import FIXTURE as OVERHEAD_FIXTURE
from serkit.suite.overhead import variants as overhead_variants
from serkit.trust.overhead import Overhead, judge_overheads, timings_from

# The suite's benchmarks the report reads (a test checks them against asv's discovery).
READ_BENCHMARKS = (
    DUMPS,
    LOADS,
    ROUND_TRIP,
    SIZE,
    COMPRESSED,
    *PEAK.values(),
    *ALLOCATIONS.values(),
    *MEMORY_CHECK.values(),
    COMPILED,
    ROUND_TRIP_EXACT,
    IMPORT,
)
COMPRESSORS = ("gzip-6", "zstd-3")
REFERENCE_CODEC = "json"  # the posts normalized to the standard library's json
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
MEMORY_OPERATIONS = tuple(PEAK)
CODE_CHANGED = "not comparable: the benchmark's code changed"

Params = tuple[Any, ...]


class NoResults(SerkitError):
    """The results tree holds no measurement the report could show."""


@dataclass
class Run:
    """One machine's newest results in one environment."""

    machine: str
    env: Environment
    commit: str
    date: int  # the commit's date, milliseconds since the epoch, as asv records it
    values: dict[tuple[str, Params], Measurement] = field(default_factory=dict)
    # The benchmarks whose samples are one per process (serkit's timed classes).
    per_process: frozenset[str] = frozenset()

    def get(self, benchmark: str, *params: Any) -> Measurement | None:
        found = self.values.get((benchmark, params))
        return found if found is not None and found.value is not None else None

    def spread(self, benchmark: str, *params: Any) -> Spread | None:
        """The spread between the processes that timed this value, where asv kept them."""
        found = self.get(benchmark, *params)
        if found is None or benchmark not in self.per_process or not found.samples:
            return None
        return spread(found.samples)

    def value(self, benchmark: str, *params: Any) -> float | None:
        found = self.get(benchmark, *params)
        return None if found is None else found.value

    @property
    def library(self) -> str | None:
        """The axis library this environment varies, or None for a baseline."""
        return dict(self.env.env_vars).get(LIBRARY_ENV)

    @property
    def codecs(self) -> list[str]:
        return _ordered({p[0] for (_, p) in self.values if p}, codec_names())

    @property
    def fixtures(self) -> list[str]:
        return _ordered({p[1] for (_, p) in self.values if len(p) > 1}, fixture_names())

    def version_of(self, codec: str) -> str:
        """The release of the codec's library this environment installed."""
        library = library_of(codec)
        if library is None:
            return "?"
        if library == "stdlib":
            return f"Python {self.env.python}"
        return dict(self.env.requirements).get(library, "not installed")


def _ordered(found: Iterable[Any], order: Sequence[str]) -> list[Any]:
    """Registry order first, then anything the registry does not know (a plugin's)."""
    found = set(found)
    known = [name for name in order if name in found]
    return known + sorted((str(x) for x in found - set(known)), key=str)


def library_of(codec: str) -> str | None:
    spec = registry.specs.get(codec)
    return None if spec is None else spec.library


def latest_runs(tree: ResultsTree) -> list[Run]:
    """For every machine and environment, the newest commit with a measured value."""
    grouped: dict[tuple[str, Environment, str], list[Measurement]] = defaultdict(list)
    for host in tree.machines.values():
        for m in host.measurements:
            grouped[host.name, m.env, m.commit].append(m)
    newest: dict[tuple[str, Environment], Run] = {}
    per_process = frozenset(n for n, b in tree.benchmarks.items() if b.one_sample_per_process)
    for (machine, env, commit), measurements in grouped.items():
        if all(m.value is None for m in measurements):
            continue
        date = max(m.date for m in measurements)
        current = newest.get((machine, env))
        if current is not None and (current.date, current.commit) >= (date, commit):
            continue
        run = Run(machine, env, commit, date, per_process=per_process)
        for m in measurements:
            key = (m.benchmark, tuple(decode_param(p) for p in m.params))
            if key not in run.values or run.values[key].value is None:
                run.values[key] = m
        newest[machine, env] = run
    return sorted(newest.values(), key=_run_order)


def _run_order(run: Run) -> tuple[Any, ...]:
    return (run.machine, version_order(run.env.python), run.library or "", run.env.label)


# --- snapshot ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotRow:
    codec: str
    version: str  # of the codec's library in this environment
    compiled: bool | None  # None: not recorded
    exact: bool | None  # None: not recorded (unsupported, failed or not run)
    dumps: Measurement | None
    loads: Measurement | None
    round_trip: Measurement | None
    size: float | None
    compressed: dict[str, float | None]
    # Memory per call, by operation ("dumps", "loads"): peak bytes, allocations, and
    # whether the peak reached its floor (False: the figures are suspect; None: not run).
    peak: dict[str, float | None]
    allocations: dict[str, float | None]
    memory_sane: dict[str, bool | None]
    dumps_vs_reference: float | None
    loads_vs_reference: float | None
    # Between the processes that timed "dumps", "loads" and "round_trip", where recorded.
    spreads: dict[str, Spread | None] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return any(x is not None for x in (self.dumps, self.loads, self.size))

    def peak_per_byte(self, operation: str) -> float | None:
        """Peak memory of one call per byte encoded: what a message costs to hold."""
        return _ratio(self.peak.get(operation), self.size)


@dataclass(frozen=True)
class SnapshotTable:
    fixture: str
    run: Run
    rows: list[SnapshotRow]

    @property
    def has_memory(self) -> bool:
        """Whether memory per call was measured (memray installed, the calls short enough)."""
        return any(v is not None for r in self.rows for v in r.peak.values())


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _fact(value: float | None) -> bool | None:
    return None if value is None else bool(value)


def snapshot(run: Run, fixture: str) -> SnapshotTable:
    """Every codec the run knows, on one fixture: one row each, measured or not."""
    ref_dumps = run.value(DUMPS, REFERENCE_CODEC, fixture)
    ref_loads = run.value(LOADS, REFERENCE_CODEC, fixture)
    rows = []
    for codec in run.codecs:
        dumps, loads = run.get(DUMPS, codec, fixture), run.get(LOADS, codec, fixture)
        rows.append(
            SnapshotRow(
                codec=codec,
                version=run.version_of(codec),
                compiled=_fact(run.value(COMPILED, codec)),
                exact=_fact(run.value(ROUND_TRIP_EXACT, codec, fixture)),
                dumps=dumps,
                loads=loads,
                round_trip=run.get(ROUND_TRIP, codec, fixture),
                size=run.value(SIZE, codec, fixture),
                compressed={c: run.value(COMPRESSED, codec, fixture, c) for c in COMPRESSORS},
                peak={op: run.value(PEAK[op], codec, fixture) for op in MEMORY_OPERATIONS},
                allocations={
                    op: run.value(ALLOCATIONS[op], codec, fixture) for op in MEMORY_OPERATIONS
                },
                memory_sane={
                    op: _fact(run.value(MEMORY_CHECK[op], codec, fixture))
                    for op in MEMORY_OPERATIONS
                },
                dumps_vs_reference=_ratio(dumps.value if dumps else None, ref_dumps),
                loads_vs_reference=_ratio(loads.value if loads else None, ref_loads),
                spreads={
                    operation: run.spread(name, codec, fixture) for operation, name in TIME.items()
                },
            )
        )
    return SnapshotTable(fixture, run, rows)


def baseline_runs(runs: Sequence[Run]) -> list[Run]:
    return [run for run in runs if run.library is None]


# --- library versions -------------------------------------------------------------------


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

    @property
    def percent(self) -> float:
        return (self.b / self.a - 1) * 100 if self.a else float("nan")


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
            fixtures = _ordered({f for p in ordered for f in p.run.fixtures}, fixture_names())
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
                    elif benchmark in EXACT_MEASURES or benchmark in PEAK.values():
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
                        )
                    )
    return out


def counted_change(benchmark: str, a: float, b: float) -> str:
    """A counted measure between releases: any change is real, and neither is a regression."""
    tolerance = 0.0 if benchmark in EXACT_MEASURES else PEAK_TOLERANCE * a
    if abs(b - a) <= tolerance:
        return "same"
    return "larger" if b > a else "smaller"


# --- fidelity ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FidelityGrid:
    """Exact (True), lossy (False) or not measured (None), per codec and fixture."""

    run: Run
    fixtures: list[str]
    cells: dict[str, list[bool | None]]  # by codec, in `fixtures` order


def fidelity_grids(runs: Sequence[Run]) -> list[FidelityGrid]:
    grids = []
    for run in baseline_runs(runs):
        fixtures = run.fixtures
        cells = {
            codec: [_fact(run.value(ROUND_TRIP_EXACT, codec, f)) for f in fixtures]
            for codec in run.codecs
        }
        if any(v is not None for row in cells.values() for v in row):
            grids.append(FidelityGrid(run, fixtures, cells))
    return grids


# --- adapter overhead -----------------------------------------------------------------


@dataclass(frozen=True)
class OverheadRow:
    """One codec and operation in one run: serkit's adapter against the plain call."""

    result: Overhead
    adapter: Measurement
    direct: Measurement

    @property
    def verdict(self) -> str:
        if self.result.within:
            return "within target"
        # Over the target, but the two spreads overlap: the run cannot tell them apart.
        a, d = self.adapter.iqr, self.direct.iqr
        if a is not None and d is not None and a[0] <= d[1] and d[0] <= a[1]:
            return "within noise"
        return "over target"


def overhead_rows(run: Run) -> list[OverheadRow]:
    values = {
        (name, params): m.value
        for (name, params), m in run.values.items()
        if name in OVERHEAD.values() and m.value is not None
    }
    found = judge_overheads(timings_from(values), overhead_variants(run.codecs))
    rows = []
    for result in found:
        name = OVERHEAD[result.operation]
        adapter = run.get(name, result.codec, OVERHEAD_FIXTURE, ADAPTER)
        direct = run.get(name, result.codec, OVERHEAD_FIXTURE, DIRECT)
        if adapter is not None and direct is not None:
            rows.append(OverheadRow(result, adapter, direct))
    order = {codec: i for i, codec in enumerate(run.codecs)}
    return sorted(rows, key=lambda r: (r.result.operation, order.get(r.result.codec, 0)))


# --- hosts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostComparison:
    reference: str
    other: str
    comparison: Comparison | None
    problem: str | None  # why there is no comparison


def host_comparisons(tree: ResultsTree) -> list[HostComparison]:
    """Every machine against the first (by name): the `serkit compare` of each pair."""
    names = sorted(name for name, m in tree.machines.items() if m.measurements)
    out = []
    for other in names[1:]:
        try:
            result = compare(tree, names[0], other)
        except NothingToCompare as exc:
            out.append(HostComparison(names[0], other, None, str(exc)))
        else:
            out.append(HostComparison(names[0], other, result, None))
    return out


# --- the whole report ---------------------------------------------------------------------


@dataclass
class ReportData:
    tree: ResultsTree
    runs: list[Run]
    snapshots: dict[str, list[SnapshotTable]]  # by fixture
    libraries: list[LibraryView]
    fidelity: list[FidelityGrid]
    overhead: list[tuple[Run, list[OverheadRow]]]
    hosts: list[HostComparison]

    @property
    def machines(self) -> list[str]:
        return sorted({run.machine for run in self.runs})

    @property
    def commits(self) -> list[str]:
        return sorted({run.commit for run in self.runs})

    def library_versions(self) -> dict[str, list[str]]:
        """Every release of every library the shown results installed."""
        found: dict[str, set[str]] = defaultdict(set)
        for run in self.runs:
            for name, version in run.env.requirements:
                found[name].add(version)
        return {k: sorted(v, key=version_order) for k, v in sorted(found.items())}


def gather(tree: ResultsTree) -> ReportData:
    runs = latest_runs(tree)
    if not runs:
        where = ", ".join(sorted(tree.machines)) or "no machine folders"
        raise NoResults(f"no measured value in {tree.root} ({where})")
    snapshots: dict[str, list[SnapshotTable]] = defaultdict(list)
    for run in baseline_runs(runs):
        for fixture in run.fixtures:
            table = snapshot(run, fixture)
            if any(row.measured for row in table.rows):
                snapshots[fixture].append(table)
    ordered = {f: snapshots[f] for f in _ordered(snapshots, fixture_names())}
    return ReportData(
        tree,
        runs,
        ordered,
        library_views(runs, tree),
        fidelity_grids(runs),
        [(run, rows) for run in baseline_runs(runs) if (rows := overhead_rows(run))],
        host_comparisons(tree),
    )
