"""The report's snapshot: every codec on one fixture, from one baseline run: data only.

One row per codec the run knows, measured or not: the suite's timings against the
standard library's json, instructions per call (where counted), sizes, memory per call
(peak and allocations, with their check), the schema and the facts; and the table's
ranked verdict (serkit.compare.ranking). serkit.report.views gathers the tables,
serkit.report.html and serkit.report.snapshot_charts show them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Any

from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY, check_round_trip, load_document
from serkit.codecs.registry import registry, unsafe_on_untrusted_bytes
from serkit.compare.ranking import DEFAULT_MEASURE, Candidate, Ranking, rank
from serkit.compare.ranking import DUMPS as DUMPS_MEASURE
from serkit.compare.ranking import LOADS as LOADS_MEASURE
from serkit.compare.ranking import ROUND_TRIP as ROUND_TRIP_MEASURE
from serkit.compare.ranking import SIZE as SIZE_MEASURE
from serkit.errors import SerkitError
from serkit.report.runs import Run
from serkit.results.tree import Measurement
from serkit.sample_speed import ProcessValue
from serkit.schemas.types import DERIVED, SUPPLIED, hash_text
from serkit.stats import Spread, spread
from serkit.suite.benchmark_names import (
    ALLOCATIONS,
    COMPILED,
    COMPRESSED,
    DUMPS,
    INSTRUCTIONS,
    LOADS,
    MEMORY_CHECK,
    PEAK,
    ROUND_TRIP,
    ROUND_TRIP_EXACT,
    ROUND_TRIP_KEY_ORDER_ONLY,
    SCHEMA,
    SCHEMA_SUPPLIED,
    SIZE,
    TIME,
)

COMPRESSORS = ("gzip-6", "zstd-3")
REFERENCE_CODEC = "json"  # the posts normalized to the standard library's json
MEMORY_OPERATIONS = tuple(PEAK)


@dataclass(frozen=True)
class RoundTrip:
    """A row's round trip as the table shows it: timed itself, or dumps + loads."""

    value: float
    between: Spread | None  # between the processes (each its dumps + loads, when summed)
    summed: bool  # True: not timed itself, the sum of dumps and loads the verdict ranks by


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
    # Each process's value of "dumps" and "loads", in the order asv ran them, and what
    # each counts for in the ranking's test (serkit.sample_speed.judging_weight).
    processes: dict[str, tuple[float, ...]] = field(default_factory=dict)
    weights: dict[str, tuple[float, ...]] = field(default_factory=dict)
    not_run: str = ""  # why the row has no value, where its declaration tells (not_run_reason)
    lost: str = ""  # of a lossy round trip, what it changed, where known (lost_in)

    @property
    def unsafe(self) -> bool:
        return unsafe_on_untrusted_bytes(self.codec)

    @property
    def fidelity_class(self) -> str | None:
        """EXACT, KEY_ORDER_ONLY or LOSSY (fidelity_class); None where not recorded."""
        return fidelity_class(self.exact, self.key_order_only)

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
            dumps_weights=self.weights.get("dumps", ()),
            loads_weights=self.weights.get("loads", ()),
            shown={
                measure: shown
                for measure, shown in (
                    (DUMPS_MEASURE, self.times.get("dumps")),
                    (LOADS_MEASURE, self.times.get("loads")),
                )
                if shown is not None
            },
            unsafe=self.unsafe,
            lost=self.lost,
        )

    @property
    def summed_round_trip(self) -> RoundTrip | None:
        """The table's dumps + loads, the figure the verdict quotes (serkit.compare.ranking),
        with the spread of each process's own dumps + loads."""
        dumps, loads = self.times.get("dumps"), self.times.get("loads")
        if dumps is None or loads is None:
            return None
        sums = self.candidate().values(ROUND_TRIP_MEASURE)
        return RoundTrip(dumps + loads, spread(sums) if sums else None, summed=True)

    @property
    def round_trip_shown(self) -> RoundTrip | None:
        """The round trip timed itself where the run timed it, else summed_round_trip."""
        timed = self.times.get("round_trip")
        if timed is not None:
            return RoundTrip(timed, self.spreads.get("round_trip"), summed=False)
        return self.summed_round_trip

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

    def ranking(
        self, measure: str = DEFAULT_MEASURE, *, exact_only: bool = False, safe_only: bool = False
    ) -> Ranking:
        """The codecs in order by `measure` (serkit.compare.ranking's rules)."""
        candidates = [row.candidate() for row in self.rows]
        return rank(candidates, measure, exact_only=exact_only, safe_only=safe_only)

    @cached_property
    def verdict(self) -> Ranking:
        """The report's ranking: by the round trip (dumps + loads), every class."""
        return self.ranking()

    @property
    def rows_in_verdict_order(self) -> list[SnapshotRow]:
        """The table's rows as the verdict above it reads: the ranked codecs in its order,
        then those it left out, then those not measured (each of these in the run's order)."""
        ranked = [c for tier in self.verdict.tiers for c in tier.codecs]
        by_codec = {row.codec: row for row in self.rows}
        rest = [row for row in self.rows if row.codec not in ranked]
        return (
            [by_codec[c] for c in ranked if c in by_codec]
            + [row for row in rest if row.measured]
            + [row for row in rest if not row.measured]
        )

    @property
    def round_trips_summed(self) -> frozenset[bool]:
        """Of the round trips shown (RoundTrip.summed): {True} when none was timed itself,
        {False} when each was, both when the table mixes them."""
        return frozenset(t.summed for row in self.rows if (t := row.round_trip_shown))

    def verdict_leaders(self, most: int = 5) -> list[tuple[str, SnapshotRow]]:
        """What the Overview's chart shows, with each codec's class: the first `most` codecs
        of the verdict's first class, then the fastest of each class ranked apart."""
        by_codec = {row.codec: row for row in self.rows}
        return [
            (tier.fidelity, by_codec[codec])
            for i, tier in enumerate(self.verdict.tiers)
            for codec in tier.codecs[: most if i == 0 else 1]
            if codec in by_codec
        ]

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


@lru_cache(maxsize=1)  # a table's rows come fixture by fixture: each built once, not kept
def _document(fixture: str) -> Any:
    return load_document(fixture)


@cache
def lost_in(codec: str, fixture: str) -> str:
    """What `codec`'s round trip of `fixture` changed, in a few words ("namedtuple->list"),
    as this serkit's fidelity check finds it now: a results tree records only that it was
    lossy. "" where it cannot tell: the codec or the fixture is not here, or the check
    finds no loss other than key order (the run's release may differ from this one's)."""
    try:
        found = check_round_trip(codec, fixture, _document(fixture))
    except SerkitError:
        return ""
    return ", ".join(d.kind for d in found.differences) if found.fidelity_class == LOSSY else ""


def _processes(run: Run, benchmark: str, codec: str, fixture: str) -> tuple[ProcessValue, ...]:
    """Each process's value, judged by the machine's state and grouped by the file's own
    plan as the time and spread beside it are (Run.spread); () where asv kept no samples."""
    found = run.get(benchmark, codec, fixture)
    return found.processes if found is not None else ()


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _lost(run: Run, codec: str, fixture: str) -> str:
    """What a round trip the run recorded as lossy (not in key order only) changed."""
    lossy = as_fact(run.value(ROUND_TRIP_EXACT, codec, fixture)) is False
    order_only = as_fact(run.value(ROUND_TRIP_KEY_ORDER_ONLY, codec, fixture))
    return lost_in(codec, fixture) if lossy and not order_only else ""


def as_fact(value: float | None) -> bool | None:
    """A fact track's 0 or 1 as False or True; None where it was not recorded."""
    return None if value is None else bool(value)


def fidelity_class(exact: bool | None, key_order_only: bool | None) -> str | None:
    """EXACT, KEY_ORDER_ONLY or LOSSY from a round trip's two facts; None where not recorded.
    Every page words it by verdict_words.class_words, so that a codec reads alike on each."""
    if exact is None:
        return None
    if exact:
        return EXACT
    return KEY_ORDER_ONLY if key_order_only else LOSSY


def snapshot(run: Run, fixture: str) -> SnapshotTable:
    """Every codec the run knows, on one fixture: one row each, measured or not."""
    ref_dumps = run.time(DUMPS, REFERENCE_CODEC, fixture)
    ref_loads = run.time(LOADS, REFERENCE_CODEC, fixture)
    rows = []
    registry.names()  # the specs are read on first use
    for codec in run.codecs:
        dumps, loads = run.get(DUMPS, codec, fixture), run.get(LOADS, codec, fixture)
        schema, schema_sha256 = schema_of(run, codec, fixture)
        states = {op: _processes(run, TIME[op], codec, fixture) for op in ("dumps", "loads")}
        rows.append(
            SnapshotRow(
                codec=codec,
                version=run.version_of(codec),
                compiled=as_fact(run.value(COMPILED, codec)),
                exact=as_fact(run.value(ROUND_TRIP_EXACT, codec, fixture)),
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
                    op: as_fact(run.value(MEMORY_CHECK[op], codec, fixture))
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
                key_order_only=as_fact(run.value(ROUND_TRIP_KEY_ORDER_ONLY, codec, fixture)),
                not_run=not_run_reason(codec, fixture),
                lost=_lost(run, codec, fixture),
                processes={op: tuple(p.value for p in found) for op, found in states.items()},
                weights={op: tuple(p.weight for p in found) for op, found in states.items()},
            )
        )
    return SnapshotTable(fixture, run, rows)
