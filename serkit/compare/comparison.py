"""Comparing the asv results of two machines, which `asv compare` cannot do (asv PR #1220).

Values are matched by benchmark, parameters and environment (Python, library versions
and environment variables as asv recorded them, never the host's own fields). A value of
one of serkit's codecs is matched by what it ran with, not by everything its environment
installed: the Python and the releases of the codec's library and of what its calls need
beside it (none for the standard library's codecs), as the run that measured it recorded
them (serkit.results.asv_file.CODECS_KEY), so that two trees pair alike whichever serkit
reads them; for results written before runs recorded it, as this checkout declares them
(serkit.run.libraries). So a quick run's
environment of every library's newest release and the matrix's environment of one library
release pair wherever the codec ran with the same releases (`match_env`). The rules, each
stated once here and in the README:

- Commit: with `--commit`, that commit (a prefix) on both hosts; otherwise, for each
  matched value, the newest commit (by the commit date asv recorded) at which both hosts
  measured it; of a host's several runs at that commit (serkit.results.history), the
  newest.
- Verdict: each pair is judged by the rules in serkit.compare.verdicts (noise, a single
  sample, sizes, memory, instructions and estimated cycles, and the hosts' noise floor).
- Estimated cycles beside each timing say whether the time's verdict is the code's:
  where the time calls a change the cycles do not show (or show the other way), or the
  cycles move by at least what the time could have called and the time does not, the
  two disagree (`disagreement`), in words.
- Summary: the geometric mean of B/A over the timings, per codec (the `codec`
  parameter) or, for a benchmark without one, per benchmark, and over all of them.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from serkit.compare.pairing import Key, by_key, named_params
from serkit.compare.verdicts import (
    COUNTED_UNITS,
    FASTER,
    HIGHER,
    INSTRUCTIONS_UNIT,
    LOWER,
    SAME,
    SIZE_MISMATCH,
    WITHIN_NOISE,
    host_floor,
    judge_pair,
)

# Read from here by serkit.compare.gate and serkit.cli.results until they import them from
# serkit.compare.verdicts, where they now live.
from serkit.compare.verdicts import NO_SPREAD as NO_SPREAD
from serkit.compare.verdicts import SINGLE_SAMPLE as SINGLE_SAMPLE
from serkit.compare.verdicts import SLOWER as SLOWER
from serkit.errors import SerkitError
from serkit.results.noise import DEFAULT_FLOOR, NoNoise, PowerRecord, read_power
from serkit.results.tree import (
    Benchmark,
    Environment,
    Measurement,
    ResultsTree,
    sampled_apart,
    version_order,
)
from serkit.sample_speed import memory_shift
from serkit.suite.benchmark_names import CYCLES, CYCLES_UNIT, INSTRUCTIONS, TIME, TRY_PREFIX

# Each timing's instruction count: the same operation, counted (bench_instructions).
COUNTED_BESIDE = {TIME[operation]: name for operation, name in INSTRUCTIONS.items()}
# Each timing's estimated cycles: the same operation, counted with the instructions.
CYCLES_BESIDE = {TIME[operation]: name for operation, name in CYCLES.items()}

# 2: timings judged between processes; pairs carry detectable, multimodal and processes.
# 3: a pair's `a` and `b` are the medians of the processes judged (B/A is b / a), each
# spread holds those processes (`judged`) and asv's own value beside them (`asv_value`).
# 4: the two sides are named `machine_a` and `machine_b` (asv's machine names; were host_*).
SCHEMA = "serkit-compare/4"
COMMIT_RULE = "for each value, the newest commit (by commit date) both hosts measured it at"
GROUP_PARAM = "codec"
# Timings first, what a reader came for, then the instruction counts beside them.
KIND_ORDER = {"time": 0, "instructions": 0.5, CYCLES_UNIT: 0.6, "memory": 1, "track": 2}
OTHER_ARCHITECTURE = "instruction counts of different architectures count different instructions"
# A time's change is the code's when its cycles moved the same way by at least this share
# of it (on a log scale): the estimate weighs misses roughly, but a third it does not miss.
EXPLAINED_SHARE = 1 / 3

CODE_DIFFERS = "the benchmark's code differs between the hosts (asv's version hash)"
NO_COMMON_COMMIT = "measured on both hosts, but never at the same commit"
TRY_METHODS_DIFFER = (
    "timed by two versions of serkit try's method (its commit in the tree): "
    "run `serkit try --into` again for both"
)
# Shorter samples find more of a call's fast spells: 25 of 0.2 ms read a 1 µs call 4 %
# faster than 5 of 2 ms here (docs/trust.md, "The state flickers").
SAMPLED_DIFFERENTLY = "the runs took different samples a process ({} and {}): re-run the older"


class UnknownMachine(SerkitError):
    """No results folder for that machine name."""


class NothingToCompare(SerkitError):
    """The two machines' results have nothing in common to compare."""


@dataclass(frozen=True)
class Pair:
    """One value measured on both hosts, at the same commit and in the same environment."""

    benchmark: Benchmark
    params: dict[str, Any]
    env: Environment
    a: Measurement
    b: Measurement
    ratio: float | None  # B/A; None unless both values are above 0
    verdict: str
    group: str
    # The smallest relative difference the verdict could have called (0.12: 12 %); None
    # where the pair was judged by its intervals (one process a side, or a track).
    detectable: float | None = None
    # Whether either side's processes fell into separate modes (see serkit.stats.modes).
    multimodal: bool = False
    # The per-process values the verdict judged a side (its typical processes); () where
    # the pair was judged by its intervals. Shown values and spreads are drawn from these.
    judged: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())

    @property
    def commit(self) -> str:
        return self.a.commit

    @property
    def value_a(self) -> float | None:
        """A's value as shown: the median of the processes judged, so that B/A is exactly
        value_b / value_a; asv's value where no processes were judged."""
        return statistics.median(self.judged[0]) if self.judged[0] else self.a.value

    @property
    def value_b(self) -> float | None:
        return statistics.median(self.judged[1]) if self.judged[1] else self.b.value


@dataclass(frozen=True)
class OneSide:
    """A value one host measured and the other did not, or could not be compared."""

    benchmark: str
    params: dict[str, Any]
    env: Environment
    commit: str
    value: float | None
    unit: str = ""
    reason: str = ""


@dataclass(frozen=True)
class GroupSummary:
    group: str
    timings: int
    geomean: float | None
    verdicts: dict[str, int]


@dataclass
class Comparison:
    machine_a: str
    machine_b: str
    commit: str | None  # the commit asked for, in full; None: the newest rule
    pairs: list[Pair]
    only_envs: dict[str, list[Environment]]  # by host name
    only_benchmarks: dict[str, list[str]]
    only_values: dict[str, list[OneSide]]
    not_comparable: list[OneSide]
    warnings: list[str] = field(default_factory=list)
    floor: float = DEFAULT_FLOOR  # the noise floor the timing verdicts used
    # The hosts with no noise measurement, whose verdicts assumed the default floor.
    no_noise: list[NoNoise] = field(default_factory=list)
    # Each host's `serkit power` record (None: not measured): what a verdict there can see.
    power: dict[str, PowerRecord | None] = field(default_factory=dict)
    architectures: tuple[str, str] = ("", "")  # asv's `arch` of each host, where recorded
    # Each host's machine state while it timed the compared values, in words (serkit.sample_speed).
    states: dict[str, str] = field(default_factory=dict)
    briefs: dict[str, str] = field(default_factory=dict)  # the same, in a few words each
    # How the two runs' memory differed, in words, where the memory canary shows it.
    memory_shift: str | None = None
    # Whether either host's compared values carry canary readings: where none do (a `try`
    # tree), the rules of the machine's state have nothing to say.
    canary: bool = False

    @property
    def same_run(self) -> bool:
        """Whether each pair's two sides were read from one results file: a run compared
        with itself (`compare vm vm`), where every verdict is "same" by construction."""
        return all(p.a.file == p.b.file for p in self.pairs)

    @property
    def size_mismatches(self) -> list[Pair]:
        return [p for p in self.pairs if p.verdict == SIZE_MISMATCH]

    def instruction_summary(self) -> GroupSummary:
        """The instruction counts compared: how many, B/A's geometric mean, the verdicts."""
        counted = [p for p in self.pairs if p.benchmark.unit == INSTRUCTIONS_UNIT]
        return _summarize("instructions", counted)

    def instructions_beside(self) -> dict[int, Pair]:
        """By id() of a timing pair, the instruction count pair of the same call, where both
        hosts counted it: where time is within noise, the count still says if the work moved."""
        return self._beside(INSTRUCTIONS_UNIT, COUNTED_BESIDE)

    def cycle_summary(self) -> GroupSummary:
        """The estimated cycles compared: how many, B/A's geometric mean, the verdicts."""
        return _summarize("estimated cycles", [p for p in self.pairs if _is_cycles(p)])

    def cycles_beside(self) -> dict[int, Pair]:
        """By id() of a timing pair, the estimated cycles pair of the same call, where both
        hosts counted them."""
        return self._beside(CYCLES_UNIT, CYCLES_BESIDE)

    def disagreements(self) -> list[tuple[Pair, str]]:
        """Each timing whose verdict its simulated cycles contradict, with why in words."""
        beside = self.cycles_beside()
        found = []
        for pair in self.pairs:
            words = disagreement(pair, beside.get(id(pair)), self.floor)
            if words:
                found.append((pair, words))
        return found

    def _beside(self, unit: str, names: dict[str, str]) -> dict[int, Pair]:
        counted = {
            (p.benchmark.name, tuple(p.params.items()), p.env): p
            for p in self.pairs
            if p.benchmark.unit == unit
        }
        out = {}
        for pair in self.pairs:
            name = names.get(pair.benchmark.name)
            found = counted.get((name, tuple(pair.params.items()), pair.env)) if name else None
            if found is not None:
                out[id(pair)] = found
        return out

    def summary(self) -> tuple[list[GroupSummary], GroupSummary]:
        timed = [p for p in self.pairs if p.benchmark.kind == "time"]
        groups: dict[str, list[Pair]] = defaultdict(list)
        for pair in timed:
            groups[pair.group].append(pair)
        per_group = [_summarize(name, groups[name]) for name in sorted(groups)]
        return per_group, _summarize("overall", timed)


def _is_cycles(pair: Pair) -> bool:
    return pair.benchmark.kind == "track" and pair.benchmark.unit == CYCLES_UNIT


def _percent(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f} %"


def disagreement(timing: Pair, cycles: Pair | None, floor: float = DEFAULT_FLOOR) -> str | None:
    """Where a timing's verdict and its call's simulated cycles disagree, why, in words.

    They disagree when the time calls a change (slower or faster) that the cycles do not
    make in the same direction by at least EXPLAINED_SHARE of it, or when the cycles move
    by at least what the time could have called (its `detectable`, else the noise floor)
    and the time calls no change.
    None where they agree, or where either has nothing to say (no cycles, no ratio).
    """
    if cycles is None or cycles.ratio is None or timing.ratio is None:
        return None
    time_words = f"time {_percent(timing.ratio)}"
    cycle_words = f"simulated cycles {_percent(cycles.ratio)}"
    if timing.verdict in (SLOWER, FASTER):
        expected = HIGHER if timing.verdict == SLOWER else LOWER
        called = f"the time was called {timing.verdict} ({time_words})"
        if cycles.verdict == SAME:
            return (
                f"time and simulated cycles disagree: {called} but the simulated cycles did not "
                f"move ({cycle_words}): the code did the same work, so the machine, not the "
                "code, likely moved the time"
            )
        if cycles.verdict != expected:
            return (
                f"time and simulated cycles disagree: {called} but the simulated cycles went "
                f"the other way ({cycle_words})"
            )
        share = math.log(cycles.ratio) / math.log(timing.ratio)
        if share < EXPLAINED_SHARE:
            return (
                f"time and simulated cycles disagree: {called} but the simulated cycles moved "
                f"only {cycle_words}, too little to account for it: most of the change is "
                "the machine's, not the code's"
            )
        return None
    if timing.verdict == WITHIN_NOISE and cycles.verdict in (HIGHER, LOWER):
        could_see = timing.detectable if timing.detectable is not None else floor
        if abs(cycles.ratio - 1) < could_see:
            return None  # a change smaller than the time could see: no contradiction
        more = "more" if cycles.verdict == HIGHER else "fewer"
        return (
            f"time and simulated cycles disagree: the simulated cycles moved ({cycle_words}, "
            f"{more}), by at least the {could_see:.1%} the time could have called, but the time "
            f"was within noise ({time_words})"
        )
    return None


def geometric_mean(ratios: Sequence[float]) -> float | None:
    if not ratios:
        return None
    return math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios))


def _summarize(name: str, pairs: Sequence[Pair]) -> GroupSummary:
    counts: dict[str, int] = defaultdict(int)
    for pair in pairs:
        counts[pair.verdict] += 1
    ratios = [p.ratio for p in pairs if p.ratio is not None]
    return GroupSummary(name, len(pairs), geometric_mean(ratios), dict(counts))


def _ratio(a: float, b: float) -> float | None:
    # A ratio of or to zero (no memory rise, a 0/1 fact) would be no ratio at all.
    return b / a if a > 0 and b > 0 else None


def resolve_commit(tree: ResultsTree, machines: Sequence[str], prefix: str) -> str:
    """The one commit both machines have results for that starts with `prefix`."""
    wanted = prefix.strip().lower()
    full: set[str] = set()
    for machine in machines:
        commits = {m.commit for m in tree.machines[machine].measurements}
        matching = {c for c in commits if c.lower().startswith(wanted)}
        if not matching:
            known = ", ".join(sorted(c[:8] for c in commits)) or "none"
            raise NothingToCompare(
                f"machine {machine} has no results for commit {prefix} ({known})"
            )
        full |= matching
    if len(full) > 1:
        options = ", ".join(sorted(c[:12] for c in full))
        raise SerkitError(f"commit {prefix} is ambiguous: {options}")
    return full.pop()


def _check_machines(tree: ResultsTree, machines: Sequence[str]) -> None:
    if not tree.machines:
        raise UnknownMachine(f"no asv results in {tree.root} (no machine folders)")
    for machine in machines:
        if machine not in tree.machines:
            known = ", ".join(sorted(tree.machines))
            raise UnknownMachine(f"no machine {machine!r} in {tree.root}; known: {known}")
    for machine in machines:
        if not tree.machines[machine].measurements:
            why = f"has no readable results in {tree.root / machine}"
            raise NothingToCompare(f"machine {machine} {why}")


def _short_envs(envs: Iterable[Environment]) -> str:
    labels = sorted(env.label for env in envs)
    more = f"; and {len(labels) - 2} more" if len(labels) > 2 else ""
    return "; ".join(labels[:2]) + more


def compare(
    tree: ResultsTree, machine_a: str, machine_b: str, commit: str | None = None
) -> Comparison:
    """Match the two hosts' values and judge each pair; raises when nothing matches."""
    machines = (machine_a, machine_b)
    _check_machines(tree, machines)
    full_commit = resolve_commit(tree, machines, commit) if commit else None
    warnings = tree.warnings  # one list: reading's warnings, then matching's
    index_a, index_b = (
        by_key(tree.machines[h].measurements, full_commit, warnings) for h in machines
    )
    envs_a, envs_b = {k[2] for k in index_a}, {k[2] for k in index_b}
    shared = envs_a & envs_b
    if not shared:
        raise NothingToCompare(
            f"{machine_a} and {machine_b} share no environment: {machine_a} ran {len(envs_a)} "
            f"({_short_envs(envs_a)}), {machine_b} ran {len(envs_b)} ({_short_envs(envs_b)})"
        )
    names_a = {k[0] for k in index_a if k[2] in shared}
    names_b = {k[0] for k in index_b if k[2] in shared}
    result = Comparison(
        machine_a,
        machine_b,
        full_commit,
        pairs=[],
        only_envs={
            machine_a: sorted(envs_a - envs_b, key=_env_order),
            machine_b: sorted(envs_b - envs_a, key=_env_order),
        },
        only_benchmarks={
            machine_a: sorted(names_a - names_b),
            machine_b: sorted(names_b - names_a),
        },
        only_values={machine_a: [], machine_b: []},
        not_comparable=[],
        warnings=warnings,
        floor=host_floor(tree, machines, warnings),
        power={m: read_power(tree.root / m, warnings) for m in machines},
        architectures=(_arch(tree, machine_a), _arch(tree, machine_b)),
    )
    # A stable sort of the keys as read keeps each benchmark's parameters in asv's order.
    keys = dict.fromkeys([*index_a, *index_b])
    for key in sorted(keys, key=lambda k: _key_order(tree, k)):
        if key[2] in shared and key[0] in names_a & names_b:
            _match(tree, result, key, index_a.get(key, {}), index_b.get(key, {}))
    shares = (
        tree.state_share(p.a for p in result.pairs),
        tree.state_share(p.b for p in result.pairs),
    )
    result.states = {machine_a: shares[0].in_words(), machine_b: shares[1].in_words()}
    result.briefs = {machine_a: shares[0].brief(), machine_b: shares[1].brief()}
    result.no_noise = [n for n in tree.no_noise if n.machine in machines]
    result.memory_shift = memory_shift(*shares)
    result.canary = any(share.samples for share in shares)
    if not result.pairs:
        reasons = sorted({entry.reason for entry in result.not_comparable if entry.reason})
        raise NothingToCompare(
            f"no value was measured by both {machine_a} and {machine_b} in their "
            f"{len(shared)} shared environment(s)"
            + (f" at commit {full_commit[:8]}" if full_commit else "")
            + (f" that can be compared: {'; '.join(reasons)}" if reasons else "")
        )
    return result


def _arch(tree: ResultsTree, host: str) -> str:
    return str(tree.machines[host].profile.get("arch") or "")


def _newest(by_commit: dict[str, Measurement]) -> Measurement:
    return max(by_commit.values(), key=lambda m: (m.date, m.commit))


def _match(
    tree: ResultsTree,
    result: Comparison,
    key: Key,
    on_a: dict[str, Measurement],
    on_b: dict[str, Measurement],
) -> None:
    name, params, env = key
    benchmark = tree.benchmark(name)
    named = named_params(benchmark, params)
    measured_a = {c: m for c, m in on_a.items() if m.value is not None}
    measured_b = {c: m for c, m in on_b.items() if m.value is not None}
    both = measured_a.keys() & measured_b.keys()
    if not both:
        if measured_a and measured_b:
            newest = _newest(measured_a)
            why = TRY_METHODS_DIFFER if name.startswith(TRY_PREFIX) else NO_COMMON_COMMIT
            entry = OneSide(name, named, env, newest.commit, None, reason=why)
            result.not_comparable.append(entry)
        elif measured_a or measured_b:
            host = result.machine_a if measured_a else result.machine_b
            newest = _newest(measured_a or measured_b)
            entry = OneSide(name, named, env, newest.commit, newest.value, benchmark.unit)
            result.only_values[host].append(entry)
        return
    a = _newest({c: measured_a[c] for c in both})
    b = measured_b[a.commit]
    if a.code_version and b.code_version and a.code_version != b.code_version:
        result.not_comparable.append(OneSide(name, named, env, a.commit, None, reason=CODE_DIFFERS))
        return
    if sampled_apart(a, b):
        reason = SAMPLED_DIFFERENTLY.format(a.samples_per_process, b.samples_per_process)
        result.not_comparable.append(OneSide(name, named, env, a.commit, None, reason=reason))
        return
    arch_a, arch_b = result.architectures
    if benchmark.unit in COUNTED_UNITS and arch_a and arch_b and arch_a != arch_b:
        reason = f"{OTHER_ARCHITECTURE} ({arch_a}, {arch_b})"
        result.not_comparable.append(OneSide(name, named, env, a.commit, None, reason=reason))
        return
    assert a.value is not None and b.value is not None
    group = str(named[GROUP_PARAM]) if GROUP_PARAM in benchmark.param_names else name
    processes, weights = (a.process_values, b.process_values), (a.weights, b.weights)
    found = judge_pair(benchmark, a, b, processes, result.floor, weights)
    # The ratio the verdict judged, where processes were; asv's medians of every sample
    # would count the processes a neighbour slowed down. The values shown are the same
    # processes' medians (Pair.value_a), so the table's B/A is its A and B columns'.
    ratio = found.ratio if found.ratio is not None else _ratio(a.value, b.value)
    judged = (found.detectable, found.multimodal, found.judged)
    pair = Pair(benchmark, named, env, a, b, ratio, found.verdict, group, *judged)
    result.pairs.append(pair)


def _env_order(env: Environment) -> tuple[Any, ...]:
    return (version_order(env.python), env.label)


def _key_order(tree: ResultsTree, key: Key) -> tuple[Any, ...]:
    name, _, env = key
    benchmark = tree.benchmark(name)
    unit = benchmark.unit if benchmark.unit in COUNTED_UNITS else benchmark.kind
    # By Python, then kind: a serkit codec's values are keyed by their own releases
    # (match_env), so the environment comes last, after the benchmark.
    kind = KIND_ORDER.get(unit, len(KIND_ORDER))
    return (version_order(env.python), kind, name, env.label)
