"""The runs a report shows: per machine and environment, the newest commit measured there."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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


def latest_runs(tree: ResultsTree) -> list[Run]:
    """For every machine and environment, the newest commit with a measured value."""
    grouped: dict[tuple[str, Environment, str], list[Measurement]] = defaultdict(list)
    for host in tree.machines.values():
        for m in host.measurements:
            grouped[host.name, m.env, m.commit].append(m)
    newest: dict[tuple[str, Environment], Run] = {}
    for (machine, env, commit), measurements in grouped.items():
        if all(m.value is None for m in measurements):
            continue
        date = max(m.date for m in measurements)
        current = newest.get((machine, env))
        if current is not None and (current.date, current.commit) >= (date, commit):
            continue
        run = Run(machine, env, commit, date, benchmarks=tree.benchmarks)
        for m in measurements:
            key = (m.benchmark, tuple(decode_param(p) for p in m.params))
            if key not in run.values or run.values[key].value is None:
                run.values[key] = m
        newest[machine, env] = run
    return sorted(newest.values(), key=_run_order)


def _run_order(run: Run) -> tuple[Any, ...]:
    return (run.machine, version_order(run.env.python), run.library or "", run.env.label)


def baseline_runs(runs: Sequence[Run]) -> list[Run]:
    return [run for run in runs if run.library is None]
