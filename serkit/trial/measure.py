"""`serkit try`: every codec on the user's own documents, measured here, without asv.

Each codec's pair is prepared as the asv suite prepares it
(:func:`serkit.suite.preparation.prepare_object`), and the round trip that preparation makes
also decides fidelity (:func:`serkit.checks.fidelity.judge_round_trip`).

Then each codec is timed in processes of its own, forked from this one, as `serkit bench`
times a pair: each process makes a warm call of dumps and of loads, then takes
SAMPLES_PER_PROCESS samples of each in turn, each between two readings of the canary
(serkit.suite.canary). Samples and canary are timed by the thread's CPU time (CLOCK): on
a shared host other processes preempt a timed call, which a wall clock counts and a 20 µs
canary seldom sees, while a call's CPU time leaves them out and still slows with the
vCPU's state (in forked processes at a load average of 12-14, 2026-11-29, one call's
least sample per process spread 43-45 % by the wall clock, 9-12 % by CPU time, in 12
processes each, interleaved). Every process is judged as a results tree's are
(serkit.results.judging): its value from its samples taken in the machine's fast state,
else corrected from its slow ones, and weighed in the verdict by the state it was timed
in. This VM's two vCPUs each flip between a fast state and one about 1.7x slower, on a
scale of 0.1-60 s: in one process, every codec's samples fell in both states and each run
named another winner. Several processes a codec, run one at a time in a random order
across the codecs, let neither one slow process nor one slow stretch decide a run.

The answer must come in well under a minute, so the document gets at most TARGET_S,
preparing included. A first pass gives FIRST_PROCESSES processes to each codec, the
cheapest first while its share of the time lasts (a codec none fit is reported from its
first call). Each further pass gives one process to each codec whose place
is not yet decided: ranked in a group that the verdict test tied only within more than
PRECISION, the groups nearest the top first. A run ends at its budget, or once every
place is decided.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from serkit.checks.fidelity import (
    ERROR,
    EXACT,
    LOSSY,
    NOT_INSTALLED,
    UNSUPPORTED,
    FidelityResult,
    failed,
    judge_round_trip,
)
from serkit.checks.workers import Forked, one_line, run_forked
from serkit.codecs.registry import (
    RoundTrip,
    codec_names,
    get_codec,
    registry,
    unsafe_on_untrusted_bytes,
)
from serkit.compare.ranking import (
    DEFAULT_MEASURE,
    DUMPS,
    LOADS,
    TIMINGS,
    Candidate,
    Ranking,
    rank,
)
from serkit.errors import NoSchema, SerkitError
from serkit.inputs.documents import Document, read_document
from serkit.inputs.hashing import content_hash
from serkit.progress import progress
from serkit.results.judging import judge
from serkit.results.measurement import Benchmark, Environment, Measurement
from serkit.run.process import Interrupted
from serkit.sample_speed import (
    CORRECTED,
    FROM_FAST,
    RAW,
    ProcessValue,
    StateShare,
    reading,
    reference,
    state_share,
)
from serkit.schemas.derive import derive
from serkit.schemas.types import Schema
from serkit.stats import quartiles
from serkit.suite.canary import canary_ns
from serkit.suite.cases import COMPRESSORS
from serkit.suite.preparation import Case, prepare_object, settle_allocator
from serkit.units import plural, seconds

# Per document, preparing included; the command's start and reading the file come on top
# (2.5-5.7 s at load averages of 10-16 here, 2026-11-29): a run in 30 s.
TARGET_S = 24.0
MIN_SAMPLING_S = 3.0  # sampling still gets this much (at most its share) after preparing
# Each timed process takes this many samples of dumps and of loads, each about SAMPLE_S
# long: short, as `serkit bench`'s are, so that few straddle a change of state.
SAMPLES_PER_PROCESS = 5
SAMPLE_S = 0.001
CLOCK, CLOCK_NS = time.thread_time, time.thread_time_ns  # see the module
FIRST_PROCESSES = 3  # every codec's in the first pass: the verdict test needs two a side
MAX_PROCESSES = 40  # a codec's most in one run, however long it stays undecided
FIRST_PASS_SHARE = 0.5  # of the sampling time, for the first pass; the rest is targeted
# A tie within this is decided ("cannot be told apart at the precision a quick run aims
# at"); a wider one is not, and its codecs get more processes.
PRECISION = 0.10
PASS_CODECS = 6  # codecs given a process each in one further pass, nearest the top first
# A process is killed at this many times its predicted cost (and never sooner than
# PROCESS_FLOOR_S): a call that hangs costs the run one process, not its budget.
PROCESS_LIMIT = 4.0
PROCESS_FLOOR_S = 2.0
# Sampling time one codec may take in the first pass: more buys little for a call already
# this slow beside the others, and a small document should not wait on pure-Python YAML.
KEY_CAP_S = 2.0
OPERATIONS = ("dumps", "loads")
# Rows that ran come first, fastest first; then the rest in this order.
_STATUS_ORDER = (EXACT, LOSSY, UNSUPPORTED, ERROR, NOT_INSTALLED)

Key = tuple[str, str]  # (codec, operation)
Reading = tuple[float, float, float]  # a sample: seconds per call, canary ns before, after
Process = Mapping[str, Sequence[Reading]]  # one timed process's samples, by operation
_K = TypeVar("_K")


@dataclass(frozen=True)
class Timing:
    """One call on the document: every sample its processes took, process after process,
    with the canary's readings around each, and each process as judged."""

    samples: tuple[float, ...]  # seconds per call
    calls_per_sample: int = 1
    # No process fit its share of the budget: the only figure is the first, cold call
    # that preparing the pair made.
    first_call_only: bool = False
    canary: tuple[tuple[float, float], ...] = ()  # ns before and after each sample
    per_process: int = 0  # samples each process took; 0: not taken by processes
    processes: tuple[ProcessValue, ...] = ()  # judged as a results tree's (`judged`)

    @property
    def values(self) -> tuple[float, ...]:
        """What the verdict ranks and the table shows: each process's value as judged;
        each sample where no process was judged."""
        return tuple(p.value for p in self.processes) or self.samples

    @property
    def weights(self) -> tuple[float, ...]:
        """What each of `values` counts for in the verdict test; () where not judged."""
        return tuple(p.weight for p in self.processes)

    @property
    def quartiles(self) -> tuple[float, float, float]:
        return quartiles(self.values)

    @property
    def median(self) -> float:
        return self.quartiles[1]


@dataclass(frozen=True)
class CodecTrial:
    """One codec on one document: what it did, how fast, and how small."""

    codec: str
    format: str
    library: str
    fidelity: FidelityResult  # status, why (detail), bytes, options, implementation, version
    pure_python_by_design: bool = False
    dumps: Timing | None = None
    loads: Timing | None = None
    compressed: Mapping[str, int] = field(default_factory=dict)  # COMPRESSORS name -> bytes

    @property
    def status(self) -> str:
        return self.fidelity.status

    @property
    def round_trip_s(self) -> float | None:
        """Median dumps plus median loads: what the table is ordered by."""
        if self.dumps is None or self.loads is None:
            return None
        return self.dumps.median + self.loads.median

    def as_dict(self) -> dict[str, Any]:
        result = self.fidelity
        return {
            "codec": self.codec,
            "format": self.format,
            "library": self.library,
            "version": result.version,
            "implementation": result.implementation,
            "pure_python_by_design": self.pure_python_by_design,
            "status": result.status,
            "why": result.detail,
            "options": result.options,
            "bytes": result.bytes,
            "compressed_bytes": dict(self.compressed),
            "dumps": timing_dict(self.dumps),
            "loads": timing_dict(self.loads),
        }


@dataclass(frozen=True)
class DocumentTrial:
    """Every codec on one document, fastest first."""

    path: str
    format: str
    bytes: int  # the file's size
    content_sha256: str | None  # None when the document holds types the hash cannot pin
    codecs: tuple[CodecTrial, ...]
    wall_s: float
    budget_s: float
    max_processes: int
    key_cap_s: float
    # The schema derived from it, which the schema codecs ran under; else why none fits.
    schema_sha256: str | None = None
    no_schema: str = ""
    # How much of the run's samples the machine spent in its slow state; None: none taken.
    state: StateShare | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "bytes": self.bytes,
            "content_sha256": self.content_sha256,
            "schema_sha256": self.schema_sha256,
            "no_schema": self.no_schema,
            "wall_s": round(self.wall_s, 2),
            "budget_s": self.budget_s,
            "max_processes": self.max_processes,
            "key_cap_s": self.key_cap_s,
            "machine_state": self.state.in_words() if self.state else None,
            "codecs": [c.as_dict() for c in self.codecs],
        }


def timing_dict(timing: Timing | None) -> dict[str, Any] | None:
    """A timing for JSON: its quartiles in seconds, and how it was sampled and judged."""
    if timing is None:
        return None
    q1, median, q3 = timing.quartiles
    return {
        "median_s": median,
        "q1_s": q1,
        "q3_s": q3,
        "samples": len(timing.samples),
        "calls_per_sample": timing.calls_per_sample,
        "first_call_only": timing.first_call_only,
        "processes": len(timing.processes),
        "samples_per_process": timing.per_process,
        # How each process's value was taken (serkit.sample_speed): from fast samples,
        # corrected from slow ones, or raw where no state was known.
        "processes_by_state": {
            how: sum(p.how == how for p in timing.processes) for how in (FROM_FAST, CORRECTED, RAW)
        },
    }


# --- the verdict as it stands ---------------------------------------------------------


def candidate(trial: CodecTrial) -> Candidate:
    """One row as the ranking reads it: its processes' values and weights, and its sizes."""
    sizes = {"size": trial.fidelity.bytes, **trial.compressed}
    dumps, loads = trial.dumps, trial.loads
    measured = dumps is not None and loads is not None
    lost = trial.fidelity.differences if trial.fidelity.fidelity_class == LOSSY else ()
    return Candidate(
        trial.codec,
        trial.fidelity.fidelity_class,
        dumps.values if measured and dumps else (),
        loads.values if measured and loads else (),
        {name: size for name, size in sizes.items() if size is not None},
        why_not=_why_not(trial),
        dumps_weights=dumps.weights if measured and dumps else (),
        loads_weights=loads.weights if measured and loads else (),
        # The medians the table shows (render.timing_text), which the verdict quotes.
        shown={
            operation: timing.median
            for operation, timing in ((DUMPS, dumps), (LOADS, loads))
            if measured and timing is not None
        },
        unsafe=unsafe_on_untrusted_bytes(trial.codec),
        lost=", ".join(d.kind for d in lost),
    )


def _why_not(trial: CodecTrial) -> str:
    """In a few words, for the verdict's "not ranked" (the table's row says it in full)."""
    if trial.status == ERROR and "share of the" in (trial.fidelity.detail or ""):
        return "not measured within the time budget"
    return trial.status


def undecided(ranked: Ranking, precision: float = PRECISION) -> list[tuple[str, ...]]:
    """The groups whose order the verdict has not decided, nearest the top first: each of
    several codecs that the test tied only within more than `precision` (the first group
    of every class, then the second, ...)."""
    open_groups = [
        (position, tier_at, group.codecs)
        for tier_at, tier in enumerate(ranked.tiers)
        for position, group in enumerate(tier.groups)
        if len(group.codecs) > 1 and (group.within is None or group.within > precision)
    ]
    return [codecs for *_, codecs in sorted(open_groups)]


# --- timing processes -----------------------------------------------------------------


def cpu_canary_ns() -> int:
    """One canary reading by CLOCK_NS."""
    return canary_ns(CLOCK_NS)


def time_process(
    case: Case, numbers: Mapping[str, int], canary: Callable[[], int] = cpu_canary_ns
) -> dict[str, list[Reading]]:
    """One timed process (in a child forked for it): a warm call of each operation, then
    SAMPLES_PER_PROCESS samples of each in turn, `numbers[operation]` calls a sample, each
    between two canary readings, as `serkit bench`'s clock takes them (by CLOCK)."""
    timers = {
        operation: timeit.Timer(case.operation(operation), timer=CLOCK) for operation in OPERATIONS
    }
    for operation in OPERATIONS:  # pages copied from the parent, caches filled: untimed
        case.operation(operation)()
    taken: dict[str, list[Reading]] = {operation: [] for operation in OPERATIONS}
    for _ in range(SAMPLES_PER_PROCESS):
        for operation, timer in timers.items():
            number = numbers[operation]
            before = canary()
            elapsed = timer.timeit(number)
            after = canary()
            taken[operation].append((elapsed / number, before, after))
    return taken


def calls_per_sample(case: Case, operation: str) -> tuple[int, float]:
    """Calls making one sample of about SAMPLE_S, and the seconds one call takes."""
    call_s = case.best_call_s(operation)
    return max(1, round(SAMPLE_S / max(call_s, 1e-9))), call_s


def plan_samples(
    costs: Mapping[_K, float], budget_s: float, max_rounds: int, key_cap_s: float = math.inf
) -> dict[_K, int]:
    """Rounds per key within `budget_s`: the cheapest keys first, each as many as
    `max_rounds`, and no more than `key_cap_s` pays for, while the budget lasts.

    So a short budget measures the cheapest codecs well rather than every codec once or
    none (a fair share each, on a megabyte, paid for no codec's process at all); the
    cap keeps a slow call from taking what the others need. A key may get 0.
    """
    counts: dict[_K, int] = {}
    left = budget_s
    for key in sorted(costs, key=lambda key: costs[key]):
        cost = max(costs[key], 1e-9)
        counts[key] = min(max_rounds, math.floor(min(key_cap_s, left) / cost))
        left -= counts[key] * cost
    return counts


def sample_processes(
    costs: Mapping[str, float],
    take: Callable[[str], Process | None],
    still_open: Callable[[Mapping[str, Sequence[Process]]], Sequence[Sequence[str]]],
    sampling_s: float,
    *,
    clock: Callable[[], float] = timeit.default_timer,
    rng: random.Random | None = None,
    max_processes: int = MAX_PROCESSES,
    key_cap_s: float = KEY_CAP_S,
    tick: Callable[[str], None] = lambda doing: None,
) -> dict[str, list[Process]]:
    """Each codec's processes within `sampling_s`: `take(codec)` times one (None where it
    failed), `costs` predicts each codec's, and `still_open(taken)` names the groups of
    codecs whose order is undecided, nearest the top first (see the module).

    The first pass is planned (`plan_samples`, FIRST_PASS_SHARE of the time), round by
    round in a random order; each further pass gives one process to each of the first
    PASS_CODECS codecs still open, in a random order: those the first pass could not fit
    (within `key_cap_s` each), cheapest first, then the undecided group by group, and in a
    group those with the fewest processes first, since the least known widen a tie most. No process
    starts that its predicted cost would carry past the end; a codec's cost is what its
    last process took.
    """
    rng = rng or random.Random()
    end = clock() + sampling_s
    cost = dict(costs)
    taken: dict[str, list[Process]] = {codec: [] for codec in costs}
    failures: dict[str, int] = dict.fromkeys(costs, 0)
    spent: dict[str, float] = dict.fromkeys(costs, 0.0)

    def run(codec: str) -> None:
        if cost[codec] > end - clock():
            return
        start = clock()
        found = take(codec)
        cost[codec] = max(clock() - start, 1e-6)
        spent[codec] += cost[codec]
        if found is None:
            failures[codec] += 1
        else:
            taken[codec].append(found)

    planned = plan_samples(cost, sampling_s * FIRST_PASS_SHARE, FIRST_PROCESSES, key_cap_s)
    for round_ in range(max(planned.values(), default=0)):
        tick(f"first pass, round {round_ + 1} of {FIRST_PROCESSES}")
        codecs = [codec for codec, count in planned.items() if count > round_]
        for codec in rng.sample(codecs, len(codecs)):
            run(codec)

    def eligible(codec: str) -> bool:
        # Codecs failing twice are left as they are: a process killed for time, or crashed.
        return (
            len(taken[codec]) < max_processes
            and failures[codec] < 2
            and cost[codec] <= end - clock()
        )

    while True:
        # First the codecs the first pass could not fit, as their costs now allow (a plan
        # rests on predictions), then the undecided.
        behind = sorted(
            (
                c
                for c in cost
                if len(taken[c]) < FIRST_PROCESSES and spent[c] + cost[c] <= key_cap_s
            ),
            key=lambda codec: cost[codec],
        )
        targeted = [
            codec
            for group in still_open(taken)
            for codec in sorted(group, key=lambda codec: len(taken[codec]))
            if taken[codec]
        ]
        open_ = [c for c in dict.fromkeys([*behind, *targeted]) if eligible(c)][:PASS_CODECS]
        if not open_:
            return taken
        tick(f"{plural(len(open_), 'codec')} undecided")
        for codec in rng.sample(open_, len(open_)):
            run(codec)


# --- bounding each codec ---------------------------------------------------------------

PREPARE_SHARE = 0.6  # of the budget, for preparing every codec; sampling gets the rest
PROBE_ITEMS = 64  # a document with at least this many top-level items is probed on a slice
PROBE_FRACTION = 1 / 32
# The least a probe may take, by the wall clock that kills it: at load averages of 6-16 here
# (2026-11-29), a 133 ms limit killed slices that take milliseconds of CPU (msgspec-msgpack,
# rapidjson) in some runs and not in others, and the codecs measured changed run to run.
PROBE_FLOOR_S = 0.5
COMPARE_FLOOR_S = 1.0  # for comparing what a codec gave back, however small its share
CHEAP_PREPARE_S = 0.1  # preparing a codec this quick goes on past preparing's share


def probe_slice(obj: Any) -> tuple[Any, float] | None:
    """A small slice of a large top-level list or mapping, and how much bigger the whole is."""
    if not isinstance(obj, (list, dict)) or len(obj) < PROBE_ITEMS:
        return None
    size = max(1, int(len(obj) * PROBE_FRACTION))
    part = obj[:size] if isinstance(obj, list) else dict(list(obj.items())[:size])
    return part, len(obj) / size


_T = TypeVar("_T")


def _skipped(facts: Mapping[str, Any], label: str, detail: str) -> CodecTrial:
    fidelity = FidelityResult(facts["codec"], label, ERROR, detail=detail)
    return CodecTrial(fidelity=fidelity, **facts)


def _not_measured(outcome: Forked[Any], share_s: float, budget_s: float) -> str:
    """One line for a codec stopped by its share of the time, memory, the stack, or a crash."""
    raised = outcome.raised
    if outcome.timed_out:
        return (
            f"ran past its {seconds(share_s)} share of the {seconds(budget_s)} budget: not measured"
        )
    if isinstance(raised, MemoryError):
        return "ran out of memory: not measured"
    if isinstance(raised, RecursionError):
        return "nested too deep for it (RecursionError): not measured"
    if raised is not None:
        return f"crashed ({type(raised).__name__}: {one_line(str(raised))[:120]}): not measured"
    return f"crashed (its process ended by {outcome.died}): not measured"


def _probe(name: str, label: str, obj: Any, schema: Schema | None = None) -> float:
    """Predicted seconds to prepare `obj`, from a slice of it; 0 for a small document.

    A schema codec builds its types first, once, untimed: that cost does not grow with the
    document. A slice of a list has the whole list's schema; a slice of a record may lack
    its required fields, and is given its own.
    """
    sliced = probe_slice(obj)
    if sliced is None:
        return 0.0
    part, scale = sliced
    if schema is not None and get_codec(name).needs_schema and isinstance(obj, list):
        get_codec(name).with_schema(schema)
    else:
        schema = None
    start = CLOCK()  # CPU time: a turn another process took would inflate it, and place it last
    prepare_object(name, label, part, keep_decoded=True, schema=schema)
    return (CLOCK() - start) * scale


@dataclass(frozen=True)
class _Prepared:
    """What a codec's preparation in its own process brings back: all but the decoded copy."""

    config_index: int  # of the codec's configs, bound again here
    payload: bytes
    prepare_s: float
    dumps_s: float
    loads_s: float | None
    fidelity: FidelityResult  # judged where the decoded copy was
    prepare_cpu_s: float  # preparing, by CLOCK: what a probe's prediction is held to


def _prepare_and_judge(name: str, label: str, obj: Any, schema: Schema | None) -> _Prepared:
    """Prepare the pair and judge its round trip (in a forked child: `_isolated`)."""
    start = CLOCK()
    case = prepare_object(name, label, obj, keep_decoded=True, schema=schema)
    cpu_s = CLOCK() - start
    bound = case.bound or get_codec(name)  # a schema codec as bound to the schema
    trip = RoundTrip(case.config, case.payload, case.decoded)
    judged = judge_round_trip(bound, label, obj, trip)
    index = bound.configs.index(case.config)
    timed = (case.prepare_s, case.dumps_s, case.loads_s)
    return _Prepared(index, case.payload, *timed, judged, cpu_s)


def _isolated(work: Callable[[], _T], share_s: float) -> Forked[_T]:
    """`work()` in a process of its own, within `share_s`; a SerkitError it raised (not
    installed, cannot encode or decode) is raised here, as it would have been."""
    outcome = run_forked(work, share_s)
    if isinstance(outcome.raised, SerkitError):
        raise outcome.raised
    return outcome


# --- one document ---------------------------------------------------------------------


def _prepared(
    codecs: Sequence[str],
    label: str,
    obj: Any,
    budget_s: float = math.inf,
    bool_keys: Sequence[tuple[str, bool]] = (),
    schema: Schema | None = None,
    tick: Callable[[str], None] = lambda doing: None,
    started: float | None = None,
) -> tuple[dict[str, Case], dict[str, CodecTrial]]:
    """Prepare every codec's pair; the round trip also decides its fidelity.

    Preparing may spend :data:`PREPARE_SHARE` of `budget_s` (from `started`). Each codec is
    first timed on a slice of a large document, then prepared cheapest first (those needing
    no schema before the others), each within a fair share of what is left; one predicted
    or found over its share, or out of memory or stack, or crashing, is reported in one
    line and the others go on.
    """
    clock = timeit.default_timer
    # From `started`, where the document's work began: deriving its schema is preparing too.
    end = (clock() if started is None else started) + budget_s * PREPARE_SHARE
    cases: dict[str, Case] = {}
    trials: dict[str, CodecTrial] = {}
    facts: dict[str, dict[str, Any]] = {}
    predicted: dict[str, float] = {}
    # A probe may spend a quarter of an even share (and PROBE_FLOOR_S): a slow codec's slice
    # cannot starve the rest.
    probe_s = max(PROBE_FLOOR_S, budget_s * PREPARE_SHARE / max(1, len(codecs)) / 4)
    for name in codecs:
        spec = registry.spec(name)
        facts[name] = {
            "codec": name,
            "format": spec.format,
            "library": spec.library,
            "pure_python_by_design": spec.pure_python,
        }
        try:
            # Imported and bound here, once, for every child to inherit: a child's limit is
            # for its work on the document, and importing pydantic alone took 0.2 s here.
            bound = get_codec(name)
            if schema is not None:
                bound.with_schema(schema)
            probed = _isolated(partial(_probe, name, label, obj, schema), probe_s)
        except Interrupted:  # Ctrl-C or SIGTERM, raised here as a SerkitError: the command's
            raise
        except SerkitError as exc:  # not installed, cannot encode it, or cannot decode it
            trials[name] = CodecTrial(fidelity=failed(name, label, exc), **facts[name])
            continue
        if probed.timed_out:  # even the slice took too long
            why = (
                f"would take over {seconds(probe_s / PROBE_FRACTION)} to prepare, over its "
                f"share of the {seconds(budget_s)} budget: not measured"
            )
            trials[name] = _skipped(facts[name], label, why)
        elif probed.value is None:
            trials[name] = _skipped(facts[name], label, _not_measured(probed, probe_s, budget_s))
        else:
            predicted[name] = probed.value
    # Codecs needing no schema first: a schema codec's typed objects are built again here
    # (about three times a plain codec's preparing, on a megabyte), and where time runs
    # out the plain ones are measured, in the same order every run, not the alphabet's.
    ordered = sorted(predicted, key=lambda n: (registry.spec(n).needs_schema, predicted[n]))
    correction = 1.0
    ratios: list[float] = []  # each codec's preparing over its prediction
    took: list[float] = []  # each codec prepared, in seconds
    for position, name in enumerate(ordered):
        tick(f"preparing {name}")
        left_s = max(0.0, end - clock())
        # Shared among the codecs still to come that could fit in what is left at all, so
        # that on a huge document the cheapest few are measured rather than none.
        fitting = sum(predicted[n] * correction <= left_s for n in ordered[position:])
        share_s = left_s / max(1, fitting)
        expected_s = predicted[name] * correction
        # Past its share, preparing goes on only while it is cheap (a small document): the
        # run keeps its budget, and one codec stuck until its limit does not stop the rest.
        if left_s <= 0 and statistics.median(took or [math.inf]) > CHEAP_PREPARE_S:
            why = f"not prepared within preparing's share of the {seconds(budget_s)} budget"
            trials[name] = _skipped(facts[name], label, f"{why}: not measured")
            continue
        if expected_s > share_s:
            why = (
                f"would take about {seconds(expected_s)} to prepare, over its "
                f"{seconds(share_s)} share of the {seconds(budget_s)} budget: not measured"
            )
            trials[name] = _skipped(facts[name], label, why)
            continue
        # Comparing what came back is serkit's own work: it gets a floor, not only a share.
        limit_s = share_s + max(share_s, COMPARE_FLOOR_S)
        began = clock()
        try:
            prepared = _isolated(partial(_prepare_and_judge, name, label, obj, schema), limit_s)
        except Interrupted:  # Ctrl-C or SIGTERM, raised here as a SerkitError: the command's
            raise
        except SerkitError as exc:  # not installed, cannot encode it, or cannot decode it
            trials[name] = CodecTrial(fidelity=failed(name, label, exc), **facts[name])
            continue
        done = prepared.value
        if done is not None:
            took.append(clock() - began)
        if done is None:
            trials[name] = _skipped(facts[name], label, _not_measured(prepared, limit_s, budget_s))
            continue
        if predicted[name] > 0:  # a slice under-predicts the whole: learn by how much
            # The median, not the largest: one codec's own growth does not hold back the rest.
            ratios.append(done.prepare_cpu_s / predicted[name])
            correction = max(1.0, statistics.median(ratios))
        # The typed objects a schema codec times are built here too (untimed), as the
        # child built them: its values cannot travel, only its bytes.
        bound, typed = get_codec(name).for_document(label, obj, schema)
        config = bound.configs[done.config_index]
        timed = (done.prepare_s, done.dumps_s, done.loads_s)
        cases[name] = Case(name, label, config, typed, done.payload, *timed, bound=bound)
        sizes = {compressor: len(pack(done.payload)) for compressor, pack in COMPRESSORS.items()}
        judged = named_bool_keys(done.fidelity, bool_keys)
        trials[name] = CodecTrial(fidelity=judged, compressed=sizes, **facts[name])
        if judged.status == ERROR:  # it gave back something it cannot even compare
            del cases[name]
    return cases, trials


def named_bool_keys(
    result: FidelityResult, bool_keys: Sequence[tuple[str, bool]]
) -> FidelityResult:
    """A lossy note whose first difference is at a key [True] or [False] names the key the
    file wrote, e.g. YAML's `on:` read as True."""
    paths = [d.example_path for d in result.differences]
    notes = [
        f"key `{text}` read as {truth} (YAML 1.1)"
        for text, truth in bool_keys
        if any(f"[{truth}]" in path for path in paths)
    ]
    if not notes or result.detail is None:
        return result
    return replace(result, detail="; ".join([result.detail, *notes]))


def _pin(obj: Any) -> str | None:
    try:
        return content_hash(obj)
    except (TypeError, RecursionError):
        return None


def _order(trial: CodecTrial) -> tuple[int, float, str]:
    rank = _STATUS_ORDER.index(trial.status) if trial.status in _STATUS_ORDER else 9
    measured = trial.round_trip_s
    return (0 if measured is not None else 1 + rank, measured or 0.0, trial.codec)


def timings_of(processes: Sequence[Process], numbers: Mapping[str, int]) -> dict[str, Timing]:
    """Each operation's Timing from its processes, not yet judged."""
    return {
        operation: Timing(
            tuple(sample for process in processes for sample, _, _ in process[operation]),
            numbers[operation],
            canary=tuple((b, a) for process in processes for _, b, a in process[operation]),
            per_process=SAMPLES_PER_PROCESS,
        )
        for operation in OPERATIONS
    }


def judged(timings: Mapping[Key, Timing], run: str) -> dict[Key, Timing]:
    """`timings` (one run's) with each process judged as `serkit compare` judges a results
    tree's (serkit.results.judging): against the fast canary reading of every sample of
    the run, which `serkit try --into` writes as one results file."""
    benchmarks = {
        operation: Benchmark(operation, "time", "seconds", repeat=SAMPLES_PER_PROCESS)
        for operation in OPERATIONS
    }
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    keys = [key for key, timing in timings.items() if timing.canary]
    measurements = [
        Measurement(
            machine="serkit-try",
            commit="",
            date=0,
            env=Environment(python, ()),
            benchmark=operation,
            params=(codec,),
            value=None,
            ci_99=None,
            iqr=None,
            code_version=None,
            file=Path(run),
            samples=timings[codec, operation].samples,
            canary=tuple(reading(b, a) for b, a in timings[codec, operation].canary),
            canary_before=tuple(b for b, _ in timings[codec, operation].canary),
            samples_per_process=timings[codec, operation].per_process,
        )
        for codec, operation in keys
    ]
    found = judge(measurements, benchmarks)
    out = dict(timings)
    for key, m in zip(keys, found):
        out[key] = replace(timings[key], processes=m.processes)
    return out


def run_state(timings: Iterable[Timing]) -> StateShare | None:
    """How much of a run's samples the machine spent in its slow state, judged against the
    run's own fast canary reading, as its results file would be; None: no samples."""
    readings = [reading(b, a) for timing in timings for b, a in timing.canary]
    return state_share(readings, reference(readings)) if readings else None


class _Shown:
    """The one line on stderr while a document is measured, for a person at a terminal
    (serkit.progress hides it elsewhere): what it is doing, time spent and at most left."""

    def __init__(self, label: str, budget_s: float, clock: Callable[[], float]) -> None:
        self.label, self.budget_s, self.clock, self.start = label, budget_s, clock, clock()
        self.bar = progress(total=None, desc=label, unit="s", bar_format="{desc}")

    def __call__(self, doing: str) -> None:
        self.bar.set_description_str(
            progress_text(self.label, doing, self.clock() - self.start, self.budget_s)
        )

    def close(self) -> None:
        self.bar.close()


def progress_text(label: str, doing: str, elapsed_s: float, budget_s: float) -> str:
    """`doc.json: 4 codecs undecided, 12 s elapsed, at most 13 s left`."""
    left = max(0.0, budget_s - elapsed_s)
    return f"{label}: {doing}, {elapsed_s:.0f} s elapsed, at most {left:.0f} s left"


def _forking_s(clock: Callable[[], float]) -> float:
    """What one forked process that does nothing takes, seconds."""
    began = clock()
    run_forked(lambda: None, PROCESS_FLOOR_S)
    return clock() - began


def try_document(
    document: Document,
    codecs: Iterable[str] | None = None,
    *,
    budget_s: float = TARGET_S,
    max_processes: int = MAX_PROCESSES,
    min_sampling_s: float = MIN_SAMPLING_S,
    key_cap_s: float = KEY_CAP_S,
    measure: str = DEFAULT_MEASURE,
    exact_only: bool = False,
    safe_only: bool = False,
    rng: random.Random | None = None,
) -> DocumentTrial:
    """Every codec (or `codecs`) on `document`: timings, sizes and fidelity, fastest first;
    the budget spent where the ranking by `measure` (a timing; else the round trip) is
    still undecided."""
    clock = timeit.default_timer
    start = clock()
    names = list(codecs) if codecs is not None else codec_names()
    label = document.path.name
    shown = _Shown(label, budget_s, clock)
    try:
        schema, no_schema = _schema_of(document.obj, names)
        cases, trials = _prepared(
            names, label, document.obj, budget_s, document.bool_keys, schema, shown, start
        )
        shown("sizing the samples")
        numbers: dict[str, dict[str, int]] = {}
        costs: dict[str, float] = {}
        for name, case in cases.items():
            sized = {operation: calls_per_sample(case, operation) for operation in OPERATIONS}
            numbers[name] = {operation: number for operation, (number, _) in sized.items()}
            samples_s = sum(number * call_s for number, call_s in sized.values())
            warm_s = sum(call_s for _, call_s in sized.values())
            costs[name] = SAMPLES_PER_PROCESS * samples_s + warm_s
        ranked_by = measure if measure in TIMINGS else DEFAULT_MEASURE

        def timed(taken: Mapping[str, Sequence[Process]]) -> dict[Key, Timing]:
            found = {
                (name, operation): timing
                for name, processes in taken.items()
                if processes
                for operation, timing in timings_of(processes, numbers[name]).items()
            }
            return judged(found, label)

        def still_open(taken: Mapping[str, Sequence[Process]]) -> list[tuple[str, ...]]:
            timings = timed(taken)
            rows = [
                replace(trials[name], dumps=timings[name, "dumps"], loads=timings[name, "loads"])
                for name in taken
                if taken[name]
            ]
            ranked = rank(
                [candidate(t) for t in rows], ranked_by, exact_only=exact_only, safe_only=safe_only
            )
            return undecided(ranked)

        def take(name: str) -> Process | None:
            limit_s = max(PROCESS_FLOOR_S, PROCESS_LIMIT * costs[name])
            outcome = run_forked(partial(time_process, cases[name], numbers[name]), limit_s)
            return outcome.value

        # What forking a process costs beyond its samples, on this machine now (at load
        # averages of 10-16 here, 40-55 ms a process: a first pass planned without it
        # left no time for a second).
        overhead_s = min(_forking_s(clock) for _ in range(3))  # the least: one may be held up
        costs = {name: cost + overhead_s for name, cost in costs.items()}
        # Sampling gets what preparing left; the floor never lifts the total past the
        # budget by more than sampling's own share of it.
        floor_s = min(min_sampling_s, budget_s * (1 - PREPARE_SHARE))
        sampling_s = max(floor_s, budget_s - (clock() - start))
        settle_allocator()  # every process forked from here starts from it, as the suite's
        taken = sample_processes(
            costs,
            take,
            still_open,
            sampling_s,
            clock=clock,
            rng=rng,
            max_processes=max_processes,
            key_cap_s=key_cap_s,
            tick=shown,
        )
        timings = timed(taken)
    finally:
        shown.close()

    def timing(name: str, operation: str) -> Timing:
        found = timings.get((name, operation))
        if found is not None:
            return found
        return Timing((cases[name].first_call_s(operation) or 0.0,), first_call_only=True)

    done = [
        replace(trial, dumps=timing(name, "dumps"), loads=timing(name, "loads"))
        if name in cases
        else trial
        for name, trial in trials.items()
    ]
    return DocumentTrial(
        path=str(document.path),
        format=document.format,
        bytes=document.bytes,
        content_sha256=_pin(document.obj),
        codecs=tuple(sorted(done, key=_order)),
        wall_s=clock() - start,
        budget_s=budget_s,
        max_processes=max_processes,
        key_cap_s=key_cap_s,
        schema_sha256=schema.sha256 if schema is not None else None,
        no_schema=no_schema,
        state=run_state(timings.values()),
    )


def _schema_of(obj: Any, codecs: Sequence[str]) -> tuple[Schema | None, str]:
    """The document's derived schema, once for every schema codec; or why none fits."""
    if not any(registry.spec(name).needs_schema for name in codecs):
        return None, ""
    try:
        return derive(obj), ""
    except NoSchema as exc:
        return None, str(exc)


def try_paths(
    paths: Sequence[str],
    codecs: Iterable[str] | None = None,
    *,
    allow_pickle: bool = False,
    budget_s: float = TARGET_S,
    max_processes: int = MAX_PROCESSES,
    measure: str = DEFAULT_MEASURE,
    exact_only: bool = False,
    safe_only: bool = False,
) -> list[DocumentTrial]:
    """Read every document first (a bad one fails before any measuring), then try each."""
    documents = [read_document(path, allow_pickle=allow_pickle) for path in paths]
    chosen = list(codecs) if codecs is not None else None
    for name in chosen or ():
        registry.spec(name)  # an unknown codec fails now, naming the known ones
    return [
        try_document(
            document,
            chosen,
            budget_s=budget_s,
            max_processes=max_processes,
            measure=measure,
            exact_only=exact_only,
            safe_only=safe_only,
        )
        for document in documents
    ]
