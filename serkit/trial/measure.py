"""`serkit try`: every codec on the user's own documents, measured here, without asv.

The pieces, in the order a document goes through them: each codec's pair is prepared and
its fidelity judged (serkit.trial.prepare); each codec is timed in processes of its own,
each a new interpreter (serkit.trial.worker), with the canary around every sample
(serkit.trial.sampling); the processes are judged as a results tree's are
(serkit.trial.timings); and the budget goes where the ranking is still undecided
(serkit.trial.budget). This module runs them in turn
and puts what they found together (serkit.trial.trials).
"""

from __future__ import annotations

import pickle
import random
import timeit
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from serkit.checks.fidelity import ERROR, EXACT, LOSSY, NOT_INSTALLED, UNSUPPORTED
from serkit.codecs.registry import codec_names, get_codec, registry
from serkit.compare.ranking import DEFAULT_MEASURE, TIMINGS, rank
from serkit.inputs.documents import Document, read_document
from serkit.inputs.hashing import content_hash
from serkit.suite.cases import INJECTED_LOOPS, injected_from_env
from serkit.trial.budget import (
    KEY_CAP_S,
    MAX_PROCESSES,
    MIN_SAMPLING_S,
    TARGET_S,
    ProgressLine,
    Undecided,
    sample_processes,
    undecided,
)
from serkit.trial.prepare import PREPARE_SHARE, prepare_codecs, schema_of
from serkit.trial.sampling import Key, Process, limit_s, sized
from serkit.trial.timings import Timing, judged, run_state, timings_of
from serkit.trial.trials import FLOOR, CodecTrial, DocumentTrial, candidate
from serkit.trial.worker import CONCURRENT, Order, starting_s, take_processes

# Rows that ran come first, fastest first; then the rest in this order.
_STATUS_ORDER = (EXACT, LOSSY, UNSUPPORTED, ERROR, NOT_INSTALLED)


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
    # A known slowdown in every timed call, set by hand to see what compare calls.
    inject = (injected_from_env() or 0) / INJECTED_LOOPS
    shown = ProgressLine(label, budget_s, clock)
    try:
        schema, no_schema = schema_of(document.obj, names)
        cases, trials = prepare_codecs(
            names, label, document.obj, budget_s, document.bool_keys, schema, shown, start
        )
        shown("sizing the samples")
        numbers: dict[str, dict[str, int]] = {}
        costs: dict[str, float] = {}
        for name, case in cases.items():
            numbers[name], costs[name] = sized(case)
        ranked_by = measure if measure in TIMINGS else DEFAULT_MEASURE

        def timed(taken: Mapping[str, Sequence[Process]]) -> dict[Key, Timing]:
            found = {
                (name, operation): timing
                for name, processes in taken.items()
                if processes
                for operation, timing in timings_of(processes, numbers[name]).items()
            }
            return judged(found, label)

        def still_open(taken: Mapping[str, Sequence[Process]]) -> Undecided:
            timings = timed(taken)
            rows = [
                replace(trials[name], dumps=timings[name, "dumps"], loads=timings[name, "loads"])
                for name in taken
                if taken[name]
            ]
            candidates = [candidate(t) for t in rows]
            ranked = rank(
                candidates, ranked_by, exact_only=exact_only, safe_only=safe_only, floor=FLOOR
            )
            return undecided(ranked, processes=lambda name: len(taken[name]))

        pickled = _pickled(document.obj) if cases else None  # once, for every order

        def order(name: str, pickled: bytes) -> tuple[Order, float]:
            case = cases[name]
            bound = case.bound or get_codec(name)
            found = Order(
                name,
                bound.version,
                label,
                bound.configs.index(case.config),
                schema if bound.needs_schema else None,
                pickled,
                case.payload,
                numbers[name],
                inject,
            )
            return found, limit_s(costs[name])

        def take(names: Sequence[str]) -> list[tuple[Process | None, float]]:
            if pickled is None:  # no process can be given the document: each fails
                return [(None, 0.0) for _ in names]
            return take_processes([order(name, pickled) for name in names])

        # What starting a worker costs beyond its samples, on this machine now, shared by
        # the workers that start together: about 0.1 s each, ten times their samples on
        # a small document, so a first pass planned without it would leave no time.
        overhead_s = starting_s() / CONCURRENT
        costs = {name: cost + overhead_s for name, cost in costs.items()}
        # Sampling gets what preparing left; the floor never lifts the total past the
        # budget by more than sampling's own share of it.
        floor_s = min(min_sampling_s, budget_s * (1 - PREPARE_SHARE))
        sampling_s = max(floor_s, budget_s - (clock() - start))
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
        injected=inject,
    )


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


def _pickled(obj: Any) -> bytes | None:
    """The document as the timed processes receive it; None where it nests deeper than
    pickle goes (then each codec is shown from its first call)."""
    try:
        return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return None


def _pin(obj: Any) -> str | None:
    try:
        return content_hash(obj)
    except (TypeError, RecursionError):
        return None


def _order(trial: CodecTrial) -> tuple[int, float, str]:
    rank = _STATUS_ORDER.index(trial.status) if trial.status in _STATUS_ORDER else 9
    measured = trial.round_trip_s
    return (0 if measured is not None else 1 + rank, measured or 0.0, trial.codec)
