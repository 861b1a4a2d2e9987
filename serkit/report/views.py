"""What serkit's report shows, read from an asv results tree: data only.

`serkit.report.html` renders these views; nothing here formats or writes a page. The views
(runs in serkit.report.runs, library versions in serkit.report.versions, Pythons in
serkit.report.pythons, the steps both judge in serkit.report.steps):

- runs: per machine and environment, the newest commit that measured anything there;
- snapshot: per fixture, every codec against the suite's timings, instructions per call
  (where counted), sizes, memory per call (peak and allocations, with their check) and
  facts, from each baseline (per machine and Python, the newest release of every
  library measured there, each from its own environment: serkit.report.runs);
- library versions: per library, the same measurements per release, the release on
  the x axis, from that library's environments;
- Python versions: per machine, the baseline on each Python, oldest first, and every
  measurement judged from one Python to the next;
- history: per machine and Python, the baseline at every run over calendar time, each
  run against the one before (serkit.report.history);
- fidelity: exact or lossy, per codec and fixture, as the suite's fact track recorded it;
- hosts: `serkit compare` of each machine against the first, in one view;
- conformance: a saved `serkit conformance` run (not asv's), when there is one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from serkit.checks.conformance import RAN, CodecConformance, MatrixRow
from serkit.checks.conformance import findings as conformance_findings
from serkit.checks.conformance import matrix as conformance_matrix
from serkit.checks.conformance import verdict as conformance_verdict
from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY
from serkit.codecs.registry import registry
from serkit.compare.comparison import (
    Comparison,
    NothingToCompare,
    compare,
)
from serkit.compare.ranking import DEFAULT_MEASURE, Candidate, Ranking, rank
from serkit.compare.ranking import SIZE as SIZE_MEASURE
from serkit.inputs.fixtures import fixture_names

# Re-exported: the report's pages read every view from here.
from serkit.report.history import HistoryView, history_views
from serkit.report.pythons import PythonView, python_views
from serkit.report.runs import NoResults, Run, baseline_runs, in_registry_order, latest_runs
from serkit.report.versions import (
    LibraryView,
    library_views,
)
from serkit.results.builds import BuildFailure, machine_builds
from serkit.results.host_file import read_runs
from serkit.results.tree import Measurement, ResultsTree, version_order
from serkit.run.quick import leaves_out_in_words
from serkit.schemas.types import DERIVED, SUPPLIED, hash_text
from serkit.stats import Spread
from serkit.suite.benchmark_names import (
    ALLOCATIONS,
    COMPILED,
    COMPRESSED,
    DUMPS,
    IMPORT,
    INSTRUCTIONS,
    LOADS,
    MEMORY_CHECK,
    OVERHEAD,
    PEAK,
    ROUND_TRIP,
    ROUND_TRIP_EXACT,
    ROUND_TRIP_KEY_ORDER_ONLY,
    SCHEMA,
    SCHEMA_SUPPLIED,
    SIZE,
    TIME,
)
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
    *INSTRUCTIONS.values(),
    COMPILED,
    ROUND_TRIP_EXACT,
    ROUND_TRIP_KEY_ORDER_ONLY,
    SCHEMA,
    SCHEMA_SUPPLIED,
    IMPORT,
)
COMPRESSORS = ("gzip-6", "zstd-3")
REFERENCE_CODEC = "json"  # the posts normalized to the standard library's json
MEMORY_OPERATIONS = tuple(PEAK)


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
    # Each timing as shown: the median of its processes by state (Run.time), by operation.
    times: dict[str, float | None] = field(default_factory=dict)
    # Instructions per call under cachegrind, by operation; None where not counted.
    instructions: dict[str, float | None] = field(default_factory=dict)
    # The report's schema column: NONE, DERIVED or SUPPLIED (with `schema_sha256`),
    # NO_SCHEMA_RECORDED, or UNKNOWN for a codec this serkit does not know.
    schema: str = "none"
    schema_sha256: str | None = None  # its first digits, as the results recorded them
    format: str = ""  # the codec's format, where this serkit knows the codec
    # Of a lossy round trip: whether dict key order was all it lost (None: not recorded).
    key_order_only: bool | None = None
    # Each process's value of "dumps" and "loads", in the order asv ran them.
    processes: dict[str, tuple[float, ...]] = field(default_factory=dict)
    not_run: str = ""  # why the row has no value, where its declaration tells (not_run_reason)

    @property
    def fidelity_class(self) -> str | None:
        """EXACT, KEY_ORDER_ONLY or LOSSY (fidelity_class); None where not recorded."""
        if self.exact is None:
            return None
        if self.exact:
            return EXACT
        return KEY_ORDER_ONLY if self.key_order_only else LOSSY

    def candidate(self) -> Candidate:
        """This row as the ranking reads it (serkit.compare.ranking)."""

        def timed(operation: str, found: Measurement | None) -> tuple[float, ...]:
            if found is None or found.value is None:
                return ()
            return self.processes.get(operation) or (found.value,)

        sizes = {SIZE_MEASURE: self.size, **self.compressed}
        return Candidate(
            self.codec,
            self.fidelity_class,
            timed("dumps", self.dumps),
            timed("loads", self.loads),
            {name: size for name, size in sizes.items() if size is not None},
            why_not=self.not_run or "not measured",
        )

    @property
    def typed(self) -> bool:
        return self.schema in (DERIVED, SUPPLIED, NO_SCHEMA_RECORDED)

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

    @property
    def has_typed(self) -> bool:
        """Whether a schema codec and a schemaless one of the same format both decoded here."""
        formats = {
            True: {r.format for r in self.rows if r.typed and r.loads},
            False: {r.format for r in self.rows if not r.typed and r.loads},
        }
        return bool(formats[True] & formats[False])

    def ranking(self, measure: str = DEFAULT_MEASURE, *, exact_only: bool = False) -> Ranking:
        """The codecs in order by `measure` (serkit.compare.ranking's rules)."""
        return rank([row.candidate() for row in self.rows], measure, exact_only=exact_only)

    @cached_property
    def verdict(self) -> Ranking:
        """The report's ranking: by the round trip (dumps + loads), every class."""
        return self.ranking()

    @property
    def has_instructions(self) -> bool:
        """Whether this run counted instructions (opt-in: serkit bench --instructions)."""
        return any(v is not None for r in self.rows for v in r.instructions.values())


# The schema column's values: DERIVED and SUPPLIED are schemas.types' Schema.origin.
NONE, NO_SCHEMA_RECORDED, UNKNOWN = "none", "no schema recorded", "not known"


def schema_of(run: Run, codec: str, fixture: str) -> tuple[str, str | None]:
    """The schema column: none (a schemaless codec), derived or user-supplied with its
    hash, or not recorded. Results older than the origin's track hold derived ones only."""
    spec = registry.specs.get(codec)
    if spec is None:
        return UNKNOWN, None
    if not spec.needs_schema:
        return NONE, None
    recorded = run.value(SCHEMA, codec, fixture)
    if recorded is None:
        return NO_SCHEMA_RECORDED, None
    supplied = run.value(SCHEMA_SUPPLIED, codec, fixture)
    return (SUPPLIED if supplied else DERIVED), hash_text(recorded)


def not_run_reason(codec: str, fixture: str) -> str:
    """Why a default run does not time `codec` on `fixture`, as the codec declares
    (CodecSpec.fixtures: the schema codecs, on record-shaped fixtures); "" where it does."""
    spec = registry.specs.get(codec)
    if spec is None or spec.fixtures is None or fixture in spec.fixtures:
        return ""
    named = "only on fixtures a run names"
    where = f"on {', '.join(spec.fixtures)} only" if spec.fixtures else named
    return f"timed {where} by default; SERKIT_BENCH_FIXTURES={fixture} times it here"


def _processes(run: Run, benchmark: str, codec: str, fixture: str) -> tuple[float, ...]:
    """Each process's value, in the order asv ran them; () where asv kept no samples."""
    found, described = run.get(benchmark, codec, fixture), run.benchmarks.get(benchmark)
    if found is None or described is None:
        return ()
    return described.per_process(found.samples)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _fact(value: float | None) -> bool | None:
    return None if value is None else bool(value)


def snapshot(run: Run, fixture: str) -> SnapshotTable:
    """Every codec the run knows, on one fixture: one row each, measured or not."""
    ref_dumps = run.time(DUMPS, REFERENCE_CODEC, fixture)
    ref_loads = run.time(LOADS, REFERENCE_CODEC, fixture)
    rows = []
    registry.names()  # the specs are read on first use
    for codec in run.codecs:
        dumps, loads = run.get(DUMPS, codec, fixture), run.get(LOADS, codec, fixture)
        schema, schema_sha256 = schema_of(run, codec, fixture)
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
                dumps_vs_reference=_ratio(run.time(DUMPS, codec, fixture), ref_dumps),
                loads_vs_reference=_ratio(run.time(LOADS, codec, fixture), ref_loads),
                times={op: run.time(name, codec, fixture) for op, name in TIME.items()},
                spreads={
                    operation: run.spread(name, codec, fixture) for operation, name in TIME.items()
                },
                instructions={
                    op: run.value(name, codec, fixture) for op, name in INSTRUCTIONS.items()
                },
                schema=schema,
                schema_sha256=schema_sha256,
                format=registry.specs[codec].format if codec in registry.specs else "",
                key_order_only=_fact(run.value(ROUND_TRIP_KEY_ORDER_ONLY, codec, fixture)),
                not_run=not_run_reason(codec, fixture),
                processes={
                    operation: _processes(run, TIME[operation], codec, fixture)
                    for operation in ("dumps", "loads")
                },
            )
        )
    return SnapshotTable(fixture, run, rows)


# --- fidelity ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FidelityGrid:
    """Exact (True), lossy (False) or not run (None), per codec and fixture."""

    run: Run
    fixtures: list[str]  # those any codec's round trip was recorded on
    cells: dict[str, list[bool | None]]  # by codec, in `fixtures` order
    not_run: list[str] = field(default_factory=list)  # the suite's fixtures no codec ran on


def fidelity_grids(runs: Sequence[Run]) -> list[FidelityGrid]:
    """Each baseline's round trips; a fixture no codec ran on is named, not a column of
    blanks (a quick run's grid was 9 of 14 columns empty)."""
    grids = []
    for run in baseline_runs(runs):
        every = {
            codec: [_fact(run.value(ROUND_TRIP_EXACT, codec, f)) for f in run.fixtures]
            for codec in run.codecs
        }
        kept = [
            i for i in range(len(run.fixtures)) if any(row[i] is not None for row in every.values())
        ]
        if not kept:
            continue
        cells = {codec: [row[i] for i in kept] for codec, row in every.items()}
        not_run = [f for i, f in enumerate(run.fixtures) if i not in kept]
        grids.append(FidelityGrid(run, [run.fixtures[i] for i in kept], cells, not_run))
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


# --- JSON conformance ---------------------------------------------------------------------


@dataclass(frozen=True)
class ConformanceView:
    """A saved `serkit conformance` run: counts per codec, what each gets wrong, the matrix."""

    meta: dict[str, Any]  # the document's provenance: host, python, date, suite, limits
    results: dict[str, CodecConformance]
    findings: list[str]
    codecs: list[str]  # the matrix's columns: the codecs that ran
    matrix: list[MatrixRow]  # only the files where the codecs differ or one breaks the rule
    files: int  # in the suite, for "n of them" beside the matrix

    def counts(self, codec: str) -> dict[str, dict[str, int]]:
        return self.results[codec].counts()

    def verdict(self, codec: str) -> str:
        return conformance_verdict(self.results[codec])


def conformance_view(doc: dict[str, Any], results: dict[str, CodecConformance]) -> ConformanceView:
    meta = {key: value for key, value in doc.items() if key != "codecs"}
    rows = conformance_matrix(results)
    ran = [name for name, result in results.items() if result.status == RAN]
    return ConformanceView(
        meta, results, conformance_findings(results), ran, rows, int(doc["suite"]["files"])
    )


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
    # Environments that could not be built, by machine (serkit.results.builds).
    broken: list[tuple[str, BuildFailure]] = field(default_factory=list)
    pythons: list[PythonView] = field(default_factory=list)
    history: list[HistoryView] = field(default_factory=list)
    # Each shown run that was a quick one: what it left to `--full`, in words (run_plans).
    plans: list[RunPlan] = field(default_factory=list)

    def state_of(self, run: Run) -> str:
        """The machine's state while `run` timed its values, in words (serkit.state)."""
        return self.tree.state_share(run.values.values()).in_words()

    @property
    def machines(self) -> list[str]:
        return sorted({run.machine for run in self.runs})

    @property
    def commits(self) -> list[str]:
        return sorted({commit for run in self.runs for commit in run.commits})

    def plan_for(self, run: Run) -> RunPlan | None:
        """The quick plan of `run`, or of the first run composing it (a baseline) that
        was a quick run; None where each was a full run, or not recorded."""
        for part in (run, *run.parts):
            for plan in self.plans:
                if plan.run is part:
                    return plan
        return None

    def library_versions(self) -> dict[str, list[str]]:
        """Every release of every library the shown results installed."""
        found: dict[str, set[str]] = defaultdict(set)
        for run in self.runs:
            for name, version in run.env.requirements:
                found[name].add(version)
        return {k: sorted(v, key=version_order) for k, v in sorted(found.items())}


@dataclass(frozen=True)
class RunPlan:
    """What one shown run set out to measure, from its host record (serkit bench)."""

    run: Run
    kind: str  # "quick" or "full"
    recorded_at: str
    left_out: list[str]  # serkit.run.quick.leaves_out_in_words
    fixtures: list[str]  # the fixtures a quick run took
    left_measures: list[str] = field(default_factory=list)  # "the round trip", ... (FULL_ONLY)

    def left_out_of(self, fixture: str) -> list[str]:
        """The lines about one fixture's pairs ("yaml x twitter: not timed, ...")."""
        return [line for line in self.left_out if f" x {fixture}:" in line]


def run_plans(tree: ResultsTree, runs: Sequence[Run]) -> list[RunPlan]:
    """The quick runs among `runs`, and the full runs that left pairs out: each by the host
    record of the run that wrote its file."""
    out = []
    for run in runs:
        files = {m.file.name for m in run.values.values()}
        records = read_runs(tree.root / run.machine, tree.warnings) or []
        wrote = [r for r in records if files & set(r.get("results") or ())]
        plan = wrote[-1].get("plan") if wrote else None
        if isinstance(plan, dict) and plan.get("kind") == "quick":
            fixtures = [str(f) for f in plan.get("fixtures") or []]
            at = str(wrote[-1].get("recorded_at") or "")
            measures = [str(m) for m in plan.get("left_to_full") or []]
            words = leaves_out_in_words(plan)
            out.append(RunPlan(run, "quick", at, words, fixtures, measures))
        elif isinstance(plan, dict) and plan.get("kind") == "full" and plan.get("pairs_left_out"):
            # A full run's pairs predicted not worth timing (serkit.run.quick.plan_full).
            at = str(wrote[-1].get("recorded_at") or "")
            out.append(RunPlan(run, "full", at, leaves_out_in_words(plan), []))
    return out


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
    ordered = {f: snapshots[f] for f in in_registry_order(snapshots, fixture_names())}
    return ReportData(
        tree,
        runs,
        ordered,
        library_views(runs, tree),
        fidelity_grids(runs),
        [(run, rows) for run in baseline_runs(runs) if (rows := overhead_rows(run))],
        host_comparisons(tree),
        [
            (machine, failure)
            for machine in sorted(tree.machines)
            for failure in machine_builds(tree.root / machine, tree.warnings)
        ],
        python_views(runs, tree),
        history_views(tree),
        run_plans(tree, runs),
    )
