"""`serkit try` times each codec in processes of its own, judges each by the canary as a
results tree's are, and spends its budget where the ranking is undecided.

Every test here injects its readings and its clock: none races the machine's."""

from __future__ import annotations

import json
import random
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

import serkit.trial.prepare as preparing
from serkit.checks.fidelity import EXACT, LOSSY, FidelityResult
from serkit.cli import main
from serkit.compare.ranking import Group, Margin, Ranking, Tier
from serkit.inputs.documents import read_document
from serkit.results.asv_file import CODECS_KEY
from serkit.results.canary import CANARY_KEY
from serkit.results.tree import read_tree
from serkit.run.libraries import codec_libraries
from serkit.run.process import Interrupted
from serkit.sample_speed import CORRECTED, FROM_FAST, PARTLY_SLOW_WEIGHT
from serkit.suite.benchmark_names import TRY_TIME as TIMES
from serkit.trial.budget import (
    CLOSE_CALL,
    CLOSE_CALL_PROCESSES,
    FIRST_PROCESSES,
    PASS_CODECS,
    Undecided,
    progress_text,
    sample_processes,
    undecided,
)
from serkit.trial.measure import try_document
from serkit.trial.sampling import SAMPLES_PER_PROCESS, Process
from serkit.trial.save import save
from serkit.trial.timings import Timing, judged, run_state, timings_of
from serkit.trial.trials import CodecTrial, DocumentTrial

FAST_NS, SLOW = 20_000.0, 1.7  # the canary's fast reading, and how much slower the slow state


def process(seconds: float, slow: bool = False) -> Process:
    """One process's readings: its samples a few per cent apart, the canary around each."""
    times = SLOW if slow else 1.0
    around = (FAST_NS * times, FAST_NS * times * 1.01)
    samples = [(seconds * times * (1 + 0.01 * i), *around) for i in range(SAMPLES_PER_PROCESS)]
    return {"dumps": samples, "loads": samples}


def timing(processes: Sequence[Process], operation: str = "dumps") -> Timing:
    raw = timings_of(processes, {"dumps": 10, "loads": 10})[operation]
    return judged({("codec", operation): raw}, "run")["codec", operation]


# --- judging ------------------------------------------------------------------------


def test_each_process_is_judged_by_its_canary_and_weighed_by_its_state() -> None:
    found = timing([process(1e-3), process(1.01e-3), process(1e-3, slow=True), process(0.99e-3)])
    assert [p.how for p in found.processes] == [FROM_FAST, FROM_FAST, CORRECTED, FROM_FAST]
    # The slow process, corrected by its canary, reads what the fast ones read.
    assert found.processes[2].value == pytest.approx(1e-3, rel=0.02)
    assert found.weights == (1.0, 1.0, PARTLY_SLOW_WEIGHT, 1.0)
    assert found.values == tuple(p.value for p in found.processes)
    assert len(found.samples) == len(found.canary) == 4 * SAMPLES_PER_PROCESS
    state = run_state([found])
    assert state is not None and state.slow == SAMPLES_PER_PROCESS
    assert state.samples == 4 * SAMPLES_PER_PROCESS


def test_a_timing_without_processes_ranks_its_samples() -> None:
    first = Timing((2.5,), first_call_only=True)
    assert first.values == (2.5,) and first.weights == () and first.median == 2.5


def trial_of(codec: str, dumps: Timing, loads: Timing) -> CodecTrial:
    fidelity = FidelityResult(codec, "doc.json", EXACT, bytes=1000)
    return CodecTrial(codec, "json", codec, fidelity, dumps=dumps, loads=loads)


def test_a_saved_tree_carries_the_canary_and_is_judged_as_try_judged_it(tmp_path: Path) -> None:
    processes = [process(1e-3), process(1e-3, slow=True), process(1.02e-3), process(0.98e-3)]
    dumps, loads = timing(processes, "dumps"), timing(processes, "loads")
    document = DocumentTrial(
        "/data/doc.json",
        "json",
        1000,
        None,
        (trial_of("orjson", dumps, loads),),
        1.0,
        25.0,
        40,
        2.0,
    )
    written = save([document], tmp_path, "monday")
    data = json.loads(written.read_text())
    assert data[CODECS_KEY] == {"orjson": list(codec_libraries()["orjson"])}
    assert set(data[CANARY_KEY]["rows"]) == set(TIMES.values())
    tree = read_tree(tmp_path)
    (read,) = [
        m
        for m in tree.machines["monday"].measurements
        if m.benchmark == TIMES["dumps"] and m.params[0] == "'orjson'"
    ]
    # The reader judges every process exactly as `try` did: same values, same states.
    assert read.processes == dumps.processes
    assert read.value == pytest.approx(dumps.median)
    assert tree.state_share().slow == 2 * SAMPLES_PER_PROCESS  # dumps and loads


# --- where the budget goes ------------------------------------------------------------


class Clock:
    """A clock that moves only when a process is "taken"."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def batched(
    clock: Clock, take_one: Callable[[str], Process | None]
) -> Callable[[Sequence[str]], list[tuple[Process | None, float]]]:
    """`sample_processes`'s take, from one timing a single codec: each costs what the
    clock moved while it was taken."""

    def take(codecs: Sequence[str]) -> list[tuple[Process | None, float]]:
        found = []
        for codec in codecs:
            start = clock.now
            process = take_one(codec)
            found.append((process, clock.now - start))
        return found

    return take


def test_the_first_pass_times_every_codec_then_only_undecided_ones_get_more() -> None:
    clock = Clock()
    order: list[str] = []

    def take(codec: str) -> Process:
        clock.now += 0.1
        order.append(codec)
        return process(1e-3)

    def still_open(taken: Mapping[str, Sequence[Process]]) -> Undecided:
        return Undecided((), [("a", "b")])  # c is decided from the first pass on

    taken = sample_processes(
        dict.fromkeys("abc", 0.1),
        batched(clock, take),
        still_open,
        5.0,
        clock=clock,
        rng=random.Random(1),
    )
    first = order[: 3 * FIRST_PROCESSES]
    # Round by round, each codec once a round, in a random order.
    for round_ in range(FIRST_PROCESSES):
        assert sorted(first[3 * round_ : 3 * round_ + 3]) == ["a", "b", "c"]
    assert len({tuple(first[i : i + 3]) for i in range(0, len(first), 3)}) > 1
    assert len(taken["c"]) == FIRST_PROCESSES
    assert len(taken["a"]) > FIRST_PROCESSES and len(taken["b"]) > FIRST_PROCESSES
    assert set(order[3 * FIRST_PROCESSES :]) == {"a", "b"}
    assert clock.now <= 5.0  # no process started that would end past the budget


def test_sampling_stops_once_every_place_is_decided() -> None:
    clock = Clock()

    def take(codec: str) -> Process:
        clock.now += 0.1
        return process(1e-3)

    def still_open(taken: Mapping[str, Sequence[Process]]) -> Undecided:
        return Undecided((), [("a",)] if len(taken["a"]) < 5 else [])

    taken = sample_processes(
        dict.fromkeys("ab", 0.1), batched(clock, take), still_open, 60.0, clock=clock
    )
    assert {codec: len(found) for codec, found in taken.items()} == {"a": 5, "b": FIRST_PROCESSES}
    assert clock.now == pytest.approx(0.1 * (5 + FIRST_PROCESSES))


def test_a_pass_serves_the_codecs_nearest_the_top_and_a_failing_one_is_let_go() -> None:
    clock = Clock()
    served: list[str] = []
    codecs = [f"c{i}" for i in range(PASS_CODECS + 2)]

    def take(codec: str) -> Process | None:
        clock.now += 0.1
        served.append(codec)
        return None if codec == "c0" and len(served) > FIRST_PROCESSES * len(codecs) else process(1)

    taken = sample_processes(
        dict.fromkeys(codecs, 0.1),
        batched(clock, take),
        lambda taken: Undecided((), [tuple(codecs[:PASS_CODECS]), tuple(codecs[PASS_CODECS:])]),
        3 * FIRST_PROCESSES * len(codecs) * 0.1,
        clock=clock,
        max_processes=FIRST_PROCESSES + 4,
    )
    later = served[FIRST_PROCESSES * len(codecs) :]
    assert set(later[:PASS_CODECS]) == set(codecs[:PASS_CODECS])  # the top first
    assert later.count("c0") == 2  # failed twice: not asked again
    # The codecs below the top PASS_CODECS wait until a place above opens (c0 let go).
    second_failure = [i for i, codec in enumerate(later) if codec == "c0"][1]
    assert later.index(codecs[PASS_CODECS]) > second_failure
    assert len(taken["c0"]) == FIRST_PROCESSES
    assert all(len(found) <= FIRST_PROCESSES + 4 for found in taken.values())


def test_in_an_undecided_group_the_least_known_codec_is_served_first() -> None:
    clock = Clock()
    served: list[str] = []
    codecs = [f"c{i}" for i in range(PASS_CODECS + 2)]
    last = codecs[-1]

    def take(codec: str) -> Process | None:
        clock.now += 0.1
        served.append(codec)
        return None if codec == last and served.count(last) == 1 else process(1e-3)

    first = FIRST_PROCESSES * len(codecs)
    sample_processes(
        dict.fromkeys(codecs, 0.1),
        batched(clock, take),
        lambda taken: Undecided((), [tuple(codecs)]),
        (first + PASS_CODECS) * 0.2,
        clock=clock,
    )
    # Its first process failed: the group's last codec, with one process fewer, comes first.
    assert last in served[first : first + PASS_CODECS]


def test_the_headline_gets_every_pass_alone_until_it_is_decided() -> None:
    clock = Clock()
    served: list[str] = []

    def take(codec: str) -> Process:
        clock.now += {"dear": 1.0}.get(codec, 0.1)
        served.append(codec)
        return process(1e-3)

    def still_open(taken: Mapping[str, Sequence[Process]]) -> Undecided:
        headline = ("a", "b") if min(len(taken["a"]), len(taken["b"])) < 6 else ()
        return Undecided(headline, [("c", "d")])

    taken = sample_processes(
        {"a": 0.1, "b": 0.1, "c": 0.1, "d": 0.1, "dear": 1.0},
        batched(clock, take),
        still_open,
        3.0,  # the first pass's 1.5 s fit the others' 0.8 s, and no process of dear's
        clock=clock,
    )
    first = FIRST_PROCESSES * 4
    assert "dear" not in served[:first]
    # a and b alone, pass after pass, until each has 6; then dear, which the first pass
    # could not fit, and the other undecided place.
    headline = 2 * (6 - FIRST_PROCESSES)
    assert sorted(served[first : first + headline]) == sorted(["a", "b"] * (6 - FIRST_PROCESSES))
    assert sorted(served[first + headline : first + headline + 3]) == ["c", "d", "dear"]
    assert len(taken["a"]) == len(taken["b"]) == 6


def test_a_codec_the_first_pass_could_not_fit_gets_its_processes_when_time_allows() -> None:
    clock = Clock()

    def take(codec: str) -> Process:
        clock.now += 0.1  # b was predicted 19 times dearer than it is
        return process(1e-3)

    taken = sample_processes(
        {"a": 0.1, "b": 1.9},
        batched(clock, take),
        lambda taken: Undecided((), []),
        4.0,
        clock=clock,
        key_cap_s=2.0,
    )
    assert len(taken["a"]) == len(taken["b"]) == FIRST_PROCESSES


def test_a_codec_too_dear_for_its_share_gets_no_process() -> None:
    clock = Clock()

    def take(codec: str) -> Process:
        clock.now += {"cheap": 0.01, "dear": 3.0}[codec]
        return process(1e-3)

    taken = sample_processes(
        {"cheap": 0.01, "dear": 3.0},
        batched(clock, take),
        lambda taken: Undecided((), []),
        2.0,
        clock=clock,
        key_cap_s=2.0,
    )
    assert len(taken["cheap"]) == FIRST_PROCESSES and taken["dear"] == []


def ranking(*tiers: tuple[str, tuple[tuple[tuple[str, ...], float | None], ...]]) -> Ranking:
    built = tuple(
        Tier(fidelity, tuple(Group(codecs, 1.0, within) for codecs, within in groups), ())
        for fidelity, groups in tiers
    )
    return Ranking("round_trip", built, ())


def test_undecided_are_the_wide_ties_nearest_the_top_first() -> None:
    ranked = ranking(
        (EXACT, ((("a",), None), (("b", "c"), 0.30), (("d", "e"), 0.08), (("f", "g"), 0.5))),
        (LOSSY, ((("x", "y"), 0.2),)),
    )
    # The second group of the exact class is the first undecided one; the lossy class's
    # first group comes before the exact class's fourth; a tie within 10 % is decided.
    assert undecided(ranked) == Undecided((), [("x", "y"), ("b", "c"), ("f", "g")])
    assert undecided(ranking((EXACT, ((("a",), None), (("b",), None))))) == Undecided((), [])
    # The first class's first place is the headline's, whatever else is open.
    wide_top = ranking((EXACT, ((("a", "b"), 0.2),)), (LOSSY, ((("x", "y"), 0.2),)))
    assert undecided(wide_top) == Undecided(("a", "b"), [("x", "y")])


def test_a_close_group_its_samples_could_not_resolve_is_undecided() -> None:
    # Within 8 %, but a gap of 23 % could hide in its samples: "not resolved", so it gets
    # more processes, as a wide tie does.
    close = Group(("a", "b"), 1.0, 0.08, resolved=False, precision=0.23)
    ranked = Ranking("round_trip", (Tier(EXACT, (close,), ()),), ())
    assert undecided(ranked) == Undecided(("a", "b"), [])


def test_a_close_call_on_few_processes_is_undecided_until_each_codec_has_enough() -> None:
    groups = (Group(("a",), 1.0), Group(("b", "c"), 1.14, 0.05), Group(("d",), 2.0))
    margins = (Margin(1.14, 0.08), Margin(2.0 / 1.14, 0.1))
    ranked = Ranking("round_trip", (Tier(EXACT, groups, margins),), ())
    counts = {"a": 3, "b": 3, "c": CLOSE_CALL_PROCESSES, "d": 3}
    # a ahead of b and c by 1.14x on 3 processes: open, as one group; d is 1.75x behind.
    assert undecided(ranked, processes=counts.__getitem__) == Undecided(("a", "b", "c"), [])
    enough = dict.fromkeys(counts, CLOSE_CALL_PROCESSES)
    assert undecided(ranked, processes=enough.__getitem__) == Undecided((), [])
    assert CLOSE_CALL < 1.75


# --- what a person sees ---------------------------------------------------------------


def test_progress_says_what_is_being_done_and_how_long_is_left_at_most() -> None:
    assert progress_text("doc.json", "3 codecs undecided", 12.4, 25.0) == (
        "doc.json: 3 codecs undecided, 12 s elapsed, at most 13 s left"
    )
    assert progress_text("doc.json", "first pass", 26.0, 25.0).endswith("at most 0 s left")


def test_progress_is_shown_only_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"a": [1, 2, 3]}))
    assert main(["try", str(path), "--codec", "json", "--budget", "2"]) == 0
    assert capsys.readouterr().err == ""  # captured: no terminal, no line


def test_ctrl_c_while_preparing_stops_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's signal handler raises Interrupted, a SerkitError: preparing took it for
    one codec's failure and went on to the next."""

    def stopped(*args: object) -> object:
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(preparing, "_isolated", stopped)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"a": [1, 2, 3]}))
    with pytest.raises(Interrupted):
        try_document(read_document(path), ["json", "orjson"], budget_s=5.0)
