"""The library-versions view: per axis library, each release against the next, judged."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from serkit.codecs.registry import codec_names
from serkit.inputs.fixtures import fixture_names
from serkit.report.runs import Run, in_registry_order, library_of
from serkit.report.steps import (
    CODE_CHANGED,
    INSTRUCTION_NAMES,
    MEASURE_NAMES,
    Change,
    Point,
    any_counted,
    counted_change,
    instruction_change,
    judge_steps,
    suite_commits,
)
from serkit.results.tree import ResultsTree, version_order
from serkit.run.matrix import LIBRARIES

# The step-judging code lives in serkit.report.steps, shared with the Python-versions view;
# these names stay importable from here.
__all__ = [
    "AXIS_LIBRARIES",
    "CODE_CHANGED",
    "INSTRUCTION_NAMES",
    "MEASURE_NAMES",
    "Change",
    "LibraryView",
    "VersionPoint",
    "counted_change",
    "instruction_change",
    "library_views",
]

AXIS_LIBRARIES = tuple(lib.name for lib in LIBRARIES if lib.axis)
VersionPoint = Point  # a release of the axis library, and the run that installed it


@dataclass(frozen=True)
class LibraryView:
    """One axis library on one machine and Python: its releases, oldest first."""

    library: str
    machine: str
    python: str
    points: list[VersionPoint]
    codecs: list[str]
    fixtures: list[str]
    changes: list[Change]

    @property
    def has_instructions(self) -> bool:
        return any_counted(self.changes)

    @property
    def commits(self) -> list[str]:
        return suite_commits(self.points)


def library_views(runs: Sequence[Run], tree: ResultsTree) -> list[LibraryView]:
    """Per machine, Python and axis library: the baseline and every axis env of it."""
    by_place: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        by_place[run.machine, run.env.python].append(run)
    views = []
    for (machine, python), place_runs in sorted(
        by_place.items(), key=lambda kv: (kv[0][0], version_order(kv[0][1]))
    ):
        for library in AXIS_LIBRARIES:
            points: dict[str, Run] = {}
            for run in place_runs:
                if run.library not in (None, library):
                    continue
                version = dict(run.env.requirements).get(library)
                if version and (version not in points or run.library is not None):
                    points[version] = run
            if len(points) < 2:
                continue  # one release is no axis
            ordered = [VersionPoint(v, points[v]) for v in sorted(points, key=version_order)]
            codecs = [c for c in codec_names() if library_of(c) == library]
            fixtures = in_registry_order(
                {f for p in ordered for f in p.run.fixtures}, fixture_names()
            )
            views.append(
                LibraryView(
                    library,
                    machine,
                    python,
                    ordered,
                    codecs,
                    fixtures,
                    judge_steps(tree, ordered, codecs, fixtures, machine),
                )
            )
    return views
