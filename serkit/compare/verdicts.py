"""The verdict on one value measured on two hosts, and the noise floor it is judged against.

serkit.compare.comparison pairs the values; each pair is judged here, by these rules,
each stated once here and in the README:

- Noise, for timings measured in several processes a side (serkit's runs keep each
  process's samples; a process's value is the least of them): faster or slower only when
  Welch's t-test on the logs of the per-process values of each side's typical processes
  (its fastest mode less its slow stragglers, serkit.stats.judged_processes), each
  process weighted by the machine's state it was timed in (serkit.sample_speed.judging_weight:
  one not wholly in the fast state counts for a quarter), rejects "no difference" at
  0.5 % and the difference exceeds the hosts' noise floor between runs (the
  larger of the two, measured by `serkit noise`; 10 % where a host has none, said in a
  warning). Each pair states the smallest difference it could have called. A/A runs on a
  shared VM call at most 1 % of pairs different this way.
- A timing measured in one process on either side (a pair over the quick run's budget,
  serkit.suite.budget) gets no verdict but "single sample": one value has no spread to
  judge a difference against.
- Noise, for values with no process recorded (older results, tracks): "within
  noise" when the 99 % confidence intervals overlap, or, where either host recorded
  no interval, the interquartile ranges do; only disjoint intervals make a difference.
- Sizes: a `track_*` in bytes is a count, so in the same environment it must be equal
  on both hosts; a difference means the hosts did not run the same thing. Memory tracks
  (names with rss, mem or peak) are exempt.
- Memory per call is counted at the allocator, not sampled, so it has no noise: an
  allocation count that differs is higher or lower, exactly; a peak within
  PEAK_TOLERANCE (1 %) is the same. Neither fails the comparison the way a size does:
  "3.11" on two hosts may be two patch releases, which allocate differently.
- Instructions per call (counted under cachegrind) are deterministic: two runs agree
  to 0.002 %, so a count within INSTRUCTIONS_TOLERANCE (0.01 %) is the same, and any
  other is higher or lower. They compare work, not speed: between hosts of the same
  architecture a count that differs means the code did different work (another build of
  Python or of the library), never that one host is faster. Between architectures they
  count different instructions and are not compared.
- Estimated cycles per call (instructions plus weighted cache misses under cachegrind's
  cache simulation of one fixed cache model) are counted beside the instructions, and
  just as deterministic: within CYCLES_TOLERANCE is the same. The state of the machine
  cannot move them, so beside each timing they say whether the time's verdict is the
  code's (serkit.compare.comparison.disagreement).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from serkit.results.noise import DEFAULT_FLOOR, NoNoise, read_noise
from serkit.results.tree import Benchmark, Interval, Measurement, ResultsTree
from serkit.stats import difference, judged_processes, spread
from serkit.suite.benchmark_names import CYCLES_UNIT

NOISE_RULE = (
    "timings measured in several processes: faster or slower only when Welch's t-test on the "
    "logs of the per-process values (each process's least sample, by the machine's state; each "
    "side's typical processes: "
    "its fastest mode less its slow stragglers) "
    "rejects no-difference at 0.5% and the difference exceeds "
    "the hosts' noise floor; other values: within noise when the 99% confidence intervals "
    "overlap (the interquartile ranges where either host recorded no interval)"
)
# Memory tracks: never held to the size rule (resident memory, where recorded, differs
# between hosts even when their code does not).
MEMORY_NAME = re.compile(r"rss|mem|peak", re.IGNORECASE)
ALLOCATIONS_UNIT = "allocations"  # serkit's allocation counts (benchmarks/bench_memory.py)
PEAK_NAME = re.compile(r"\.track_\w*_peak$")  # serkit's peaks at the allocator
# A peak at the allocator moved by up to a few hundred bytes between processes (hash
# seeds, interned keys): a difference within this fraction is no difference.
PEAK_TOLERANCE = 0.01
INSTRUCTIONS_UNIT = "instructions"  # serkit's counts (benchmarks/bench_instructions.py)
# Two runs of the default grid agreed to 0.002 % (docs/instructions.md): a difference
# within this fraction is no difference; any other is a change in the work done.
INSTRUCTIONS_TOLERANCE = 1e-4
INSTRUCTIONS_RULE = (
    "deterministic counts that compare work, not speed: between hosts of the same architecture a "
    "count that differs means the code did different work (another build of Python or of the "
    "library), never that one host is faster; within 0.01% is the same"
)
# Not yet measured between two runs across the grid: the bar `serkit aa` holds two runs'
# instruction counts to (0.5 %), until an A/A run of the cycles says how close they come.
CYCLES_TOLERANCE = 5e-3
CYCLES_RULE = (
    "instructions plus 10 per L1 miss and 100 per last-level miss under cachegrind's simulation "
    "of one fixed cache model (callgrind's estimate): the machine's state cannot move them; "
    "within 0.5% is the same"
)
COUNTED_UNITS = (INSTRUCTIONS_UNIT, CYCLES_UNIT)  # deterministic counts of a call's work

SAME = "same"
WITHIN_NOISE = "within noise"
FASTER, SLOWER = "faster", "slower"
LOWER, HIGHER = "lower", "higher"
NO_SPREAD = "no spread recorded"
SINGLE_SAMPLE = "single sample"
DIFFERS = "differs"
SIZE_MISMATCH = "SIZE MISMATCH"

CI_99, IQR = "99% CI", "IQR"


def is_exact_size(benchmark: Benchmark) -> bool:
    """A count of bytes, equal on every host that ran the same code and libraries."""
    short = benchmark.name.rsplit(".", 1)[-1]
    return (
        benchmark.kind == "track"
        and benchmark.unit == "bytes"
        and short.startswith("track_")
        and not MEMORY_NAME.search(benchmark.name)
    )


def counted_verdict(benchmark: Benchmark, a: float, b: float) -> str | None:
    """The verdict on a counted track (allocations, peaks, instructions), else None."""
    if benchmark.kind != "track":
        return None
    if benchmark.unit == ALLOCATIONS_UNIT:
        tolerance = 0.0
    elif benchmark.unit == INSTRUCTIONS_UNIT:
        tolerance = INSTRUCTIONS_TOLERANCE * a
    elif benchmark.unit == CYCLES_UNIT:
        tolerance = CYCLES_TOLERANCE * a
    elif benchmark.unit == "bytes" and PEAK_NAME.search(benchmark.name):
        tolerance = PEAK_TOLERANCE * a
    else:
        return None
    if abs(b - a) <= tolerance:
        return SAME
    return HIGHER if b > a else LOWER


def spreads(a: Measurement, b: Measurement) -> tuple[str, Interval, Interval] | None:
    """The intervals the noise rule compares: both 99% CIs, else both IQRs, else none."""
    if a.ci_99 is not None and b.ci_99 is not None:
        return CI_99, a.ci_99, b.ci_99
    if a.iqr is not None and b.iqr is not None:
        return IQR, a.iqr, b.iqr
    return None


@dataclass(frozen=True)
class Verdict:
    verdict: str
    detectable: float | None = None
    multimodal: bool = False
    ratio: float | None = None  # B/A as the test judged it (its typical processes)
    judged: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())  # those processes


def judge_pair(
    benchmark: Benchmark,
    a: Measurement,
    b: Measurement,
    processes: tuple[Sequence[float], Sequence[float]] = ((), ()),
    floor: float = DEFAULT_FLOOR,
    weights: tuple[Sequence[float], Sequence[float]] | None = None,
) -> Verdict:
    """The verdict on one pair, by the rules in this module's docstring; `weights`, one per
    process (serkit.sample_speed.judging_weight), weigh the test's means."""
    assert a.value is not None and b.value is not None
    if is_exact_size(benchmark):
        return Verdict(SAME if a.value == b.value else SIZE_MISMATCH)
    counted = counted_verdict(benchmark, a.value, b.value)
    if counted is not None:
        return Verdict(counted)
    if a.value == b.value:
        return Verdict(SAME)
    on_a, on_b = processes
    if benchmark.kind == "time" and 1 in (len(on_a), len(on_b)):
        return Verdict(SINGLE_SAMPLE)  # see the module docstring
    if benchmark.kind == "time" and len(on_a) >= 2 and len(on_b) >= 2:
        found = difference(on_a, on_b, floor=floor, weights=weights)
        multimodal = spread(on_a).multimodal or spread(on_b).multimodal
        verdict = WITHIN_NOISE if not found.differs else SLOWER if found.ratio > 1 else FASTER
        judged = judged_processes(on_a, on_b)
        return Verdict(verdict, found.detectable, multimodal, found.ratio, judged)
    return Verdict(judge_overlap(benchmark, a, b))


def judge_overlap(benchmark: Benchmark, a: Measurement, b: Measurement) -> str:
    """The rule for values without per-process samples: do their intervals overlap?"""
    assert a.value is not None and b.value is not None
    if is_exact_size(benchmark):
        return SAME if a.value == b.value else SIZE_MISMATCH
    counted = counted_verdict(benchmark, a.value, b.value)
    if counted is not None:
        return counted
    if a.value == b.value:
        return SAME
    used = spreads(a, b)
    if used is None:
        return NO_SPREAD if benchmark.kind == "time" else DIFFERS
    _, (a_low, a_high), (b_low, b_high) = used
    if b_low <= a_high and a_low <= b_high:
        return WITHIN_NOISE
    below = b_high < a_low
    if benchmark.kind == "time":
        return FASTER if below else SLOWER
    return LOWER if below else HIGHER


def host_floor(tree: ResultsTree, hosts: Sequence[str], warnings: list[str]) -> float:
    """The larger of the hosts' measured noise floors; the default where one has none, noted
    once per host in the tree's `no_noise`, however many views compare it."""
    floors = []
    for host in hosts:
        record = read_noise(tree.root / host, warnings)
        if record is None:
            if all(n.machine != host for n in tree.no_noise):
                tree.no_noise.append(NoNoise(host, DEFAULT_FLOOR))
            floors.append(DEFAULT_FLOOR)
        else:
            floors.append(record.verdict_floor)
    return max(floors)
