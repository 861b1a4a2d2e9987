"""Estimated cycles: cachegrind's cache-sim output read, the cycle estimate, and where time
and the simulated cycles disagree about a change."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from results_factory import TIMES, results_file, write_benchmarks, write_machine

from serkit.cli import main
from serkit.compare.comparison import Comparison, Pair, compare, disagreement
from serkit.compare.verdicts import FASTER, HIGHER, LOWER, SAME, SLOWER, WITHIN_NOISE
from serkit.errors import SerkitError
from serkit.results.tree import read_tree
from serkit.suite.cachegrind import (
    Count,
    PairCounts,
    estimated_cycles,
    parse_totals,
    read_totals,
)
from serkit.suite.instructions import Counted

# A cachegrind output file as valgrind 3.19 writes it with --cache-sim=yes (its header and
# totals as cachegrind wrote them for /usr/bin/true here; one function's line kept).
CACHE_SIM_OUTPUT = """\
desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         8388608 B, 64 B, 16-way associative
cmd: /usr/bin/true
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\x20
fl=???
fn=0x0000000000001100
1 6 1 1 2 0 0 1 0 0
summary: 127679 1091 1072 29390 1227 1017 10265 344 311
"""
# The same with --cache-sim=no: instructions only.
NO_CACHE_SIM_OUTPUT = "desc: I1 cache:\ncmd: /usr/bin/true\nevents: Ir\nsummary: 127679\n"


def test_a_cache_sim_output_is_read_by_its_events_line() -> None:
    totals = parse_totals(CACHE_SIM_OUTPUT.encode())
    assert totals == {
        "Ir": 127679,
        "I1mr": 1091,
        "ILmr": 1072,
        "Dr": 29390,
        "D1mr": 1227,
        "DLmr": 1017,
        "Dw": 10265,
        "D1mw": 344,
        "DLmw": 311,
    }
    assert parse_totals(NO_CACHE_SIM_OUTPUT.encode()) == {"Ir": 127679}


def test_a_files_totals_are_read_from_its_ends_whatever_lies_between(tmp_path: Path) -> None:
    # As large as a Python process's: 100,000 functions' lines between the header and the
    # summary, of which only the ends are read; the file is removed once read.
    header, summary = CACHE_SIM_OUTPUT.split("fl=???")
    body = "".join(f"fn=f{i}\n1 2 3 4 5 6 7 8 9 10\n" for i in range(100_000))
    for between in ("fl=???", body):
        written = tmp_path / "cg.7"
        written.write_text(header + between + summary)
        assert read_totals(written) == parse_totals(CACHE_SIM_OUTPUT.encode())
        assert not written.exists()


def test_an_output_without_its_summary_or_with_a_short_one_is_refused() -> None:
    with pytest.raises(SerkitError, match="no cachegrind events and summary"):
        parse_totals(b"events: Ir\n", "cg.42")
    with pytest.raises(SerkitError, match="gives 2 counts for 9 events"):
        header = CACHE_SIM_OUTPUT.split("summary:")[0]
        parse_totals(f"{header}summary: 127679 1091\n".encode())
    with pytest.raises(SerkitError, match="not counts"):
        parse_totals(b"events: Ir\nsummary: many\n")


def test_the_cycle_estimate_weighs_l1_misses_10_and_last_level_misses_100() -> None:
    totals = parse_totals(CACHE_SIM_OUTPUT.encode())
    l1 = 1091 + 1227 + 344  # instruction fetch, data read and data write misses at L1
    last_level = 1072 + 1017 + 311
    assert estimated_cycles(totals) == 127679 + 10 * l1 + 100 * last_level == 394_299
    # Per call, from differences of totals: fractions are kept.
    assert estimated_cycles({"Ir": 100.5, **dict.fromkeys(("I1mr", "D1mr", "D1mw"), 0.5)}) is None
    per_call = {"Ir": 1000.0, "I1mr": 1.0, "D1mr": 2.0, "D1mw": 0.5, "ILmr": 0.0}
    assert estimated_cycles({**per_call, "DLmr": 0.25, "DLmw": 0.0}) == 1000 + 35 + 25
    assert estimated_cycles(parse_totals(NO_CACHE_SIM_OUTPUT.encode())) is None  # no cache-sim


def test_cycles_are_kept_with_the_counts_and_read_back() -> None:
    pair = PairCounts("json", "small-dict", {"dumps": Count(2.5e5, 50, 3.1e5)})
    assert PairCounts.from_dict(json.loads(json.dumps(pair.as_dict()))) == pair
    # A count stored before cycles were simulated reads back without them.
    old = {"codec": "json", "fixture": "small-dict", "counts": {"dumps": [2.5e5, 50]}}
    older = PairCounts.from_dict({**old, "skipped": None, "seconds": 1.0})
    assert older.counts["dumps"] == Count(2.5e5, 50, None)
    counted = Counted({("json", "small-dict"): pair, ("json", "senate-bios"): older})
    assert counted.cycles_per_call("json", "small-dict", "dumps") == 3.1e5
    with pytest.raises(SerkitError, match="without cache-sim"):
        counted.cycles_per_call("json", "senate-bios", "dumps")
    with pytest.raises(SerkitError, match="not counted"):
        counted.cycles_per_call("orjson", "small-dict", "dumps")


TIMING = "bench_time.Dumps.time_dumps"
CYCLES = "bench_instructions.Instructions.track_cycles_dumps"


def _hosts(root: Path) -> Comparison:
    """Two hosts, b's timings and cycles moved pair by pair (json/orjson x small/large)."""
    grid = [["'json'", "'orjson'"], ["'small'", "'large'"]]
    suite = {
        TIMING: {"type": "time", "unit": "seconds", "grid": grid},
        CYCLES: {"type": "track", "unit": "estimated cycles", "grid": grid},
    }
    write_benchmarks(root, suite)
    cycles = [310_000.0, 11_000_000.0, 31_000.0, 700_000.0]
    # json small: time x2 (beyond its +-5 % intervals), cycles unchanged: they disagree.
    # json large: time x2, cycles x1.9: they agree.
    # orjson small: time x1.02 (within noise), cycles +30 % (over the 10 % floor): disagree.
    # orjson large: time x1.02, cycles +0.05 % (the same, within 0.5 %): they agree.
    b_times = [t * f for t, f in zip(TIMES, (2, 2, 1.02, 1.02))]
    b_cycles = [c * f for c, f in zip(cycles, (1.0, 1.9, 1.3, 1.0005))]
    for host, found in (
        ("a", {TIMING: TIMES, CYCLES: cycles}),
        ("b", {TIMING: b_times, CYCLES: b_cycles}),
    ):
        write_machine(root, host, [results_file(host, found, benchmarks=suite)])
    return compare(read_tree(root), "a", "b")


def _timing(result: Comparison, codec: str, fixture: str) -> Pair:
    return next(
        p
        for p in result.pairs
        if p.benchmark.name == TIMING
        and (p.params["codec"], p.params["fixture"]) == (codec, fixture)
    )


def test_time_and_cycles_disagreeing_are_said_in_words(tmp_path: Path) -> None:
    result = _hosts(tmp_path)
    beside = result.cycles_beside()
    verdicts = {
        pair: (_timing(result, *pair).verdict, beside[id(_timing(result, *pair))].verdict)
        for pair in (("json", "small"), ("json", "large"), ("orjson", "small"), ("orjson", "large"))
    }
    assert verdicts == {
        ("json", "small"): (SLOWER, SAME),
        ("json", "large"): (SLOWER, HIGHER),
        ("orjson", "small"): (WITHIN_NOISE, HIGHER),
        ("orjson", "large"): (WITHIN_NOISE, SAME),  # within 0.5 %
    }
    found = {(p.params["codec"], p.params["fixture"]): words for p, words in result.disagreements()}
    assert set(found) == {("json", "small"), ("orjson", "small")}
    assert found["json", "small"] == (
        "time and simulated cycles disagree: the time was called slower (time +100.0 %) but the "
        "simulated cycles did not move (simulated cycles +0.0 %): the code did the same work, so "
        "the machine, not the code, likely moved the time"
    )
    assert found["orjson", "small"] == (
        "time and simulated cycles disagree: the simulated cycles moved (simulated cycles "
        "+30.0 %, more), by at least the 10.0% the time could have called, but the time was "
        "within noise (time +2.0 %)"
    )


def test_time_and_cycles_going_opposite_ways_or_cycles_too_small_disagree(tmp_path: Path) -> None:
    result = _hosts(tmp_path)
    timing = _timing(result, "json", "large")  # slower, x2
    cycles = result.cycles_beside()[id(timing)]
    assert disagreement(timing, cycles) is None  # x1.9: the code's change
    fewer = replace(cycles, ratio=0.8, verdict=LOWER)
    assert "went the other way (simulated cycles -20.0 %)" in (disagreement(timing, fewer) or "")
    faster = replace(timing, ratio=0.5, verdict=FASTER)
    assert disagreement(faster, fewer) == (
        "time and simulated cycles disagree: the time was called faster (time -50.0 %) but the "
        "simulated cycles moved only simulated cycles -20.0 %, too little to account for it: "
        "most of the change is the machine's, not the code's"
    )
    assert disagreement(faster, replace(cycles, ratio=0.7, verdict=LOWER)) is None  # half of it
    # Within noise, a cycles change smaller than what the time could call is no contradiction.
    quiet = replace(timing, ratio=1.01, verdict=WITHIN_NOISE, detectable=0.08)
    assert disagreement(quiet, replace(cycles, ratio=1.05)) is None
    assert "at least the 8.0% the time" in (disagreement(quiet, replace(cycles, ratio=1.09)) or "")
    assert disagreement(timing, None) is None  # no cycles counted: nothing to say


def test_compare_and_the_hosts_page_show_cycles_beside_time_and_the_disagreements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _hosts(tmp_path)
    assert main(["compare", "a", "b", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out  # what changed: a timing the cycles contradict says so
    assert "2.00x slower (cycles disagree)" in out
    assert "Time and simulated cycles disagree on 2 timing(s) (--all lists them)." in out
    assert main(["compare", "a", "b", "--results", str(tmp_path), "--all", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "Estimated cycles per call: instructions plus 10 per L1 miss" in out
    assert "Time and simulated cycles disagree on 2 timing(s):" in out
    assert "same DISAGREES" in out and "+90.00 % (higher)" in out
    assert main(["compare", "a", "b", "--results", str(tmp_path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["disagreements"] == 2 and data["cycles"]["timings"] == 4
    timed = {
        (p["params"]["codec"], p["params"]["fixture"]): p
        for p in data["pairs"]
        if p["benchmark"] == TIMING
    }
    assert timed["json", "large"]["cycles"]["verdict"] == HIGHER
    assert timed["json", "large"]["disagreement"] is None
    assert "did not move" in timed["json", "small"]["disagreement"]
    from serkit.report.html import write_report

    written = write_report(tmp_path, tmp_path, tmp_path / "reports", asv_runner=None)
    hosts = (written.folder / "hosts.html").read_text()
    assert "Time and simulated cycles disagree on 2 timing(s)" in hosts
    assert "likely moved the time" in hosts and "(disagrees)" in hosts
    assert "estimated cycles</th>" in hosts


def test_fail_on_fails_only_the_slowdowns_the_simulated_cycles_confirm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _hosts(tmp_path)
    # json small: x2 by time, cycles unchanged: the machine's, cleared. json large: x2 by
    # time, x1.9 by cycles: the code's, failed. orjson: within noise by time, never failed.
    code = main(["compare", "a", "b", "--results", str(tmp_path), "--fail-on", "slower:10"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "--fail-on slower:10: FAILED: 1 of 4 timing(s)" in err
    failed, cleared = err.split("did not fail")
    assert "[json, large]" in failed and "[json, small]" not in failed
    assert "[json, small]" in cleared and "the machine, not the code" in cleared
    assert "judged by time alone" not in err  # every timing had its cycles


def test_fail_on_without_cycles_says_it_judged_by_time_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _hosts(tmp_path)
    root = tmp_path / "time-only"
    shutil.copytree(tmp_path, root, ignore=shutil.ignore_patterns("time-only"))
    for path in root.glob("*/*.json"):  # b's and a's cycles gone: time alone
        data = json.loads(path.read_text())
        if isinstance(data.get("results"), dict):
            data["results"].pop(CYCLES, None)
            path.write_text(json.dumps(data))
    code = main(["compare", "a", "b", "--results", str(root), "--fail-on", "slower:10"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "FAILED: 2 of 4 timing(s)" in err  # both json pairs, x2 by time
    assert "4 of 4 timing(s) were judged by time alone" in err
