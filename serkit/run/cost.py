"""What the matrix costs to run, from what asv recorded: `serkit matrix --cost`.

What each measured environment cost is read by serkit.run.measured_cost (asv's durations
and the processes each pair recorded); `--processes N` predicts a run of N processes a
pair from a shorter one, and `--precision` each pair's processes from its spread.

An environment of the matrix not measured borrows the cost of the nearest one that was:
the same library and release on the nearest Python, else the nearest release of that
library; the estimate names its source. Each runner kind gets the environments its
platform has wheels for (serkit.run.matrix), cut into shards as serkit.run.shards cuts.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.codecs.registry import builtin_specs
from serkit.errors import SerkitError
from serkit.inputs.fixtures import default_fixture_names
from serkit.results.asv_file import ResultsFileError, load_json
from serkit.results.tree import version_order
from serkit.run.index import PLATFORMS, Platform
from serkit.run.interpreters import FREE_THREADED
from serkit.run.matrix import MatrixEnvironment, counted, environments

# Read from here by the commands and the weekly cost, as before the records moved.
from serkit.run.measured_cost import ASV_RUN_S as ASV_RUN_S
from serkit.run.measured_cost import BUILD_S as BUILD_S
from serkit.run.measured_cost import FIRST_ROUND_RUNS as FIRST_ROUND_RUNS
from serkit.run.measured_cost import Measured as Measured
from serkit.run.measured_cost import read_costs as read_costs
from serkit.run.measured_cost import read_durations as read_durations
from serkit.run.quick import FULL_BUDGET_S, over_budget
from serkit.run.releases import Releases
from serkit.run.shards import Shard, shard_slice
from serkit.suite.cases import FULL_ROUNDS, SAMPLES_PER_PROCESS
from serkit.suite.prediction import Prediction, predict
from serkit.units import plural

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
