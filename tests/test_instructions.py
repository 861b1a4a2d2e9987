"""Instruction counts: the difference method, the skips, and two runs agreeing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

from serkit.errors import SerkitError
from serkit.suite import instructions
from serkit.suite.cachegrind import (
    CACHE_MODEL,
    LADDER,
    TARGET_INSTRUCTIONS,
    Count,
    PairCounts,
    calls_for,
)
from serkit.suite.cases import INJECT_ENV, INSTRUCTIONS_ENV
from serkit.suite.facts import FACTS_DIR_ENV
from serkit.suite.instructions import (
    MISSING_VALGRIND,
    OPT_IN,
    TOO_SLOW,
    Counted,
    count_pairs,
    count_selected,
    unavailable,
    worker_environment,
)

# Its module fixture is a real run: every test of the module on one xdist worker runs it
# once (pytest -n auto --dist loadgroup, noxfile.py).
pytestmark = pytest.mark.xdist_group("instructions")

_VALGRIND = pytest.mark.skipif(
    instructions.valgrind_path() is None, reason="valgrind is not installed"
)


def needs_valgrind(test: Callable[..., None]) -> Callable[..., None]:
    """Skipped without valgrind, and `slow` with it: Python under cachegrind, 10-80 s."""
    marked: Callable[..., None] = pytest.mark.slow(_VALGRIND(test))
    return marked


# Counted under cachegrind: a loop of n rounds costs a + b * n instructions per call.
SYNTHETIC = textwrap.dedent(
    """
    import itertools
    import json
    from serkit.suite.cachegrind import _added, count_calls

    def spin(n):
        for _ in itertools.repeat(None, n):
            pass

    spins = {"0": 0, "half": 1000, "k": 2000, "2k": 4000, "50k": 50_000}
    counts = count_calls({name: (spin, n) for name, n in spins.items()})
    # +20 %: 4 extra calls in every 20, as SERKIT_BENCH_INJECT=0.2 makes the timed bodies.
    injected = count_calls({f"{k}+": (spin, spins[k]) for k in ("k", "50k")}, injected=(4, 20))
    added = _added({"10": (spin, 1000, 10), "20": (spin, 1000, 20)})
    ir = {name: events["Ir"] for name, events in added.items()}
    counted = {**counts, **injected}
    print(json.dumps({**{k: [c.per_call, c.calls, c.cycles] for k, c in counted.items()}, **ir}))
    """
)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("cachegrind")
    (folder / "synthetic.py").write_text(SYNTHETIC)
    command = [
        *("valgrind", "--tool=cachegrind", "--cache-sim=yes", *CACHE_MODEL),
        "--cachegrind-out-file=cg.%p",
        *("-q", sys.executable, "synthetic.py"),
    ]
    env = {**worker_environment(), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.slow
@needs_valgrind
def test_the_difference_method_counts_work_in_proportion(synthetic: dict[str, Any]) -> None:
    empty, once, twice = synthetic["0"][0], synthetic["k"][0], synthetic["2k"][0]
    assert 0 < empty < once < twice
    # 2000 more rounds cost the same, whether added to 0 rounds or to 2000.
    assert twice - once == pytest.approx(once - empty, rel=0.01)
    assert synthetic["0"][1] == max(LADDER)  # a cheap call is repeated the most
    # A loop in cache: its estimated cycles are its instructions, give or take a few misses
    # (a difference of two processes' misses may come out a fraction below zero per call).
    assert synthetic["k"][2] == pytest.approx(synthetic["k"][0], rel=0.01)


@pytest.mark.slow
@needs_valgrind
def test_n_calls_and_2n_calls_differ_by_n_calls(synthetic: dict[str, Any]) -> None:
    # What else a counting process executes (the fork, the loop's first rounds) is the
    # same for 10 and 20 calls: their difference is 10 calls (the count itself took 100
    # and 200, when the interpreter has finished specialising the loop: 0.02 % apart).
    tenth = (synthetic["20"] - synthetic["10"]) / 10
    assert tenth == pytest.approx(synthetic["half"][0], rel=0.001)
    # spin(1000) costs halfway between spin(0) and spin(2000), counted in other processes.
    halfway = (synthetic["0"][0] + synthetic["k"][0]) / 2
    assert synthetic["half"][0] == pytest.approx(halfway, rel=0.001)


@pytest.mark.slow
@needs_valgrind
def test_an_injected_change_reaches_the_counts_by_calls_really_made(
    synthetic: dict[str, Any],
) -> None:
    # A cheap call and one counted a few at a time: each counted as before (the same n),
    # and both read the 20 % more calls their timed bodies would make, as 20 % more a call,
    # in instructions and in estimated cycles alike.
    for name in ("k", "50k"):
        plain, injected = synthetic[name], synthetic[f"{name}+"]
        assert injected[1] == plain[1]
        assert injected[0] == pytest.approx(1.2 * plain[0], rel=0.005)
        assert injected[2] == pytest.approx(1.2 * plain[2], rel=0.005)
    assert synthetic["50k"][1] < 20  # the ladder takes it a few at a time


# One pair counted by two runs at once (one run's wall time), shared by the tests below:
# the first in this process, keeping its count in a store of its own; the second in another
# process (its own environment), with the store off, so that it counts afresh.
PAIR = ("json", "sensor-record")
SECOND_RUN = (
    "import json, sys\n"
    "from serkit.suite.instructions import count_pairs\n"
    "print(json.dumps(count_pairs([tuple(sys.argv[1:3])], jobs=1)[tuple(sys.argv[1:3])].as_dict()))"
)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PairCounts, PairCounts]:
    """The store the first run kept its count in, the first run's count and the second's."""
    store = tmp_path_factory.mktemp("facts")
    env = {**os.environ, FACTS_DIR_ENV: "off"}
    command = [sys.executable, "-c", SECOND_RUN, *PAIR]
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as second_run:
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setenv(FACTS_DIR_ENV, str(store))
            first = count_pairs([PAIR], jobs=1)[PAIR]
        out, err = second_run.communicate()
    assert second_run.returncode == 0, err[-2000:]
    return store, first, PairCounts.from_dict(json.loads(out))


@needs_valgrind
def test_two_runs_agree_on_a_pair(two_runs: tuple[Path, PairCounts, PairCounts]) -> None:
    _, first, second = two_runs
    assert first.skipped is None and second.skipped is None
    for operation in ("dumps", "loads"):
        a, b = first.counts[operation], second.counts[operation]
        assert a.calls == b.calls > 1
        assert a.per_call == pytest.approx(b.per_call, rel=0.005)
        assert 1_000 < a.per_call < 1_000_000  # instructions for one small record
        assert a.cycles is not None and b.cycles is not None
        assert a.per_call < a.cycles == pytest.approx(b.cycles, rel=0.005)


def test_a_missing_valgrind_skips_every_pair_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind there
    monkeypatch.setenv(INSTRUCTIONS_ENV, "1")
    assert unavailable() == MISSING_VALGRIND
    assert "apt install valgrind" in MISSING_VALGRIND and "\n" not in MISSING_VALGRIND
    counted = count_pairs([("json", "small-dict"), ("orjson", "small-dict")])
    assert {pair.skipped for pair in counted.values()} == {MISSING_VALGRIND}
    with pytest.raises(SerkitError, match="valgrind"):
        Counted(counted).per_call("json", "small-dict", "dumps")


def test_counting_is_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSTRUCTIONS_ENV, raising=False)
    assert unavailable() == OPT_IN
    assert count_selected((["json"], ["small-dict"])) == Counted()  # nothing run
    assert instructions.opt_in_environment() == {INSTRUCTIONS_ENV: "1"}
    assert unavailable(instructions.opt_in_environment()) in (None, MISSING_VALGRIND)


@pytest.mark.slow
@needs_valgrind
def test_the_native_gate_skips_slow_and_unsupported_pairs_with_the_reason() -> None:
    pairs = [("json", "small-dict"), ("orjson", "sensor-record")]
    counted = count_pairs(pairs, native_limit_s=0.0)  # every pair is too slow: no valgrind
    assert (counted[pairs[0]].skipped or "").startswith(TOO_SLOW)
    assert "s here, over the 0 s limit" in (counted[pairs[0]].skipped or "")
    assert "orjson cannot encode ImuSample" in (counted[pairs[1]].skipped or "")


def test_the_calls_stay_within_the_target() -> None:
    assert calls_for(TARGET_INSTRUCTIONS * 2) == 1  # one call over the target: counted once
    assert calls_for(TARGET_INSTRUCTIONS / 7) == 5
    assert calls_for(10) == max(LADDER)


def test_counted_reads_a_pair_back_or_says_why_not() -> None:
    counted = Counted(
        {
            ("json", "small-dict"): PairCounts("json", "small-dict", {"dumps": Count(2.5e5, 50)}),
            ("yaml", "senate-bios"): PairCounts("yaml", "senate-bios", {}, f"{TOO_SLOW}: 0.5 s"),
        }
    )
    assert counted.per_call("json", "small-dict", "dumps") == 2.5e5
    with pytest.raises(SerkitError, match=TOO_SLOW):
        counted.per_call("yaml", "senate-bios", "loads")
    with pytest.raises(SerkitError, match="not counted"):
        counted.per_call("orjson", "small-dict", "dumps")
    pair = counted.pairs["json", "small-dict"]
    assert PairCounts.from_dict(json.loads(json.dumps(pair.as_dict()))) == pair


def test_the_workers_environment_is_fixed() -> None:
    first = worker_environment({"HOME": "/h", "TERM": "xterm", "PYTHONHASHSEED": "7"})
    assert first == worker_environment({"HOME": "/h", "COLUMNS": "80"})
    assert first["PYTHONHASHSEED"] == "0" and "rep_movsb" in first["GLIBC_TUNABLES"]
    assert os.defpath == first["PATH"]


@pytest.mark.slow
@needs_valgrind
def test_a_counted_pair_is_reused_from_the_store_by_release_python_and_document(
    two_runs: tuple[Path, PairCounts, PairCounts], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, first, _ = two_runs  # the first run's count, kept in its store
    monkeypatch.setenv(FACTS_DIR_ENV, str(store))
    assert first.skipped is None and first.counts["dumps"].cycles is not None
    assert len(list(store.glob("*/*.json"))) == 1  # kept under the pair's key

    def no_valgrind(*args: Any) -> Any:
        raise AssertionError("a stored pair was counted again")

    monkeypatch.setattr(instructions, "_run_worker", no_valgrind)
    assert count_pairs([PAIR])[PAIR] == first  # read back whole, valgrind not started
    # Counted another way (another target), it is another key: its worker is started and
    # what it counts is kept beside the first. (The worker's counting is the two runs' own.)
    started: list[int] = []

    def worker(*args: Any) -> dict[tuple[str, str], PairCounts]:
        started.append(args[-1])
        return {PAIR: first}

    monkeypatch.setattr(instructions, "_run_worker", worker)
    assert count_pairs([PAIR], target=TARGET_INSTRUCTIONS // 10)[PAIR] == first
    assert started == [TARGET_INSTRUCTIONS // 10] and len(list(store.glob("*/*.json"))) == 2


def test_the_codecs_are_dealt_to_the_workers_so_that_they_finish_together() -> None:
    def rows(codec: str, counted: int) -> list[tuple[str, str, str | None]]:
        return [(codec, f"f{i}", None if i < counted else "not selected") for i in range(6)]

    groups = [rows("a", 1), rows("b", 5), rows("c", 3), rows("d", 2)]
    shares = instructions._shares(groups, 2)
    counted = [sum(row[2] is None for rows in share for row in rows) for share in shares]
    assert counted == [6, 5]  # the most pairs first, each to the emptier worker
    assert [[rows[0][0] for rows in share] for share in shares] == [["b", "a"], ["c", "d"]]
    assert instructions._shares(groups[:1], 2) == [[groups[0]]]  # one codec: one worker


def test_an_injected_count_is_kept_apart_from_plain_ones_and_from_the_old_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(INJECT_ENV, raising=False)
    plain = instructions.counts_measure("true", 1_000)
    monkeypatch.setenv(INJECT_ENV, "0.10")
    injected = instructions.counts_measure("true", 1_000)
    assert "injected" not in plain and "injected_format" not in plain
    # The extra calls have been counted over the pair's own n since format 2: a count the
    # store holds from the first way is counted again, never read back.
    assert injected["injected_format"] == instructions.INJECTED_FORMAT == 2
    assert {k: v for k, v in injected.items() if not k.startswith("injected")} == plain
