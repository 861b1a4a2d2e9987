"""The asv suite, run for real by asv on a small slice of the grid.

In this interpreter (an `existing` environment), with results in a temporary folder:
it proves that discovery works, that results are written, and that they hold timings,
sizes equal to serkit's own, and the facts beside them.

asv starts a process for every cell of the grid, even one the suite then skips: the
whole grid, some 7,500 cells, took 114 CPU-s, most of this module's cost. So the run asks
asv (`-b`) for every cell of the benchmarks whose whole grid a test reads (bench_time.Dumps,
the facts taken per codec, the overhead pair), and for the other benchmarks the slice's
cells and those beside it that a test reads as skipped: each of those still goes through
the suite's own skip (SERKIT_BENCH_CODECS, SERKIT_BENCH_MEMORY...), never asv's selection.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from serkit import codec_names, fixture_names
from serkit.checks.sizes import measure_fixture
from serkit.run.runner import scratch_config
from serkit.suite.budget import NOTES_ENV
from serkit.suite.cases import CODECS_ENV, COMPRESSORS, FIXTURES_ENV
from serkit.suite.memory import MEMORY_ENV

# Its module fixture is a real run: every test of the module on one xdist worker runs it
# once (pytest -n auto --dist loadgroup, noxfile.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("asv_suite")]


ROOT = Path(__file__).resolve().parents[1]
CODECS = ["json", "orjson", "msgpack"]
FIXTURES = ["random-dicts-10", "small-dict"]
# A codec outside the slice whose cells the tests read as skipped by the suite itself.
BESIDE = "ujson"
# asv's -b matches `name('codec', 'fixture', ...)` for each cell of a parametrized benchmark.
WHOLE_GRID = [
    r"^bench_time\.Dumps\.",
    r"^bench_facts\.Implementation\.",
    r"^bench_import\.",
    r"^bench_overhead\.",
]
NEAR_SLICE = [
    rf"\('({'|'.join([*CODECS, BESIDE])})', '({'|'.join(FIXTURES)})'",
    # The schema facts take typed codecs only (none in the slice): their skipped cells on
    # the slice's fixtures, so that the results hold a row for every benchmark, as before.
    rf"^bench_facts\.Schema\w*\.\w+\('[^']+', '({'|'.join(FIXTURES)})'",
]


def _asv(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "asv", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def slice_scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real asv run of the slice; its results are under results/serkit-test/."""
    scratch = tmp_path_factory.mktemp("asv")
    config = str(scratch_config(ROOT, scratch))
    # Its own HOME, so that the user's asv machine profile is neither read nor written.
    env = {**os.environ, "HOME": str(scratch), CODECS_ENV: ",".join(CODECS)}
    env[FIXTURES_ENV] = ",".join(FIXTURES)
    env[MEMORY_ENV] = "1"  # as a full run measures memory per call
    env[NOTES_ENV] = str(scratch / "notes")  # as serkit bench: each sample's canary noted
    machine = _asv(["machine", "--yes", "--machine", "serkit-test"], env)
    assert machine.returncode == 0, machine.stdout + machine.stderr
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    run = _asv(
        [
            *("run", "--config", config, "-E", f"existing:{sys.executable}"),
            *("--set-commit-hash", commit, "--machine", "serkit-test"),
            *("-a", "rounds=1", "-a", "repeat=3", "--record-samples"),
            *(arg for regex in (*WHOLE_GRID, *NEAR_SLICE) for arg in ("-b", regex)),
        ],
        env,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return scratch


@pytest.fixture(scope="module")
def slice_results(slice_scratch: Path) -> dict[str, dict[str, Any]]:
    (results_file,) = (slice_scratch / "results" / "serkit-test").glob("*-*.json")
    data = json.loads(results_file.read_text())  # Python's json reads asv's NaN tokens
    return {name: dict(zip(data["result_columns"], row)) for name, row in data["results"].items()}


def _cells(row: dict[str, Any]) -> dict[tuple[str, ...], float]:
    """Benchmark values by parameters: asv stores them flattened, params as repr()."""
    import itertools

    params = [[json.loads(p.replace("'", '"')) for p in axis] for axis in row["params"]]
    return dict(zip(itertools.product(*params), row["result"]))


def _measured(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def test_every_timed_sample_keeps_its_canary(slice_scratch: Path) -> None:
    """The canary notes of a real asv run find their samples, every one (serkit.sample_speed)."""
    from serkit.results.asv_file import attach_notes as attach
    from serkit.results.tree import read_tree

    (results_file,) = (slice_scratch / "results" / "serkit-test").glob("*-*.json")
    copy = slice_scratch / "with-canary"
    shutil.copytree(slice_scratch / "results", copy, dirs_exist_ok=True)
    assert attach(copy / "serkit-test" / results_file.name, slice_scratch / "notes")
    tree = read_tree(copy)
    timed = [
        m
        for m in tree.machines["serkit-test"].measurements
        if m.benchmark.startswith("bench_time.") and m.samples
    ]
    assert len(timed) == len(CODECS) * len(FIXTURES) * 3  # dumps, loads, round trip
    for m in timed:
        assert len(m.canary) == len(m.samples) and all(m.canary), m
        assert m.canary_reference and all(p.how for p in m.processes)
    # One note a process (each pair ran in one), though asv tore each down at every sample.
    rows = json.loads((copy / "serkit-test" / results_file.name).read_text())["serkit_canary"]
    counts = [
        len(notes)
        for name, by_params in rows["rows"].items()
        for notes in by_params.values()
        if name.startswith("bench_time.")
    ]
    assert counts == [1] * len(timed)


def test_asv_check_accepts_the_suite(tmp_path: Path) -> None:
    config = str(scratch_config(ROOT, tmp_path))
    done = _asv(["check", "--config", config, "-E", f"existing:{sys.executable}"], dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_grid_is_whole_and_only_the_slice_is_measured(
    slice_results: dict[str, dict[str, Any]],
) -> None:
    cells = _cells(slice_results["bench_time.Dumps.time_dumps"])
    assert len(cells) == len(codec_names()) * len(fixture_names())  # skipped, never missing
    measured = {pair for pair, value in cells.items() if _measured(value)}
    assert measured == {(c, f) for c in CODECS for f in FIXTURES}
    for pair in measured:
        assert 1e-8 < cells[pair] < 1e-2, pair  # seconds per call: µs, not µs x inner loops


def test_loads_and_round_trip_are_timed(slice_results: dict[str, dict[str, Any]]) -> None:
    for name in ("bench_time.Loads.time_loads", "bench_time.RoundTrip.time_round_trip"):
        cells = _cells(slice_results[name])
        assert all(_measured(cells[c, f]) for c in CODECS for f in FIXTURES), name
        assert slice_results[name]["stats_q_25"] is not None  # a spread, not one sample


def test_size_tracks_equal_serkit_sizes_exactly(slice_results: dict[str, dict[str, Any]]) -> None:
    sizes = _cells(slice_results["bench_size.EncodedSize.track_bytes"])
    compressed = _cells(slice_results["bench_size.CompressedSize.track_bytes"])
    for fixture in FIXTURES:
        for result in measure_fixture(fixture, CODECS):
            assert sizes[result.codec, fixture] == result.bytes
            for compressor in COMPRESSORS:
                assert 0 < compressed[result.codec, fixture, compressor] <= result.bytes + 64


def test_facts_are_recorded_beside_the_timings(slice_results: dict[str, dict[str, Any]]) -> None:
    compiled = _cells(slice_results["bench_facts.Implementation.track_compiled"])
    assert all(compiled[(c,)] == 1 for c in CODECS)
    exact = _cells(slice_results["bench_facts.Fidelity.track_exact"])
    assert exact["json", "random-dicts-10"] == 0  # int keys come back as str
    assert exact["orjson", "small-dict"] == 1
    key_order_only = _cells(slice_results["bench_facts.KeyOrder.track_key_order_only"])
    assert key_order_only["json", "random-dicts-10"] == 0  # lost more than key order
    assert not _measured(key_order_only["orjson", "small-dict"])  # exact: skipped
    imports = _cells(slice_results["bench_import.ImportTime.timeraw_import"])
    assert all(_measured(imports[(c,)]) for c in CODECS)
    assert not _measured(imports[("ujson",)])  # outside the slice: skipped


def test_memory_per_call_is_measured_and_checked(slice_results: dict[str, dict[str, Any]]) -> None:
    from serkit.suite.allocations import unavailable
    from serkit.suite.benchmark_names import ALLOCATIONS, MEMORY_CHECK, PEAK

    if unavailable() is not None:
        pytest.skip(str(unavailable()))
    sizes = _cells(slice_results["bench_size.EncodedSize.track_bytes"])
    for operation in ("dumps", "loads"):
        peaks = _cells(slice_results[PEAK[operation]])
        counts = _cells(slice_results[ALLOCATIONS[operation]])
        checks = _cells(slice_results[MEMORY_CHECK[operation]])
        assert slice_results[ALLOCATIONS[operation]]["result"] is not None
        for pair in ((c, f) for c in CODECS for f in FIXTURES):
            assert checks[pair] == 1 and counts[pair] >= 1, (operation, pair)
            if operation == "dumps":
                assert peaks[pair] >= sizes[pair], pair
        assert not _measured(peaks["ujson", "small-dict"])  # outside the slice: skipped


def test_the_report_reads_a_real_run_and_asv_publishes_beside_it(slice_scratch: Path) -> None:
    from serkit.report.html import write_report
    from serkit.report.views import READ_BENCHMARKS
    from serkit.run import runner as bench

    described = json.loads((slice_scratch / "results" / "benchmarks.json").read_text())
    assert set(READ_BENCHMARKS) <= set(described)  # the report's names are the suite's
    written = write_report(
        ROOT,
        slice_scratch / "results",
        slice_scratch / "reports",
        asv_runner=lambda root, args: bench.asv(root, args, quiet=True),
    )
    assert written.asv_pages and (written.folder / "asv" / "index.html").is_file()
    assert written.warnings == []
    page = (written.folder / "fixture-small-dict.html").read_text()
    for codec in CODECS:
        assert f'<th class="name" scope="row">{codec}<' in page  # its row's header cell
    assert page.count(" µs<br>") + page.count(" ns<br>") >= 3 * len(CODECS)  # dumps, loads, rt


def test_every_declared_benchmark_name_is_discovered(slice_scratch: Path) -> None:
    from serkit.suite import benchmark_names

    declared: set[str] = set()
    for name, value in vars(benchmark_names).items():
        if name.startswith(("_", "TRY_")):  # serkit try's names: its trees', not the suite's
            continue
        if isinstance(value, str) and value.count(".") == 2:
            declared.add(value)
        elif isinstance(value, dict):
            declared.update(value.values())
    described = json.loads((slice_scratch / "results" / "benchmarks.json").read_text())
    assert set(benchmark_names.INSTRUCTIONS.values()) <= declared
    assert declared <= set(described)


def test_instruction_counts_are_skipped_unless_asked_for(
    slice_results: dict[str, dict[str, Any]],
) -> None:
    for name in ("bench_instructions.Instructions.track_dumps",):
        cells = _cells(slice_results[name])
        assert len(cells) == len(codec_names()) * len(fixture_names())  # skipped, not missing
        assert not any(_measured(value) for value in cells.values())


def test_adapter_and_direct_calls_are_timed_side_by_side(
    slice_results: dict[str, dict[str, Any]],
) -> None:
    for name in (
        "bench_overhead.DumpsOverhead.time_dumps",
        "bench_overhead.LoadsOverhead.time_loads",
    ):
        cells = _cells(slice_results[name])
        assert len(cells) == len(codec_names()) * 2  # one fixture, two calls: skipped, not missing
        measured = {pair for pair, value in cells.items() if _measured(value)}
        assert measured == {
            (c, "small-dict", call) for c in CODECS for call in ("adapter", "direct")
        }


def test_results_files_still_parse_after_asv_is_killed_at_a_random_moment(
    slice_scratch: Path, tmp_path: Path
) -> None:
    """`kill -9` of asv at a random point never leaves a cut-off JSON file (serkit's plugin
    makes asv's writes atomic); the values written before are kept."""
    import random
    import shutil
    import signal
    import time

    from serkit.run.process import kill_session

    scratch = tmp_path / "scratch"
    shutil.copytree(slice_scratch, scratch, ignore=shutil.ignore_patterns("reports"))
    config = str(scratch_config(ROOT, scratch))
    env = {**os.environ, "HOME": str(scratch), CODECS_ENV: "json", FIXTURES_ENV: "small-dict"}
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    command = [sys.executable, "-m", "asv", "run", "--config", config]
    command += ["-E", f"existing:{sys.executable}", "--set-commit-hash", commit]
    command += ["--machine", "serkit-test", "-a", "rounds=1", "-b", "bench_time.Dumps"]
    seed = random.randrange(2**32)
    moments = random.Random(seed).sample([i / 10 for i in range(2, 60)], 3)
    for moment in moments:
        asv = subprocess.Popen(
            command, cwd=ROOT, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(moment)
        if asv.poll() is None:
            os.kill(asv.pid, signal.SIGKILL)
        asv.wait()
        kill_session(asv.pid)  # its benchmark server, left without asv
        written = sorted((scratch / "results").rglob("*.json"))
        assert len(written) >= 3, written  # machine.json, benchmarks.json, the results
        for path in written:
            try:
                json.loads(path.read_text())
            except ValueError as exc:
                pytest.fail(f"{path} cut off by a kill {moment} s in (seed {seed}): {exc}")
    (results_file,) = (scratch / "results" / "serkit-test").glob("*-*.json")
    data = json.loads(results_file.read_text())
    rows = {name: dict(zip(data["result_columns"], row)) for name, row in data["results"].items()}
    assert _measured(_cells(rows["bench_time.Loads.time_loads"])["json", "small-dict"])
