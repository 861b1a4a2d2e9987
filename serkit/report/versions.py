"""The library-versions view: per library, each release against the next, judged.

A release's point is the run that measured that library's codecs at that release on the
machine and Python: the environment of that library alone (serkit.run.matrix), or an
older matrix's environment that installed it among every library. Where several did,
`recency` picks one (the newer commit first), never the order of their labels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from serkit.codecs.registry import codec_names
from serkit.codecs.spec import STDLIB
from serkit.inputs.fixtures import fixture_names
from serkit.report.runs import Run, in_registry_order, library_of, recency, release_measured
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

# The step-judging code lives in serkit.report.steps, shared with the Python-versions view;
# these names stay importable from here.
__all__ = [
    "CODE_CHANGED",
    "INSTRUCTION_NAMES",
    "MEASURE_NAMES",
    "Change",
    "LibraryView",
    "VersionPoint",
    "counted_change",
    "instruction_change",
    "libraries",
    "library_views",
]

VersionPoint = Point  # a release of the library, and the run that installed it


def libraries() -> list[str]:
    """Every codec library the registry knows, in its order (the standard library's
    codecs have no releases of their own: its axis is the Python)."""
    found = (library_of(codec) for codec in codec_names())
    return [lib for lib in dict.fromkeys(found) if lib is not None and lib != STDLIB]


@dataclass(frozen=True)
class LibraryView:
    """One library on one machine and Python: its releases, oldest first."""

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
    """Per machine, Python and library with two or more releases measured: each release."""
    by_place: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        by_place[run.machine, run.env.python].append(run)
    views = []
    for (machine, python), place_runs in sorted(
        by_place.items(), key=lambda kv: (kv[0][0], version_order(kv[0][1]))
    ):
        for library in libraries():
            points: dict[str, Run] = {}
            for run in place_runs:
                version = release_measured(run, library)
                if not version:
                    continue
                held = points.get(version)
                if held is None or recency(run) > recency(held):
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
