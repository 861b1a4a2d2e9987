"""Reading an asv results tree (format version 2): any asv suite's, not only serkit's.

Each results file is read by serkit.results.asv_file, the one module that knows its
layout; its values become Measurements (serkit.results.measurement), and once every
machine asked for is read, each process is judged by the machine's state
(serkit.results.judging), once, for every reader.

A results file that cannot be read (not JSON, cut short, not asv's version 2, or filed
under another machine) is skipped with a warning naming it, so that the rest of the
tree can still be read; the caller decides whether what is left is enough.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The names below are read from here too, as they were before the files' layout and the
# judging moved out (serkit.results.asv_file, .measurement, .judging).
from serkit.results.asv_file import BENCHMARKS_FILE as BENCHMARKS_FILE
from serkit.results.asv_file import MACHINE_FILE as MACHINE_FILE
from serkit.results.asv_file import RESULTS_FILE as RESULTS_FILE
from serkit.results.asv_file import RESULTS_VERSION as RESULTS_VERSION
from serkit.results.asv_file import ResultsFile, column, param_sets, partial_file, read_file
from serkit.results.asv_file import ResultsFileError as ResultsFileError
from serkit.results.asv_file import checked_moment as checked_moment
from serkit.results.asv_file import load_json as load_json
from serkit.results.asv_file import run_moment as run_moment
from serkit.results.canary import sample_canaries
from serkit.results.host_file import read_runs, run_of_file
from serkit.results.identity import speed_host
from serkit.results.judging import judge
from serkit.results.judging import measured_state as measured_state
from serkit.results.measurement import Benchmark as Benchmark
from serkit.results.measurement import Environment as Environment
from serkit.results.measurement import Interval as Interval
from serkit.results.measurement import Measurement as Measurement
from serkit.results.measurement import sampled_apart as sampled_apart
from serkit.results.measurement import version_order as version_order
from serkit.results.noise import NoNoise
from serkit.sample_speed import StateShare
from serkit.units import plural

# The fields of asv's machine profile. asv copies them into every result's `params`,
# where they describe the host, not the environment, so matching leaves them out.
ASV_MACHINE_FIELDS = frozenset({"machine", "os", "arch", "cpu", "num_cpu", "ram"})
# Units and types asv gives benchmarks by their name's prefix, when benchmarks.json
# does not list one (it is shared and rewritten by every run).
PREFIX_KINDS = {
    "time_": ("time", "seconds"),
    "timeraw_": ("time", "seconds"),
    "mem_": ("memory", "bytes"),
    "peakmem_": ("memory", "bytes"),
    "track_": ("track", "unit"),
}

# What a benchmark's name and its parameters may hold. The names reach Markdown, HTML and
# asv's own pages (tooltips rendered as HTML); a foreign results file could carry markup
# in them, so rows outside these sets are skipped when read, with one warning.
SAFE_BENCHMARK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
SAFE_PARAM = re.compile(r"[\w .,:+\-'\"()\[\]/=]{0,200}")


def safe_benchmark(name: str, params: Sequence[str] = ()) -> bool:
    """Whether a benchmark's name and parameters hold only characters safe to show anywhere."""
    return bool(SAFE_BENCHMARK_NAME.fullmatch(name)) and all(
        SAFE_PARAM.fullmatch(p) for p in params
    )


def shown(name: str) -> str:
    """An unsafe name as a warning may print it: each character outside the safe set as ?."""
    return re.sub(r"[^A-Za-z0-9_.]", "?", name[:60])


def safe_row(name: str, row: Mapping[str, Any]) -> bool:
    """A results row (its columns by name) whose benchmark name and parameters are safe."""
    axes = row.get("params") or []
    if not isinstance(axes, list) or not all(isinstance(axis, list) for axis in axes):
        return False
    return safe_benchmark(name, [str(p) for axis in axes for p in axis])


@dataclass
class Machine:
    name: str
    profile: dict[str, Any]  # machine.json, without asv's version key
    measurements: list[Measurement] = field(default_factory=list)
    files: int = 0  # results files read


@dataclass
class ResultsTree:
    root: Path
    machines: dict[str, Machine]
    benchmarks: dict[str, Benchmark]
    warnings: list[str]

    guessed: set[str] = field(default_factory=set)
    # The machines whose timing verdicts assumed the default noise floor, once each, as the
    # views that compare them found them (serkit.compare.verdicts.host_floor).
    no_noise: list[NoNoise] = field(default_factory=list)

    def state_share(self, measurements: Iterable[Measurement] | None = None) -> StateShare:
        """How much of `measurements`' samples (by default, every one the tree holds) the
        machine spent in its slow state."""
        if measurements is None:
            measurements = (m for machine in self.machines.values() for m in machine.measurements)
        return measured_state(measurements)[0]

    def benchmark(self, name: str) -> Benchmark:
        """What benchmarks.json says of `name`, or else what its name implies (asv's prefixes)."""
        known = self.benchmarks.get(name)
        if known is not None:
            return known
        if not self.guessed:
            self.warnings.append(
                f"{name} is not described in {self.root / BENCHMARKS_FILE}: kinds and units "
                "are guessed from benchmark names (`asv run --bench just-discover` rewrites it)"
            )
        self.guessed.add(name)
        short = name.rsplit(".", 1)[-1]
        for prefix, (kind, unit) in PREFIX_KINDS.items():
            if short.startswith(prefix):
                return Benchmark(name, kind, unit)
        return Benchmark(name, "unknown", "")


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # an int stays an int: sizes are counts
    raise ResultsFileError(f"a value is {value!r}, not a number")


def _samples(values: Any) -> tuple[float, ...]:
    if values is None:
        return ()
    if not isinstance(values, list):
        raise ResultsFileError(f"a samples entry is {values!r}, not a list")
    numbers = (_number(v) for v in values)
    return tuple(float(v) for v in numbers if v is not None and v > 0)


def _interval(low: Any, high: Any) -> Interval | None:
    a, b = _number(low), _number(high)
    return None if a is None or b is None else (a, b)


def _pairs(data: Any, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(data, dict):
        raise ResultsFileError(f"its {what} is not an object")
    return tuple(sorted((str(k), str(v)) for k, v in data.items()))


def _environment(found: ResultsFile, profile: Mapping[str, Any]) -> Environment:
    requirements = _pairs(found.requirements, "requirements")
    host_keys = ASV_MACHINE_FIELDS | set(profile) | {"python"} | {k for k, _ in requirements}
    other = tuple((k, v) for k, v in _pairs(found.params, "params") if k not in host_keys)
    env_vars = _pairs(found.env_vars, "env_vars")
    return Environment(found.python, requirements, env_vars, other)


def _read_results_file(
    path: Path,
    machine: str,
    profile: Mapping[str, Any],
    unsafe: list[str],
    benchmarks: Mapping[str, Benchmark],
    host: str | None = None,
) -> list[Measurement]:
    """The file's measurements; the names of rows skipped as unsafe go to `unsafe`."""
    found = read_file(path, machine)
    return _measurements(found, _environment(found, profile), unsafe, benchmarks, machine, host)


def _measurements(
    found: ResultsFile,
    env: Environment,
    unsafe: list[str],
    benchmarks: Mapping[str, Benchmark],
    machine: str,
    host: str | None = None,
) -> list[Measurement]:
    """A results file's values, with each sample's canary readings (not yet judged)."""
    path = found.path
    out: list[Measurement] = []
    own_sizes = found.samples_per_process
    for name, row in found.rows.items():
        axes = row.get("params") or []
        if not isinstance(axes, list) or not all(isinstance(a, list) for a in axes):
            raise ResultsFileError(f"its params for {name!r} are not lists")
        if not safe_row(name, row):
            unsafe.append(name)
            continue
        grid = param_sets(row)
        size = len(grid)
        result = column(row, "result", size)
        ci_a, ci_b = column(row, "stats_ci_99_a", size), column(row, "stats_ci_99_b", size)
        q25, q75 = column(row, "stats_q_25", size), column(row, "stats_q_75", size)
        samples = column(row, "samples", size)
        version = row.get("version")
        repeat = benchmarks.get(name)
        per_process = repeat.samples_per_process if repeat is not None else None
        per_process = per_process and own_sizes.get(name, per_process)
        for i, params in enumerate(grid):
            kept = _samples(samples[i])
            notes = found.notes_of(name, params)
            readings = sample_canaries(kept, per_process, notes) if notes else None
            out.append(
                Measurement(
                    machine=machine,
                    commit=found.commit,
                    date=found.date,
                    env=env,
                    benchmark=name,
                    params=params,
                    value=_number(result[i]),
                    ci_99=_interval(ci_a[i], ci_b[i]),
                    iqr=_interval(q25[i], q75[i]),
                    code_version=str(version) if version is not None else None,
                    file=path,
                    samples=kept,
                    run_at=found.run_at,
                    canary=readings.canary if readings else (),
                    memory_canary=readings.memory if readings else (),
                    samples_per_process=own_sizes.get(name),
                    host=host,
                    run_waited_s=found.waited_s,
                    ran_with=_ran_with(found, params),
                )
            )
    return out


def described(data: Mapping[str, Any]) -> dict[str, Benchmark]:
    """What benchmarks.json's `data` says of each benchmark whose name and parameters are safe."""
    return {
        name: Benchmark(
            name,
            str(info.get("type", "unknown")),
            str(info.get("unit", "")),
            tuple(str(p) for p in info.get("param_names") or ()),
            info.get("repeat"),
        )
        for name, info in data.items()
        if isinstance(info, dict) and safe_row(name, info)
    }


def _ran_with(found: ResultsFile, params: Sequence[str]) -> tuple[str, ...] | None:
    """What the codec named by `params` (serkit's suite names it first) ran with, where the
    file says."""
    if not found.codecs or not params:
        return None
    try:
        codec = ast.literal_eval(params[0])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return found.codecs.get(codec) if isinstance(codec, str) else None


def _read_benchmarks(root: Path, warnings: list[str]) -> dict[str, Benchmark]:
    path = root / BENCHMARKS_FILE
    if not path.is_file():
        return {}  # said when a benchmark needs it: `serkit hosts` does not
    try:
        data = load_json(path)
        if not isinstance(data, dict):
            raise ResultsFileError("not an object")
        return described(data)
    except ResultsFileError as exc:
        warnings.append(f"skipped {path}: {exc}")
        return {}


def _read_profile(folder: Path, warnings: list[str]) -> dict[str, Any]:
    path = folder / MACHINE_FILE
    if not path.is_file():
        return {}
    try:
        data = load_json(path)
    except ResultsFileError as exc:
        warnings.append(f"skipped {path}: {exc}")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"skipped {path}: not an asv machine profile")
        return {}
    return {k: v for k, v in data.items() if k != "version"}


def _results_files(folder: Path) -> Iterator[Path]:
    return (p for p in sorted(folder.iterdir()) if p.is_file() and RESULTS_FILE.match(p.name))


def machine_folders(root: Path) -> list[Path]:
    """The folders of `root` that asv wrote for a machine: a profile or results inside."""
    if not root.is_dir():
        return []
    return [
        folder
        for folder in sorted(root.iterdir())
        if folder.is_dir() and ((folder / MACHINE_FILE).is_file() or any(_results_files(folder)))
    ]


def _host_runs(folder: Path, warnings: list[str]) -> list[dict[str, Any]]:
    """The runs `folder`'s host file records (serkit.results.host_file); [] without one.
    Its warnings are given once, though the views that show hosts read it again."""
    found: list[str] = []
    runs = read_runs(folder, found) or []
    warnings += [w for w in found if w not in warnings]
    return runs


def read_run_file(path: Path, benchmarks: Mapping[str, Any]) -> list[Measurement]:
    """The values of a results file as `serkit bench` leaves it between two rounds, each
    process judged as a tree's are, within the file (its run has no host record yet);
    `benchmarks`: benchmarks.json's data. [] where the file holds no rows as asv's."""
    found = partial_file(path)
    if found is None:
        return []
    known = described(benchmarks)
    try:
        return judge(_measurements(found, Environment(found.python, ()), [], known, ""), known)
    except (ResultsFileError, LookupError, TypeError, ValueError, AttributeError):
        return []


def _judge(tree: ResultsTree) -> None:
    """Each process of every measurement read judged, once (serkit.results.judging)."""
    machines = list(tree.machines.values())
    judged = iter(judge([m for machine in machines for m in machine.measurements], tree.benchmarks))
    for machine in machines:
        machine.measurements = [next(judged) for _ in machine.measurements]


def read_tree(root: Path, machines: list[str] | None = None) -> ResultsTree:
    """Every machine's results under `root`, or only those named (unread otherwise)."""
    warnings: list[str] = []
    unsafe: list[str] = []
    tree = ResultsTree(root, {}, _read_benchmarks(root, warnings), warnings)
    for folder in machine_folders(root):
        profile = _read_profile(folder, warnings)
        machine = Machine(folder.name, profile)
        tree.machines[folder.name] = machine
        if machines is not None and folder.name not in machines:
            continue
        runs = _host_runs(folder, warnings)
        for path in _results_files(folder):
            run = run_of_file(runs, path.name)
            try:
                machine.measurements += _read_results_file(
                    path,
                    folder.name,
                    profile,
                    unsafe,
                    tree.benchmarks,
                    speed_host(run) if run else None,
                )
            except ResultsFileError as exc:
                warnings.append(f"skipped {path}: {exc}")
            # A foreign file can be shaped any way at all: whatever breaks the reading
            # skips that file, named, and never ends the command in a traceback.
            except (LookupError, TypeError, ValueError, AttributeError) as exc:
                warnings.append(f"skipped {path}: not laid out as asv's ({exc!r})")
            else:
                machine.files += 1
    _judge(tree)
    if unsafe:
        warnings.append(
            f"skipped {plural(len(unsafe), 'benchmark row')} whose name or "
            "parameters hold characters other than letters, digits and _ . (names) or "
            f"- , : + ' \" ( ) [ ] / = (parameters), such as {shown(unsafe[0])}"
        )
    return tree
