"""A scheduled week on the History page: a new cbor2 release, found on a (made-up) package
index, and the sentinel drifting on the same runner kind; the page tells the two apart."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from results_factory import _processes, results_file, write_benchmarks, write_results

from serkit.codecs.spec import STDLIB
from serkit.report import html as report_html
from serkit.report.history import history_views
from serkit.results.history import dated_name
from serkit.results.host_file import HOST_FILE, write_runs
from serkit.results.merge import merge
from serkit.results.tree import read_tree
from serkit.run.index import PLATFORMS, IndexFile
from serkit.run.matrix import MatrixEnvironment, environments
from serkit.run.releases import Library, Releases, refresh
from serkit.run.sentinel import (
    SENTINEL_CODECS,
    SENTINEL_FIXTURES,
    SENTINEL_PYTHON,
    sentinel_environment,
    sentinel_machine,
    sentinel_pairs,
)
from serkit.suite.benchmark_names import DUMPS, LOADS
from serkit.suite.cases import LIBRARY_ENV

# Its module fixture merges a made-up week of results: built once on one xdist worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("history_sentinel")]

MACHINE = "ubuntu24-linux-x86-64-amd-epyc-7763-64-core-4cpu-66cc232b"
LINUX = PLATFORMS[0]
CODECS = [*SENTINEL_CODECS, "cbor2"]
GRID = [[repr(c) for c in CODECS], [repr(f) for f in SENTINEL_FIXTURES]]
SUITE = {
    DUMPS: {"type": "time", "unit": "seconds", "grid": GRID, "repeat": 1},
    LOADS: {"type": "time", "unit": "seconds", "grid": GRID, "repeat": 1},
}
HOST = {
    "cpu_model": "AMD EPYC 7763 64-Core Processor",
    "logical_cpus": 4,
    "kernel": "6.8.0-1017-azure",
    "image": "ubuntu24 20261012.1.0",
    "libc": "glibc 2.39",
    "cpu_microcode": "0xa0011d5",
    "cpu_flags": "avx avx2 fma sse4_2",
    "pythons": {SENTINEL_PYTHON: {"version": "3.12.8", "build_flags": []}},
}
MONDAY_MS = 1_791_170_220_000  # Mon 2026-10-05 03:17 UTC, the workflow's cron
WEEK_MS = 7 * 86_400_000


def _index(served: Mapping[str, Sequence[str]]) -> dict[str, list[IndexFile]]:
    """A made-up index of cbor2: per version, a compiled wheel for each Python listed."""
    files = []
    for version, pythons in served.items():
        files.append(IndexFile(f"cbor2-{version}.tar.gz", uploaded="2026-01-01T00:00:00Z"))
        for python in pythons:
            tag = "cp" + python.replace(".", "")
            files.append(IndexFile(f"cbor2-{version}-{tag}-{tag}-manylinux_2_17_x86_64.whl"))
    return {"cbor2": files}


def _releases(served: Mapping[str, Sequence[str]]) -> Releases:
    empty = Releases((SENTINEL_PYTHON,), 3, (Library("cbor2", ()),), None)
    return refresh(empty, _index(served).__getitem__, wanted={"cbor2": True})


def _file(
    env: MatrixEnvironment, factor: float, ran_at: int, machine: str = MACHINE
) -> dict[str, Any]:
    """The environment's results: its own codecs' dumps and loads, the others' none."""
    own = [
        (STDLIB if env.library == STDLIB else "cbor2") == (STDLIB if c != "cbor2" else "cbor2")
        for c in CODECS
    ]
    base = [10e-6 * (1 + i) for i in range(len(CODECS) * len(SENTINEL_FIXTURES))]
    measured = [
        b * factor if own[i // len(SENTINEL_FIXTURES)] else None for i, b in enumerate(base)
    ]
    values = {DUMPS: measured, LOADS: [None if v is None else v * 1.2 for v in measured]}
    samples = {name: [_processes(v, False) for v in vals] for name, vals in values.items()}
    shape = {
        "python": env.python,
        "requirements": env.requirements,
        "env_vars": {LIBRARY_ENV: env.library},
    }
    return results_file(
        machine, values, env=shape, benchmarks=SUITE, samples=samples, started_at=ran_at
    )


def _week(root: Path, files: Mapping[str, list[dict[str, Any]]], ran_at: int) -> Path:
    """One workflow run's artifact: per machine (the runner kind's, its sentinel's), its
    results files and its host entry naming them."""
    for machine, written in files.items():
        folder = write_results(root, machine, written)
        names = [p.name for p in folder.glob("*.json") if p.name != "machine.json"]
        recorded = datetime.datetime.fromtimestamp(ran_at / 1000 + 60, datetime.timezone.utc)
        run = {
            "recorded_at": recorded.isoformat(timespec="seconds"),
            "ci_run": str(ran_at),  # one workflow run: every shard's files
            "commit": written[0]["commit_hash"],
            "results": [dated_name(name, ran_at) for name in names],
            "measured_as": "full",
            **HOST,
        }
        write_runs(folder / HOST_FILE, machine, [run])
    write_benchmarks(root, SUITE)
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("sentinel")

    def discover(folder: Path) -> Path:
        write_benchmarks(folder, SUITE)
        return folder / "benchmarks.json"

    before = _releases({"6.2.1": [SENTINEL_PYTHON], "6.3.0": [SENTINEL_PYTHON]})
    after = _releases({"6.2.1": [SENTINEL_PYTHON], "6.3.0": ["3.12"], "6.4.0": ["3.12"]})
    # The week's scheduled run measures what is new, and the sentinel whatever the store holds.
    old = list(environments(platform=LINUX.name, data=before))
    new = [e for e in environments(platform=LINUX.name, data=after) if e not in old]
    assert [e.label for e in new] == ["py3.12 cbor2 6.4.0"]
    newest_before = next(e for e in old if e.library == "cbor2")
    sentinel = sentinel_environment()
    assert sentinel in old
    store = base / "store"
    watch = sentinel_machine(MACHINE)
    first = {
        MACHINE: [_file(sentinel, 1.0, MONDAY_MS), _file(newest_before, 1.0, MONDAY_MS)],
        watch: [_file(sentinel, 1.0, MONDAY_MS, watch)],
    }
    merge([_week(base / "week-0", first, MONDAY_MS)], store, discover)
    # A week on: cbor2 6.4.0 20 % faster; the sentinel, on an unchanged host, 15 % slower.
    monday = MONDAY_MS + WEEK_MS
    second = {MACHINE: [_file(new[0], 0.8, monday)], watch: [_file(sentinel, 1.15, monday, watch)]}
    merge([_week(base / "week-1", second, monday)], store, discover)
    return store


def test_the_release_and_the_runner_drift_are_told_apart(store: Path) -> None:
    kind, watch = history_views(read_tree(store))
    assert (kind.machine, watch.machine) == (MACHINE, sentinel_machine(MACHINE))
    assert kind.python == watch.python == SENTINEL_PYTHON
    # The runner kind's series: cbor2's release, its dumps and loads faster; no drift.
    (step,) = kind.steps
    assert step.releases == ["cbor2 6.3.0 → 6.4.0"] and step.marks == ["release"]
    assert step.called and {c.codec for c in step.called} == {"cbor2"}
    assert all(c.verdict == "faster" for c in step.called) and step.drift == []
    # The sentinel's series: every pair slower, with no release, host or suite change.
    (moved,) = watch.steps
    assert moved.releases == [] and moved.host == [] and moved.code == []
    assert moved.marks == ["runner drift"]
    drifted = {(c.codec, c.fixture) for c in moved.drift}
    assert drifted == {(c, f) for c in SENTINEL_CODECS for f in SENTINEL_FIXTURES}
    assert len(moved.drift) == len(sentinel_pairs())  # dumps and loads of each
    assert moved.drift_percent == pytest.approx(15.0, abs=1.0)


def test_the_history_page_says_both(store: Path, tmp_path: Path) -> None:
    written = report_html.write_report(tmp_path, store, tmp_path / "reports", asv_runner=None)
    page = (written.folder / "history.html").read_text()
    assert "release: cbor2 6.3.0 → 6.4.0" in page
    assert "runner drift: 12 sentinel pairs moved, median +15.0 %" in page


def test_a_host_change_explains_a_sentinel_move_so_it_is_no_drift(store: Path) -> None:
    _, watch = history_views(read_tree(store))
    (step,) = watch.steps
    after = type(step.after)(step.after.run, {**HOST, "cpu_microcode": "0xa0011d7"})
    moved = type(step)(step.before, after, step.changes, sentinel=True)
    assert moved.host == ["cpu microcode 0xa0011d5 → 0xa0011d7"]
    assert moved.drift == [] and moved.marks == ["host"]
