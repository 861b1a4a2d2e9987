"""What the matrix costs to run, from what asv recorded: `serkit matrix --cost`.

asv keeps, in every results file, each benchmark's duration in the last `asv run` that
ran it. serkit runs one `asv run` per round (serkit.run.rounds), each later round adding
one process to every timed pair and overwriting the duration with its own; so a timed
benchmark's cost is its duration times the processes its samples record, and any other
benchmark's its duration times the rounds it declares (1 for a track); `--processes N`
predicts a run of N processes a pair from a shorter one. Each `asv run`
also pays asv's start, the suite's discovery in the environment and the results' writing:
the median of what the tree's own runs recorded of it (serkit.results.asv_runs), else
ASV_RUN_S, measured here (docs/cost.md); and each environment its build, BUILD_S. Reading
the processes from the results, not from serkit's constants, keeps the model true when
the sampling plan changes.

An environment of the matrix not measured borrows the cost of the nearest one that was:
the same library and release on the nearest Python, else the nearest release of that
library; the estimate names its source. Each runner kind gets the environments its
platform has wheels for (serkit.run.matrix), cut into shards as serkit.run.shards cuts.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from serkit.codecs.registry import builtin_specs
from serkit.errors import SerkitError
from serkit.inputs.fixtures import default_fixture_names
from serkit.results import asv_runs
from serkit.results.asv_file import (
    BENCHMARKS_FILE,
    MACHINE_FILE,
    RESULTS_FILE,
    ResultsFile,
    ResultsFileError,
    load_json,
    read_file,
)
from serkit.results.tree import Benchmark, Measurement, machine_folders, read_tree, version_order
from serkit.run.index import PLATFORMS, Platform
from serkit.run.interpreters import FREE_THREADED
from serkit.run.matrix import MatrixEnvironment, counted, environments
from serkit.run.precision import processes_for, spread_of
from serkit.run.quick import FULL_BUDGET_S, over_budget
from serkit.run.releases import Releases
from serkit.run.shards import Shard, shard_slice
from serkit.suite.benchmark_names import COUNTED_MODULES
from serkit.suite.cases import FULL_ROUNDS, LIBRARY_ENV, SAMPLES_PER_PROCESS
from serkit.suite.prediction import Prediction, predict
from serkit.units import plural

# One `asv run` of a round, beyond the durations asv records: its start, discovery in the
# environment, the forkserver, the results file. Where a tree records its runs
# (serkit.results.asv_runs), their median stands in for it. Calibrated on this project's
# VM before runs were recorded: what a measured run's wall time left over after its
# durations, per asv run, at a load average of 5.5 to 7.5 (docs/cost.md). Every round of
# every environment pays it.
ASV_RUN_S = 13.0
# Making one environment (virtualenv, then uv installing the library, serkit and its
# dependencies), measured here with a warm cache (docs/cost.md).
BUILD_S = 5.0
FIRST_ROUND_RUNS = 3  # the first round runs in three parts (serkit.run.rounds)
# What a shard may take: GitHub stops a hosted job at 6 hours; an hour is left for a
# runner slower than the one measured, set-up and the upload.
SHARD_BUDGET_S = 5 * 3600
# A library never measured is priced by its pairs (by_pair) only from the median of at
# least this many measured libraries: one library's pairs stand for no other's.
FEWEST_LIBRARIES = 3
# A pair's share of its environment's one process, predicted (LeaveOut): each process
# prepares it cold in Dumps, Loads and RoundTrip (a dumps and a loads each), then samples
# dumps, loads and both SAMPLES_PER_PROCESS times: 13 calls' worth at 5 samples.
CALLS_PER_PROCESS = 3 + 2 * SAMPLES_PER_PROCESS
# What a pair of microsecond calls still costs a process (asv's fork, its warm-up, the
# samples' timer): the fastest measured environments' one process over their pairs, 4.6 s
# over 10 pairs (orjson), 4.6 s over 9 (ormsgpack), 5.4 s over 9 (cbor2) (docs/cost.md).
PAIR_FLOOR_S = 0.5


@dataclass(frozen=True)
class Measured:
    """What one results file says its environment cost."""

    machine: str
    commit: str
    date: int
    python: str
    library: str | None  # SERKIT_BENCH_LIBRARY; None: every library in one environment
    version: str | None
    per_process_s: float  # the timed benchmarks' durations: one process of every pair
    other_s: float  # every other benchmark's duration times the rounds it ran
    processes: int  # the most processes a timed pair recorded: the rounds that ran
    # Per timed pair: the sample spread of its processes (serkit.run.precision.spread_of,
    # each process judged by the machine's state), None where it had fewer than two;
    # () where not read (a saved table).
    spreads: tuple[float | None, ...] = ()
    # Per timed pair, the processes it recorded (a run with the precision rule gives pairs
    # different counts); () where not read.
    pair_processes: tuple[int, ...] = ()
    # The (codec, fixture) pairs it timed; empty where not read: every pair of the grid.
    timed_pairs: frozenset[tuple[str, str]] = frozenset()
    # What each `asv run` costs beyond its durations, seconds: the tree's recorded runs'
    # median (read_costs), else ASV_RUN_S.
    asv_run_s: float = ASV_RUN_S
    recorded_runs: tuple[asv_runs.AsvRun, ...] = ()  # this file's (serkit.results.asv_runs)
    # Of other_s, memory per call and instruction counts: what an environment another one
    # counts for does not run (serkit.run.matrix.counted); 0 where not known (a table).
    counted_s: float = 0.0

    @property
    def benchmarks_s(self) -> float:
        if self.pair_processes:
            average = sum(self.pair_processes) / len(self.pair_processes)
            return self.per_process_s * average + self.other_s
        return self.per_process_s * self.processes + self.other_s

    def total_s(
        self,
        processes: int | None = None,
        precision: float | None = None,
        left_share: float = 0.0,
        counts: bool = True,
    ) -> float:
        """What the environment cost, or would cost with `processes` per timed pair; with
        `precision`, each pair with `processes_for` it instead (where spreads were read,
        else `processes`, else as recorded); less `left_share` of its timed time (the pairs
        a run now leaves out, LeaveOut.share); without `counts`, less its memory per call and
        instruction counts."""
        rounds = processes or self.processes
        timed = self.per_process_s * rounds
        if processes is None and self.pair_processes:
            timed = self.per_process_s * sum(self.pair_processes) / len(self.pair_processes)
        if precision is not None and self.spreads:
            needed = [processes_for(sd, precision, rounds) for sd in self.spreads]
            # asv records one duration per benchmark, not per pair: each pair is counted
            # an equal share of a process, which errs high, the slow pairs being the
            # precise ones.
            timed = self.per_process_s * sum(needed) / len(needed)
            rounds = max(needed)
        runs = FIRST_ROUND_RUNS + max(rounds - 1, 0)
        other = self.other_s if counts else self.other_s - self.counted_s
        return timed * (1 - left_share) + other + runs * self.asv_run_s + BUILD_S


def read_costs(root: Path, machine: str | None = None) -> tuple[list[Measured], list[str]]:
    """Every results file's cost under `root` (one machine's, where named), and warnings."""
    warnings: list[str] = []
    described: dict[str, tuple[Benchmark, int]] = {}
    try:
        raw: Any = load_json(root / BENCHMARKS_FILE) if (root / BENCHMARKS_FILE).is_file() else {}
        for name, info in raw.items() if isinstance(raw, dict) else ():
            if isinstance(info, dict):
                kind, repeat = str(info.get("type", "")), info.get("repeat")
                rounds = info.get("rounds")
                described[name] = (
                    Benchmark(name, kind, str(info.get("unit", "")), (), repeat),
                    rounds if isinstance(rounds, int) and rounds > 0 else 1,
                )
    except ResultsFileError as exc:
        warnings.append(f"skipped {root / BENCHMARKS_FILE}: {exc}")
    found = []
    # Each pair's processes as every reader takes them: judged when the tree is read.
    tree = read_tree(root, None if machine is None else [machine])
    judged: dict[Path, list[Measurement]] = {}
    for m in (m for host in tree.machines.values() for m in host.measurements):
        judged.setdefault(m.file, []).append(m)
    for folder in machine_folders(root):
        if machine is not None and folder.name != machine:
            continue
        for path in sorted(folder.iterdir()):
            if path.name == MACHINE_FILE or not RESULTS_FILE.match(path.name):
                continue
            try:
                found.append(_read_one(read_file(path), folder.name, described, judged))
            except (ResultsFileError, LookupError, TypeError, ValueError) as exc:
                warnings.append(f"skipped {path}: {exc}")
    # One figure for the tree: every file's recorded runs together.
    per_run = asv_runs.typical_overhead([r for m in found for r in m.recorded_runs])
    if per_run is not None:
        found = [replace(m, asv_run_s=per_run) for m in found]
    return found, warnings


def _passes(described: tuple[Benchmark, int] | None, samples: Any, rounds_run: int) -> int:
    """How many processes ran the benchmark: counted from its samples where they stand by
    process, else its declared rounds (as many as the run had)."""
    if described is None:
        return 1
    benchmark, rounds = described
    if benchmark.samples_per_process is not None and samples:
        counts = [len(benchmark.per_process([float(v) for v in s if v])) for s in samples if s]
        return max(counts, default=1)
    return min(rounds, rounds_run)


def _read_one(
    found: ResultsFile,
    machine: str,
    described: Mapping[str, tuple[Benchmark, int]],
    judged: Mapping[Path, Sequence[Measurement]],
) -> Measured:
    rows = found.rows
    rounds_run = max(
        (_passes(described.get(n), r.get("samples"), 1) for n, r in rows.items()), default=1
    )
    per_process = other = 0.0

    def timed(name: str) -> bool:
        known = described.get(name)
        return known is not None and known[0].samples_per_process is not None

    counted = 0.0
    for name, row in rows.items():
        duration = float(row.get("duration") or 0.0)
        if timed(name):
            per_process += duration  # the first round's (serkit.run.rounds): one process a pair
        else:
            spent = duration * _passes(described.get(name), row.get("samples"), rounds_run)
            other += spent
            counted += spent if _counted(name) else 0.0
    recorded_runs = found.runs
    waited = sum(r.waited_s for r in recorded_runs)
    if waited:
        # The timed processes' durations include what they waited for the machine's fast
        # state: taken out in proportion, as asv records no wait of its own.
        per_process *= max(0.0, 1 - waited / max(sum(r.recorded_s for r in recorded_runs), waited))
    # Each timed pair's processes, judged by the machine's state as every reader takes them.
    by_pair = {
        (m.benchmark, m.params): m.process_values
        for m in judged.get(found.path, ())
        if timed(m.benchmark) and m.process_values
    }
    spreads = tuple(spread_of(values) for values in by_pair.values())
    counts = tuple(len(values) for values in by_pair.values())
    timed_pairs = frozenset(
        (combo[0].strip("'"), combo[1].strip("'")) for _, combo in by_pair if len(combo) >= 2
    )
    # asv's own entries: a setup_cache (the instruction counts run under valgrind there,
    # once per environment) and the build.
    for key, value in found.durations.items():
        other += float(value)
        counted += float(value) if _counted(str(key).removeprefix("<setup_cache ")) else 0.0
    library = found.env_vars.get(LIBRARY_ENV) if isinstance(found.env_vars, dict) else None
    requirements = found.requirements if isinstance(found.requirements, dict) else {}
    return Measured(
        machine,
        found.commit,
        found.date,
        found.python,
        library,
        requirements.get(library) if library else None,
        per_process,
        other,
        rounds_run,
        spreads,
        counts,
        timed_pairs,
        recorded_runs=tuple(recorded_runs),
        counted_s=counted,
    )


def _counted(name: str) -> bool:
    """Whether a benchmark (or a setup_cache, by its module) is memory per call or an
    instruction count."""
    return name.split(".", 1)[0].split(":", 1)[0] in COUNTED_MODULES


@dataclass(frozen=True)
class Estimate:
    env: MatrixEnvironment
    seconds: float | None  # None: nothing like it was measured
    source: str  # "measured", or the measurement it borrows


def estimate(
    envs: Iterable[MatrixEnvironment],
    measured: Sequence[Measured],
    processes: int | None = None,
    precision: float | None = None,
    left: LeaveOut | None = None,
    counting: frozenset[MatrixEnvironment] | None = None,
) -> list[Estimate]:
    """Each environment's cost: its own measurement (the newest), else the nearest one's,
    else, for a library never measured, its pairs at the median measured pair's cost
    (by_pair); with `processes`, as if every timed pair ran that many (else as many as
    recorded); with `precision`, each pair as many as its spread needs (Measured.total_s);
    with `left`, less the pairs a full run now leaves out; with `counting` (the matrix's
    environments that count memory per call and instructions, serkit.run.matrix.counted),
    the others without their counts."""
    newest = newest_measured(measured)
    out = []
    for env in envs:
        near, source = nearest_measured(env, newest)
        if near is None and env.library is not None:
            near, source = by_pair(env, newest.values())
        if near is None:
            out.append(Estimate(env, None, source))
            continue
        share = 0.0 if left is None else left.share(near.library or "", near.timed_pairs)
        counts = counting is None or env in counting
        out.append(Estimate(env, near.total_s(processes, precision, share, counts), source))
    return out


def grid_pairs(library: str) -> list[tuple[str, str]]:
    """The (codec, fixture) pairs a default run times in `library`'s environment: its
    codecs on the default grid, a schema codec on its declared fixtures only."""
    grid = default_fixture_names()
    out = []
    for spec in builtin_specs():
        if spec.library == library:
            declared = spec.fixtures
            out += [(spec.name, f) for f in grid if declared is None or f in declared]
    return out


def by_pair(env: MatrixEnvironment, measured: Iterable[Measured]) -> tuple[Measured | None, str]:
    """A library never measured: its environment as its grid pairs (grid_pairs) times the
    median measured environment's cost per pair (its timed time and the rest, each over
    its pairs), as measured in that many processes; the build and `asv run`s as any
    environment's. The median, so that one library's slow pairs (pure-Python YAML) stand
    for none but its own."""
    rows = [
        (m, len(grid_pairs(m.library)))
        for m in measured
        if m.library is not None and grid_pairs(m.library)
    ]
    if len({m.library for m, _ in rows}) < FEWEST_LIBRARIES:
        return None, "not measured"
    per_pair = statistics.median(m.per_process_s / n for m, n in rows)
    other = statistics.median(m.other_s / n for m, n in rows)
    counted = statistics.median(m.counted_s / n for m, n in rows)
    pairs = len(grid_pairs(env.library or ""))
    processes = statistics.median_low([m.processes for m, _ in rows])
    stand_in = Measured(
        "",
        "",
        0,
        env.python,
        env.library,
        env.version,
        per_pair * pairs,
        other * pairs,
        processes,
        asv_run_s=statistics.median(m.asv_run_s for m, _ in rows),
        counted_s=counted * pairs,
    )
    libraries = len({m.library for m, _ in rows})
    return stand_in, f"{plural(pairs, 'pair')} at the median pair of {libraries} measured libraries"


@dataclass(frozen=True)
class LeaveOut:
    """The pairs a full run leaves out, predicted not worth timing (serkit.run.quick
    .plan_full, the run's own rule), and every pair's predicted weight in its
    environment's one process (PAIR_FLOOR_S, plus CALLS_PER_PROCESS calls): a left-out
    pair's share of that environment's measured timed time is its share of the weights."""

    weights: Mapping[tuple[str, str], float]  # (codec, fixture): predicted, one process
    left: frozenset[tuple[str, str]]
    unpredicted: frozenset[str] = frozenset()  # codecs not predicted here: none left out

    def share(self, library: str, timed: frozenset[tuple[str, str]] = frozenset()) -> float:
        """The share of `library`'s environment's timed time its left-out pairs take; 0 where
        one of its codecs was not predicted. `timed`: the pairs its measurement timed (a run
        that already left pairs out has none of their time to take away)."""
        pairs = [p for p in grid_pairs(library) if not timed or p in timed]
        if not pairs or any(codec in self.unpredicted for codec, _ in pairs):
            return 0.0
        total = sum(self.weights.get(p, PAIR_FLOOR_S) for p in pairs)
        gone = sum(self.weights.get(p, PAIR_FLOOR_S) for p in pairs if p in self.left)
        return gone / total if total else 0.0


def leave_out(
    libraries: Iterable[str],
    predicted: Mapping[str, Prediction] | None = None,
    rounds: int = FULL_ROUNDS,
    budget_s: float = FULL_BUDGET_S,
) -> LeaveOut:
    """What a full run of `rounds` planned processes leaves out of `libraries`' pairs on
    the default grid, by the run's own rule (serkit.run.quick.over_budget); from
    `predicted` ("codec fixture": Prediction, a saved table's, which is then the whole
    input: a pair it lacks is not predicted), else predicted here."""
    wanted = set(libraries)
    weights: dict[tuple[str, str], float] = {}
    left: set[tuple[str, str]] = set()
    unpredicted: set[str] = set()
    for library in sorted(wanted):
        for codec, fixture in grid_pairs(library):
            if predicted is not None:
                found = predicted.get(f"{codec} {fixture}")
            else:
                found = None if codec in unpredicted else _predict(codec, fixture)
            if found is None:
                unpredicted.add(codec)
                continue
            weights[codec, fixture] = PAIR_FLOOR_S + CALLS_PER_PROCESS * (
                found.dumps_s + found.loads_s
            )
            if over_budget(found, rounds, budget_s):
                left.add((codec, fixture))
    return LeaveOut(weights, frozenset(left), frozenset(unpredicted))


def _predict(codec: str, fixture: str) -> Prediction | None:
    try:
        return predict(codec, fixture)
    except SerkitError:
        return None


def read_predictions(path: Path) -> dict[str, Prediction] | None:
    """A saved table's predictions ("predictions": {"pairs": {"codec fixture": [dumps_s,
    loads_s]}}), None where it keeps none."""
    try:
        raw: Any = load_json(path)
        block = raw.get("predictions") if isinstance(raw, dict) else None
        if block is None:
            return None
        return {
            str(key): Prediction(float(value[0]), float(value[1]))
            for key, value in block["pairs"].items()
        }
    except (ResultsFileError, LookupError, TypeError, ValueError) as exc:
        raise SerkitError(f"{path}: its predictions are not a table ({exc})") from None


def newest_measured(measured: Iterable[Measured]) -> dict[tuple[str, str, str | None], Measured]:
    newest: dict[tuple[str, str, str | None], Measured] = {}
    for m in sorted(measured, key=lambda m: (m.date, m.commit)):
        if m.library is not None:  # an environment of every library stands for none alone
            newest[m.python, m.library, m.version] = m
    return newest


def nearest_measured(
    env: MatrixEnvironment, newest: Mapping[tuple[str, str, str | None], Measured]
) -> tuple[Measured | None, str]:
    """The measurement that stands for `env`: its own, else the nearest; and which it is."""
    library = env.library or ""
    own = newest.get((env.python, library, env.version))
    if own is not None:
        return own, "measured"
    same = [m for m in newest.values() if m.library == library]
    if not same:
        return None, "not measured"
    near = min(same, key=lambda m: _distance(env, m))
    what = f"py{near.python}" if near.version == env.version else f"{near.version}"
    if near.version != env.version and near.python != env.python:
        what += f" on py{near.python}"
    return near, f"from {what}"


def _distance(env: MatrixEnvironment, m: Measured) -> tuple[int, int, int, tuple[int, ...]]:
    """Nearest first: the same release, the same build kind (free-threaded or not), the
    closest Python, then the newest release."""
    a = version_order(env.python.removesuffix(FREE_THREADED))
    b = version_order(m.python.removesuffix(FREE_THREADED))
    python = abs((a[1] if len(a) > 1 else 0) - (b[1] if len(b) > 1 else 0))
    kind = int(env.python.endswith(FREE_THREADED) != m.python.endswith(FREE_THREADED))
    release = int(env.version != m.version)
    return (release, kind, python, tuple(-x for x in version_order(m.version or "")))


@dataclass(frozen=True)
class RunnerCost:
    """One runner kind's share: its environments, their estimates, and its shards."""

    platform: Platform
    estimates: list[Estimate]
    shards: list[tuple[Shard, float, int]]  # (shard, seconds, environments)

    @property
    def total_s(self) -> float:
        return sum(e.seconds or 0.0 for e in self.estimates)

    @property
    def unknown(self) -> list[Estimate]:
        return [e for e in self.estimates if e.seconds is None]

    @property
    def longest_shard_s(self) -> float:
        return max((s for _, s, _ in self.shards), default=0.0)


def runner_costs(
    data: Releases,
    measured: Sequence[Measured],
    shards: int | None = None,
    processes: int | None = None,
    precision: float | None = None,
    left: LeaveOut | None = None,
    counted_everywhere: bool = False,
) -> list[RunnerCost]:
    """Per runner kind: the matrix's cost, cut into `shards` (default: the fewest that each
    fit SHARD_BUDGET_S, the same count for every kind, as one workflow runs them); memory
    per call and instructions counted where a run counts them (serkit.run.matrix.counted),
    or with `counted_everywhere` in every environment."""
    per_kind = {}
    for platform in PLATFORMS:
        envs = list(environments(platform=platform.name, data=data))
        counting = None if counted_everywhere else counted(envs)
        per_kind[platform.name] = estimate(envs, measured, processes, precision, left, counting)
    count = shards or fewest_shards(per_kind.values())
    out = []
    for platform in PLATFORMS:
        estimates = per_kind[platform.name]
        cut = []
        for k in range(1, count + 1):
            shard = Shard(k, count)
            cut_envs = shard_slice([e.env for e in estimates], shard)
            cut.append((shard, _seconds(estimates, cut_envs), len(cut_envs)))
        out.append(RunnerCost(platform, estimates, cut))
    return out


def _seconds(estimates: Sequence[Estimate], envs: Iterable[MatrixEnvironment]) -> float:
    seconds = {e.env: e.seconds or 0.0 for e in estimates}
    return sum(seconds[env] for env in envs)


def fewest_shards(kinds: Iterable[Sequence[Estimate]], limit: int = 64) -> int:
    """The fewest shards that keep every runner kind's longest within SHARD_BUDGET_S."""
    kinds = list(kinds)
    for count in range(1, limit + 1):
        longest = 0.0
        for estimates in kinds:
            for k in range(1, count + 1):
                envs = shard_slice([e.env for e in estimates], Shard(k, count))
                longest = max(longest, _seconds(estimates, envs))
        if longest <= SHARD_BUDGET_S:
            return count
    return limit


def read_durations(path: Path) -> list[Measured]:
    """A durations table saved as JSON, in place of a results tree: per environment, its
    Python, library and release, one process of every timed pair, the rest, and the
    processes that ran (docs/cost.md keeps the table of the measured run this way); its
    `asv_run_s`, where it states one, else ASV_RUN_S; each row's `counted_s` (of other_s,
    memory per call and instruction counts), where it states one, else 0, and its
    `timed_pairs`, where it lists them, else every pair of the grid."""
    try:
        raw: Any = load_json(path)
        rows = raw["environments"]
        per_run = float(raw.get("asv_run_s", ASV_RUN_S))
        return [
            Measured(
                machine=str(raw.get("machine") or path.stem),
                commit=str(raw.get("commit") or ""),
                date=0,
                python=str(row["python"]),
                library=str(row["library"]),
                version=None if row.get("version") is None else str(row["version"]),
                per_process_s=float(row["per_process_s"]),
                other_s=float(row["other_s"]),
                processes=int(row["processes"]),
                asv_run_s=per_run,
                counted_s=float(row.get("counted_s", 0.0)),
                timed_pairs=frozenset((str(c), str(f)) for c, f in row.get("timed_pairs", ())),
            )
            for row in rows
        ]
    except (ResultsFileError, LookupError, TypeError, ValueError) as exc:
        raise SerkitError(f"{path}: not a durations table ({exc})") from None


def durations_table(
    measured: Sequence[Measured], what: str, libraries: Iterable[str]
) -> dict[str, Any]:
    """What read_durations reads back: each environment's row (the newest measurement of
    each), the tree's cost per `asv run`, and every pair of `libraries` on the default
    grid predicted here now (the saved predictions make the model's left-out pairs the
    same wherever the table is read)."""
    newest = newest_measured(measured)
    per_run = next(iter(newest.values())).asv_run_s if newest else ASV_RUN_S
    rows = [
        {
            "python": m.python,
            "library": m.library,
            "version": m.version,
            "per_process_s": round(m.per_process_s, 3),
            "other_s": round(m.other_s, 3),
            "counted_s": round(m.counted_s, 3),
            "processes": m.processes,
            # What the run timed: a pair it left out has no time to take away (LeaveOut.share).
            "timed_pairs": sorted(map(list, m.timed_pairs)),
        }
        for m in newest.values()
    ]
    pairs = {}
    for library in sorted(set(libraries)):
        for codec, fixture in grid_pairs(library):
            found = _predict(codec, fixture)
            if found is not None:
                pairs[f"{codec} {fixture}"] = [found.dumps_s, found.loads_s]
    return {
        "what": what,
        "machine": ", ".join(sorted({m.machine for m in newest.values()})),
        "asv_run_s": round(per_run, 3),
        "environments": rows,
        "predictions": {"pairs": pairs},
    }
