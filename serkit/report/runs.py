"""The runs a report shows: every run (one results file each, serkit.results.history), and
per machine and environment the newest commit measured there."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from serkit.codecs.registry import codec_names, registry
from serkit.compare.comparison import decode_param
from serkit.errors import SerkitError
from serkit.inputs.fixtures import fixture_names
from serkit.results.tree import Benchmark, Environment, Measurement, ResultsTree, version_order
from serkit.stats import Spread, spread
from serkit.suite.cases import LIBRARY_ENV

Params = tuple[Any, ...]


class NoResults(SerkitError):
    """The results tree holds no measurement the report could show."""


@dataclass
class Run:
    """One machine's newest results in one environment."""

    machine: str
    env: Environment
    commit: str
    date: int  # the commit's date, milliseconds since the epoch, as asv records it
    values: dict[tuple[str, Params], Measurement] = field(default_factory=dict)
    # What benchmarks.json says of each benchmark: how its samples stand by process.
    benchmarks: Mapping[str, Benchmark] = field(default_factory=dict)
    # When the run took its last values (asv's started_at), milliseconds since the epoch;
    # 0 where asv recorded none. The run's results file is named in `file`.
    ran_at: int = 0
    file: str = ""

    @property
    def moment(self) -> int:
        """When it ran, as far as known: the run's own moment, else its commit's date."""
        return self.ran_at or self.date

    def get(self, benchmark: str, *params: Any) -> Measurement | None:
        found = self.values.get((benchmark, params))
        return found if found is not None and found.value is not None else None

    def spread(self, benchmark: str, *params: Any) -> Spread | None:
        """The spread between the processes that timed this value, where asv kept them."""
        found = self.get(benchmark, *params)
        described = self.benchmarks.get(benchmark)
        if found is None or described is None:
            return None
        processes = described.per_process(found.samples)
        return spread(processes) if processes else None

    def value(self, benchmark: str, *params: Any) -> float | None:
        found = self.get(benchmark, *params)
        return None if found is None else found.value

    @property
    def library(self) -> str | None:
        """The axis library this environment varies, or None for a baseline."""
        return dict(self.env.env_vars).get(LIBRARY_ENV)

    @property
    def codecs(self) -> list[str]:
        return in_registry_order({p[0] for (_, p) in self.values if p}, codec_names())

    @property
    def fixtures(self) -> list[str]:
        return in_registry_order({p[1] for (_, p) in self.values if len(p) > 1}, fixture_names())

    def version_of(self, codec: str) -> str:
        """The release of the codec's library this environment installed."""
        library = library_of(codec)
        if library is None:
            return "?"
        if library == "stdlib":
            return f"Python {self.env.python}"
        return dict(self.env.requirements).get(library, "not installed")


def in_registry_order(found: Iterable[Any], order: Sequence[str]) -> list[Any]:
    """Registry order first, then anything the registry does not know (a plugin's)."""
    found = set(found)
    known = [name for name in order if name in found]
    return known + sorted((str(x) for x in found - set(known)), key=str)


def library_of(codec: str) -> str | None:
    spec = registry.specs.get(codec)
    return None if spec is None else spec.library


def all_runs(tree: ResultsTree) -> list[Run]:
    """Every run with a measured value: each results file of each machine, oldest first."""
    grouped: dict[tuple[str, str], list[Measurement]] = defaultdict(list)
    for host in tree.machines.values():
        for m in host.measurements:
            grouped[host.name, str(m.file)].append(m)
    runs = []
    for (machine, _), measurements in grouped.items():
        if all(m.value is None for m in measurements):
            continue
        first = measurements[0]
        run = Run(
            machine,
            first.env,
            first.commit,
            first.date,
            benchmarks=tree.benchmarks,
            ran_at=first.run_at,
            file=first.file.name,
        )
        _add_values(run, measurements)
        runs.append(run)
    return sorted(runs, key=lambda r: (r.moment, r.date, r.commit, r.machine, r.file))


def _add_values(run: Run, measurements: Iterable[Measurement]) -> None:
    """Each value not yet in `run`, or held there only as skipped."""
    for m in measurements:
        key = (m.benchmark, tuple(decode_param(p) for p in m.params))
        if key not in run.values or run.values[key].value is None:
            run.values[key] = m


def latest_runs(tree: ResultsTree) -> list[Run]:
    """For every machine and environment, the newest commit with a measured value: its
    newest run, with each value that run did not measure taken from the commit's runs
    before it, newest first (as asv's one file per commit held them)."""
    by_env: dict[tuple[str, Environment], list[Run]] = defaultdict(list)
    for run in all_runs(tree):
        by_env[run.machine, run.env].append(run)
    newest = []
    for runs in by_env.values():
        top = max(runs, key=lambda r: (r.date, r.commit, r.ran_at, r.file))
        same_commit = [r for r in runs if r.commit == top.commit]
        layered = replace(top, values={})
        for run in sorted(same_commit, key=lambda r: (r.ran_at, r.file), reverse=True):
            _add_values(layered, run.values.values())
        newest.append(layered)
    return sorted(newest, key=_run_order)


def _run_order(run: Run) -> tuple[Any, ...]:
    return (run.machine, version_order(run.env.python), run.library or "", run.env.label)


def baseline_runs(runs: Sequence[Run]) -> list[Run]:
    return [run for run in runs if run.library is None]
