"""The machine's speed state, judged sample by sample from the canary (serkit.suite.canary).

A sample's canary reading is the lesser of the two readings taken around it: an interrupt
or another process only ever inflates one reading. Slow stretches last seconds to
minutes, but inside one the machine flickers into its fast state for 0.2-2 ms at a time
(docs/trust.md, "The state flickers"), so a sample with one fast end may have run slow for
part of its length. Both readings are kept (serkit.results.canary); judging by the slower
end, in a series of quick runs of 25 samples of 0.2 ms a process, left fewer fast
samples and called more A/A pairs different, so the lesser still judges. Against the
host's fast canary (its `reference`: a low quantile of every reading its runs took on that
Python) a reading is

- fast, up to FAST_LIMIT times the reference (fast readings here spread 104-118 µs on a
  110 µs loop: within 1.13x);
- slow, from SLOW_FROM times it (the slow state read 1.5-1.9x);
- unclear in between.

A sample whose canary reads fast but whose memory canary (serkit.suite.canary) reads over
MEMORY_FAST_LIMIT times its own reference is *memory-slow*: others held the host's cache
and memory bus, which the first canary does not see. It is said, not acted on: in a
series of quick runs, setting such samples aside neither lowered the false alarms nor
raised the power (docs/trust.md, "A second canary, for memory"), so values are judged by
the first canary alone. What the memory canary did show is a whole run's memory speed: its
fastest reading moved with a run whose values all read faster, which `serkit compare`
says (`memory_shift`).

A process's value is then the least of its fast samples, as before the canary (the least
is the least disturbed). A process with no fast sample but slow ones is corrected: its
least slow sample scaled by the reference over its median slow reading, since a call and
the canary slow alike (json.dumps against the canary held within 3.2-3.6 in 16 of 20
processes whose two were timed in one state). Where no sample's state is known, the raw
least stands.

A call does not slow exactly as the canary does: one pair's corrected processes read a few
per cent under its wholly fast ones, another's over, and by about as much in every run
(in 7 A/A quick runs, a spread of 6.5 % between pairs, 5.2 % within a pair from run to
run; docs/trust.md, "A pair's own slowing"). So where the host's other runs in the tree
measured it in the same environment, a pair's corrected values are divided by its own
`slow_ratio`: the median, over those runs, of its corrected processes' median over its
wholly fast ones' (WHOLLY_FAST of their samples fast). The run's own is left out, so that
its corrected processes still place the pair by themselves.

The fast state is not one speed either: whole runs of one commit read 3-5 % apart, and
the canary's own fast reading moved with them (docs/trust.md, "Whole runs"). Where a
run's host is known to be the host of other runs in the tree, its values are given at
the host's speed (`RunSpeed`): its fast values scaled by the host's fast reading over the
run's own, and its slow values corrected to the host's fast reading. Never across hosts:
another CPU moves a codec and the canary unalike.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

FAST_LIMIT = 1.25
SLOW_FROM = 1.40
# The memory canary's fast limit: in samples the first canary called fast, its readings
# spread 0.95-1.20x its reference (deciles 1 and 9). Where their median is itself over it,
# the canary cannot tell a sample held up by others from its ordinary ones, and calls none
# memory-slow (`StateShare.memory_judged`): on a second instance of serkit's VM the median
# read 1.23-1.62x the reference in 23 quick runs, and 69-93 % of fast samples were over
# (2026-11-28).
MEMORY_FAST_LIMIT = 1.15
# Two runs whose memory canaries' fastest readings differ by more than this are said to
# differ as machines (`memory_shift`).
MEMORY_SHIFT = 0.05
# The reference is this quantile of a host's readings: low enough to be the fast state
# when any stretch of a run was fast, high enough that one lucky reading does not set it.
REFERENCE_QUANTILE = 0.05
# A process ran in a fast stretch where at least this share of its samples read fast:
# a pair's `slow_ratio` is measured against such processes only.
WHOLLY_FAST = 0.8
# In a verdict, a process not timed wholly in the fast state (corrected, raw, or with slow
# samples among its fast ones) counts for this much of one that was: within a run such
# processes spread 5.1-6.3 % and wholly fast ones 1.6-2.0 % (docs/trust.md), 7-15 times
# the variance. Weighting them 1/4, not by the full ratio, held the false alarms down on
# three series of quick runs ("Weighing each process by its state").
PARTLY_SLOW_WEIGHT = 0.25
# A run's fast reading (`RunSpeed`) is taken from no fewer of its fast readings: a quick
# run here took about 28,000 samples, 40-60 % of them fast.
RUN_READINGS = 200

# Before each sample, a timed process under `serkit bench` waits for this many canary
# readings in a row under the slow state (SLOW_FROM times the host's least probe;
# serkit.suite.state_watch.SampleGate), about 0.2 ms in the fast state. In a flickering
# slow stretch (2026-11-28, 150 s of blocks of 25 samples of json.dumps as a process takes
# them, alternately waiting and not, 867 blocks each): wholly fast blocks 60 % -> 97 %,
# blocks with no fast sample 68 -> 1, for 0.11 s of waiting a block; the wholly fast
# blocks' least samples spread alike (SD of logs 1.87 % and 1.85 %). docs/trust.md, the
# sections "Waiting before each sample". Not FAST_LIMIT times the least probe: that least
# can sit well under a run's fast readings (2026-11-28, another instance: 9.9 µs against
# a run's readings of 12.0-13.3 µs, 5th to 95th percentile), and then no sample found its
# ten in a row.
SAMPLE_NOT_SLOW_READINGS = 10
# The most one sample waits so. A sample that finds no such spell in that time has met a
# stretch slow throughout, with no flicker to wait for: its process then samples through
# it, judged by the canary, rather than wait its whole allowance (2026-11-28: the first
# gate, with the allowance alone, spent a run's 600 s within two rounds so).
SAMPLE_PATIENCE_S = 0.2

FAST, SLOW, UNCLEAR, UNKNOWN = "fast", "slow", "unclear", "unknown"
MEMORY_SLOW = "memory-slow"
# The rule in words, for every view that shows a process's value.
STATE_RULE = (
    "under serkit bench each timed process first waits while the canary reads the slow "
    "state (not where a new interpreter reads the fast one: then the slowness is the "
    "process's own), and each of its samples until the canary reads under it "
    f"{SAMPLE_NOT_SLOW_READINGS} "
    "times in a row (the process waits no more once a sample found no such spell in "
    f"{SAMPLE_PATIENCE_S:g} s), within a budget for the run; "
    "each process's value is its least sample taken in the machine's fast state (a canary "
    f"within {FAST_LIMIT:g}x its fast reading), else its least slow sample corrected by the "
    "canary (the slow state: 1.8x here, unseen by the load average), else its least sample; "
    "on a host with several runs, each run's values are given at the host's fast canary "
    "(scaled by the host's fast reading over the run's own), and a pair's corrected values "
    "are divided by its slow ratio (how it slowed against the canary in the host's other "
    "runs); asv's own values are kept unchanged"
)
# How a process's value was taken: from fast samples, corrected from slow ones, or raw.
FROM_FAST, CORRECTED, RAW = "fast", "corrected", "raw"


def reading(before: float, after: float) -> float:
    """A sample's canary reading from the two taken around it: the faster."""
    return min(before, after)


def reference(readings: Sequence[float]) -> float | None:
    """The fast state's canary reading among `readings` (all from one host and Python)."""
    positive = sorted(r for r in readings if r > 0)
    if not positive:
        return None
    return positive[min(len(positive) - 1, int(REFERENCE_QUANTILE * len(positive)))]


def classify(
    canary: float | None,
    ref: float | None,
    memory: float | None = None,
    memory_ref: float | None = None,
) -> str:
    """FAST, SLOW, UNCLEAR or MEMORY_SLOW; UNKNOWN where the sample has no canary or the host
    no reference. Without a memory reading (older notes), the first canary alone judges."""
    if not canary or not ref:
        return UNKNOWN
    ratio = canary / ref
    if ratio <= FAST_LIMIT:
        if memory and memory_ref and memory / memory_ref > MEMORY_FAST_LIMIT:
            return MEMORY_SLOW
        return FAST
    return SLOW if ratio >= SLOW_FROM else UNCLEAR


def speed_readings(
    canary: Sequence[float | None], before: Sequence[float | None]
) -> Sequence[float | None]:
    """The readings a run's speed is read from (`fast_reading`): each sample's first canary
    before it, where its results kept it, else its reading. What precedes the reading
    before is the same in every process, where the one after follows the pair's own calls
    and reads them: after plain calls it read 1.5-1.7 % slower than before them here, and as
    fast after an injected spin of the canary's own arithmetic (docs/trust.md)."""
    return before if len(before) == len(canary) and any(before) else canary


def fast_reading(readings: Sequence[float | None], ref: float | None) -> float | None:
    """The fast state's reading among `readings`, judged by a host's `ref`: the
    REFERENCE_QUANTILE of those it calls fast; None under RUN_READINGS of them."""
    fast = [r for r in readings if r and classify(r, ref) == FAST]
    return reference(fast) if len(fast) >= RUN_READINGS else None


@dataclass(frozen=True)
class RunSpeed:
    """A run's fast canary reading and its host's, over every run of that host (ns)."""

    run_ns: float
    host_ns: float

    @property
    def scale(self) -> float:
        """What the run's fast values are multiplied by to be at the host's speed."""
        return self.host_ns / self.run_ns


@dataclass(frozen=True)
class ProcessValue:
    value: float
    how: str  # FROM_FAST, CORRECTED or RAW
    fast_share: float = 0.0  # of its samples with a known state, the share that read fast

    @property
    def wholly_fast(self) -> bool:
        return self.how == FROM_FAST and self.fast_share >= WHOLLY_FAST

    @property
    def weight(self) -> float:
        """What it counts for in a verdict (`judging_weight`)."""
        return judging_weight(self)


def judging_weight(process: ProcessValue) -> float:
    """How much `process` counts in its side's mean when a verdict judges it (serkit.stats.
    difference): 1 when it was timed wholly in the fast state, else PARTLY_SLOW_WEIGHT."""
    return 1.0 if process.wholly_fast else PARTLY_SLOW_WEIGHT


def process_value(
    samples: Sequence[float],
    canaries: Sequence[float | None],
    ref: float | None,
    speed: RunSpeed | None = None,
    slow_ratio: float | None = None,
) -> ProcessValue:
    """One process's value from its samples and their canary readings, at its host's speed
    where the run's `speed` is known, and a corrected one at the pair's own `slow_ratio`
    where the host's other runs measured it (see the module)."""
    states = [classify(c, ref) for c in canaries] if ref else [UNKNOWN] * len(samples)
    fast = [s for s, state in zip(samples, states) if state == FAST]
    known = len(states) - states.count(UNKNOWN)
    share = len(fast) / known if known else 0.0
    if fast:
        return ProcessValue(min(fast) * (speed.scale if speed else 1.0), FROM_FAST, share)
    slow = [(s, c) for s, c, state in zip(samples, canaries, states) if state == SLOW and c]
    if slow and ref:
        # One factor for the process, from the median of its slow readings: steadier than
        # any one reading, and the state holds across a process's few milliseconds.
        factor = (speed.host_ns if speed else ref) / statistics.median(c for _, c in slow)
        value = min(s for s, _ in slow) * factor / (slow_ratio or 1.0)
        return ProcessValue(value, CORRECTED, share)
    return ProcessValue(min(samples), RAW, share)


def slow_ratio_in_run(processes: Sequence[ProcessValue]) -> float | None:
    """How a pair slowed against the canary in one run: its corrected processes' median
    over its wholly fast ones'; None without two of each."""
    corrected = [p.value for p in processes if p.how == CORRECTED]
    wholly_fast = [p.value for p in processes if p.wholly_fast]
    if len(corrected) < 2 or len(wholly_fast) < 2:
        return None
    return statistics.median(corrected) / statistics.median(wholly_fast)


def pair_slow_ratio(ratios: Sequence[float]) -> float | None:
    """A pair's own slow ratio from other runs' (`slow_ratio_in_run`): their median, None if
    none."""
    return math.exp(statistics.median(math.log(r) for r in ratios)) if ratios else None


def process_values(
    samples: Sequence[float],
    canaries: Sequence[float | None],
    size: int,
    ref: float | None,
    speed: RunSpeed | None = None,
    slow_ratio: float | None = None,
) -> tuple[ProcessValue, ...]:
    """Every process's value: `samples` in runs of `size` (one process each), with the
    canary reading of each sample (None where it has none)."""
    return tuple(
        process_value(samples[i : i + size], canaries[i : i + size], ref, speed, slow_ratio)
        for i in range(0, len(samples), size)
    )


@dataclass(frozen=True)
class StateShare:
    """How much of a set of samples the machine spent in its slow state."""

    samples: int  # samples with a canary reading
    slow: int
    unclear: int
    slow_factor: float | None  # the slow readings' median over the reference
    memory_slow: int = 0  # fast by the canary, slow by the memory canary
    # The memory canary's fast reading over these samples (its REFERENCE_QUANTILE in the
    # samples the first canary called fast), ns; None without memory readings.
    memory_fast_ns: float | None = None
    # The scales of the runs whose values are given at their host's speed (`RunSpeed`),
    # one per run, sorted; () where none was scaled.
    run_scales: tuple[float, ...] = ()
    # The slow ratios the pairs' corrected values were divided by (one per pair that had
    # one from the host's other runs, `pair_slow_ratio`); () where none had.
    slow_ratios: tuple[float, ...] = ()
    # What the runs' timed processes waited for the fast state before sampling, seconds
    # (serkit.suite.state_watch).
    waited_s: float = 0.0
    # The memory canary's median reading in the samples the first canary called fast, over
    # its fast reading (`memory_fast_ns`); None without memory readings.
    memory_median_ratio: float | None = None

    @property
    def memory_judged(self) -> bool:
        """Whether the memory canary's ordinary readings sit within MEMORY_FAST_LIMIT of its
        fast reading, so that a sample over it stands out (so too without readings)."""
        return self.memory_median_ratio is None or self.memory_median_ratio <= MEMORY_FAST_LIMIT

    @property
    def slow_share(self) -> float:
        return self.slow / self.samples if self.samples else 0.0

    def as_record(self, reference_ns: float | None) -> dict[str, object]:
        """What a host record keeps of a run's state (serkit.results.hosts.record_host)."""
        return {
            "samples": self.samples,
            "slow": self.slow,
            "unclear": self.unclear,
            "slow_factor": round(self.slow_factor, 3) if self.slow_factor else None,
            "fast_canary_ns": round(reference_ns) if reference_ns else None,
            "memory_slow": self.memory_slow if self.memory_judged else None,
            "fast_memory_canary_ns": round(self.memory_fast_ns) if self.memory_fast_ns else None,
            "memory_median_ratio": (
                round(self.memory_median_ratio, 3) if self.memory_median_ratio else None
            ),
            "waited_s": round(self.waited_s, 1),
            "in_words": self.in_words(),
        }

    def in_words(self) -> str:
        if not self.samples:
            return "machine state unknown (no canary recorded)"
        memory = ""
        if not self.memory_judged:
            memory = (
                "; memory canary too scattered here to judge samples (its median fast reading "
                f"x{self.memory_median_ratio:.2f} its fastest)"
            )
        elif self.memory_slow:
            memory = f"; memory slow in {self.memory_slow / self.samples:.0%} (fast by the canary)"
        waited = (
            f"; its processes waited {self.waited_s:.0f} s in all for the fast state"
            if self.waited_s >= 1
            else ""
        )
        adjusted = f"{memory}{waited}{self._scaled()}{self._slowed()}"
        if not self.slow:
            return f"fast state throughout ({_samples_text(self.samples)}){adjusted}"
        factor = f", x{self.slow_factor:.2f}" if self.slow_factor else ""
        return (
            f"slow state in {self.slow_share:.0%} of {_samples_text(self.samples)}"
            f"{factor} the fast canary{adjusted}"
        )

    def _slowed(self) -> str:
        if not self.slow_ratios:
            return ""
        pairs = "1 pair" if len(self.slow_ratios) == 1 else f"{len(self.slow_ratios)} pairs"
        return (
            f"; corrected values at each pair's slow ratio from the host's other runs "
            f"({pairs}, median x{statistics.median(self.slow_ratios):.3f})"
        )

    def _scaled(self) -> str:
        if not self.run_scales:
            return ""
        low, high = self.run_scales[0], self.run_scales[-1]
        scales = f"x{low:.3f}" if len(self.run_scales) == 1 else f"x{low:.3f} to x{high:.3f}"
        runs = "its run's" if len(self.run_scales) == 1 else f"its {len(self.run_scales)} runs'"
        return f"; values at the host's fast canary: {runs} {scales}"


def state_share(
    canaries: Sequence[float | None], ref: float | None, memory: Sequence[float | None] = ()
) -> StateShare:
    """The share of samples (one canary reading and one memory reading each, the memory
    readings () where none was kept) taken in the slow state, and memory-slow: against the
    memory canary's own fast reading in the samples the first canary called fast."""
    memory = memory if len(memory) == len(canaries) else (None,) * len(canaries)
    fast_memory = [m for c, m in zip(canaries, memory) if m and classify(c, ref) == FAST]
    memory_ref = reference(fast_memory)
    states = [classify(c, ref, m, memory_ref) for c, m in zip(canaries, memory) if c]
    slow = [c / ref for c in canaries if c and ref and classify(c, ref) == SLOW]
    factor = statistics.median(slow) if slow else None
    known = sum(1 for s in states if s != UNKNOWN)
    return StateShare(
        known,
        len(slow),
        states.count(UNCLEAR),
        factor,
        states.count(MEMORY_SLOW),
        memory_ref,
        memory_median_ratio=statistics.median(fast_memory) / memory_ref if memory_ref else None,
    )


def memory_shift(a: StateShare, b: StateShare) -> str | None:
    """What differed between two runs' machines that the first canary does not show: their
    memory canaries' fast readings, in words, where they differ by over MEMORY_SHIFT."""
    if not a.memory_fast_ns or not b.memory_fast_ns:
        return None
    ratio = b.memory_fast_ns / a.memory_fast_ns
    if abs(ratio - 1) <= MEMORY_SHIFT:
        return None
    return (
        f"the memory canary read x{ratio:.2f} from A's run to B's at its fastest "
        f"({a.memory_fast_ns / 1000:.1f} µs, {b.memory_fast_ns / 1000:.1f} µs): the host's "
        f"memory was {abs(ratio - 1):.0%} {'slower' if ratio > 1 else 'faster'} in B's run, "
        "and timings that touch memory move with it, which no verdict here corrects"
    )


def _samples_text(count: int) -> str:
    return f"{count} sample" if count == 1 else f"{count} samples"
