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

A process's value is the least of its fast samples (the least is the least disturbed).
A process with no fast sample but slow ones is corrected: its least slow sample scaled by
the reference over its median slow reading, since a call and the canary slow alike, then
divided by the pair's own slow ratio in this run (`slow_ratio_in_run`): a call does not
slow exactly as the canary does, one pair's corrected values read a few per cent under its
fast ones, another's over (docs/trust.md, "Two speeds"), and the pair's own processes that
took samples in both states measure by how much. Where no sample's state is known, the raw
least stands.

Until 2026-11-29 the slow ratio came from the host's other runs, and each run's values were
scaled to its host's fast canary (`RunSpeed`). On a series of four plain and two +10 %
quick runs (2026-11-29, docs/trust.md, "The rule of a run's own samples"), judged both
ways, the run's own ratio without the scaling called 0 of 372 A/A pairs (as before),
kept 360 of 372 within 5 % (as before) and called the +10 % in 453 of 496 pairings
(454 before): as well, with a rule that reads each run by itself.
"""

from __future__ import annotations

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
# In a verdict, a process not timed wholly in the fast state (corrected, raw, or with slow
# samples among its fast ones) counts for this much of one that was: within a run such
# processes spread 5.1-6.3 % and wholly fast ones 1.6-2.0 % (docs/trust.md).
PARTLY_SLOW_WEIGHT = 0.25
# A process ran in a fast stretch where at least this share of its samples read fast.
WHOLLY_FAST = 0.8

FAST, SLOW, UNCLEAR, UNKNOWN = "fast", "slow", "unclear", "unknown"
MEMORY_SLOW = "memory-slow"
# The rule in words, for every view that shows a process's value and docs/trust.md.
STATE_RULE = (
    "A sample is fast or slow by the canary timed beside it: fast within "
    f"{FAST_LIMIT:g}x the host's fast canary, slow from {SLOW_FROM:g}x (each sample is taken "
    "on whichever vCPU's canary read faster just before it; nothing waits). "
    "A process's value is its least fast sample; with no fast sample, its least slow sample "
    "scaled by its canary back to the fast state and divided by the pair's own slow ratio in "
    "this run (its processes' slow samples against their fast ones). "
    "Runs are compared on those values, a process not timed wholly in the fast state "
    f"counting for {PARTLY_SLOW_WEIGHT:g} of one that was; asv's own values are kept unchanged."
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


@dataclass(frozen=True)
class _States:
    """One process's samples by state: its least fast sample and its least slow one
    scaled by the canary to the fast state (None where it has none), and its fast share."""

    fast: float | None
    corrected: float | None
    fast_share: float
    least: float


def _states(samples: Sequence[float], canaries: Sequence[float | None], ref: float) -> _States:
    states = [classify(c, ref) for c in canaries]
    fast = [s for s, state in zip(samples, states) if state == FAST]
    slow = [(s, c) for s, c, state in zip(samples, canaries, states) if state == SLOW and c]
    known = len(states) - states.count(UNKNOWN)
    corrected = None
    if slow:
        # One factor for the process, from the median of its slow readings: steadier than
        # any one reading, and the state holds across a process's few milliseconds.
        corrected = min(s for s, _ in slow) * ref / statistics.median(c for _, c in slow)
    share = len(fast) / known if known else 0.0
    return _States(min(fast) if fast else None, corrected, share, min(samples))


def slow_ratio_in_run(processes: Sequence[_States]) -> float | None:
    """How a pair slowed against the canary in one run: over its processes that took
    samples in both states, the median of their corrected slow sample over their fast one;
    where none did, its corrected processes' median over its fast ones'; None without."""
    both = [p.corrected / p.fast for p in processes if p.fast and p.corrected]
    if both:
        return statistics.median(both)
    corrected = [p.corrected for p in processes if p.corrected and not p.fast]
    fast = [p.fast for p in processes if p.fast]
    if not corrected or not fast:
        return None
    return statistics.median(corrected) / statistics.median(fast)


def process_values(
    samples: Sequence[float], canaries: Sequence[float | None], size: int, ref: float | None
) -> tuple[tuple[ProcessValue, ...], float | None]:
    """Every process's value (one pair in one run), and the pair's slow ratio where it
    corrected one by it: `samples` in runs of `size` (one process each), with the canary
    reading of each sample (None where it has none), by the rule above (STATE_RULE)."""
    chunks = range(0, len(samples), size)
    if not ref:
        return tuple(ProcessValue(min(samples[i : i + size]), RAW) for i in chunks), None
    found = [_states(samples[i : i + size], canaries[i : i + size], ref) for i in chunks]
    ratio = slow_ratio_in_run(found) if any(p.corrected and not p.fast for p in found) else None
    return tuple(_value(p, ratio or 1.0) for p in found), ratio


def _value(process: _States, ratio: float) -> ProcessValue:
    if process.fast:
        return ProcessValue(process.fast, FROM_FAST, process.fast_share)
    if process.corrected:
        return ProcessValue(process.corrected / ratio, CORRECTED, process.fast_share)
    return ProcessValue(process.least, RAW, process.fast_share)


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
    # The slow ratios the pairs' corrected values were divided by (one per pair and run
    # that corrected a process, `slow_ratio_in_run`); () where none did.
    slow_ratios: tuple[float, ...] = ()
    # What the runs' timed processes waited for the fast state, seconds: runs made before
    # serkit stopped waiting (2026-11-29) recorded it.
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

    def brief(self) -> str:
        """The state in a few words, for a line that must stay short (in_words: all of it)."""
        if not self.samples:
            return "unknown (no canary recorded)"
        if not self.slow:
            return f"fast throughout ({_samples_text(self.samples)})"
        return f"slow in {self.slow_share:.0%} of {_samples_text(self.samples)}"

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
        adjusted = f"{memory}{waited}{self._slowed()}"
        if not self.slow:
            return f"fast state throughout ({_samples_text(self.samples)}){adjusted}"
        factor = (
            f", where the canary took x{self.slow_factor:.2f} its fast time"
            if self.slow_factor
            else ""
        )
        return (
            f"slow state in {self.slow_share:.0%} of {_samples_text(self.samples)}"
            f"{factor}{adjusted}"
        )

    def _slowed(self) -> str:
        if not self.slow_ratios:
            return ""
        pairs = "1 pair" if len(self.slow_ratios) == 1 else f"{len(self.slow_ratios)} pairs"
        return (
            f"; corrected values at each pair's own slow ratio in its run "
            f"({pairs}, median x{statistics.median(self.slow_ratios):.3f})"
        )


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
    return f"{count} sample" if count == 1 else f"{count:,} samples"
