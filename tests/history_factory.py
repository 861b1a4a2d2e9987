"""Several weeks of scheduled runs of one machine, merged into a store as CI does: for the
history view and its browser test. Made-up dates, real shapes (results_factory's files)."""

from __future__ import annotations

import datetime
from pathlib import Path

from results_factory import (
    COMMIT,
    DUMPS,
    LOADS,
    NEW,
    OLDER,
    PYTHONS_SUITE,
    _processes,
    results_file,
    write_benchmarks,
    write_results,
)

HISTORY_MACHINE = "ubuntu24-linux-x86-64-amd-epyc-7763-64-core-4cpu-66cc232b"
WEEK_MS = 7 * 86_400_000
FIRST_RUN_MS = 1_791_170_220_000  # Mon 2026-10-05 03:17 UTC, the workflow's cron
HOST_V1 = {
    "cpu_model": "AMD EPYC 7763 64-Core Processor",
    "logical_cpus": 4,
    "kernel": "6.8.0-1014-azure",
    "os_release": "Ubuntu 24.04.1 LTS",
    "image": "ubuntu24 20260928.1.0",
    "libc": "glibc 2.39",
    "cpu_microcode": "0xa0011d5",
    "cpu_flags": "avx avx2 fma sse4_2",
    "pythons": {"3.11": {"version": "3.11.10", "build_flags": ["--enable-optimizations"]}},
}
HOST_V2 = {**HOST_V1, "kernel": "6.8.0-1017-azure", "image": "ubuntu24 20261012.1.0"}
HOST_V3 = {**HOST_V2, "cpu_microcode": "0xa0011d7"}
# Week by week: (suite commit, ujson release, host, timings' factor, ujson dumps' factor),
# each timing with a wobble of up to 2 % of its own.
# Weeks 0-2 run one commit (the third on a new image); week 3 a new suite commit and a
# new ujson release, its dumps 20 % faster; week 5 new microcode, every time 15 % slower.
WEEKS = [
    (OLDER, "6.1.0", HOST_V1, 1.00, 1.0),
    (OLDER, "6.1.0", HOST_V1, 1.01, 1.0),
    (OLDER, "6.1.0", HOST_V2, 0.99, 1.0),
    (COMMIT, "6.2.0", HOST_V2, 1.00, 0.8),
    (COMMIT, "6.2.0", HOST_V2, 1.01, 0.8),
    (COMMIT, "6.2.0", HOST_V3, 1.15, 0.8),
]


def weekly_run(root: Path, week: int, machine: str = HISTORY_MACHINE) -> Path:
    """One scheduled run's artifact: the baseline on Python 3.11, its results file under
    asv's name, and its host entry naming the file the run filed (serkit.results.history)."""
    from serkit.results.history import dated_name
    from serkit.results.host_file import HOST_FILE, write_runs

    commit, ujson, host, factor, ujson_dumps = WEEKS[week]
    ran_at = FIRST_RUN_MS + week * WEEK_MS
    measured = {}
    for name, values_ in NEW.items():
        timed = PYTHONS_SUITE[name]["type"] == "time"
        # Each timing also moves by -2 % to +2 % from week to week, as runs do.
        scaled = [
            v * factor * (1 + 0.01 * ((week * 3 + i * 2) % 5 - 2)) if timed and v else v
            for i, v in enumerate(values_)
        ]
        if name == DUMPS:  # (ujson, *) are the last two of the grid
            scaled[2:] = [v * ujson_dumps for v in scaled[2:]]
        measured[name] = scaled
    samples = {name: [_processes(v, False) for v in measured[name]] for name in (DUMPS, LOADS)}
    env = {"python": "3.11", "requirements": {"ujson": ujson}}
    data = results_file(
        machine,
        measured,
        env=env,
        commit=commit,
        benchmarks=PYTHONS_SUITE,
        samples=samples,
        started_at=ran_at,
    )
    folder = write_results(root, machine, [data])
    (plain,) = [p.name for p in folder.glob("*.json") if p.name != "machine.json"]
    recorded = datetime.datetime.fromtimestamp(ran_at / 1000 + 60, datetime.timezone.utc)
    run = {
        "recorded_at": recorded.isoformat(timespec="seconds"),
        "hostname": f"fv-az{week}12-345",
        "shard": "1/2",
        "commit": commit,
        "environments": ["py3.11 baseline"],
        "results": [dated_name(plain, ran_at)],
        "measured_as": "full",
        **host,
    }
    write_runs(folder / HOST_FILE, machine, [run])
    write_benchmarks(root, PYTHONS_SUITE)
    return root


def weekly_store(root: Path, weeks: int = len(WEEKS)) -> Path:
    """A results store after `weeks` scheduled runs, each merged in as the workflow does."""
    from serkit.results.merge import merge

    def discover(folder: Path) -> Path:
        write_benchmarks(folder, PYTHONS_SUITE)
        return folder / "benchmarks.json"

    for week in range(weeks):
        merge([weekly_run(root.parent / f"{root.name}-artifact-{week}", week)], root, discover)
    return root
