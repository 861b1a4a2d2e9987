"""Preparing every codec's pair on a user's document, within preparing's share of the budget.

Each codec's pair is prepared as the asv suite prepares it
(:func:`serkit.suite.preparation.prepare_object`), in a process of its own, and the round
trip that preparation makes also decides fidelity
(:func:`serkit.checks.fidelity.judge_round_trip`); its sizes are those of the same bytes.
The schema codecs run under one schema, derived from the document once (`schema_of`).
"""

from __future__ import annotations

import math
import statistics
import timeit
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar

from serkit.checks.fidelity import ERROR, FidelityResult, failed, judge_round_trip
from serkit.checks.workers import Forked, one_line, run_forked
from serkit.codecs.registry import RoundTrip, get_codec, registry
from serkit.errors import NoSchema, SerkitError
from serkit.run.process import Interrupted
from serkit.schemas.derive import derive
from serkit.schemas.types import Schema
from serkit.suite.cases import COMPRESSORS
from serkit.suite.preparation import Case, prepare_object
from serkit.trial.sampling import CLOCK
from serkit.trial.trials import CodecTrial
from serkit.units import seconds

PREPARE_SHARE = 0.6  # of the budget, for preparing every codec; sampling gets the rest
PROBE_ITEMS = 64  # a document with at least this many top-level items is probed on a slice
PROBE_FRACTION = 1 / 32
# The least a probe may take, by the wall clock that kills it: at load averages of 6-16 here
# (2026-11-29), a 133 ms limit killed slices that take milliseconds of CPU (msgspec-msgpack,
# rapidjson) in some runs and not in others, and the codecs measured changed run to run.
PROBE_FLOOR_S = 0.5
COMPARE_FLOOR_S = 1.0  # for comparing what a codec gave back, however small its share
CHEAP_PREPARE_S = 0.1  # preparing a codec this quick goes on past preparing's share
_T = TypeVar("_T")


def probe_slice(obj: Any) -> tuple[Any, float] | None:
    """A small slice of a large top-level list or mapping, and how much bigger the whole is."""
    if not isinstance(obj, (list, dict)) or len(obj) < PROBE_ITEMS:
        return None
    size = max(1, int(len(obj) * PROBE_FRACTION))
    part = obj[:size] if isinstance(obj, list) else dict(list(obj.items())[:size])
    return part, len(obj) / size


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


def prepare_codecs(
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


def schema_of(obj: Any, codecs: Sequence[str]) -> tuple[Schema | None, str]:
    """The document's derived schema, once for every schema codec; or why none fits."""
    if not any(registry.spec(name).needs_schema for name in codecs):
        return None, ""
    try:
        return derive(obj), ""
    except NoSchema as exc:
        return None, str(exc)
