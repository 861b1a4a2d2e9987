"""Does the asv suite's timing agree with an independent harness timing the same call?

`serkit agreement` sets one pair against a plain `timeit` in this process; `serkit
validate` sets a fixed panel of pairs against pyperf, which times each in several
worker processes, with calibration and warm-up. Each round runs the real suite through
`asv run` (in this interpreter, results in a temporary folder), then the other harness
on the same calls, prepared by the same `serkit.suite.preparation.prepare`. Rounds interleave, so
machine noise hits both alike; each pair's verdict is the median of its rounds' ratios.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Optional

from serkit.checkout import git_commit
from serkit.compare.pairing import decode_param
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.inputs.sources import MIRROR_ENV
from serkit.progress import progress
from serkit.results.asv_file import attach_notes
from serkit.results.canary import clear_notes
from serkit.results.hosts import load_average, record_host
from serkit.results.tree import (
    BENCHMARKS_FILE,
    MACHINE_FILE,
    ResultsTree,
    machine_folders,
    read_tree,
)
from serkit.run.machine_profile import ensure_machine
from serkit.run.machine_speed import process_environment, run_probe
from serkit.run.precision import quick_precision
from serkit.run.round_selection import imprecise_pairs, later_selection
from serkit.run.rounds import LEAST_PROGRESS, ROUND_ARGS
from serkit.run.runner import asv, scratch_config
from serkit.stats import median_paired_ratio, paired_ratios
from serkit.suite.benchmark_names import TIME
from serkit.suite.budget import NOTES_ENV
from serkit.suite.cases import harness_record, warmup_from_env
from serkit.suite.preparation import prepare

TOLERANCE = 0.10
TIMEIT, PYPERF = "timeit", "pyperf"
PYPERF_INSTALL = "pip install 'serkit[validate]'"


@dataclass(frozen=True)
class SuiteCall:
    """One call of the suite: a codec's operation on a fixture."""

    codec: str
    fixture: str
    operation: str = "dumps"

    @property
    def benchmark(self) -> str:
        return TIME[self.operation]

    @property
    def pattern(self) -> str:
        """asv's --bench regex for exactly this parameter set of the benchmark."""
        return "^" + re.escape(f"{self.benchmark}({self.codec!r}, {self.fixture!r})") + "$"


# serkit validate's panel: calls from about 1 µs to 2 ms, compiled and pure Python code,
# Python callbacks inside a C codec (msgpack-ext), and each of the three operations.
PANEL = (
    SuiteCall("orjson", "small-dict", "dumps"),
    SuiteCall("marshal", "small-dict", "loads"),
    SuiteCall("msgpack-ext", "sensor-record", "round_trip"),
    SuiteCall("json", "senate-bios", "dumps"),
    SuiteCall("msgspec-msgpack", "random-dicts-100", "loads"),
    SuiteCall("cbor2", "sensor-stream", "loads"),
    SuiteCall("ujson", "random-dicts-100", "dumps"),
    SuiteCall("yaml", "small-dict", "dumps"),
)


@dataclass(frozen=True)
class Agreement:
    codec: str
    fixture: str
    operation: str
    asv_s: list[float]  # asv's median, one per round
    other_s: list[float]  # the other harness's median, one per round
    harness: str = TIMEIT

    @property
    def ratios(self) -> list[float]:
        return paired_ratios(self.asv_s, self.other_s)

    @property
    def ratio(self) -> float:
        # Each round's pair ran back to back (serkit.stats says why this is steadier).
        return median_paired_ratio(self.asv_s, self.other_s)

    @property
    def within(self) -> bool:
        return abs(self.ratio - 1) <= TOLERANCE

    def as_dict(self) -> dict[str, Any]:
        return {
            "codec": self.codec,
            "fixture": self.fixture,
            "operation": self.operation,
            "harness": self.harness,
            "asv_s": self.asv_s,
            f"{self.harness}_s": self.other_s,
            "ratios": self.ratios,
            "ratio": self.ratio,
            "within": self.within,
            "tolerance": TOLERANCE,
        }


def _git_head(root: Path) -> str:
    commit = git_commit(root)
    if commit is None:
        raise SerkitError(f"{root} is not a git checkout: asv needs one")
    return commit


Values = dict[tuple[str, tuple[Any, ...]], float]


# One process per pair, every sample kept; a later round adds its samples to the last's.
ROUND = ROUND_ARGS
LATER_ROUND = (*ROUND, "--append-samples")


class ScratchSuite:
    """The real asv suite, run in this interpreter, with results in a temporary folder."""

    def __init__(
        self,
        root: Path,
        env: Mapping[str, str] | None = None,
        *,
        precision: float | None = None,
    ) -> None:
        self.root = root
        self.env = dict(env if env is not None else os.environ)
        # What its extra rounds aim for: by default, as a quick run's of serkit bench.
        self.precision = quick_precision() if precision is None else precision
        self._short: int | None = None  # pairs short of it as the last extra round began
        self._folder = tempfile.TemporaryDirectory(prefix="serkit-agreement-")
        self.scratch = Path(self._folder.name)
        # Each sample's canary, as under serkit bench (serkit.suite.canary): judged alike;
        # and each placed on the faster vCPU as a quick run's are.
        self.env[NOTES_ENV] = str(self.scratch / "notes")
        self.env.update(process_environment(run_probe(root), self.scratch / "notes"))

    def __enter__(self) -> ScratchSuite:
        self.config = scratch_config(self.root, self.scratch)
        ensure_machine(self.root, self.env)
        self.commit = _git_head(self.root)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._folder.cleanup()

    def run(self, patterns: Iterable[str], attributes: Iterable[str] = ()) -> Values:
        """One `asv run` of the benchmarks matching `patterns`: seconds by (name, params).

        A value asv skipped or failed is left out.
        """
        tree = self.run_tree(patterns, attributes)
        values: Values = {}
        for machine in tree.machines.values():
            for m in machine.measurements:
                if m.value is not None:
                    values[m.benchmark, tuple(decode_param(p) for p in m.params)] = m.value
        if not values:
            raise SerkitError("asv recorded no timings; see its output above")
        return values

    def run_tree(
        self,
        patterns: Iterable[str],
        attributes: Iterable[str] = (),
        *,
        rounds: int = 0,
        first_round_only: Iterable[str] = (),
    ) -> ResultsTree:
        """The benchmarks matching `patterns` (asv's --bench regexes, which match
        `name(param, ...)`, params as repr()), read back as a results tree.

        With `rounds`, as `serkit bench` runs them: one `asv run` per round, one process
        per pair in each, over the whole slice, every sample kept (asv refuses its own
        --interleave-rounds for an existing environment), then the extra rounds of the
        pairs short of typical processes or of precision; `first_round_only` patterns
        (counted tracks) run in the first round alone.
        """
        self.clear()
        once, attributes = list(first_round_only), list(attributes)  # read in every round
        if not rounds:
            self._asv_run([*patterns, *once], attributes)
        for round_index in range(rounds):
            self.run_round(patterns, round_index, attributes, once)
        for _ in range(rounds):
            if not self.run_extra_round(attributes):
                break
        return self.tree()

    @property
    def results(self) -> Path:
        return self.scratch / "results"

    def clear(self) -> None:
        """Start from no results."""
        for old in self.results.glob("*/*-*.json"):
            old.unlink()
        clear_notes(self.scratch / "notes")
        self._short = None

    def tree(self) -> ResultsTree:
        return read_tree(self.results)

    def file_as(self, into: Path, machine: str, measured_as: str = "quick") -> None:
        """File the suite's last run in the results tree `into` as `machine`, a run of this
        host (its host record): runs filed so are read together (`read_as_one_host`)."""
        (folder,) = machine_folders(self.results)
        target = into / machine
        target.mkdir(parents=True)
        filed = []
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            if path.name == MACHINE_FILE:
                data["machine"] = machine
            else:
                data["params"]["machine"] = machine
                filed.append(path.name)
            atomic_write(target / path.name, json.dumps(data).encode())
        if not (into / BENCHMARKS_FILE).exists():
            atomic_write(into / BENCHMARKS_FILE, (self.results / BENCHMARKS_FILE).read_bytes())
        warmup = warmup_from_env(self.env)  # serkit's own where the suite's env sets one
        record_host(
            into,
            machine,
            commit=self.commit,
            filed=filed,
            measured_as=measured_as,
            harness=harness_record(warmup),
        )

    def run_round(
        self,
        patterns: Iterable[str],
        round_index: int,
        attributes: Iterable[str] = (),
        first_round_only: Iterable[str] = (),
    ) -> None:
        """One round of the benchmarks matching `patterns`: one process per pair."""
        chosen = [*patterns, *first_round_only] if round_index == 0 else list(patterns)
        self._asv_run(chosen, attributes, ROUND if round_index == 0 else LATER_ROUND)

    def short_pairs(self) -> dict[str, set[tuple[str, ...]]]:
        """By timed benchmark, the pairs short of typical processes or of the precision."""
        try:
            benchmarks = json.loads((self.results / BENCHMARKS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        short: dict[str, set[tuple[str, ...]]] = {}
        for path in self.results.glob("*/*-*.json"):
            for name, combos in imprecise_pairs(path, benchmarks, self.precision).items():
                short.setdefault(name, set()).update(combos)
        return short

    def run_extra_round(
        self, attributes: Iterable[str] = (), short: dict[str, set[tuple[str, ...]]] | None = None
    ) -> bool:
        """One more process for each timed pair short of typical processes or of the
        precision (`short`: those of several suites run side by side, which then all take
        them), as `serkit bench` gives (serkit.run.rounds); False when no pair is, or when
        the last extra round brought too few within precision (LEAST_PROGRESS)."""
        try:
            benchmarks = json.loads((self.results / BENCHMARKS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        short = self.short_pairs() if short is None else short
        chosen = later_selection(benchmarks, 0, [], [], short, extra=True)
        pairs = sum(len(combos) for combos in short.values())
        stalled = self._short is not None and pairs > self._short * (1 - LEAST_PROGRESS)
        if not chosen or stalled:
            return False
        self._short = pairs
        self._asv_run(
            chosen, attributes, ["--record-samples", "-a", "rounds=1", "--append-samples"]
        )
        return True

    def _asv_run(
        self, patterns: Iterable[str], attributes: Iterable[str], extra: Iterable[str] = ()
    ) -> None:
        args = ["run", "--config", str(self.config), "-E", f"existing:{sys.executable}"]
        args += ["--set-commit-hash", self.commit, *extra]
        for pattern in patterns:
            args += ["-b", pattern]
        for attribute in attributes:
            args += ["-a", attribute]
        status = asv(self.root, args, self.env, quiet=True)
        for path in self.results.glob("*/*-*.json"):  # asv rewrote it: the canary again
            attach_notes(path, Path(self.env[NOTES_ENV]))
        if status not in (0, 2):
            raise SerkitError("asv run failed; see its output above")


def read_as_one_host(into: Path, machines: Iterable[str]) -> dict[str, ResultsTree]:
    """Runs filed in `into` (ScratchSuite.file_as), each as a tree of its own, but read
    together as `serkit compare` reads runs of one host: against the host's one fast canary
    reading (serkit.sample_speed.reference). Each scratch run read alone had its own fast
    reading, and a run wholly in the slow state would read its slow samples as fast; an A/A
    or an injected run judged so was off by as much as those readings: +10 % read as x1.043
    in `serkit power` here, x1.072 read together (docs/trust.md, "What a verdict can see
    here")."""
    names = list(machines)
    tree = read_tree(into, names)
    return {name: dataclasses.replace(tree, machines={name: tree.machines[name]}) for name in names}


def _asv_value(values: Values, pair: SuiteCall) -> float:
    try:
        return values[pair.benchmark, (pair.codec, pair.fixture)]
    except KeyError:
        raise SerkitError(
            f"asv recorded no timing of {pair.benchmark} for {pair.codec} x {pair.fixture}"
        ) from None


def _timeit_median(call: Callable[[], object]) -> float:
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return statistics.median(t / number for t in timer.repeat(repeat=7, number=number))


def measure_agreement(
    root: Path, codec: str, fixture: str, operation: str = "dumps", rounds: int = 5
) -> Agreement:
    """One pair, the asv suite against timeit in this process, `rounds` times."""
    pair = SuiteCall(codec, fixture, operation)
    # Prepared once, before asv runs: a pair that cannot run fails now, with serkit's message.
    call = prepare(codec, fixture).operation(operation)
    asv_s: list[float] = []
    timeit_s: list[float] = []
    with ScratchSuite(root) as suite:
        for _ in progress_rounds(rounds):
            asv_s.append(_asv_value(suite.run([pair.pattern]), pair))
            timeit_s.append(_timeit_median(call))
    return Agreement(codec, fixture, operation, asv_s, timeit_s, TIMEIT)


def pyperf_median(pair: SuiteCall, processes: int, scratch: Path) -> float:
    """pyperf's median for the pair, from `serkit.trust.pyperf_worker` in a fresh interpreter."""
    output = scratch / "pyperf.json"
    output.unlink(missing_ok=True)
    command = [sys.executable, "-m", "serkit.trust.pyperf_worker", "--quiet", "-o", str(output)]
    command += ["--processes", str(processes), "--inherit-environ", f"{MIRROR_ENV},SERKIT_DATA_DIR"]
    command += ["--codec", pair.codec, "--fixture", pair.fixture, "--operation", pair.operation]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not output.is_file():
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SerkitError(f"pyperf failed on {pair.codec} x {pair.fixture}; see its output above")
    import pyperf

    return float(pyperf.Benchmark.load(str(output)).median())


def validate(
    root: Path, pairs: Iterable[SuiteCall] = PANEL, rounds: int = 3, processes: int = 10
) -> list[Agreement]:
    """Each pair, the asv suite (its default statistics) against pyperf, `rounds` times."""
    try:
        import pyperf  # noqa: F401  (only its workers use it; fail here, with the hint)
    except ImportError:
        raise SerkitError(f"serkit validate needs pyperf ({PYPERF_INSTALL})") from None
    chosen = list(pairs)
    for pair in chosen:
        prepare(pair.codec, pair.fixture)  # a pair that cannot run fails now, with its reason
    asv_s: dict[SuiteCall, list[float]] = {pair: [] for pair in chosen}
    pyperf_s: dict[SuiteCall, list[float]] = {pair: [] for pair in chosen}
    with ScratchSuite(root) as suite:
        for _ in progress_rounds(rounds):
            values = suite.run([pair.pattern for pair in chosen])
            for pair in chosen:
                asv_s[pair].append(_asv_value(values, pair))
                pyperf_s[pair].append(pyperf_median(pair, processes, suite.scratch))
    return [
        Agreement(p.codec, p.fixture, p.operation, asv_s[p], pyperf_s[p], PYPERF) for p in chosen
    ]


# Optional, not `| None`: an alias is evaluated at import, and 3.9 has no `|` on types.
LoadAverage = Optional[tuple[float, float, float]]


@dataclass(frozen=True)
class Validation:
    """`serkit validate`'s run: each pair's agreement, and the machine's load around it."""

    rounds: int
    processes: int
    pairs: list[Agreement]
    load_before: LoadAverage
    load_after: LoadAverage

    @property
    def within(self) -> bool:
        return all(pair.within for pair in self.pairs)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "processes": self.processes,
            "load_average": {
                "before": _load_field(self.load_before),
                "after": _load_field(self.load_after),
            },
            "pairs": [pair.as_dict() for pair in self.pairs],
        }


def _load_field(load: LoadAverage) -> str:
    # The document's own spelling since its first version: tools already read it.
    return " ".join(f"{x:.2f}" for x in load) if load is not None else "unreadable"


def run_validation(
    root: Path, rounds: int = 3, processes: int = 10, pairs: Iterable[SuiteCall] = PANEL
) -> Validation:
    """validate(), with the load average read before and after: a busy machine disagrees."""
    before = load_average()
    results = validate(root, pairs, rounds, processes)
    return Validation(rounds, processes, results, before, load_average())


def progress_rounds(count: int) -> Iterator[int]:
    yield from progress(range(count), desc="rounds", unit="round", leave=True)
