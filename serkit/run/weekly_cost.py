"""What a scheduled run costs: a week with one new release of one library, the sentinel
included, beside a full re-measure on demand (docs/cost.md), from the model in
serkit.run.cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from serkit.codecs.registry import builtin_specs
from serkit.codecs.spec import STDLIB
from serkit.inputs.fixtures import default_fixture_names
from serkit.run.cost import (
    BUILD_S,
    FIRST_ROUND_RUNS,
    Estimate,
    LeaveOut,
    Measured,
    estimate,
    nearest_measured,
    newest_measured,
)
from serkit.run.index import PLATFORMS, Platform
from serkit.run.matrix import MatrixEnvironment, counted, environments
from serkit.run.releases import Releases
from serkit.run.sentinel import SENTINEL_OPERATIONS, sentinel_environment, sentinel_pairs
from serkit.suite.cases import FULL_ROUNDS

# A scheduled run measures what no stored point covers (serkit.run.points) and the sentinel
# (serkit.run.sentinel); its steady state is a week with one new release of one library.


@dataclass(frozen=True)
class SentinelCost:
    seconds: float | None  # None: the standard library's environment was never measured
    pairs: int
    share: float  # of the environment's timed pairs' time, at most (see sentinel_cost)
    source: str


@dataclass(frozen=True)
class WeeklyCost:
    """One runner kind's scheduled run: per library, what its new release would add (its
    newest release's environment on every Python that has it); the sentinel; and what a
    full re-measure (on demand) costs."""

    platform: Platform
    new_release: dict[str, list[Estimate]]
    sentinel: SentinelCost
    full_s: float

    def release_s(self, library: str) -> float:
        return sum(e.seconds or 0.0 for e in self.new_release[library])

    def week_s(self, library: str) -> float:
        """A week with one new release of `library`, the sentinel included."""
        return self.release_s(library) + (self.sentinel.seconds or 0.0)

    @property
    def costliest(self) -> str:
        return max(self.new_release, key=self.release_s)


def stdlib_timed_pairs() -> int:
    """The standard library's environment's `dumps` and `loads` pairs on the default grid:
    fewer than its timed pairs (the round trip, the adapter's overhead and import time
    are timed too), so a share of its time counted by them errs high."""
    codecs = [spec for spec in builtin_specs() if spec.library == STDLIB]
    return len(codecs) * len(default_fixture_names()) * len(SENTINEL_OPERATIONS)


def sentinel_cost(measured: Sequence[Measured], processes: int = FULL_ROUNDS) -> SentinelCost:
    """The sentinel's run: its own environment's build and `asv run`s, and its pairs' share
    of that environment's measured time per process, a pair counted as the average pair
    (the sentinel's documents are small ones, so this errs high)."""
    pairs = len(sentinel_pairs())
    share = pairs / stdlib_timed_pairs()
    near, source = nearest_measured(sentinel_environment(), newest_measured(measured))
    if near is None:
        return SentinelCost(None, pairs, share, source)
    runs = FIRST_ROUND_RUNS + max(processes - 1, 0)
    seconds = near.per_process_s * share * processes + runs * near.asv_run_s + BUILD_S
    return SentinelCost(seconds, pairs, share, source)


def weekly_costs(
    data: Releases,
    measured: Sequence[Measured],
    processes: int = FULL_ROUNDS,
    precision: float | None = None,
    left: LeaveOut | None = None,
    counted_everywhere: bool = False,
) -> list[WeeklyCost]:
    """Per runner kind: a scheduled run's cost with a new release of each library in turn,
    the sentinel, and a full re-measure of the matrix, at `processes` a timed pair."""
    sentinel = sentinel_cost(measured, processes)
    out = []
    for platform in PLATFORMS:
        envs = list(environments(platform=platform.name, data=data))
        newest: dict[str, dict[str, MatrixEnvironment]] = {}
        for env in envs:  # each library's releases come newest first, per Python
            if env.library is not None and env.library != STDLIB:
                newest.setdefault(env.library, {}).setdefault(env.python, env)
        counting = None if counted_everywhere else counted(envs)
        full = estimate(envs, measured, processes, precision, left, counting)
        new_release = {  # each Python's newest release: it counts (counted)
            library: estimate(by_python.values(), measured, processes, precision, left, counting)
            for library, by_python in newest.items()
        }
        out.append(WeeklyCost(platform, new_release, sentinel, sum(e.seconds or 0.0 for e in full)))
    return out
