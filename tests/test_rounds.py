"""serkit's rounds: which benchmarks each `asv run` selects, and what a run keeps for --resume."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serkit.errors import SerkitError
from serkit.run.rounds import RunState, later_selection, split_bench_args
from serkit.suite.budget import SingleSample

SUITE = {
    "bench_time.Loads.time_loads": {
        "rounds": 5,
        "params": [["'json'", "'yaml'"], ["'small-dict'", "'random-dicts-1000'"]],
    },
    "bench_import.ImportTime.timeraw_import": {"rounds": 2, "params": [["'json'", "'yaml'"]]},
    "bench_facts.Implementation.track_compiled": {"params": [["'json'", "'yaml'"]]},
    "plain.time_it": {"rounds": 3, "params": []},
}
LOADS = "bench_time.Loads.time_loads"


def _selects(regexes: list[str], name: str) -> bool:
    return any(re.search(r, name) for r in regexes)


def test_each_benchmark_takes_part_in_as_many_rounds_as_it_declares() -> None:
    assert later_selection(SUITE, 1, [], []) == [
        r"^bench_import\.ImportTime\.timeraw_import\(",
        r"^bench_time\.Loads\.time_loads\(",
        r"^plain\.time_it$",
    ]
    assert len(later_selection(SUITE, 2, [], [])) == 2  # import time has had its 2 rounds
    assert later_selection(SUITE, 5, [], []) == []


def test_a_pair_timed_once_is_left_out_of_the_later_rounds() -> None:
    once = SingleSample("bench_time.Loads", ("yaml", "random-dicts-1000"), 3.0, 14.0)
    (loads,) = [r for r in later_selection(SUITE, 1, [], [once]) if "Loads" in r]
    assert not _selects([loads], f"{LOADS}('yaml', 'random-dicts-1000')")
    for pair in ("'yaml', 'small-dict'", "'json', 'random-dicts-1000'"):
        assert _selects([loads], f"{LOADS}({pair})")


def test_the_users_regex_still_holds_in_the_later_rounds() -> None:
    once = SingleSample("bench_time.Loads", ("yaml", "random-dicts-1000"), 3.0, 14.0)
    chosen = later_selection(SUITE, 1, ["yaml"], [once])
    assert _selects(chosen, f"{LOADS}('yaml', 'small-dict')")
    assert not _selects(chosen, f"{LOADS}('yaml', 'random-dicts-1000')")
    assert not _selects(chosen, f"{LOADS}('json', 'small-dict')")
    assert not _selects(chosen, "plain.time_it")


def test_bench_arguments_are_told_from_the_others() -> None:
    extra = ["-b", "Dumps", "--bench=Loads", "-bRound", "-e", "--machine", "m1"]
    assert split_bench_args(extra) == (["Dumps", "Loads", "Round"], ["-e", "--machine", "m1"])


def test_the_run_state_survives_a_round_trip_and_knows_where_to_go_on(tmp_path: Path) -> None:
    state = RunState("c0ffee", True, False, None, 5, ["env-a", "env-b"], {}, [], "notes")
    state.done += [(0, "env-a"), (0, "env-b"), (1, "env-a")]
    state.failed["env-b"] = "the disk is full"
    path = tmp_path / "bench-run.json"
    state.save(path)
    again = RunState.load(path)
    assert again == state
    assert again.next_round() == 2  # env-b failed: round 2 is the first left to do


def test_resuming_nothing_says_so(tmp_path: Path) -> None:
    with pytest.raises(SerkitError, match="nothing to resume"):
        RunState.load(tmp_path / "bench-run.json")
    (tmp_path / "bench-run.json").write_text("{")
    with pytest.raises(SerkitError, match="not a serkit run state"):
        RunState.load(tmp_path / "bench-run.json")
