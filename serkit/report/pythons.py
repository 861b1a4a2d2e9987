"""The Python-versions view: per machine, the baseline on each Python (each library's
newest release measured there: serkit.report.runs.baseline_runs), each Python against the
next, judged by the same rules as the library-versions view.

The matrix measures the newest release of every library that has a compiled wheel for
each Python (serkit.run.matrix), so two Pythons' sets hold the same releases except where
one has no wheel; each step names the libraries whose release differs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from serkit.codecs.registry import codec_names
from serkit.codecs.spec import STDLIB
from serkit.inputs.fixtures import fixture_names
from serkit.report.runs import Run, baseline_runs, in_registry_order, library_of
from serkit.report.steps import Change, Point, any_counted, judge_steps, suite_commits
from serkit.results.tree import ResultsTree, version_order
from serkit.suite.benchmark_names import DUMPS, LOADS, SIZE

# What the view judges between Pythons; a time's row carries its instructions per call.
MEASURES = (DUMPS, LOADS, SIZE)
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Releases:
    """One library's release in the baselines of two Pythons (None: not installed there)."""

    library: str
    before: str | None
    after: str | None

    @property
    def text(self) -> str:
        return f"{self.library} {self.before or NOT_INSTALLED} → {self.after or NOT_INSTALLED}"


@dataclass(frozen=True)
class PythonStep:
    """From one Python's baseline to the next Python's: every measurement judged."""

    before: Point
    after: Point
    changes: list[Change]

    @property
    def differing(self) -> list[Releases]:
        """The libraries whose release differs between the two sets, or that only one
        installed (no wheel of that release for the other Python)."""
        a, b = dict(self.before.run.env.requirements), dict(self.after.run.env.requirements)
        return [
            Releases(name, a.get(name), b.get(name))
            for name in sorted(set(a) | set(b))
            if a.get(name) != b.get(name)
        ]

    def releases(self, codec: str) -> Releases | None:
        """The codec's library on both sides; None for the standard library's own codecs."""
        library = library_of(codec)
        if library is None or library == STDLIB:
            return None
        a, b = dict(self.before.run.env.requirements), dict(self.after.run.env.requirements)
        return Releases(library, a.get(library), b.get(library))

    @property
    def called(self) -> list[Change]:
        """The changes beyond the noise (instruction counts apart: see `counts_moved`)."""
        return [c for c in self.changes if c.called]

    @property
    def counted(self) -> list[Change]:
        return [c for c in self.changes if c.instructions is not None]

    @property
    def counts_moved(self) -> list[Change]:
        """Counted on both Pythons and different: another interpreter does other work."""
        return [c for c in self.counted if c.instructions_verdict in ("more", "fewer")]


@dataclass(frozen=True)
class PythonView:
    """One machine's baselines across Pythons, oldest first, and the step between each."""

    machine: str
    points: list[Point]
    codecs: list[str]
    fixtures: list[str]
    steps: list[PythonStep]

    @property
    def changes(self) -> list[Change]:
        return [c for step in self.steps for c in step.changes]

    @property
    def has_instructions(self) -> bool:
        return any_counted(self.changes)

    @property
    def commits(self) -> list[str]:
        return suite_commits(self.points)


def python_views(runs: Sequence[Run], tree: ResultsTree) -> list[PythonView]:
    """Per machine with baselines on two or more Pythons: each Python against the next."""
    newest: dict[str, dict[str, Run]] = defaultdict(dict)
    for run in baseline_runs(runs):  # one per machine and Python
        newest[run.machine][run.env.python] = run
    views = []
    for machine, by_python in sorted(newest.items()):
        if len(by_python) < 2:
            continue  # one Python is no axis
        points = [Point(p, by_python[p]) for p in sorted(by_python, key=version_order)]
        codecs = in_registry_order({c for p in points for c in p.run.codecs}, codec_names())
        fixtures = in_registry_order({f for p in points for f in p.run.fixtures}, fixture_names())
        steps = []
        for before, after in zip(points, points[1:]):
            changes = judge_steps(tree, (before, after), codecs, fixtures, machine, MEASURES)
            steps.append(PythonStep(before, after, changes))
        views.append(PythonView(machine, points, codecs, fixtures, steps))
    return views
