"""`serkit try`: every codec on the user's own documents, measured here, without asv.

Each codec's pair is prepared as the asv suite prepares it
(:func:`serkit.suite.preparation.prepare_object`), and the round trip that preparation makes
also decides fidelity (:func:`serkit.checks.fidelity.judge_round_trip`). Then dumps and
loads are sampled as `serkit replicate` samples them (:mod:`serkit.replicate.measure`):
samples of about 10 ms, interleaved round by round across every codec in one process, so
load from other jobs falls on every codec alike.

The answer must come in well under a minute, so rounds are budgeted by time: the whole
document gets at most :data:`TARGET_S`, preparation included. Cheap calls get up to
:data:`MAX_ROUNDS` samples; each call gets at most a fair share of what the cheaper ones
left, and never more than :data:`KEY_CAP_S`, and a call too slow for even one sample in
its share (pure-Python YAML on a megabyte) is reported from its first call, and says so.
"""

from __future__ import annotations

import math
import timeit
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
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
from serkit.codecs.registry import RoundTrip, codec_names, get_codec, registry
from serkit.errors import NoSchema, SerkitError
from serkit.inputs.documents import Document, read_document
from serkit.inputs.hashing import content_hash
from serkit.progress import progress
from serkit.replicate.measure import Timing, sample_interleaved, sample_size
from serkit.schemas.derive import derive
from serkit.schemas.types import Schema
from serkit.suite.cases import COMPRESSORS
from serkit.suite.preparation import Case, prepare_object
from serkit.units import seconds

TARGET_S = 25.0  # per document, preparation included: "well under a minute" for 1 MB
MIN_SAMPLING_S = 3.0  # sampling still gets this much (at most its share) after preparing
MAX_ROUNDS = 15
# Sampling time one call may take: more buys little for a call already this slow beside the
# others, and a small document should not wait on pure-Python YAML for the whole budget.
KEY_CAP_S = 2.0
OPERATIONS = ("dumps", "loads")
# Rows that ran come first, fastest first; then the rest in this order.
_STATUS_ORDER = (EXACT, LOSSY, UNSUPPORTED, ERROR, NOT_INSTALLED)

Key = tuple[str, str]  # (codec, operation)


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
    max_rounds: int
    key_cap_s: float
    # The schema derived from it, which the schema codecs ran under; else why none fits.
    schema_sha256: str | None = None
    no_schema: str = ""

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
            "max_rounds": self.max_rounds,
            "key_cap_s": self.key_cap_s,
            "codecs": [c.as_dict() for c in self.codecs],
        }


def timing_dict(timing: Timing | None) -> dict[str, Any] | None:
    """A timing for JSON: its quartiles in seconds, and how it was sampled."""
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
    }


# --- planning the rounds --------------------------------------------------------------


def plan_samples(
    costs: Mapping[Key, float], budget_s: float, max_rounds: int, key_cap_s: float = math.inf
) -> dict[Key, int]:
    """Samples per key within `budget_s`: the cheapest first, each at most a fair share.

    A key's share is what the cheaper keys left, split evenly among it and the dearer
    ones, so no call can starve the rest and a slow call gets what the fast ones spare;
    no key's share exceeds `key_cap_s`. A key may get 0 samples: its share cannot pay
    for one.
    """
    counts: dict[Key, int] = {}
    left = budget_s
    ordered = sorted(costs, key=lambda key: costs[key])
    for position, key in enumerate(ordered):
        share = min(key_cap_s, left / (len(ordered) - position))
        cost = max(costs[key], 1e-9)
        counts[key] = min(max_rounds, math.floor(share / cost))
        left -= counts[key] * cost
    return counts


# --- bounding each codec ---------------------------------------------------------------

PREPARE_SHARE = 0.6  # of the budget, for preparing every codec; sampling gets the rest
PROBE_ITEMS = 64  # a document with at least this many top-level items is probed on a slice
PROBE_FRACTION = 1 / 32
COMPARE_FLOOR_S = 1.0  # for comparing what a codec gave back, however small its share


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
    start = timeit.default_timer()
    prepare_object(name, label, part, keep_decoded=True, schema=schema)
    return (timeit.default_timer() - start) * scale


@dataclass(frozen=True)
class _Prepared:
    """What a codec's preparation in its own process brings back: all but the decoded copy."""

    config_index: int  # of the codec's configs, bound again here
    payload: bytes
    prepare_s: float
    dumps_s: float
    loads_s: float | None
    fidelity: FidelityResult  # judged where the decoded copy was


def _prepare_and_judge(name: str, label: str, obj: Any, schema: Schema | None) -> _Prepared:
    """Prepare the pair and judge its round trip (in a forked child: `_isolated`)."""
    case = prepare_object(name, label, obj, keep_decoded=True, schema=schema)
    bound = case.bound or get_codec(name)  # a schema codec as bound to the schema
    trip = RoundTrip(case.config, case.payload, case.decoded)
    judged = judge_round_trip(bound, label, obj, trip)
    index = bound.configs.index(case.config)
    return _Prepared(index, case.payload, case.prepare_s, case.dumps_s, case.loads_s, judged)


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
    desc: str,
    budget_s: float = math.inf,
    bool_keys: Sequence[tuple[str, bool]] = (),
    schema: Schema | None = None,
) -> tuple[dict[str, Case], dict[str, CodecTrial]]:
    """Prepare every codec's pair; the round trip also decides its fidelity.

    Preparing may spend :data:`PREPARE_SHARE` of `budget_s`. Each codec is first timed on
    a slice of a large document, then prepared cheapest first, each within a fair share of
    what is left; one predicted or found over its share, or out of memory or stack, or
    crashing, is reported in one line and the others go on.
    """
    clock = timeit.default_timer
    end = clock() + budget_s * PREPARE_SHARE
    cases: dict[str, Case] = {}
    trials: dict[str, CodecTrial] = {}
    facts: dict[str, dict[str, Any]] = {}
    predicted: dict[str, float] = {}
    # A probe may spend a quarter of an even share: a slow codec's slice cannot starve the rest.
    probe_s = budget_s * PREPARE_SHARE / max(1, len(codecs)) / 4
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
    ordered = sorted(predicted, key=lambda n: predicted[n])
    correction = 1.0
    for position, name in enumerate(progress(ordered, desc=desc, unit="codec")):
        left_s = max(0.0, end - clock())
        # Shared among the codecs still to come that could fit in what is left at all, so
        # that on a huge document the cheapest few are measured rather than none.
        fitting = sum(predicted[n] * correction <= left_s for n in ordered[position:])
        share_s = left_s / max(1, fitting)
        expected_s = predicted[name] * correction
        if expected_s > share_s:
            why = (
                f"would take about {seconds(expected_s)} to prepare, over its "
                f"{seconds(share_s)} share of the {seconds(budget_s)} budget: not measured"
            )
            trials[name] = _skipped(facts[name], label, why)
            continue
        # Comparing what came back is serkit's own work: it gets a floor, not only a share.
        limit_s = share_s + max(share_s, COMPARE_FLOOR_S)
        try:
            prepared = _isolated(partial(_prepare_and_judge, name, label, obj, schema), limit_s)
        except SerkitError as exc:  # not installed, cannot encode it, or cannot decode it
            trials[name] = CodecTrial(fidelity=failed(name, label, exc), **facts[name])
            continue
        done = prepared.value
        if done is None:
            trials[name] = _skipped(facts[name], label, _not_measured(prepared, limit_s, budget_s))
            continue
        if predicted[name] > 0:  # a slice under-predicts the whole: learn by how much
            correction = max(correction, done.prepare_s / predicted[name])
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


def try_document(
    document: Document,
    codecs: Iterable[str] | None = None,
    *,
    budget_s: float = TARGET_S,
    max_rounds: int = MAX_ROUNDS,
    min_sampling_s: float = MIN_SAMPLING_S,
    key_cap_s: float = KEY_CAP_S,
) -> DocumentTrial:
    """Every codec (or `codecs`) on `document`: timings, sizes and fidelity, fastest first."""
    clock = timeit.default_timer
    start = clock()
    names = list(codecs) if codecs is not None else codec_names()
    label = document.path.name
    schema, no_schema = _schema_of(document.obj, names)
    cases, trials = _prepared(
        names, label, document.obj, f"{label}: preparing", budget_s, document.bool_keys, schema
    )

    calls: dict[Key, Callable[[], object]] = {}
    numbers: dict[Key, int] = {}
    costs: dict[Key, float] = {}
    first: dict[Key, float] = {}
    for name, case in cases.items():
        for operation in OPERATIONS:
            key = (name, operation)
            first[key] = case.first_call_s(operation) or 0.0
            calls[key] = case.operation(operation)
            numbers[key], costs[key] = sample_size(case, operation)
    # Sampling gets what preparing left; the floor never lifts the total past the budget
    # by more than sampling's own share of it.
    floor_s = min(min_sampling_s, budget_s * (1 - PREPARE_SHARE))
    sampling_s = max(floor_s, budget_s - (clock() - start))
    counts = plan_samples(costs, sampling_s, max_rounds, key_cap_s)
    deadline = clock() + sampling_s
    samples = sample_interleaved(calls, numbers, counts, f"{label}: timing", deadline)

    def timing(key: Key) -> Timing:
        if not samples[key]:
            return Timing((first[key],), first_call_only=True)
        return Timing(tuple(samples[key]), numbers[key])

    done = [
        replace(trial, dumps=timing((name, "dumps")), loads=timing((name, "loads")))
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
        max_rounds=max_rounds,
        key_cap_s=key_cap_s,
        schema_sha256=schema.sha256 if schema is not None else None,
        no_schema=no_schema,
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
    max_rounds: int = MAX_ROUNDS,
) -> list[DocumentTrial]:
    """Read every document first (a bad one fails before any measuring), then try each."""
    documents = [read_document(path, allow_pickle=allow_pickle) for path in paths]
    chosen = list(codecs) if codecs is not None else None
    for name in chosen or ():
        registry.spec(name)  # an unknown codec fails now, naming the known ones
    return [
        try_document(document, chosen, budget_s=budget_s, max_rounds=max_rounds)
        for document in documents
    ]
