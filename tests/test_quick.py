"""The quick run's plan: which pairs it times, which it predicts over budget, what it says."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from serkit.errors import SerkitError
from serkit.inputs.fixtures import default_fixture_names
from serkit.run.cost import read_predictions
from serkit.run.quick import QUICK_FIXTURES, leaves_out_in_words, plan_quick
from serkit.suite import canary
from serkit.suite.canary import REFERENCE_CANARY_NS, reference_canary_ns
from serkit.suite.cases import FIXTURES_ENV, LEAVE_OUT_ENV, Selection
from serkit.suite.prediction import Prediction, at_reference_speed, predict, text_bytes

ROOT = Path(__file__).resolve().parent.parent
SLOW = Prediction(dumps_s=0.2, loads_s=0.6)  # five processes of it: far over 2 s
FAST = Prediction(dumps_s=1e-5, loads_s=2e-5)


def _plan(**predicted: Prediction) -> Any:
    table = {name.replace("__", " ").replace("_", "-"): p for name, p in predicted.items()}
    selection = Selection(codecs=("json", "yaml"), fixtures=("small-dict", "twitter"))
    everything = {f"{c} {f}": FAST for c in ("json", "yaml") for f in ("small-dict", "twitter")}
    return plan_quick(selection, rounds=5, budget_s=2.0, predicted={**everything, **table})


def _timed_in(states: list[float]) -> float:
    """at_reference_speed of a call three canary readings long, made in `states` (the
    machine's slowness, reading by reading): a clock that only the calls move."""
    reference, now, state = reference_canary_ns() or 1.0, [0], iter(states)
    slowness = [1.0]

    def canary() -> float:
        slowness[0] = next(state)
        return reference * slowness[0]

    def call() -> None:
        now[0] += round(3 * reference * slowness[0])

    return at_reference_speed(call, canary=canary, clock=lambda: now[0], readings=len(states))


def test_a_call_is_predicted_at_the_reference_speed_in_either_state() -> None:
    """A call and the canary slow alike: timed in the fast state, the slow state (x1.8) or a
    slow stretch that flickers fast reading by reading, the call is predicted the same,
    three reference readings long; the plain seconds were 1.8x apart."""
    fast = _timed_in([1.0] * 15)
    assert fast == pytest.approx(3 * reference_canary_ns(sys.version_info[:2]) / 1e9)
    assert _timed_in([1.8] * 15) == pytest.approx(fast)
    assert _timed_in([1.8, 1.0] * 7 + [1.8]) == pytest.approx(fast)
    assert _timed_in([1.0, 1.8] * 7 + [1.0]) == pytest.approx(fast)


def test_each_python_has_its_own_reference_and_a_new_one_the_nearest() -> None:
    assert reference_canary_ns((3, 11)) == REFERENCE_CANARY_NS[(3, 11)]
    assert reference_canary_ns((3, 14)) == REFERENCE_CANARY_NS[(3, 13)]
    assert reference_canary_ns((3, 8)) == REFERENCE_CANARY_NS[(3, 9)]
    assert max(REFERENCE_CANARY_NS.values()) / min(REFERENCE_CANARY_NS.values()) > 1.3


def test_another_implementation_predicts_in_its_own_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PyPy compiles the canary's loop: its calls are not scaled by a CPython reference."""
    monkeypatch.setattr(canary.platform, "python_implementation", lambda: "PyPy")
    assert reference_canary_ns() is None
    assert reference_canary_ns((3, 11)) == REFERENCE_CANARY_NS[(3, 11)]
    ticks = iter(range(0, 10**9, 500))  # each call 500 ns on the clock, the canary ignored
    took = at_reference_speed(lambda: None, canary=lambda: 1e6, clock=lambda: next(ticks))
    assert took == pytest.approx(500e-9)


def test_a_plan_says_its_costs_are_at_the_reference_speed_and_older_records_as_written() -> None:
    """The record of a plan says its predictions are at the reference speed, and the report
    with it; a record of a run before the reference speed is read as it was written."""
    plan = _plan(yaml__twitter=SLOW)
    record = json.loads(json.dumps(plan.as_record()))
    assert record["predicted_at"] == "reference"
    (words,) = [line for line in leaves_out_in_words(record) if line.startswith("yaml x")]
    assert "predicted 0.6 s a call" in words
    assert "at serkit's reference speed" in leaves_out_in_words(record)[-1]
    del record["predicted_at"]
    older = leaves_out_in_words(record | {"predicted_slowness": 1.7})
    assert "the fast state's speed (the canary read x1.70" in older[-1]
    assert all("speed" not in line for line in leaves_out_in_words(record))


def test_a_pair_predicted_over_the_budget_is_left_to_full_and_said_so() -> None:
    plan = _plan(yaml__twitter=SLOW)
    assert plan.pairs == (("json", "small-dict"), ("json", "twitter"), ("yaml", "small-dict"))
    (left,) = plan.left_out
    assert (left.codec, left.fixture) == ("yaml", "twitter")
    assert (
        "predicted 200 ms a dumps, 600 ms a loads at serkit's reference speed, over the quick "
        "run's budget" in left.in_words()
    )
    # Every process of the run knows: its fixtures, and the pair no process measures.
    assert plan.environment() == {FIXTURES_ENV: "small-dict,twitter", LEAVE_OUT_ENV: "yaml@twitter"}
    assert Selection.from_env(plan.environment()).excludes("yaml", "twitter") is not None
    assert Selection.from_env(plan.environment()).excludes("yaml", "small-dict") is None


def test_the_regexes_select_exactly_the_planned_pairs_in_the_quick_benchmarks() -> None:
    regexes = _plan(yaml__twitter=SLOW).regexes()

    def selected(name: str) -> bool:
        return any(re.search(regex, name) for regex in regexes)

    assert selected("bench_time.Dumps.time_dumps('json', 'twitter')")
    assert selected("bench_time.Loads.time_loads('yaml', 'small-dict')")
    assert selected("bench_size.CompressedSize.track_bytes('json', 'small-dict', 'zstd-3')")
    assert selected("bench_facts.Fidelity.track_exact('yaml', 'small-dict')")
    assert selected("bench_facts.Implementation.track_compiled('yaml')")
    assert not selected("bench_time.Dumps.time_dumps('yaml', 'twitter')")  # over the budget
    assert not selected("bench_size.EncodedSize.track_bytes('yaml', 'twitter')")
    assert not selected("bench_time.Dumps.time_dumps('json', 'github')")  # not its fixture
    assert not selected("bench_time.RoundTrip.time_round_trip('json', 'twitter')")  # --full
    assert not selected("bench_import.ImportTime.timeraw_import('json')")
    assert not selected("bench_facts.Implementation.track_compiled('orjson')")  # not selected


def test_the_record_says_what_the_quick_run_leaves_to_full() -> None:
    record = json.loads(json.dumps(_plan(yaml__twitter=SLOW).as_record()))  # as the file keeps it
    words = leaves_out_in_words(record)
    assert words[0].startswith("left to serkit bench --full: the round trip, import time")
    assert words[1:] == [
        "yaml x twitter: not timed, predicted 0.6 s a call, over the quick run's budget",
        "each call predicted from its codec's cost per byte on a small document, at serkit's "
        "reference speed: the same on any host, in either state",
    ]


def test_by_default_every_codec_is_planned_on_the_quick_fixtures() -> None:
    # The predictions saved on an idle machine (docs/cost.md): predicting here, under CI's
    # load, would read json's calls up to twice as slow, and its twitter pair over budget.
    predicted = read_predictions(ROOT / "docs" / "cost-durations-2026-11-26.json")
    assert predicted is not None
    plan = plan_quick(Selection(codecs=("json",)), rounds=5, budget_s=2.0, predicted=predicted)
    assert plan.pairs == tuple(("json", fixture) for fixture in QUICK_FIXTURES)
    assert "github" in plan.fixtures_left and "twitter" not in plan.fixtures_left


def test_pure_python_yaml_on_a_large_document_is_predicted_far_slower_than_on_a_small_one(
    sources_available: None,
) -> None:
    small, large = predict("yaml", "small-dict"), predict("yaml", "twitter")
    ratio = text_bytes_ratio("twitter", "small-dict")
    assert large.loads_s == pytest.approx(small.loads_s * ratio)
    assert large.loads_s > 0.1  # seconds a call, where json takes milliseconds
    assert predict("json", "twitter").loads_s < large.loads_s / 20


def text_bytes_ratio(a: str, b: str) -> float:
    from serkit.inputs.fixtures import load_fixture

    return text_bytes(load_fixture(a)) / text_bytes(load_fixture(b))


def test_a_codec_that_cannot_be_predicted_is_timed_and_said_so(ghost_codec: str) -> None:
    plan = plan_quick(
        Selection(codecs=(ghost_codec,), fixtures=("small-dict",)), rounds=5, budget_s=2.0
    )
    assert plan.pairs == ((ghost_codec, "small-dict"),)  # asv says why it cannot run
    (note,) = plan.notes
    assert note.startswith(f"{ghost_codec} x small-dict: not predicted (")


def test_an_unknown_fixture_fails_before_any_work() -> None:
    with pytest.raises(SerkitError, match="nope"):
        plan_quick(Selection(fixtures=("nope",)), rounds=5, budget_s=2.0)


def test_prediction_raises_for_a_codec_that_is_not_installed(ghost_codec: str) -> None:
    with pytest.raises(SerkitError):
        predict(ghost_codec, "small-dict")


def test_a_plan_with_no_pair_left_is_an_error_not_the_whole_suite() -> None:
    """asv handed no pair would select every benchmark of every fixture."""
    selection = Selection(codecs=("yaml",), fixtures=("twitter",))
    with pytest.raises(SerkitError, match=r"no pair left to time on twitter \(yaml x twitter"):
        plan_quick(selection, rounds=5, budget_s=2.0, predicted={"yaml twitter": SLOW})


def test_a_schema_codec_is_timed_only_on_its_declared_fixtures_and_no_process_measures_others() -> (
    None
):
    from serkit.codecs.registry import default_fixtures

    codec = "pydantic-json"
    declared = default_fixtures(codec)
    assert declared is not None
    fast = {f"{codec} {fixture}": FAST for fixture in QUICK_FIXTURES}
    plan = plan_quick(Selection(codecs=(codec,)), rounds=5, budget_s=2.0, predicted=fast)
    assert {fixture for _, fixture in plan.pairs} == set(declared) & set(QUICK_FIXTURES)
    # The run names its fixtures to the suite, which then no longer reads the declaration.
    suite = Selection.from_env(plan.environment())
    for fixture in QUICK_FIXTURES:
        assert (suite.excludes(codec, fixture) is None) == ((codec, fixture) in plan.pairs)


def test_memory_and_instructions_asked_of_a_quick_run_measure_its_pairs() -> None:
    plan = _plan(yaml__twitter=SLOW)

    def selected(regexes: list[str], name: str) -> bool:
        return any(re.search(regex, name) for regex in regexes)

    counted = "bench_instructions.Instructions.track_dumps('json', 'twitter')"
    peak = "bench_memory.PeakMemory.track_loads_peak('yaml', 'small-dict')"
    assert not selected(plan.regexes(), counted) and not selected(plan.regexes(), peak)
    asked = plan.asking(memory=True, instructions=True)
    assert selected(asked.regexes(), counted) and selected(asked.regexes(), peak)
    assert not selected(asked.regexes(), counted.replace("json", "yaml"))  # over the budget
    # Counted and measured in an `asv run` of their own, after the timings: never beside them.
    timed, measured = asked.parts()
    assert sorted(timed + measured) == sorted(asked.regexes()) and plan.parts() == [plan.regexes()]
    assert selected(measured, counted) and selected(measured, peak)
    timing = "bench_time.Dumps.time_dumps('json', 'twitter')"
    assert selected(timed, timing) and not selected(measured, timing)
    assert not selected(timed, counted) and not selected(timed, peak)
    record = asked.as_record()["left_to_full"]
    assert "instruction counts" not in record and "memory per call" not in record
    assert "instruction counts" in plan.as_record()["left_to_full"]


def test_a_full_run_leaves_out_only_the_pairs_predicted_over_its_budget_and_says_so() -> None:
    from serkit.run.quick import FULL_BUDGET_S, plan_full
    from serkit.suite.cases import FULL_ROUNDS

    # Pure-Python YAML on a large document: 5 s a call, so ten processes of 5 samples
    # and a cold preparation each cost far over a minute; everything else is fast.
    huge = Prediction(dumps_s=2.0, loads_s=5.0)
    selection = Selection(codecs=("json", "yaml"))
    grid = {f"{c} {f}": FAST for c in ("json", "yaml") for f in default_fixture_names()}
    predicted = {**grid, "yaml random-dicts-1000": huge}
    plan = plan_full(selection, rounds=FULL_ROUNDS, predicted=predicted)
    assert plan.kind == "full" and plan.budget_s == FULL_BUDGET_S
    assert [(i.codec, i.fixture) for i in plan.left_out] == [("yaml", "random-dicts-1000")]
    assert len(plan.pairs) == 2 * len(default_fixture_names()) - 1
    # The full run keeps its own grid and parts: only the pair is named to the suite.
    assert plan.environment() == {LEAVE_OUT_ENV: "yaml@random-dicts-1000"}
    assert plan.parts() == []
    record = json.loads(json.dumps(plan.as_record()))
    assert record["kind"] == "full" and record["budget_s"] == FULL_BUDGET_S
    line, basis = leaves_out_in_words(record)
    assert line == (
        "yaml x random-dicts-1000: not timed, predicted 5 s a call, over the full run's budget "
        "of 60 s a pair (asv's -b times it)"
    )
    assert basis.startswith("each call predicted from its codec's cost per byte")
    # Within the budget, nothing is left out.
    assert plan_full(selection, rounds=FULL_ROUNDS, predicted=grid).left_out == ()


def test_a_full_run_of_codecs_that_time_nothing_on_the_grid_leaves_nothing_out() -> None:
    from serkit.run.quick import plan_full

    # cattrs' codec is timed only on fixtures a run names: its matrix environment times
    # none of the default grid, and its plan is empty rather than an error.
    plan = plan_full(Selection(codecs=("cattrs-orjson",)), rounds=10, predicted={})
    assert plan.pairs == () and plan.left_out == () and plan.environment() == {}
