"""Reading an asv results tree (format version 2): any asv suite's, not only serkit's.

asv 0.6 keeps `results/<machine>/machine.json`, one `results/<machine>/<commit8>-<env>.json`
per commit and environment, and one shared `results/benchmarks.json`. Each result row
lines up with the file's `result_columns`; its values are flattened in
`itertools.product(*params)` order, with the parameters stored as `repr()` strings, and a
skipped value is a bare `NaN` token (Python's json module reads it).

A results file that cannot be read (not JSON, cut short, not asv's version 2, or filed
under another machine) is skipped with a warning naming it, so that the rest of the
tree can still be read; the caller decides whether what is left is enough.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.errors import RefusedFile
from serkit.inputs.documents import read_record
from serkit.results import asv_runs
from serkit.results.canary import notes_of, params_key, sample_canaries, samples_per_process
from serkit.results.host_file import CLOCK_SKEW_MIN, latest_instant, read_runs, run_of_file
from serkit.results.identity import speed_host
from serkit.state import (
    ProcessValue,
    RunSpeed,
    StateShare,
    fast_reading,
    judging_weight,
    pair_slow_ratio,
    process_values,
    reference,
    slow_ratio_in_run,
    speed_readings,
    state_share,
)
from serkit.units import plural

RESULTS_VERSION = 2
MACHINE_FILE = "machine.json"
BENCHMARKS_FILE = "benchmarks.json"
# asv names each results file <first 8 hex digits of the commit>-<environment>.json;
# anything else in a machine's folder (machine.json, serkit-host.yaml) is not a result.
RESULTS_FILE = re.compile(r"^[0-9a-fA-F]{8}-.+\.json$")
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


REQUIRED_KEYS = ("commit_hash", "params", "python", "requirements", "result_columns", "results")

Interval = tuple[float, float]


def version_order(version: str) -> tuple[int, ...]:
    """A Python version as numbers, so that 3.9 sorts before 3.10, and a free-threaded
    build (3.14t) right after its version's default one."""
    threaded = version.endswith("t")
    numbers = tuple(int(part) if part.isdigit() else 0 for part in version.rstrip("t").split("."))
    return (*numbers, 1) if threaded else numbers


class ResultsFileError(ValueError):
    """A file in the results tree that is not what asv writes."""


@dataclass(frozen=True)
class Environment:
    """What an environment ran, with nothing of the host in it: the key for matching."""

    python: str
    requirements: tuple[tuple[str, str], ...]
    env_vars: tuple[tuple[str, str], ...] = ()
    other: tuple[tuple[str, str], ...] = ()  # further params asv recorded, if any

    @property
    def label(self) -> str:
        # An `existing` environment records its interpreter's path, not a version.
        parts = [
            f"python at {self.python}"
            if any(sep in self.python for sep in "/\\")
            else f"py{self.python}"
        ]
        parts += [f"{name} {version or '(unpinned)'}" for name, version in self.requirements]
        parts += [f"{name}={value}" for name, value in (*self.env_vars, *self.other)]
        return ", ".join(parts)

    @property
    def versions_recorded(self) -> bool:
        """Whether asv recorded an exact version of every library (an `existing`
        environment records none, and an empty requirement means "the latest")."""
        return bool(self.requirements) and all(v[:1].isalnum() for _, v in self.requirements)

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "requirements": dict(self.requirements),
            "env_vars": dict(self.env_vars),
            **({"other": dict(self.other)} if self.other else {}),
        }


@dataclass(frozen=True)
class Benchmark:
    """What benchmarks.json says of one benchmark, or what its name implies."""

    name: str
    kind: str  # asv's type: time, track, memory (mem_/peakmem_), or unknown
    unit: str
    param_names: tuple[str, ...] = ()
    repeat: Any = None  # asv's samples per process (an int, a (min, max, time) tuple, 0)

    @property
    def samples_per_process(self) -> int | None:
        """How many consecutive samples each process recorded, where that is fixed (serkit's
        timed benchmarks declare `repeat` as a whole number); None where it is not."""
        fixed = isinstance(self.repeat, int) and not isinstance(self.repeat, bool)
        return self.repeat if self.kind == "time" and fixed and self.repeat >= 1 else None

    @property
    def one_sample_per_process(self) -> bool:
        """Whether the samples can be told apart by process (serkit's timed benchmarks)."""
        return self.samples_per_process is not None

    def per_process(self, samples: Sequence[float]) -> tuple[float, ...]:
        """One value per process: the least of that process's samples; () where unknown.

        asv appends each round's `repeat` samples to the last round's (--append-samples),
        so a process's samples stand together. A pair timed once (serkit.suite.budget)
        has a single sample: one process. The least, because another tenant's work only
        ever slows a call down: the least of a process's samples is its least disturbed.
        """
        size = self.samples_per_process
        if size is None or not samples:
            return ()
        return tuple(min(samples[i : i + size]) for i in range(0, len(samples), size))


@dataclass(frozen=True)
class Measurement:
    """One value asv recorded: a benchmark, at one parameter set, commit and environment."""

    machine: str
    commit: str
    date: int
    env: Environment
    benchmark: str
    params: tuple[str, ...]  # asv's repr() strings, in the benchmark's param order
    value: float | None  # None: skipped or failed
    ci_99: Interval | None
    iqr: Interval | None
    code_version: str | None  # asv's hash of the benchmark's code
    file: Path
    samples: tuple[float, ...] = ()  # every sample asv kept (`asv run --record-samples`)
    # When the run that measured it took its file's last values, in milliseconds since the
    # epoch: the latest of asv's `started_at` in the file (0: asv recorded none). One
    # results file is one run (serkit.results.history), so this dates the run.
    run_at: int = 0
    # Each sample's canary reading in ns (serkit.results.canary), None where it has none;
    # and the fast state's reading on this machine and Python, from every sample the tree
    # holds of them (serkit.state.reference), set once the machine is read.
    canary: tuple[float | None, ...] = ()
    canary_reference: float | None = None
    # Each sample's first canary reading before it alone, which the run's speed is read
    # from (serkit.state.speed_readings); () in results made before both were kept.
    canary_before: tuple[float | None, ...] = ()
    # Each sample's memory canary reading in ns (serkit.suite.canary), None where it has
    # none; () in results made before it.
    memory_canary: tuple[float | None, ...] = ()
    # The samples each process took in the run that wrote the file, from its notes
    # (serkit.results.canary.samples_per_process); None without notes, when the tree's
    # benchmarks.json is all there is to go by.
    samples_per_process: int | None = None
    # The host its run recorded (serkit.results.identity.speed_host), None where unknown;
    # and, on a known host, the run's fast canary against the host's, which its values are
    # scaled by (serkit.state.RunSpeed), set once the tree is read.
    host: str | None = None
    run_speed: RunSpeed | None = None
    # On a known host, how this pair slowed against the canary in the host's other runs
    # (serkit.state.pair_slow_ratio): its corrected values are divided by it. None where
    # no other run measured it.
    slow_ratio: float | None = None
    # What the processes of its file's run waited for the machine's fast state before
    # sampling, in seconds (serkit.results.asv_runs.AsvRun.waited_s): the whole run's.
    run_waited_s: float = 0.0


def process_states(benchmark: Benchmark, m: Measurement) -> tuple[ProcessValue, ...]:
    """`m`'s per-process values, each with how it was taken: from the samples taken in the
    machine's fast state, corrected from slow ones, or raw where no state is known
    (serkit.state); () where asv kept no samples of a process."""
    size = benchmark.samples_per_process
    if size is not None and m.samples_per_process:
        size = m.samples_per_process  # the file's own plan, where its notes say it
    if size is None or not m.samples:
        return ()
    canaries = m.canary if len(m.canary) == len(m.samples) else (None,) * len(m.samples)
    return process_values(m.samples, canaries, size, m.canary_reference, m.run_speed, m.slow_ratio)


def sampled_apart(a: Measurement, b: Measurement) -> bool:
    """Whether the runs behind `a` and `b` took different samples a process, where both
    files say (Measurement.samples_per_process): their values are not alike."""
    sizes = (a.samples_per_process, b.samples_per_process)
    return None not in sizes and sizes[0] != sizes[1]


def _with_references(machines: Sequence[Machine], benchmarks: Mapping[str, Benchmark]) -> None:
    """Set each measurement's canary reference, the fast state's reading on its Python:
    from every run of its host in the tree, or, where its run recorded no host (a run
    whose host record is yet to be written, or older), from every run of its machine; and,
    on a known host, its run's speed against the host's (serkit.state.RunSpeed) and its
    pair's slow ratio from the host's other runs (`_with_slow_ratios`)."""
    readings: dict[tuple[str, str, str], list[float | None]] = {}
    speeds: dict[tuple[str, str, str], list[float | None]] = {}
    runs: dict[tuple[str, Path], list[Measurement]] = {}
    for machine in machines:
        for m in machine.measurements:
            if m.canary:
                readings.setdefault(("machine", machine.name, m.env.python), []).extend(m.canary)
                if m.host is not None:
                    readings.setdefault(("host", m.host, m.env.python), []).extend(m.canary)
                    speeds.setdefault(("host", m.host, m.env.python), []).extend(
                        speed_readings(m.canary, m.canary_before)
                    )
                runs.setdefault((m.env.python, m.file), []).append(m)
    refs = {group: reference([c for c in found if c]) for group, found in readings.items()}
    host_ns = {group: fast_reading(found, refs[group]) for group, found in speeds.items()}
    # A host's one run is at its own speed: only where it has others is there any to scale.
    host_runs = Counter(("host", m[0].host, python) for (python, _), m in runs.items())
    judged: dict[int, Measurement] = {}
    for (python, _), in_run in runs.items():
        first = in_run[0]
        group = ("host", first.host, python) if first.host else ("machine", first.machine, python)
        ref = refs[group]
        host = host_ns.get(group) if host_runs[group] > 1 else None
        run = [c for m in in_run for c in speed_readings(m.canary, m.canary_before)]
        run_ns = fast_reading(run, ref) if host else None
        speed = RunSpeed(run_ns, host) if run_ns and host else None
        for m in in_run:
            judged[id(m)] = dataclasses.replace(m, canary_reference=ref, run_speed=speed)
    _with_slow_ratios(judged, benchmarks)
    for machine in machines:
        machine.measurements = [judged.get(id(m), m) for m in machine.measurements]


def _with_slow_ratios(judged: dict[int, Measurement], benchmarks: Mapping[str, Benchmark]) -> None:
    """Give each timed pair on a host with several runs its slow ratio from the host's other
    runs in the same environment (serkit.state.pair_slow_ratio), in place; never its own
    run's, another host's, or another library release's or Python's: how a call slows is
    its code's."""
    ratios: dict[tuple[str, Environment, str, tuple[str, ...]], dict[Path, float]] = {}
    for m in judged.values():
        benchmark = benchmarks.get(m.benchmark)
        if m.host is None or benchmark is None:
            continue  # no host: no other run known to be of it
        ratio = slow_ratio_in_run(process_states(benchmark, m))
        if ratio is not None:
            pair = (m.host, m.env, m.benchmark, m.params)
            ratios.setdefault(pair, {})[m.file] = ratio
    for key, m in list(judged.items()):
        if m.host is None:
            continue
        by_run = ratios.get((m.host, m.env, m.benchmark, m.params), {})
        others = [r for file, r in by_run.items() if file != m.file]
        if others:
            judged[key] = dataclasses.replace(m, slow_ratio=pair_slow_ratio(others))


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

    def processes(self, m: Measurement) -> tuple[float, ...]:
        """`m`'s per-process values, judged by the machine's state (`process_states`), where
        asv kept its samples; else ()."""
        return tuple(p.value for p in self.process_states(m))

    def weights(self, m: Measurement) -> tuple[float, ...]:
        """What each of `m`'s processes (`processes`) counts for in a verdict
        (serkit.state.judging_weight)."""
        return tuple(judging_weight(p) for p in self.process_states(m))

    def process_states(self, m: Measurement) -> tuple[ProcessValue, ...]:
        """`m`'s per-process values with how each was taken (see `process_states`)."""
        return process_states(self.benchmark(m.benchmark), m)

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


def measured_state(measurements: Iterable[Measurement]) -> tuple[StateShare, float | None]:
    """How much of `measurements`' samples (one machine's) the machine spent in its slow
    state, and the fast canary reading it was judged against (ns)."""
    readings: list[float | None] = []
    memory: list[float | None] = []
    ref: float | None = None
    scales: dict[Path, float] = {}
    slow_ratios: list[float] = []
    waited: dict[Path, float] = {}
    for m in measurements:
        ref = ref or m.canary_reference
        readings += m.canary
        same = len(m.memory_canary) == len(m.canary)
        memory += m.memory_canary if same else [None] * len(m.canary)
        if m.run_speed is not None:
            scales[m.file] = m.run_speed.scale
        if m.slow_ratio is not None:
            slow_ratios.append(m.slow_ratio)
        waited[m.file] = m.run_waited_s
    share = state_share(readings, ref, memory)
    adjusted = dataclasses.replace(
        share,
        run_scales=tuple(sorted(scales.values())),
        slow_ratios=tuple(sorted(slow_ratios)),
        waited_s=sum(waited.values()),
    )
    return adjusted, ref


def load_json(path: Path, root: Path | None = None) -> Any:
    """A JSON file of a results tree, through serkit's guarded reader: a regular file,
    under the size cap on a record, nesting under its depth cap (and inside `root`, when
    given). ResultsFileError, saying which rule, for anything else."""
    try:
        return read_record(path, root=root, what="a results tree's file")
    except RefusedFile as exc:
        raise ResultsFileError(exc.rule) from None


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


def _column(row: Mapping[str, Any], name: str, size: int) -> list[Any]:
    values = row.get(name)
    if values is None:
        return [None] * size
    if not isinstance(values, list) or len(values) != size:
        raise ResultsFileError(f"its {name} column does not line up with its results")
    return values


def _pairs(data: Any, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(data, dict):
        raise ResultsFileError(f"its {what} is not an object")
    return tuple(sorted((str(k), str(v)) for k, v in data.items()))


def _environment(data: Mapping[str, Any], profile: Mapping[str, Any]) -> Environment:
    requirements = _pairs(data["requirements"], "requirements")
    host_keys = ASV_MACHINE_FIELDS | set(profile) | {"python"} | {k for k, _ in requirements}
    other = tuple((k, v) for k, v in _pairs(data["params"], "params") if k not in host_keys)
    env_vars = _pairs(data.get("env_vars") or {}, "env_vars")
    return Environment(str(data["python"]), requirements, env_vars, other)


def _read_results_file(
    path: Path,
    machine: str,
    profile: Mapping[str, Any],
    unsafe: list[str],
    benchmarks: Mapping[str, Benchmark],
    host: str | None = None,
) -> list[Measurement]:
    """The file's measurements; the names of rows skipped as unsafe go to `unsafe`."""
    data = load_json(path)
    if not isinstance(data, dict) or data.get("version") != RESULTS_VERSION:
        found = data.get("version") if isinstance(data, dict) else None
        older = isinstance(found, int) and 0 < found < RESULTS_VERSION
        hint = "; `asv update` converts older results" if older else ""
        raise ResultsFileError(
            f"not an asv results file of version {RESULTS_VERSION} (version: {found!r}){hint}"
        )
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ResultsFileError(f"not an asv results file: no {', '.join(missing)}")
    recorded = data["params"].get("machine") if isinstance(data["params"], dict) else None
    if recorded != machine:
        raise ResultsFileError(f"it holds results of machine {recorded!r}, not {machine!r}")
    env = _environment(data, profile)
    commit, date = str(data["commit_hash"]), checked_moment(data.get("date"), "date")
    columns = data["result_columns"]
    if not isinstance(data["results"], dict) or not isinstance(columns, list):
        raise ResultsFileError("its results are not laid out as asv's")
    out: list[Measurement] = []
    run_at = checked_moment(run_moment(data), "latest started_at")
    canary_notes = notes_of(data)
    own_sizes = samples_per_process(canary_notes)
    waited = sum(run.waited_s for run in asv_runs.runs_of(data))
    for name, values in data["results"].items():
        if not isinstance(values, list):
            raise ResultsFileError(f"its row for {name!r} is not a list")
        row = dict(zip(columns, values))
        axes = row.get("params") or []
        if not isinstance(axes, list) or not all(isinstance(a, list) for a in axes):
            raise ResultsFileError(f"its params for {name!r} are not lists")
        if not safe_row(str(name), row):
            unsafe.append(str(name))
            continue
        grid = list(itertools.product(*axes))
        size = len(grid)
        result = _column(row, "result", size)
        ci_a, ci_b = _column(row, "stats_ci_99_a", size), _column(row, "stats_ci_99_b", size)
        q25, q75 = _column(row, "stats_q_25", size), _column(row, "stats_q_75", size)
        samples = _column(row, "samples", size)
        version = row.get("version")
        repeat = benchmarks.get(str(name))
        per_process = repeat.samples_per_process if repeat is not None else None
        per_process = per_process and own_sizes.get(str(name), per_process)
        for i, params in enumerate(grid):
            kept = _samples(samples[i])
            shown_params = tuple(str(p) for p in params)
            notes = canary_notes.get((str(name), params_key(shown_params)), [])
            readings = sample_canaries(kept, per_process, notes) if notes else None
            out.append(
                Measurement(
                    machine=machine,
                    commit=commit,
                    date=date,
                    env=env,
                    benchmark=str(name),
                    params=shown_params,
                    value=_number(result[i]),
                    ci_99=_interval(ci_a[i], ci_b[i]),
                    iqr=_interval(q25[i], q75[i]),
                    code_version=str(version) if version is not None else None,
                    file=path,
                    samples=kept,
                    run_at=run_at,
                    canary=readings.canary if readings else (),
                    memory_canary=readings.memory if readings else (),
                    canary_before=readings.before if readings else (),
                    samples_per_process=own_sizes.get(str(name)),
                    host=host,
                    run_waited_s=waited,
                )
            )
    return out


def run_moment(data: Any) -> int | None:
    """When a results file's run took its last values: the latest `started_at` asv recorded
    (milliseconds since the epoch), or None where it recorded none."""
    try:
        columns = data["result_columns"]
        column = columns.index("started_at")
        rows = data["results"].values()
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    moments = [
        row[column]
        for row in rows
        if isinstance(row, list) and len(row) > column and _is_moment(row[column])
    ]
    return int(max(moments)) if moments else None


def checked_moment(value: Any, what: str) -> int:
    """A moment a results file records, in ms since the epoch (0: none recorded).
    ResultsFileError for one that is no number from 1970 to now (+ CLOCK_SKEW): a run
    dated in 2100 would pass for the newest, and hide the genuine one."""
    if value is None:
        return 0
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    latest = latest_instant() * 1000
    if not (number and math.isfinite(value) and 0 <= value <= latest):
        ahead = number and value > latest  # not NaN, and not before 1970
        raise ResultsFileError(
            f"its {what} {value!r} is no moment from 1970 to now (+{CLOCK_SKEW_MIN} min)"
            + (": a run cannot come from the future" if ahead else "")
        )
    return int(value)


def _is_moment(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


def _read_benchmarks(root: Path, warnings: list[str]) -> dict[str, Benchmark]:
    path = root / BENCHMARKS_FILE
    if not path.is_file():
        return {}  # said when a benchmark needs it: `serkit hosts` does not
    try:
        data = load_json(path)
        if not isinstance(data, dict):
            raise ResultsFileError("not an object")
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
    _with_references(list(tree.machines.values()), tree.benchmarks)
    if unsafe:
        warnings.append(
            f"skipped {plural(len(unsafe), 'benchmark row')} whose name or "
            "parameters hold characters other than letters, digits and _ . (names) or "
            f"- , : + ' \" ( ) [ ] / = (parameters), such as {shown(unsafe[0])}"
        )
    return tree
