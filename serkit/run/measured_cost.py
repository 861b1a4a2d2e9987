"""What each environment of the matrix cost, as recorded: from asv's results, or a saved table.

asv keeps, in every results file, each benchmark's duration in the last `asv run` that
ran it. serkit runs one `asv run` per round (serkit.run.rounds), each later round adding
one process to every timed pair and overwriting the duration with its own; so a timed
benchmark's cost is its duration times the processes its samples record, and any other
benchmark's its duration times the rounds it declares (1 for a track). Each `asv run`
also pays asv's start, the suite's discovery in the environment and the results' writing:
the median of what the tree's own runs recorded of it (serkit.results.asv_runs), else
ASV_RUN_S, measured here (docs/cost.md); and each environment its build, BUILD_S. Reading
the processes from the results, not from serkit's constants, keeps the model true when
the sampling plan changes. What the matrix would cost from these is serkit.run.cost's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from serkit.errors import SerkitError
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
from serkit.results.tree import Benchmark, Measurement, machine_folders, read_tree
from serkit.run.precision import processes_for, spread_of
from serkit.suite.benchmark_names import COUNTED_MODULES
from serkit.suite.cases import LIBRARY_ENV

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
