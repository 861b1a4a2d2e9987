"""Small asv results trees (format version 2), written the way asv writes them.

For the tests of `serkit compare` and `serkit hosts`: a generic suite with one timing,
one size, one memory track and one unparameterized timing, two codecs and two fixtures.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.suite.benchmark_names import (
    ALLOCATIONS,
    COMPILED,
    DUMPS,
    INSTRUCTIONS,
    LOADS,
    MEMORY_CHECK,
    PEAK,
    ROUND_TRIP_EXACT,
    ROUND_TRIP_KEY_ORDER_ONLY,
    SCHEMA,
    SCHEMA_SUPPLIED,
    SIZE,
)
from serkit.suite.benchmark_names import OVERHEAD as OVERHEAD_BENCHMARKS
from serkit.suite.cases import LIBRARY_ENV

CODECS = ["json", "orjson"]
FIXTURES = ["small", "large"]
GRID = [["'json'", "'orjson'"], ["'small'", "'large'"]]  # asv stores params as repr()
COLUMNS = [
    "result",
    "params",
    "version",
    "started_at",
    "duration",
    "stats_ci_99_a",
    "stats_ci_99_b",
    "stats_q_25",
    "stats_q_75",
    "stats_number",
    "stats_repeat",
    "samples",
    "profile",
]
BENCHMARKS: dict[str, dict[str, Any]] = {
    "bench_time.Dumps.time_dumps": {"type": "time", "unit": "seconds", "grid": GRID},
    "bench_size.Size.track_bytes": {"type": "track", "unit": "bytes", "grid": GRID},
    "bench_memory.Peak.track_dumps_rss": {"type": "track", "unit": "bytes", "grid": GRID},
    "bench_plain.Startup.time_startup": {"type": "time", "unit": "seconds", "grid": []},
}
# In itertools.product(GRID) order: (json, small), (json, large), (orjson, small), ...
TIMES = [2e-6, 300e-6, 1e-6, 100e-6]
SIZES = [52, 52003, 48, 48000]
RSS = [4096, 2_097_152, 4096, 1_048_576]
STARTUP = [0.02]
ENV = {"python": "3.11", "requirements": {"orjson": "3.10.18", "ujson": "5.10.0"}}
COMMIT = "1234567890abcdef1234567890abcdef12345678"
OLDER = "fedcba0987654321fedcba0987654321fedcba09"


def values(time_factor: float = 1.0) -> dict[str, list[float | None]]:
    """The suite's values, every timing multiplied by `time_factor`."""
    return {
        "bench_time.Dumps.time_dumps": [t * time_factor for t in TIMES],
        "bench_size.Size.track_bytes": list(SIZES),
        "bench_memory.Peak.track_dumps_rss": list(RSS),
        "bench_plain.Startup.time_startup": [t * time_factor for t in STARTUP],
    }


def _row(
    name: str,
    result: Sequence[float | None],
    spread: float | None,
    benchmarks: Mapping[str, Mapping[str, Any]] = BENCHMARKS,
    samples: Sequence[Sequence[float] | None] | None = None,
    started_at: int = 1_700_000_000_000,
) -> list[Any]:
    info = benchmarks.get(name, {"type": "time", "grid": []})
    row: dict[str, Any] = {
        "result": [float("nan") if v is None else v for v in result],  # asv's NaN token
        "params": info["grid"],
        "version": info.get("version", f"code-of-{name}"),
        "started_at": started_at,
        "duration": 1.5,
    }
    if info["type"] == "time" and spread is not None:
        row["stats_ci_99_a"] = [None if v is None else v * (1 - spread) for v in result]
        row["stats_ci_99_b"] = [None if v is None else v * (1 + spread) for v in result]
        row["stats_q_25"] = [None if v is None else v * (1 - spread / 2) for v in result]
        row["stats_q_75"] = [None if v is None else v * (1 + spread / 2) for v in result]
        row["stats_number"] = [None if v is None else 100 for v in result]
        row["stats_repeat"] = [None if v is None else 3 for v in result]
    if samples is not None:  # asv run --record-samples: one list per parameter set
        row["samples"] = [None if s is None else list(s) for s in samples]
    out = [row.get(column) for column in COLUMNS]
    while out and out[-1] is None:  # asv drops trailing empty columns
        out.pop()
    return out


def results_file(
    machine: str,
    results: Mapping[str, Sequence[float | None]],
    *,
    env: Mapping[str, Any] = ENV,
    commit: str = COMMIT,
    date: int = 1_700_000_000_000,
    spread: float | None = 0.05,
    profile: Mapping[str, str] | None = None,
    benchmarks: Mapping[str, Mapping[str, Any]] = BENCHMARKS,
    samples: Mapping[str, Sequence[Sequence[float] | None]] | None = None,
    started_at: int = 1_700_000_000_000,
) -> dict[str, Any]:
    """One asv results file's content; the host's own fields go into `params`, as asv does.

    `samples` gives, by benchmark, the samples asv kept of each parameter set;
    `started_at` is when asv started each benchmark (the run's moment), ms since the epoch."""
    requirements = dict(env["requirements"])
    return {
        "commit_hash": commit,
        "env_name": "virtualenv-py"
        + env["python"]
        + "".join(f"-{k}{v}" for k, v in requirements.items()),
        "date": date,
        "params": {**(profile or {}), "machine": machine, "python": env["python"], **requirements},
        "python": env["python"],
        "requirements": requirements,
        "env_vars": dict(env.get("env_vars", {})),
        "result_columns": COLUMNS,
        "results": {
            name: _row(name, result, spread, benchmarks, (samples or {}).get(name), started_at)
            for name, result in results.items()
        },
        "durations": {},
        "version": 2,
    }


def write_machine(
    root: Path,
    machine: str,
    files: Sequence[Mapping[str, Any]] = (),
    profile: Mapping[str, str] | None = None,
) -> Path:
    """results/<machine>/machine.json and each results file, named as asv names them."""
    folder = root / machine
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "machine.json").write_text(
        json.dumps({**(profile or {}), "machine": machine, "version": 1})
    )
    for i, data in enumerate(files):
        name = f"{data['commit_hash'][:8]}-env-{i}.json"
        (folder / name).write_text(json.dumps(data, separators=(",", ":")))
    return folder


def write_benchmarks(root: Path, benchmarks: Mapping[str, Mapping[str, Any]] = BENCHMARKS) -> None:
    """The shared results/benchmarks.json."""
    described = {
        name: {
            "name": name,
            "type": info["type"],
            "unit": info["unit"],
            "param_names": list(info.get("param_names", ["codec", "fixture"][: len(info["grid"])])),
            "params": info["grid"],
            "version": info.get("version", f"code-of-{name}"),
            **({"repeat": info["repeat"]} if "repeat" in info else {}),
        }
        for name, info in benchmarks.items()
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "benchmarks.json").write_text(json.dumps({**described, "version": 2}))


def two_hosts(
    root: Path,
    time_factor: float = 1.0,
    b_changes: Mapping[str, Sequence[float | None]] | None = None,
) -> Path:
    """Hosts a and b, one environment each, the same commit; b's timings x time_factor,
    and then `b_changes`, by benchmark name."""
    write_benchmarks(root)
    a_profile = {
        "cpu": "Intel Xeon",
        "num_cpu": "4",
        "os": "Linux 6.1",
        "arch": "x86_64",
        "ram": "16GB",
    }
    b_profile = {
        "cpu": "AMD EPYC",
        "num_cpu": "2",
        "os": "Linux 5.15",
        "arch": "x86_64",
        "ram": "8GB",
    }
    write_machine(root, "a", [results_file("a", values(), profile=a_profile)], a_profile)
    b_values = values(time_factor)
    b_values.update(b_changes or {})
    write_machine(root, "b", [results_file("b", b_values, profile=b_profile)], b_profile)
    return root


# --- serkit's own suite, for the report ------------------------------------------------

OVERHEAD_DUMPS = OVERHEAD_BENCHMARKS["dumps"]
CODECS = ["json", "ujson"]
FIXTURES = ["small-dict", "random-dicts-10"]
PAIR_GRID = [[repr(c) for c in CODECS], [repr(f) for f in FIXTURES]]
CODEC_GRID = [[repr(c) for c in CODECS]]
SUITE = {
    DUMPS: {"type": "time", "unit": "seconds", "grid": PAIR_GRID},
    LOADS: {"type": "time", "unit": "seconds", "grid": PAIR_GRID},
    SIZE: {"type": "track", "unit": "bytes", "grid": PAIR_GRID},
    ROUND_TRIP_EXACT: {"type": "track", "unit": "1 = exact", "grid": PAIR_GRID},
    COMPILED: {
        "type": "track",
        "unit": "1 = compiled",
        "grid": CODEC_GRID,
        "param_names": ["codec"],
    },
    **{name: {"type": "track", "unit": "bytes", "grid": PAIR_GRID} for name in PEAK.values()},
    **{
        name: {"type": "track", "unit": "allocations", "grid": PAIR_GRID}
        for name in ALLOCATIONS.values()
    },
    **{
        name: {"type": "track", "unit": "1 = peak reaches its floor", "grid": PAIR_GRID}
        for name in MEMORY_CHECK.values()
    },
    **{
        name: {"type": "track", "unit": "instructions", "grid": PAIR_GRID}
        for name in INSTRUCTIONS.values()
    },
    OVERHEAD_DUMPS: {
        "type": "time",
        "unit": "seconds",
        "grid": [PAIR_GRID[0], ["'small-dict'"], ["'adapter'", "'direct'"]],
        "param_names": ["codec", "fixture", "call"],
    },
}
# In grid order: (json, small-dict), (json, random-dicts-10), (ujson, small-dict), (ujson, rd10)
NEW = {
    DUMPS: [10e-6, 40e-6, 5e-6, 20e-6],
    LOADS: [12e-6, 50e-6, 6e-6, 30e-6],
    SIZE: [1762, 3000, 1500, 2800],
    ROUND_TRIP_EXACT: [1, 0, 1, 0],
    COMPILED: [1, 1],
    # json's adapter 10 % over its direct call (beyond ±2.5 % IQRs), ujson's 1 %.
    OVERHEAD_DUMPS: [1.10e-6, 1.0e-6, 1.0e-6, 0.99e-6],
    # Memory per call as measured here (python -m serkit.suite.memory), bytes and counts;
    # ujson's loads of small-dict is marked suspect, below its floor.
    PEAK["dumps"]: [26749, 265661, 3064, 58428],
    PEAK["loads"]: [15019, 112292, 15804, 236176],
    ALLOCATIONS["dumps"]: [502, 7278, 100, 2955],
    ALLOCATIONS["loads"]: [343, 5259, 114, 2167],
    MEMORY_CHECK["dumps"]: [1, 1, 1, 1],
    MEMORY_CHECK["loads"]: [1, 1, 0, 1],
    # Instructions per call as counted here (serkit.suite.instructions).
    INSTRUCTIONS["dumps"]: [281425, 10004626, 105425, 2485553],
    INSTRUCTIONS["loads"]: [245293, 4842523, 128463, 2231387],
}
# ujson's older release: dumps of small-dict 2x slower (beyond the noise), random-dicts-10
# 1 % faster (inside it), and one size smaller: its float output grew in the newer release.
OLD_UJSON = {**NEW, DUMPS: [None, None, 10e-6, 19.8e-6], SIZE: [None, None, 1400, 2800]}
# Its dumps made 120 allocations of small-dict, not 100 (exact: a change); its peak on
# random-dicts-10 was 2.7 % larger (a change), on small-dict 0.2 % (within 1 %: the same).
OLD_UJSON[ALLOCATIONS["dumps"]] = [None, None, 120, 2955]
OLD_UJSON[PEAK["dumps"]] = [None, None, 3070, 60000]
# Its dumps of small-dict executed 118,000 instructions, not 105,425 (the newer does
# 10.7 % fewer); of random-dicts-10, 0.002 % more: as two runs differ, the same.
OLD_UJSON[INSTRUCTIONS["dumps"]] = [None, None, 118000, 2485600]
BASELINE = {"python": "3.11", "requirements": {"ujson": "6.1.0"}}
AXIS = {**BASELINE, "requirements": {"ujson": "5.10.0"}, "env_vars": {LIBRARY_ENV: "ujson"}}


def serkit_tree(root: Path, machines: tuple[str, ...] = ("box-a", "box-b")) -> Path:
    """serkit's benchmark names: per machine, a baseline and a ujson axis environment;
    each machine's timings are the first's times (1 + its index)."""
    write_benchmarks(root, SUITE)
    for i, machine in enumerate(machines):
        # Only timings differ between machines: sizes, facts and memory are counted.
        slower = {
            k: [v * (1 + i) if v and SUITE[k]["type"] == "time" else v for v in vals]
            for k, vals in NEW.items()
        }
        files = [
            results_file(machine, slower, env=BASELINE, benchmarks=SUITE),
            results_file(machine, OLD_UJSON, env=AXIS, benchmarks=SUITE),
        ]
        write_machine(root, machine, files)
    return root


# serkit's timed benchmarks keep one sample per process (asv's repeat = 1).
PER_PROCESS = {
    "bench_time.Dumps.time_dumps": {"type": "time", "unit": "seconds", "grid": GRID, "repeat": 1}
}


def per_process_tree(
    root: Path,
    processes_a: Sequence[Sequence[float]],
    processes_b: Sequence[Sequence[float]],
    *,
    hosts: tuple[str, str] = ("a", "b"),
) -> Path:
    """Two hosts' dumps timings, each parameter set with its per-process samples."""
    write_benchmarks(root, PER_PROCESS)
    for host, processes in zip(hosts, (processes_a, processes_b)):
        medians = [statistics.median(p) for p in processes]
        data = results_file(
            host,
            {"bench_time.Dumps.time_dumps": medians},
            benchmarks=PER_PROCESS,
            samples={"bench_time.Dumps.time_dumps": processes},
        )
        write_machine(root, host, [data])
    return root


# --- many hosts, sharded: what a CI runner matrix uploads -------------------------------

# Three kinds of runner, as bench.yml's matrix has them: a name, asv's profile, the CPU
# serkit records, and how much slower than the first its timings are.
RUNNERS = {
    "ubuntu24-linux-x86-64-amd-epyc-7763-64-core-4cpu-66cc232b": (
        {"cpu": "AMD EPYC 7763", "num_cpu": "4", "arch": "x86_64", "os": "Linux 6.8"},
        "AMD EPYC 7763 64-Core Processor",
        1.0,
    ),
    "ubuntu24-linux-aarch64-arm-neoverse-n2-0x41-0xd49-4cpu-87c2317b": (
        {"cpu": "", "num_cpu": "4", "arch": "aarch64", "os": "Linux 6.8"},
        "ARM Neoverse-N2 (0x41:0xd49)",
        1.5,
    ),
    "macos14-macos-arm64-apple-m1-virtual-3cpu-d3656341": (
        {"cpu": "Apple M1 (Virtual)", "num_cpu": "3", "arch": "arm64", "os": "Darwin 23.6"},
        "Apple M1 (Virtual)",
        0.8,
    ),
}
SHARDED_ENVS = [
    BASELINE,
    AXIS,
    {"python": "3.12", "requirements": {"ujson": "6.1.0"}},
    {"python": "3.12", "requirements": {"ujson": "5.10.0"}, "env_vars": {LIBRARY_ENV: "ujson"}},
]


def write_results(
    root: Path,
    machine: str,
    files: Sequence[Mapping[str, Any]],
    profile: Mapping[str, str] | None = None,
) -> Path:
    """Like write_machine, each file named as asv names it: <commit8>-<env_name>.json."""
    folder = root / machine
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "machine.json").write_text(
        json.dumps({**(profile or {}), "machine": machine, "version": 1})
    )
    for data in files:
        name = f"{data['commit_hash'][:8]}-{data['env_name']}.json"
        (folder / name).write_text(json.dumps(data, separators=(",", ":")))
    return folder


def shard_results(
    root: Path, machine: str, shard: int, shards: int, *, cpu_model: str | None = None
) -> Path:
    """One CI job's artifact: the results tree of shard K of N on one kind of runner."""
    from serkit.results.host_file import HOST_FILE, write_runs

    profile, model, factor = RUNNERS[machine]
    files = []
    for env in SHARDED_ENVS[shard - 1 :: shards]:
        axis = "env_vars" in env
        timed = OLD_UJSON if axis else NEW
        scaled = {
            k: [v * factor if v and k in (DUMPS, LOADS) else v for v in vals]
            for k, vals in timed.items()
        }
        files.append(results_file(machine, scaled, env=env, benchmarks=SUITE, profile=profile))
    write_benchmarks(
        root, {**SUITE, "stale.Old.time_gone": BENCHMARKS["bench_plain.Startup.time_startup"]}
    )
    folder = write_results(root, machine, files, profile)
    run = {
        "recorded_at": f"2026-11-2{shard}T0{shard}:00:00+00:00",
        "hostname": f"fv-az{shard}{len(machine)}-{shard}",
        "shard": f"{shard}/{shards}",
        "commit": COMMIT,
        "environments": [str(env["python"]) for env in SHARDED_ENVS[shard - 1 :: shards]],
        "cpu_model": cpu_model or model,
        "logical_cpus": int(profile["num_cpu"]),
    }
    write_runs(folder / HOST_FILE, machine, [run])
    return root


# --- baselines on several Pythons, for the Python-versions view ------------------------

# serkit's timed benchmarks keep one sample per process: here, five processes a value
# (one, where a list below says so), spread by ±0.5 % around the median.
PYTHONS_SUITE = {
    **SUITE,
    DUMPS: {**SUITE[DUMPS], "repeat": 1},
    LOADS: {**SUITE[LOADS], "repeat": 1},
}
# The baseline on three Pythons. ujson 6.1.0 has no wheel for 3.9, so 3.9's has 5.10.0.
# In grid order: (json, small-dict), (json, random-dicts-10), (ujson, small-dict), (ujson, rd10)
PYTHON_BASELINES: dict[str, dict[str, Any]] = {
    "3.9": {
        "requirements": {"ujson": "5.10.0"},
        DUMPS: [10e-6, 40e-6, 5e-6, 20e-6],
        SIZE: [1762, 3000, 1400, 2800],
        INSTRUCTIONS["dumps"]: [300000, 10004626, 105425, 2485553],
        INSTRUCTIONS["loads"]: [245293, 4842523, 128463, 2231387],
    },
    # json's dumps of small-dict 2x slower (beyond the noise), of random-dicts-10 1 %
    # slower (within it); ujson's small-dict encodes 100 B larger (another release).
    # json's dumps of small-dict executes fewer instructions, its loads more; ujson's
    # dumps of small-dict one more in 105,425: the same, as two runs differ.
    "3.11": {
        "requirements": {"ujson": "6.1.0"},
        DUMPS: [20e-6, 40.4e-6, 5e-6, 20e-6],
        SIZE: [1762, 3000, 1500, 2800],
        INSTRUCTIONS["dumps"]: [281425, 10004626, 105426, 2485553],
        INSTRUCTIONS["loads"]: [260000, 4842523, 128463, 2231387],
    },
    # ujson's dumps of small-dict timed in one process (over the quick run's budget).
    "3.12": {
        "requirements": {"ujson": "6.1.0"},
        DUMPS: [20e-6, 40.4e-6, 4.5e-6, 20e-6],
        SIZE: [1762, 3000, 1500, 2800],
        INSTRUCTIONS["dumps"]: [281425, 10004626, 105426, 2485553],
        INSTRUCTIONS["loads"]: [260000, 4842523, 128463, 2231387],
        "single": [(DUMPS, 2)],
    },
}


def _processes(median: float | None, single: bool) -> list[float] | None:
    if median is None:
        return None
    if single:
        return [median]
    return [median * f for f in (0.995, 0.998, 1.0, 1.002, 1.005)]


def python_baselines(root: Path, machine: str = "box-py") -> Path:
    """One machine's baseline on Pythons 3.9, 3.11 and 3.12 (PYTHON_BASELINES), with the
    per-process samples of every dumps and loads timing."""
    write_benchmarks(root, PYTHONS_SUITE)
    files = []
    for python, given in PYTHON_BASELINES.items():
        measured = {**NEW, **{k: v for k, v in given.items() if k in PYTHONS_SUITE}}
        single = set(given.get("single", ()))
        samples = {
            name: [_processes(v, (name, i) in single) for i, v in enumerate(measured[name])]
            for name in (DUMPS, LOADS)
        }
        env = {"python": python, "requirements": given["requirements"]}
        files.append(
            results_file(machine, measured, env=env, benchmarks=PYTHONS_SUITE, samples=samples)
        )
    write_machine(root, machine, files)
    return root


# --- schema codecs beside schemaless ones, for the schema column and the typed chart ------

TYPED_CODECS = ["json", "msgspec-json", "msgspec-struct-json", "pydantic-json", "protobuf"]
TYPED_GRID = [[repr(c) for c in TYPED_CODECS], ["'twitter'"]]
TYPED_SUITE = {
    name: {"type": kind, "unit": unit, "grid": TYPED_GRID}
    for name, kind, unit in (
        (DUMPS, "time", "seconds"),
        (LOADS, "time", "seconds"),
        (SIZE, "track", "bytes"),
        (SCHEMA, "track", "sha256"),
        (SCHEMA_SUPPLIED, "track", "1 when the user supplied the schema"),
    )
}
TWITTER_SCHEMA = "1aedbbd64230"  # the pinned schema's first 12 hex digits
TYPED_VALUES: dict[str, list[float | None]] = {
    DUMPS: [1.2e-3, 0.25e-3, 0.2e-3, 1.1e-3, 0.9e-3],
    LOADS: [1.8e-3, 1.0e-3, 0.8e-3, 2.5e-3, 0.7e-3],
    SIZE: [466906, 466906, 466906, 466906, 223740],
    # json and msgspec-json need no schema: skipped (None); the schema codecs' hash.
    SCHEMA: [None, None, *[float(int(TWITTER_SCHEMA, 16))] * 3],
    SCHEMA_SUPPLIED: [None, None, 0.0, 0.0, 0.0],  # derived
}


def typed_tree(root: Path, machine: str = "box-typed", *, supplied: bool = False) -> Path:
    """One machine's baseline with schema codecs and schemaless ones on twitter; with
    `supplied`, their schema is one the user supplied."""
    write_benchmarks(root, TYPED_SUITE)
    env = {"python": "3.11", "requirements": {"msgspec": "0.22.0", "pydantic": "2.14.4"}}
    values = {**TYPED_VALUES, SCHEMA_SUPPLIED: [None, None, *[float(supplied)] * 3]}
    write_machine(root, machine, [results_file(machine, values, env=env, benchmarks=TYPED_SUITE)])
    return root


# --- a ranked verdict with a known answer: ties, a clear order, lossy codecs apart ---------

VERDICT_CODECS = ["json", "ujson", "orjson", "msgspec-json", "msgspec-struct-json", "protobuf"]
VERDICT_FIXTURES = ["small-dict", "twitter"]
VERDICT_GRID = [[repr(c) for c in VERDICT_CODECS], [repr(f) for f in VERDICT_FIXTURES]]
VERDICT_SUITE = {
    DUMPS: {"type": "time", "unit": "seconds", "grid": VERDICT_GRID, "repeat": 1},
    LOADS: {"type": "time", "unit": "seconds", "grid": VERDICT_GRID, "repeat": 1},
    SIZE: {"type": "track", "unit": "bytes", "grid": VERDICT_GRID},
    ROUND_TRIP_EXACT: {"type": "track", "unit": "1 = exact", "grid": VERDICT_GRID},
    ROUND_TRIP_KEY_ORDER_ONLY: {"type": "track", "unit": "1 = key order", "grid": VERDICT_GRID},
}
# In grid order: each codec on small-dict, then on twitter. The schema codecs run on
# twitter only (as they declare); there msgspec-struct-json lost only key order, protobuf
# values, and both are faster than every exact codec. orjson and msgspec-json are within
# 0.3 % of each other (tied); ujson is 2x slower, json 4x.
VERDICT_DUMPS: list[float | None] = [
    *(40e-6, 800e-6),
    *(20e-6, 400e-6),
    *(10e-6, 200e-6),
    *(10.02e-6, 200.5e-6),
    *(None, 120e-6),
    *(None, 90e-6),
]
VERDICT_LOADS = [None if v is None else v * 1.5 for v in VERDICT_DUMPS]
VERDICT_VALUES: dict[str, list[float | None]] = {
    DUMPS: VERDICT_DUMPS,
    LOADS: VERDICT_LOADS,
    SIZE: [52, 466906, 52, 466906, 52, 466906, 52, 466906, None, 466906, None, 223740],
    ROUND_TRIP_EXACT: [1, 1, 1, 1, 1, 1, 1, 1, None, 0, None, 0],
    ROUND_TRIP_KEY_ORDER_ONLY: [None] * 9 + [1, None, 0],
}
VERDICT_SHAPE = (0.990, 0.994, 0.997, 1.0, 1.0, 1.003, 1.006, 1.010)  # eight processes
# A timing whose processes split into two modes, as a real quick run shows some (msgpack's
# dumps of twitter here): the fixture page notes it under the value, the longest such note.
SPLIT_SHAPE = (0.990, 0.994, 0.997, 1.0, 1.0, 1.003, 1.62, 1.66)
SPLIT_PAIR = ("msgpack", "twitter")


def verdict_tree(root: Path, machine: str = "box-verdict") -> Path:
    """One machine's baseline whose ranking is known (VERDICT_VALUES), with eight
    processes per timing, one sample each."""
    write_benchmarks(root, VERDICT_SUITE)
    samples = {
        name: [None if v is None else [v * f for f in VERDICT_SHAPE] for v in VERDICT_VALUES[name]]
        for name in (DUMPS, LOADS)
    }
    env = {"python": "3.11", "requirements": {"msgspec": "0.22.0", "orjson": "3.10.18"}}
    data = results_file(machine, VERDICT_VALUES, env=env, benchmarks=VERDICT_SUITE, samples=samples)
    write_machine(root, machine, [data])
    return root


# --- the main command's results: the quick run over every registered codec ----------------

# A document's encoded size in json, bytes, and one call's dumps time, seconds: in the
# order of magnitude each quick fixture has on a small VM (the loads take 1.5x).
QUICK_SHAPES = {
    "small-dict": (60, 3e-6),
    "sensor-record": (420, 9e-6),
    "random-dicts-100": (9_400, 150e-6),
    "senate-bios": (300_000, 3e-3),
    "twitter": (466_906, 2e-3),
}
# On twitter a schema codec's typed round trip can lose key order only, or values.
QUICK_KEY_ORDER_ONLY = ("msgspec-struct-json", "msgspec-struct-msgpack", "fastavro")
QUICK_LOSSY = ("protobuf", "bson")


def quick_run_tree(root: Path, machine: str = "box-quick") -> Path:
    """What the main command (`serkit bench`, the quick run) leaves: asv's benchmarks over
    the whole grid of registered codecs and fixtures, values on the quick plan's pairs only
    (a schema codec where its spec times it), eight processes per timing, and the host
    record with the plan, so that the report has every page such a run gives. The codecs
    rank in a fixed order with orjson and msgspec-json tied first."""
    from serkit.codecs.registry import codec_names, default_fixtures, get_codec
    from serkit.inputs.fixtures import default_fixture_names, fixture_names
    from serkit.results.hosts import record_host
    from serkit.run.quick import QUICK_FIXTURES, PairSelection
    from serkit.suite.benchmark_names import COMPRESSED

    codecs, fixtures = codec_names(), fixture_names()
    grid = [[repr(c) for c in codecs], [repr(f) for f in fixtures]]
    suite: dict[str, dict[str, Any]] = {
        name: {
            "type": kind,
            "unit": unit,
            "grid": grid,
            **({"repeat": 1} if kind == "time" else {}),
        }
        for name, kind, unit in (
            (DUMPS, "time", "seconds"),
            (LOADS, "time", "seconds"),
            (SIZE, "track", "bytes"),
            (COMPRESSED, "track", "bytes"),
            (ROUND_TRIP_EXACT, "track", "1 = exact"),
            (ROUND_TRIP_KEY_ORDER_ONLY, "track", "1 = key order"),
            (SCHEMA, "track", "sha256"),
            (SCHEMA_SUPPLIED, "track", "1 when the user supplied the schema"),
        )
    }
    suite[COMPILED] = {
        "type": "track",
        "unit": "1 = compiled",
        "grid": grid[:1],
        "param_names": ["codec"],
    }
    write_benchmarks(root, suite)
    declared_out = [
        (c, f)
        for c in codecs
        for f in QUICK_FIXTURES
        if (only := default_fixtures(c)) is not None and f not in only
    ]
    pairs = [(c, f) for c in codecs for f in QUICK_FIXTURES if (c, f) not in declared_out]
    found: dict[str, list[float | None]] = {name: [] for name in suite}
    for i, codec in enumerate(codecs):
        spec = get_codec(codec)
        factor = {"orjson": 1.0, "msgspec-json": 1.002}.get(codec, 1.3 + (i * 11 % 27) * 0.35)
        for fixture in fixtures:
            if (codec, fixture) not in pairs:
                for name in suite.keys() - {COMPILED}:
                    found[name].append(None)
                continue
            size, dumps = QUICK_SHAPES[fixture]
            on_twitter = fixture == "twitter"
            key_order = on_twitter and codec in QUICK_KEY_ORDER_ONLY
            exact = not key_order and not (on_twitter and codec in QUICK_LOSSY)
            found[DUMPS].append(dumps * factor)
            found[LOADS].append(dumps * factor * 1.5)
            found[SIZE].append(size * (0.6 + i % 5 * 0.1))
            found[COMPRESSED].append(size * (0.2 + i % 3 * 0.05))
            found[ROUND_TRIP_EXACT].append(float(exact))
            found[ROUND_TRIP_KEY_ORDER_ONLY].append(None if exact else float(key_order))
            found[SCHEMA].append(float(int(TWITTER_SCHEMA, 16)) if spec.needs_schema else None)
            found[SCHEMA_SUPPLIED].append(0.0 if spec.needs_schema else None)
        found[COMPILED].append(float(spec.implementation == "c"))
    split = codecs.index(SPLIT_PAIR[0]) * len(fixtures) + fixtures.index(SPLIT_PAIR[1])
    samples = {
        name: [
            None if v is None else [v * f for f in (SPLIT_SHAPE if at == split else VERDICT_SHAPE)]
            for at, v in enumerate(found[name])
        ]
        for name in (DUMPS, LOADS)
    }
    env = {"python": "3.11", "requirements": {"msgspec": "0.22.0", "orjson": "3.13.0"}}
    data = results_file(machine, found, env=env, benchmarks=suite, samples=samples)
    folder = write_machine(root, machine, [data])
    fixtures_left = tuple(f for f in default_fixture_names() if f not in QUICK_FIXTURES)
    plan = PairSelection(
        tuple(pairs), fixtures_left=fixtures_left, declared_out=tuple(declared_out)
    )
    filed = [path.name for path in folder.glob("*-env-*.json")]
    record_host(
        root, machine, commit=COMMIT, filed=filed, measured_as="quick", plan=plan.as_record()
    )
    return root
