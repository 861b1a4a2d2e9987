"""The runs a report shows: every run (one results file each, serkit.results.history); per
machine and environment, the newest commit measured there; and per machine and Python,
the baseline: each library's newest release measured there.

serkit's matrix gives each library release an environment of its own (serkit.run.matrix),
so what the report shows side by side, every codec on one Python, is composed from several
runs. An older matrix's environment that installed every library (no SERKIT_BENCH_LIBRARY)
counts for each library it installed, so a results store that spans the change still reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from serkit.codecs.registry import codec_names, registry
from serkit.codecs.spec import STDLIB
from serkit.compare.pairing import decode_param
from serkit.errors import SerkitError
from serkit.inputs.fixtures import fixture_names
from serkit.results.tree import (
    Environment,
    Measurement,
    ResultsTree,
    version_order,
)
from serkit.stats import Spread, spread
from serkit.suite.cases import LIBRARY_ENV

Params = tuple[Any, ...]


class NoResults(SerkitError):
    """The results tree holds no measurement the report could show."""


@dataclass
class Run:
    """One machine's newest results in one environment, or a baseline composed of such
    runs (`parts`: see baseline_runs)."""

    machine: str
    env: Environment
    commit: str
    date: int  # the commit's date, milliseconds since the epoch, as asv records it
    values: dict[tuple[str, Params], Measurement] = field(default_factory=dict)
    parts: tuple[Run, ...] = ()  # a baseline's runs, one per library
    # When the run took its last values (asv's started_at), milliseconds since the epoch;
    # 0 where asv recorded none. The run's results file is named in `file` ("" for a
    # baseline: each value's own file is on its Measurement).
    ran_at: int = 0
    file: str = ""

    @property
    def commits(self) -> list[str]:
        """The suite commits behind these values: more than one is a caveat."""
        return sorted({part.commit for part in self.parts} or {self.commit})

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
        processes = found.process_values if found is not None else ()
        return spread(processes) if processes else None

    def time(self, benchmark: str, *params: Any) -> float | None:
        """A timing as the report shows it: the median of its processes, each judged by the
        machine's state (serkit.sample_speed), so that it lies inside the spread shown beside it;
        asv's own value where no processes were recorded."""
        found = self.get(benchmark, *params)
        return None if found is None else found.judged_value

    def value(self, benchmark: str, *params: Any) -> float | None:
        found = self.get(benchmark, *params)
        return None if found is None else found.value

    @property
    def library(self) -> str | None:
        """The library this environment measures (a codec library, or STDLIB); None for an
        older matrix's environment of every library, and for a baseline."""
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


def release_measured(run: Run, library: str) -> str | None:
    """The release of `library` whose codecs `run` measured ("" where none was recorded, as
    for a plugin's codec); None when it measured none of them."""
    if run.library is not None and run.library != library:
        return None  # an environment of another library
    if not any(params and group_of(params[0]) == library for (_, params) in run.values):
        return None
    if library == STDLIB:
        return run.env.python
    return dict(run.env.requirements).get(library, "")


def group_of(codec: Any) -> str:
    """The library a codec belongs to; an unknown codec (a plugin's) stands alone."""
    return library_of(str(codec)) or f"codec {codec}"


def recency(run: Run) -> tuple[Any, ...]:
    """Which of two runs of one release stands: the newer commit; then an environment of
    that library alone over an older matrix's environment of every library; then, between
    two of those, the one with the newer releases of the others (the later matrix); then,
    of one environment and commit, the later run."""
    releases = tuple(version_order(v) for _, v in run.env.requirements)
    return (run.date, run.library is not None, releases, run.commit, run.ran_at, run.file)


def baseline_runs(runs: Sequence[Run]) -> list[Run]:
    """Per machine and Python: each library's newest release measured there (and the
    standard library's codecs), in one run composed of the runs that measured them."""
    by_place: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        by_place[run.machine, run.env.python].append(run)
    out = []
    for (machine, python), place in by_place.items():
        groups = {group_of(p[0]) for run in place for (_, p) in run.values if p}
        chosen: dict[str, Run] = {}
        for group in sorted(groups):
            found = [(r, run) for run in place if (r := release_measured(run, group)) is not None]
            if found:
                newest = max(version_order(r) for r, _ in found)
                chosen[group] = max(
                    (run for r, run in found if version_order(r) == newest), key=recency
                )
        out.append(_compose(machine, python, chosen, max(place, key=recency)))
    return sorted(out, key=lambda run: (run.machine, version_order(run.env.python)))


def _compose(machine: str, python: str, chosen: Mapping[str, Run], latest: Run) -> Run:
    """One run of the chosen runs' values, each library's from its own; values of no codec
    (a benchmark without parameters) from the latest run."""
    values: dict[tuple[str, Params], Measurement] = {
        key: m for key, m in latest.values.items() if not key[1]
    }
    used = [*chosen.values(), *([latest] if values else [])]
    parts = tuple({id(run): run for run in used}.values())
    requirements: dict[str, str] = {}
    for group, run in chosen.items():
        if group in dict(run.env.requirements):
            requirements[group] = dict(run.env.requirements)[group]
        for (name, params), m in run.values.items():
            if params and group_of(params[0]) == group:
                values[name, params] = m
    newest = max(parts, key=lambda run: (run.date, run.commit))
    env = Environment(python, tuple(sorted(requirements.items())))
    ran_at = max(run.ran_at for run in parts)
    return Run(machine, env, newest.commit, newest.date, values, parts, ran_at)
