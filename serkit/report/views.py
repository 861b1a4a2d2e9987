"""What serkit's report shows, read from an asv results tree: data only.

`serkit.report.html` renders these views; nothing here formats or writes a page. The views
(runs in serkit.report.runs, library versions in serkit.report.versions, Pythons in
serkit.report.pythons, the steps both judge in serkit.report.steps):

- runs: per machine and environment, the newest commit that measured anything there;
- snapshot: per fixture, every codec against the suite's timings, instructions per call
  (where counted), sizes, memory per call (peak and allocations, with their check) and
  facts, from each baseline (per machine and Python, the newest release of every
  library measured there, each from its own environment: serkit.report.runs), built
  in serkit.report.snapshot;
- library versions: per library, the same measurements per release, the release on
  the x axis, from that library's environments;
- Python versions: per machine, the baseline on each Python, oldest first, and every
  measurement judged from one Python to the next;
- history: per machine and Python, the baseline at every run over calendar time, each
  run against the one before (serkit.report.history);
- fidelity: exact, lossy in dict key order only or lossy, per codec and fixture, as the
  suite's fact tracks recorded it;
- hosts: `serkit compare` of each machine against the first, in one view;
- conformance: a saved `serkit conformance` run (not asv's), when there is one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from serkit.checks.conformance import RAN, CodecConformance, MatrixRow
from serkit.checks.conformance import findings as conformance_findings
from serkit.checks.conformance import matrix as conformance_matrix
from serkit.checks.conformance import verdict as conformance_verdict
from serkit.compare.comparison import (
    Comparison,
    NothingToCompare,
    compare,
)
from serkit.inputs.fixtures import fixture_names

# Re-exported: the report's pages read every view from here.
from serkit.report.history import HistoryView, history_views
from serkit.report.pythons import PythonView, python_views
from serkit.report.runs import NoResults, Run, baseline_runs, in_registry_order, latest_runs
from serkit.report.snapshot import SnapshotTable, as_fact, fidelity_class, snapshot
from serkit.report.versions import (
    LibraryView,
    library_views,
)
from serkit.results.builds import BuildFailure, machine_builds
from serkit.results.host_file import read_runs
from serkit.results.tree import Measurement, ResultsTree, version_order
from serkit.run.quick import leaves_out_in_words, prediction_basis
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
# --- fidelity ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FidelityGrid:
    """Each round trip's class (snapshot.fidelity_class), or None: not run; per codec and
    fixture."""

    run: Run
    fixtures: list[str]  # those any codec's round trip was recorded on
    cells: dict[str, list[str | None]]  # by codec, in `fixtures` order
    not_run: list[str] = field(default_factory=list)  # the suite's fixtures no codec ran on


def fidelity_grids(runs: Sequence[Run]) -> list[FidelityGrid]:
    """Each baseline's round trips; a fixture no codec ran on is named, not a column of
    blanks (a quick run's grid was 9 of 14 columns empty)."""
    grids = []
    for run in baseline_runs(runs):
        every = {
            codec: [
                fidelity_class(
                    as_fact(run.value(ROUND_TRIP_EXACT, codec, f)),
                    as_fact(run.value(ROUND_TRIP_KEY_ORDER_ONLY, codec, f)),
                )
                for f in run.fixtures
            ]
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
    plans: list[RunIntent] = field(default_factory=list)

    def state_of(self, run: Run) -> str:
        """The machine's state while `run` timed its values, in words (serkit.sample_speed)."""
        return self.tree.state_share(run.values.values()).in_words()

    @property
    def machines(self) -> list[str]:
        return sorted({run.machine for run in self.runs})

    @property
    def commits(self) -> list[str]:
        return sorted({commit for run in self.runs for commit in run.commits})

    def plan_for(self, run: Run) -> RunIntent | None:
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
class RunIntent:
    """What one shown run set out to measure, from its host record (serkit bench)."""

    run: Run
    kind: str  # "quick" or "full"
    recorded_at: str
    left_out: list[str]  # serkit.run.quick.leaves_out_in_words
    fixtures: list[str]  # the fixtures a quick run took
    left_measures: list[str] = field(default_factory=list)  # "the round trip", ... (FULL_ONLY)
    predicted: str = ""  # how the pairs left out were predicted (serkit.run.quick.prediction_basis)

    def left_out_of(self, fixture: str) -> list[str]:
        """The lines about one fixture's pairs ("yaml x twitter: not timed, ...")."""
        return [line for line in self.left_out if f" x {fixture}:" in line]


def run_plans(tree: ResultsTree, runs: Sequence[Run]) -> list[RunIntent]:
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
            out.append(
                RunIntent(run, "quick", at, words, fixtures, measures, prediction_basis(plan))
            )
        elif isinstance(plan, dict) and plan.get("kind") == "full" and plan.get("pairs_left_out"):
            # A full run's pairs predicted not worth timing (serkit.run.quick.plan_full).
            at = str(wrote[-1].get("recorded_at") or "")
            words = leaves_out_in_words(plan)
            out.append(RunIntent(run, "full", at, words, [], predicted=prediction_basis(plan)))
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
