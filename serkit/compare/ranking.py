"""The ranked verdict: on one document and by one measure, codecs in order, ties grouped.

The report's Overview and fixture pages, `serkit try` and the table that ends `serkit
bench` all rank with this module, by these rules (stated once, here):

- Safety and fidelity first. Exact codecs are ranked apart from those that lost only dict
  key order, and those apart from other lossy ones (serkit.checks.fidelity.fidelity_class);
  a codec whose fidelity was not recorded comes last. Codecs whose loads is unsafe on
  untrusted bytes (CodecSpec.untrusted_input_hazard: pickle, marshal) are ranked apart
  after all the safe ones, by the same classes, and every line naming one says so. Each
  class has its own order. `exact_only` ranks exact codecs only; `safe_only`, safe ones.
- The numbers are the table's: each codec is placed, quoted and compared by the value the
  table beside the verdict shows (Candidate.shown); a round trip is that dumps plus that
  loads. Where the table shows none, the median of the typical processes stands in.
- The verdict test (serkit.stats.difference: Welch's t-test on the logs of both sides'
  typical processes, at serkit.stats.ALPHA, each weighted by its machine state as `serkit
  compare` weighs them; a round trip's processes are each round's dumps plus its loads,
  weighted as its less precise half): going down a class, a codec joins the group above
  when the test cannot tell it from that group's leader (its fastest: so a chain of small
  steps cannot group a slow codec with a fast one), or, in a ranking with a `floor`
  (serkit try's), when it is within the floor of it; else it leads a group of its own.
- A group is "tied" only when it cannot be told apart at the precision reached and that is
  fine enough to mean it: the largest difference the test could have missed against the
  leader (its `detectable`) and the gap between the group's first and last value are both
  within TIE_SPAN (10 %, the difference a quick run is planned to see). Any other group is
  "not resolved": its samples ran out before its gap was told, and the words say how wide
  the gap is and how fine the samples were, never "tied".
- One gap is never a tie in one clause and a win in the next: where the margin between two
  groups is no wider than a tie beside it, they are one group.
- A pair with fewer than two processes a side is untested: its order stands, said so.
- Sizes are counts: equal sizes tie, others are ordered.
- The margin between two groups is the ratio of their leaders' values, ± twice its
  standard error (serkit.stats.joint_error, over the processes the test judged, weighted
  as it weighs them): about a 95 % interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY
from serkit.errors import SerkitError
from serkit.stats import difference, joint_error, typical_processes
from serkit.suite.cases import COMPRESSORS, QUICK_SEES

ROUND_TRIP, DUMPS, LOADS, SIZE = "round_trip", "dumps", "loads", "size"
TIMINGS = (ROUND_TRIP, DUMPS, LOADS)
# What a ranking can be by: --rank-by's choices, the default first.
MEASURES = (*TIMINGS, SIZE, *COMPRESSORS)
DEFAULT_MEASURE = ROUND_TRIP
MEASURE_WORDS = {
    ROUND_TRIP: "round trip (dumps + loads)",
    DUMPS: "dumps",
    LOADS: "loads",
    SIZE: "encoded size",
    **{name: f"size compressed by {name}" for name in COMPRESSORS},
}
UNKNOWN = "fidelity not recorded"
# The classes, in the order they are ranked (the safe ones, then the unsafe ones).
CLASSES = (EXACT, KEY_ORDER_ONLY, LOSSY, UNKNOWN)
# Said on every line that names a codec whose loads must never see bytes from elsewhere.
UNSAFE = "unsafe on untrusted bytes"
# The widest a tie may be: the difference a quick run is planned to see. A group the test
# could not split over a wider gap, or at a coarser precision, is "not resolved".
TIE_SPAN = QUICK_SEES
BLIND = 1.0  # a test that could miss this much (100 %) tells nothing: worded so
VERDICT_NAMES = 4  # a one-line verdict names at most this many codecs of a group
TIE_TEST = "Welch's t-test on the logs of the typical processes, weighted by state where known"


@dataclass(frozen=True)
class Candidate:
    """One codec on one document: what a ranking reads."""

    codec: str
    fidelity: str | None  # EXACT, KEY_ORDER_ONLY or LOSSY; None: not recorded
    # Per process (the report) or per interleaved round (serkit try), in round order.
    dumps: tuple[float, ...] = ()
    loads: tuple[float, ...] = ()
    sizes: Mapping[str, float] = field(default_factory=dict)  # SIZE and COMPRESSORS, bytes
    why_not: str = ""  # why it has no value to rank, when known
    # What each process of `dumps` and `loads` counts for in the verdict test
    # (serkit.sample_speed.judging_weight); () where its state is unknown (serkit try).
    dumps_weights: tuple[float, ...] = ()
    loads_weights: tuple[float, ...] = ()
    # The DUMPS and LOADS the table beside the verdict shows: the ranking places, quotes
    # and compares by these (a round trip: their sum). Missing: the typical processes'.
    shown: Mapping[str, float] = field(default_factory=dict)
    unsafe: bool = False  # its loads must never see untrusted bytes (CodecSpec)
    lost: str = ""  # of a lossy codec, what its round trip changed: "namedtuple->list"

    def values(self, measure: str) -> tuple[float, ...]:
        """Its values by `measure`: several for a timing, one for a size; () if none."""
        if measure == DUMPS:
            return self.dumps
        if measure == LOADS:
            return self.loads
        if measure == ROUND_TRIP:
            if not self.dumps or not self.loads:
                return ()
            return tuple(d + lo for d, lo in zip(self.dumps, self.loads))
        size = self.sizes.get(measure)
        return () if size is None else (float(size),)

    def weights(self, measure: str) -> tuple[float, ...]:
        """Each of `values(measure)`'s weight in the verdict test; () where unknown. A
        round trip counts as its less precise half."""
        dumps = self.dumps_weights if len(self.dumps_weights) == len(self.dumps) else ()
        loads = self.loads_weights if len(self.loads_weights) == len(self.loads) else ()
        if measure == DUMPS:
            return dumps
        if measure == LOADS:
            return loads
        if measure == ROUND_TRIP and dumps and loads:
            return tuple(min(d, lo) for d, lo in zip(dumps, loads))
        return ()

    def value(self, measure: str) -> float:
        """What the verdict quotes by `measure`: the table's value (a round trip, its dumps
        plus its loads), else the median of the typical processes. Needs `values`."""
        parts = (DUMPS, LOADS) if measure == ROUND_TRIP else (measure,)
        shown = [self.shown.get(part) for part in parts]
        if measure in TIMINGS and all(v is not None and v > 0 for v in shown):
            return sum(v for v in shown if v is not None)
        return _centre(self.values(measure))


@dataclass(frozen=True)
class Group:
    """Codecs the test cannot tell apart: the leader (the fastest or smallest) first."""

    codecs: tuple[str, ...]
    median: float  # the leader's value as the table shows it: seconds, or bytes
    # A tie's width (the larger of its gap and of the largest difference from the leader
    # the test could have missed: 0.05, 5 %), or an unresolved group's gap (last / first - 1).
    within: float | None = None
    resolved: bool = True  # False: "not resolved", never "tied"
    # Of a group of several timings: the largest difference from the leader the test
    # could have missed (None: some pair untested), and the last member's value.
    precision: float | None = None
    last: float | None = None


@dataclass(frozen=True)
class Margin:
    """How far one group's leader is ahead of the next group's."""

    ratio: float  # the next leader's value over this leader's: above 1
    plus_minus: float | None  # about a 95 % interval; None when untested or a size


@dataclass(frozen=True)
class Tier:
    """One class, in order: groups[i] is ahead of groups[i + 1] by margins[i]."""

    fidelity: str
    groups: tuple[Group, ...]
    margins: tuple[Margin, ...]
    unsafe: bool = False  # the class of the codecs unsafe on untrusted bytes
    lost: Mapping[str, str] = field(default_factory=dict)  # of its lossy codecs, by name

    @property
    def codecs(self) -> list[str]:
        return [codec for group in self.groups for codec in group.codecs]


@dataclass(frozen=True)
class Ranking:
    measure: str
    tiers: tuple[Tier, ...]  # safe classes in CLASSES order, then unsafe ones; none empty
    left_out: tuple[tuple[str, str], ...]  # (codec, why): not ranked
    exact_only: bool = False
    safe_only: bool = False
    unsafe: tuple[str, ...] = ()  # every candidate unsafe on untrusted bytes, ranked or not
    floor: float = 0.0  # a timing gap under it is no win (see the module)

    @property
    def leaders(self) -> tuple[str, ...]:
        """The codecs ranked first: the first group of the exact safe class; () without."""
        first = self.tiers[0] if self.tiers else None
        exact = first and first.fidelity == EXACT and not first.unsafe
        return first.groups[0].codecs if first and exact else ()

    @property
    def scattered(self) -> bool:
        """Whether some group's test could miss a difference of BLIND or more: samples too
        few or too scattered (a loaded machine) to order those codecs."""
        return any(
            g.precision is not None and g.precision >= BLIND for t in self.tiers for g in t.groups
        )

    @property
    def unresolved(self) -> bool:
        """Whether some group is "not resolved": its samples could not order it in TIE_SPAN."""
        return any(not g.resolved for t in self.tiers for g in t.groups)

    def tier(self, fidelity: str, unsafe: bool = False) -> Tier | None:
        return next((t for t in self.tiers if (t.fidelity, t.unsafe) == (fidelity, unsafe)), None)

    def position(self, codec: str) -> tuple[int, int] | None:
        """(tier, group) indexes of `codec`; None when it was not ranked."""
        for i, tier in enumerate(self.tiers):
            for j, group in enumerate(tier.groups):
                if codec in group.codecs:
                    return i, j
        return None


@dataclass(frozen=True)
class _Entry:
    """One codec as a tier ranks it: its values by the measure, their weights, and the
    value the verdict quotes."""

    codec: str
    values: tuple[float, ...]
    weights: tuple[float, ...]
    value: float


def _centre(values: Sequence[float]) -> float:
    """The median of the typical processes (of every value, under two)."""
    kept = typical_processes(values) if len(values) >= 2 else tuple(values)
    return statistics.median(kept)


def _weights(
    a: tuple[float, ...], b: tuple[float, ...]
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """Both entries' weights for the test, or None (all alike) where either has none."""
    return (a, b) if a and b else None


def _tied(leader: _Entry, other: _Entry, measure: str) -> tuple[bool, float | None]:
    """Whether the verdict test cannot tell `other` from `leader` (False when untestable),
    and the smallest difference it could have told (None for sizes, or untested)."""
    if measure not in TIMINGS:
        return leader.values[0] == other.values[0], None
    if len(leader.values) < 2 or len(other.values) < 2:
        return False, None
    try:
        found = difference(
            leader.values, other.values, weights=_weights(leader.weights, other.weights)
        )
    except SerkitError:  # scipy missing: the order stands, untested
        return False, None
    return not found.differs, found.detectable


def _margin(leader: _Entry, follower: _Entry, measure: str) -> Margin:
    ratio = follower.value / leader.value
    if measure not in TIMINGS or len(leader.values) < 2 or len(follower.values) < 2:
        return Margin(ratio, None)
    # The error the verdict test used: its processes, weighted as it weighs them.
    error = joint_error(leader.values, follower.values, _weights(leader.weights, follower.weights))
    return Margin(ratio, 2 * ratio * error)


def _group(members: Sequence[_Entry], measure: str) -> Group:
    """Members in order, the leader first: tied, not resolved, or one codec alone."""
    leader, codecs = members[0], tuple(m.codec for m in members)
    if len(members) == 1 or measure not in TIMINGS:  # sizes group only when equal
        return Group(codecs, leader.value)
    gap = members[-1].value / leader.value - 1
    missed = [_tied(leader, member, measure)[1] for member in members[1:]]
    precision = None if None in missed else max(m for m in missed if m is not None)
    tied = precision is not None and max(gap, precision) <= TIE_SPAN
    within = max(gap, precision) if tied and precision is not None else gap
    return Group(codecs, leader.value, within, tied, precision, members[-1].value)


def _tie_width(group: Group) -> float:
    """How wide a gap this group calls a tie: a gap no wider is no win beside it."""
    return (group.within or 0.0) if group.resolved else 0.0


def _tier(
    key: tuple[str, bool],
    entries: list[_Entry],
    measure: str,
    lost: Mapping[str, str],
    floor: float = 0.0,
) -> Tier:
    entries.sort(key=lambda entry: (entry.value, entry.codec))
    runs: list[list[_Entry]] = []
    floor = floor if measure in TIMINGS else 0.0
    for entry in entries:
        if runs and (
            entry.value <= runs[-1][0].value * (1 + floor) or _tied(runs[-1][0], entry, measure)[0]
        ):
            runs[-1].append(entry)
        else:
            runs.append([entry])
    groups = [_group(run, measure) for run in runs]
    # One gap is never a tie in one clause and a win in the next: a margin no wider than
    # a tie beside it joins the two groups (see the module docstring).
    merged = True
    while merged:
        merged = False
        for i in range(len(runs) - 1):
            gap = runs[i + 1][0].value / runs[i][0].value - 1
            if gap <= max(_tie_width(groups[i]), _tie_width(groups[i + 1])):
                runs[i : i + 2] = [runs[i] + runs[i + 1]]
                groups[i : i + 2] = [_group(runs[i], measure)]
                merged = True
                break
    leaders = [run[0] for run in runs]
    margins = tuple(_margin(a, b, measure) for a, b in zip(leaders, leaders[1:]))
    return Tier(key[0], tuple(groups), margins, key[1], dict(lost))


def _left_out(candidate: Candidate, fidelity: str, exact_only: bool, safe_only: bool) -> str:
    """Why `candidate` is not ranked by the options; "" where it is."""
    if exact_only and fidelity != EXACT:
        return f"{fidelity}: left out by exact-only"
    if safe_only and candidate.unsafe:
        return "left out by safe-only"
    return ""


def rank(
    candidates: Iterable[Candidate],
    measure: str = DEFAULT_MEASURE,
    *,
    exact_only: bool = False,
    safe_only: bool = False,
    floor: float = 0.0,
) -> Ranking:
    """The candidates in order by `measure`, by the rules in this module's docstring."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    classes = [(c, unsafe) for unsafe in (False, True) for c in CLASSES]
    by_class: dict[tuple[str, bool], list[_Entry]] = {key: [] for key in classes}
    lost: dict[tuple[str, bool], dict[str, str]] = {key: {} for key in classes}
    left_out: list[tuple[str, str]] = []
    candidates = list(candidates)
    for candidate in candidates:
        values = candidate.values(measure)
        fidelity = candidate.fidelity or UNKNOWN
        why = _left_out(candidate, fidelity, exact_only, safe_only)
        if not values or any(v <= 0 or not math.isfinite(v) for v in values):
            left_out.append((candidate.codec, candidate.why_not or "not measured"))
        elif why:
            left_out.append((candidate.codec, why))
        else:
            key = (fidelity, candidate.unsafe)
            value = candidate.value(measure)
            weights = candidate.weights(measure)
            by_class[key].append(_Entry(candidate.codec, values, weights, value))
            if candidate.lost and fidelity == LOSSY:
                lost[key][candidate.codec] = candidate.lost
    tiers = tuple(
        _tier(key, found, measure, lost[key], floor) for key, found in by_class.items() if found
    )
    unsafe = tuple(c.codec for c in candidates if c.unsafe)
    return Ranking(measure, tiers, tuple(left_out), exact_only, safe_only, unsafe, floor)
