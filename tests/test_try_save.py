"""`serkit try --into DIR`: a trial saved as an asv results tree that `serkit compare` reads,
so a user's own document compares across days and machines without becoming a fixture."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from serkit.checks.fidelity import EXACT, FidelityResult
from serkit.cli import main
from serkit.results.tree import read_tree
from serkit.suite.benchmark_names import TRY_SIZE as SIZE
from serkit.suite.benchmark_names import TRY_TIME as TIMES
from serkit.trial.sampling import SAMPLES_PER_PROCESS
from serkit.trial.save import COMMIT, save
from serkit.trial.timings import Timing, judged
from serkit.trial.trials import CodecTrial, DocumentTrial

# Ten processes whose values spread about 2 % in a fixed pattern: deterministic, no clock.
PATTERN = (0.0, 0.01, -0.01, 0.005, -0.004, 0.012, -0.008, 0.003, -0.002, 0.007)
AGAIN = (0.004, -0.006, 0.009, -0.001, 0.002, -0.009, 0.011, 0.0, -0.003, 0.006)
SECONDS = {"json": (20e-6, 30e-6), "orjson": (4e-6, 6e-6)}  # dumps, loads
WITHIN = (1.0, 1.01, 1.02, 1.005, 1.03)  # a process's samples over its least
CANARY_NS = (20_000.0, 20_100.0)  # before and after each sample: the fast state


def timing(
    seconds: float,
    factor: float,
    pattern: tuple[float, ...],
    slow: frozenset[int] = frozenset(),
    slowing: float = 1.7,
) -> Timing:
    """A process per value of `pattern`, judged as `serkit try` judges them; the processes
    numbered in `slow` timed wholly in the slow state, `slowing` times slower, their canary
    1.7 times."""
    samples: list[float] = []
    canary: list[tuple[float, float]] = []
    for at, p in enumerate(pattern):
        times, reads = (slowing, 1.7) if at in slow else (1.0, 1.0)
        samples += [seconds * factor * (1 + p) * times * w for w in WITHIN]
        canary += [(CANARY_NS[0] * reads, CANARY_NS[1] * reads)] * len(WITHIN)
    raw = Timing(tuple(samples), 100, canary=tuple(canary), per_process=SAMPLES_PER_PROCESS)
    return judged({("codec", "dumps"): raw}, "run")["codec", "dumps"]


def trial(factor: float = 1.0, pattern: tuple[float, ...] = PATTERN) -> DocumentTrial:
    codecs = tuple(
        CodecTrial(
            codec,
            "json",
            codec,
            FidelityResult(codec, "orders.json", EXACT, bytes=1000 + len(codec)),
            dumps=timing(dumps, factor, pattern),
            loads=timing(loads, factor, pattern),
        )
        for codec, (dumps, loads) in SECONDS.items()
    )
    return DocumentTrial("/data/my orders.json", "json", 1200, None, codecs, 1.0, 25.0, 15, 2.0)


def compare(
    capsys: pytest.CaptureFixture[str], root: Path, *extra: str
) -> tuple[int, dict[str, Any], str]:
    args = ["compare", "monday", "tuesday", "--results", str(root), "--format", "json", *extra]
    code = main(args)
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_a_saved_trial_reads_as_asv_results(tmp_path: Path) -> None:
    written = save([trial()], tmp_path, "monday")
    assert written.parent == tmp_path / "monday"
    tree = read_tree(tmp_path)
    assert not tree.warnings
    values = {(m.benchmark, m.params): m for m in tree.machines["monday"].measurements}
    dumps = values[TIMES["dumps"], ("'json'", "'my_orders.json'")]
    assert dumps.value == pytest.approx(20e-6 * 1.0015)  # the median of the pattern
    assert dumps.iqr is not None and dumps.iqr[0] < dumps.value < dumps.iqr[1]
    assert values[SIZE, ("'orjson'", "'my_orders.json'")].value == 1006
    assert tree.benchmark(TIMES["loads"]).param_names == ("codec", "document")


def test_an_injected_20_percent_fails_the_check_and_an_a_a_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slower, same = tmp_path / "slower", tmp_path / "same"
    save([trial()], slower, "monday")
    save([trial(1.2, AGAIN)], slower, "tuesday")
    code, data, err = compare(capsys, slower, "--fail-on", "slower:10")
    assert code == 1, err
    assert "FAILED: 4 of 4 timing(s)" in err
    timings = [p for p in data["pairs"] if p["kind"] == "time"]
    assert {p["verdict"] for p in timings} == {"slower"}
    assert all(p["ratio"] == pytest.approx(1.2, rel=0.01) for p in timings)
    save([trial()], same, "monday")
    save([trial(1.0, AGAIN)], same, "tuesday")
    code, data, err = compare(capsys, same, "--fail-on", "slower:10")
    assert code == 0, err
    sizes = [p for p in data["pairs"] if p["benchmark"] == SIZE]
    assert [p["verdict"] for p in sizes] == ["same", "same"]


def test_trials_of_two_methods_are_not_paired_and_the_reason_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    save([trial()], tmp_path, "monday")
    # Tuesday's as an older version of try's method would have filed it: another commit.
    monkeypatch.setattr("serkit.trial.save.COMMIT", "0" * 40)
    save([trial()], tmp_path, "tuesday")
    code = main(["compare", "monday", "tuesday", "--results", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err
    assert "two versions of serkit try's method" in err
    assert "run `serkit try --into` again for both" in err


def test_saving_twice_keeps_both_runs(tmp_path: Path) -> None:
    first = save([trial()], tmp_path, "monday")
    second = save([trial(1.1)], tmp_path, "monday")
    assert first != second and first.is_file() and second.is_file()


def test_another_suites_results_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "benchmarks.json").write_text(json.dumps({"bench_time.Dumps.time_dumps": {}}))
    document = tmp_path / "doc.json"
    document.write_text('{"a": 1}')
    code = main(["try", str(document), "--codec", "json", "--into", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 3
    assert "another suite's results" in err and "Traceback" not in err


@pytest.mark.slow
def test_serkit_try_save_then_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = tmp_path / "orders.json"
    document.write_text(
        json.dumps([{"id": i, "name": f"n{i}", "ok": i % 2 == 0} for i in range(50)])
    )
    saved = tmp_path / "saved"
    for machine in ("monday", "tuesday"):
        args = ["try", str(document), "--codec", "json,orjson", "--budget", "2"]
        assert main([*args, "--into", str(saved), "--machine", machine]) == 0
        assert f"serkit compare {machine} OTHER --results {saved}" in capsys.readouterr().err
    code, data, err = compare(capsys, saved)
    assert code == 0, err  # no speed is asserted: only that the two runs pair up
    paired = {(p["benchmark"], p["params"]["codec"]) for p in data["pairs"]}
    assert paired == {(name, codec) for name in [*TIMES.values(), SIZE] for codec in SECONDS}


def test_machine_without_save_and_a_bad_machine_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = tmp_path / "doc.json"
    document.write_text("[1]")
    assert main(["try", str(document), "--machine", "m"]) == 2
    assert "--into" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["try", str(document), "--into", str(tmp_path), "--machine", "../up"])
    assert exited.value.code == 2


def test_a_saved_tree_describes_each_benchmark_whole_as_asv_reads_it(tmp_path: Path) -> None:
    """Issue 56: benchmarks.json held no parameters, and `asv publish` stopped on it with
    KeyError: 'params'. Each save now adds its codecs and documents to those saved before."""
    other = dataclasses.replace(trial(), path="/data/other.json", codecs=trial().codecs[:1])
    first = save([trial()], tmp_path, "monday")
    save([other], tmp_path, "tuesday")
    listed = json.loads((tmp_path / "benchmarks.json").read_text())
    version = json.loads(first.read_text())["results"][SIZE][2]  # each row's code version
    for name in [*TIMES.values(), SIZE]:
        row = listed[name]
        assert row["param_names"] == ["codec", "document"] and row["version"] == version
        assert row["params"] == [["'json'", "'orjson'"], ["'my_orders.json'", "'other.json'"]]
    assert listed["version"] == 2


@pytest.mark.slow  # real asv
def test_serkit_report_of_a_saved_tree_writes_asvs_pages_or_says_why_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 56: `serkit report` of a `try --into` tree printed asv's traceback and wrote
    no asv pages. Now asv's pages are written, and one line says why they plot nothing:
    a trial's commit is its method's, on no branch of the checkout."""
    pytest.importorskip("asv")
    save([trial()], tmp_path / "saved", "monday")
    reports = tmp_path / "reports"
    assert main(["report", "--results", str(tmp_path / "saved"), "--into", str(reports)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "KeyError" not in err
    assert "asv publish failed" not in err
    (why,) = [line for line in err.splitlines() if "asv's pages show no results" in line]
    assert COMMIT[:8] in why
    (index,) = reports.glob("*/asv/index.json")
    assert sorted(json.loads(index.read_text())["benchmarks"]) == sorted([*TIMES.values(), SIZE])
