"""The history view: per host and Python, the baseline at every run over calendar time,
each step from one run to the next judged by the rules of the other version views.

The baseline is composed as the report composes it (serkit.report.runs.baseline_runs):
each library's newest release measured there, each from its own environment. A point is
one run: the results files one `serkit bench` filed (serkit.results.history; its host
record names them), or one CI workflow run's, across its shards (the host records' `ci_run`).
At each point the baseline is composed of every run up to it: a run that measured only
some libraries (the matrix measures only new points, serkit.run.points) leaves the
others' values as they stood, and a run that changed nothing the baseline shows (an
older release measured again) is no point. The point is placed at the moment its run
ended (asv's `started_at`), whatever suite commit or library releases it ran with, so
its series goes on across a release, and the release is marked. Each step judges only
the values that the later run brought; the others are the same measurements. Between two
points the view says what changed, each a mark on the chart's time axis:

- a release: a library the baseline installed at another release;
- the host: its identity as each run recorded it (serkit.results.identity: kernel,
  image, libc, microcode, CPU flags, each Python's version and build);
- the suite: asv's hash of a benchmark's code; those values are "not comparable";
- runner drift: in a sentinel's series (serkit.run.sentinel, a machine of its own), a
  pair moved beyond the noise with none of the above: the runner moved, not a library.

Each step is judged by serkit.report.steps (times by compare's `judge_pair`, counts
exactly), against the machine's noise floor; the view states what the verdicts can see
there, as the hosts page does (`serkit noise`, `serkit power`).
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import median
from typing import Any

from serkit.codecs.registry import codec_names
from serkit.codecs.spec import STDLIB
from serkit.compare.in_words import power_text
from serkit.compare.verdicts import host_floor
from serkit.inputs.fixtures import fixture_names
from serkit.report.hosts_table import NOT_MEASURED
from serkit.report.runs import Run, all_runs, baseline_runs, in_registry_order, library_of
from serkit.report.steps import MEASURE_NAMES, Change, Point, judge_steps
from serkit.results.host_file import read_runs, run_of_file
from serkit.results.identity import identity_changes
from serkit.results.noise import read_noise, read_power
from serkit.results.tree import ResultsTree, sampled_apart, version_order
from serkit.run.sentinel import is_sentinel_machine

# The newest steps of a series that are judged. The chart shows every run, and every step
# says what changed; the verdicts cost about 2.5 ms per timing here (a t-test each),
# 0.75 s a step for the default grid, so a year of weekly runs on 5 Pythons and 3
# runner kinds would take 10 minutes to judge in full.
JUDGED_STEPS = 12


def moment_label(millis: int) -> str:
    """A run's moment as the view names a point: UTC, to the minute."""
    moment = datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M")


def moment_iso(millis: int) -> str:
    """A run's moment for the chart's time axis (plotly reads ISO 8601), in UTC."""
    moment = datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


@dataclass(frozen=True)
class HistoryPoint:
    """The baseline after one run, and the host that run recorded (None where not linked).
    `run` is the composed baseline, its moment the run's."""

    run: Run
    host: Mapping[str, Any] | None

    @property
    def label(self) -> str:
        return moment_label(self.run.moment)


@dataclass(frozen=True)
class HistoryStep:
    """From one run to the next: what changed between them, and every measurement judged."""

    before: HistoryPoint
    after: HistoryPoint
    changes: list[Change]
    judged: bool = True  # False: older than the newest JUDGED_STEPS, its changes unjudged
    sentinel: bool = False  # a step of a sentinel's series (serkit.run.sentinel)

    @property
    def releases(self) -> list[str]:
        """The libraries the baseline installed at another release, `name old → new`."""
        a = dict(self.before.run.env.requirements)
        b = dict(self.after.run.env.requirements)
        return [
            f"{name} {a.get(name, 'none')} → {b.get(name, 'none')}"
            for name in sorted(set(a) | set(b))
            if a.get(name) != b.get(name)
        ]

    @property
    def host(self) -> list[str]:
        """How the host changed, as both runs recorded it; [] where either did not."""
        if self.before.host is None or self.after.host is None:
            return []
        return identity_changes(self.before.host, self.after.host)

    @property
    def code(self) -> list[str]:
        """The benchmarks whose code (asv's hash) or sampling plan differs between the two
        runs' values."""
        a, b = self.before.run.values, self.after.run.values
        return sorted(
            {
                key[0]
                for key in a.keys() & b.keys()
                if (
                    None not in (a[key].code_version, b[key].code_version)
                    and a[key].code_version != b[key].code_version
                )
                or sampled_apart(a[key], b[key])
            }
        )

    @property
    def drift(self) -> list[Change]:
        """In a sentinel's series (serkit.run.sentinel), its pairs called changed where no
        host or suite change explains it: the standard library has no release, so what
        moved them is the runner itself."""
        if not self.sentinel or self.host or self.code:
            return []
        return [c for c in self.called if library_of(c.codec) == STDLIB]

    @property
    def drift_percent(self) -> float | None:
        """The median change of the sentinel's drifted pairs, in percent."""
        return median(c.percent for c in self.drift) if self.drift else None

    @property
    def marks(self) -> list[str]:
        """The kinds of change the chart marks at this step: release, host, suite, and
        runner drift (the sentinel's)."""
        found = (
            ("release", self.releases),
            ("host", self.host),
            ("suite", self.code),
            ("runner drift", self.drift),
        )
        return [kind for kind, changes in found if changes]

    @property
    def called(self) -> list[Change]:
        return [c for c in self.changes if c.called]

    @property
    def detectable(self) -> float | None:
        """The median smallest change this step's timings could have called, where judged."""
        found = [c.detectable for c in self.changes if c.detectable is not None]
        return median(found) if found else None


@dataclass(frozen=True)
class HistoryView:
    """One machine's baseline on one Python, run after run."""

    machine: str
    python: str
    points: list[HistoryPoint]
    codecs: list[str]
    fixtures: list[str]
    steps: list[HistoryStep]
    noise: str  # the machine's noise record in words, as the hosts page gives it
    power: str  # what a verdict there can see (`serkit power`), likewise
    floor: float  # the floor timing verdicts use

    @property
    def commits(self) -> list[str]:
        return sorted({c for p in self.points for c in p.run.commits})

    @property
    def unjudged(self) -> int:
        return sum(1 for step in self.steps if not step.judged)

    def release(self, codec: str, point: HistoryPoint) -> str:
        """The codec's library release at a point (the standard library: the Python)."""
        library = library_of(codec)
        if library is None or library == "stdlib":
            return point.run.version_of(codec)
        return f"{library} {point.run.version_of(codec)}"


def history_views(
    tree: ResultsTree, measures: Sequence[str] = tuple(MEASURE_NAMES)
) -> list[HistoryView]:
    """Per machine and Python with two or more points: the baseline after every run, in
    time order, each step judged."""
    places: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in all_runs(tree):
        places[run.machine, run.env.python].append(run)
    views = []
    for (machine, python), runs in sorted(
        places.items(), key=lambda item: (item[0][0], version_order(item[0][1]))
    ):
        recorded = read_runs(tree.root / machine, tree.warnings) or []
        points = _points(runs, recorded)
        if len(points) < 2:
            continue  # one run is no history
        codecs = in_registry_order({c for p in points for c in p.run.codecs}, codec_names())
        fixtures = in_registry_order({f for p in points for f in p.run.fixtures}, fixture_names())
        steps = []
        sentinel = is_sentinel_machine(machine)
        for index, (before, after) in enumerate(zip(points, points[1:])):
            if index < len(points) - 1 - JUDGED_STEPS:
                steps.append(HistoryStep(before, after, [], judged=False, sentinel=sentinel))
                continue
            pair = (Point(before.label, before.run), Point(after.label, after.run))
            brought = [c for c in codecs if _files(before.run, c) != _files(after.run, c)]
            changes = judge_steps(tree, pair, brought, fixtures, machine, measures)
            steps.append(HistoryStep(before, after, changes, sentinel=sentinel))
        noise = read_noise(tree.root / machine, tree.warnings)
        views.append(
            HistoryView(
                machine,
                python,
                points,
                codecs,
                fixtures,
                steps,
                noise.in_words() if noise else NOT_MEASURED,
                power_text(read_power(tree.root / machine, tree.warnings)),
                host_floor(tree, [machine], tree.warnings),
            )
        )
    return views


def _sitting(run: Run, recorded: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Which run of serkit's a results file belongs to: its CI workflow run (every shard),
    else the `serkit bench` whose host record names it, else the file alone."""
    entry = run_of_file(recorded, run.file)
    if entry is None:
        return ("file", run.file)
    if entry.get("ci_run"):
        return ("ci", str(entry["ci_run"]))
    return ("bench", str(entry.get("recorded_at")) + " " + " ".join(entry.get("results") or ()))


def _points(runs: Sequence[Run], recorded: Sequence[Mapping[str, Any]]) -> list[HistoryPoint]:
    """The baseline after each run of one machine and Python, oldest first."""
    sittings: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        sittings[_sitting(run, recorded)].append(run)
    ordered = sorted(sittings.values(), key=lambda group: max((r.moment, r.file) for r in group))
    points: list[HistoryPoint] = []
    seen: list[Run] = []
    for group in ordered:
        seen.extend(group)
        (baseline,) = baseline_runs(seen)
        if points and {id(p) for p in baseline.parts} == {id(p) for p in points[-1].run.parts}:
            continue  # nothing the baseline shows changed
        last = max(group, key=lambda r: (r.moment, r.file))
        at = replace(baseline, ran_at=last.moment)
        points.append(HistoryPoint(at, run_of_file(recorded, last.file)))
    return points


def _files(run: Run, codec: str) -> frozenset[str]:
    """The results files a point's values of `codec` come from."""
    return frozenset(m.file.name for (_, params), m in run.values.items() if params[:1] == (codec,))
