"""The ranked verdict: on one document and by one measure, codecs in order, ties grouped.

The report's Overview and fixture pages, `serkit try` and the table that ends `serkit
bench` all rank with this module, by these rules (stated once, here):

- Fidelity first. Codecs whose round trip is exact are ranked apart from those that lost
  only dict key order, and those apart from every other lossy one (the classes of
  serkit.checks.fidelity.fidelity_class); a codec whose fidelity was not recorded comes
  last, apart. A lossy codec is never "faster than" an exact one: each class has its own
  order. With `exact_only`, only exact codecs are ranked.
- Timings are ranked by the median of each codec's typical processes (serkit.stats:
  `typical_processes`; in `serkit try`, its interleaved samples stand for processes).
  The round trip is dumps plus loads: each process's (or round's) dumps plus the loads
  of the same round, so the sum keeps what that round shared.
- Ties: going down a class, a codec joins the group above it when serkit's verdict test
  (serkit.stats.difference: Welch's t-test on the logs of both sides' typical processes,
  at serkit.stats.ALPHA, each process weighted by the machine's state it was timed in
  where the report knows it, as `serkit compare` weighs them; a round trip as its less
  precise half) cannot tell it from that group's leader, its fastest; else it
  leads a group of its own. Measured against the leader, not the last member, so a chain
  of small steps cannot tie a slow codec to a fast one. A tie states the largest
  difference the test could have missed (its `detectable`): few or scattered samples
  tie codecs far apart, and the words say so.
- A pair with fewer than two processes a side cannot be tested: its order stands, and
  its margin says "untested".
- Sizes are counts (encoded bytes, or those bytes compressed): equal sizes tie, others
  are ordered; they have no noise.
- The margin between two groups is the ratio of their leaders' medians, ± twice the
  standard error of that ratio (from each leader's standard error of the mean log over
  the processes the verdict test judged, serkit.stats.judged_processes, weighted by state
  as the test weighs them, serkit.stats.joint_error): about a 95 % interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY
from serkit.errors import SerkitError
from serkit.stats import ALPHA, difference, joint_error, typical_processes
from serkit.suite.cases import COMPRESSORS
from serkit.units import bytes_binary, percent, seconds, significant

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
# The classes, in the order they are ranked.
CLASSES = (EXACT, KEY_ORDER_ONLY, LOSSY, UNKNOWN)
# A tie whose test could miss a difference this large (1.0: 100 %, twice as slow) tells
# nothing of the order: it is worded so, and `scattered` reports it.
BLIND = 1.0
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


@dataclass(frozen=True)
class Group:
    """Codecs the test cannot tell apart: the leader (the fastest or smallest) first."""

    codecs: tuple[str, ...]
    median: float  # the leader's: seconds, or bytes
    # Of a tied timing group: the largest difference from the leader the test could have
    # missed (Difference.detectable, 0.5: 50 %), so a tie says how blind it was.
    within: float | None = None


@dataclass(frozen=True)
class Margin:
    """How far one group's leader is ahead of the next group's."""

    ratio: float  # the next leader's median over this leader's: above 1
    plus_minus: float | None  # about a 95 % interval; None when untested or a size


@dataclass(frozen=True)
class Tier:
    """One fidelity class, in order: groups[i] is ahead of groups[i + 1] by margins[i]."""

    fidelity: str
    groups: tuple[Group, ...]
    margins: tuple[Margin, ...]

    @property
    def codecs(self) -> list[str]:
        return [codec for group in self.groups for codec in group.codecs]


@dataclass(frozen=True)
class Ranking:
    measure: str
    tiers: tuple[Tier, ...]  # in CLASSES order, empty ones left out
    left_out: tuple[tuple[str, str], ...]  # (codec, why): not ranked
    exact_only: bool = False

    @property
    def leaders(self) -> tuple[str, ...]:
        """The codecs ranked first: the first group of the exact class; () with none exact."""
        first = self.tiers[0] if self.tiers else None
        return first.groups[0].codecs if first and first.fidelity == EXACT else ()

    @property
    def scattered(self) -> bool:
        """Whether some tie could miss a difference of BLIND or more: samples too few or
        too scattered (a loaded machine) to order those codecs."""
        return any(g.within is not None and g.within >= BLIND for t in self.tiers for g in t.groups)

    def tier(self, fidelity: str) -> Tier | None:
        return next((t for t in self.tiers if t.fidelity == fidelity), None)

    def position(self, codec: str) -> tuple[int, int] | None:
        """(tier, group) indexes of `codec`; None when it was not ranked."""
        for i, tier in enumerate(self.tiers):
            for j, group in enumerate(tier.groups):
                if codec in group.codecs:
                    return i, j
        return None


# One codec as a tier ranks it: its name, values by the measure, and their weights.
Entry = tuple[str, tuple[float, ...], tuple[float, ...]]


def _centre(values: Sequence[float]) -> float:
    """The median of the typical processes (of every value, under two)."""
    kept = typical_processes(values) if len(values) >= 2 else tuple(values)
    return statistics.median(kept)


def _weights(
    a: tuple[float, ...], b: tuple[float, ...]
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """Both entries' weights for the test, or None (all alike) where either has none."""
    return (a, b) if a and b else None


def _tied(leader: Entry, other: Entry, measure: str) -> tuple[bool, float | None]:
    """Whether the verdict test cannot tell `other` from `leader` (False when untestable),
    and the smallest difference it could have told (None for sizes, or untested)."""
    (_, values_l, weights_l), (_, values_o, weights_o) = leader, other
    if measure not in TIMINGS:
        return values_l[0] == values_o[0], None
    if len(values_l) < 2 or len(values_o) < 2:
        return False, None
    try:
        found = difference(values_l, values_o, weights=_weights(weights_l, weights_o))
    except SerkitError:  # scipy missing: the order stands, untested
        return False, None
    return not found.differs, found.detectable


def _margin(leader: Entry, follower: Entry, measure: str) -> Margin:
    (_, values_l, weights_l), (_, values_f, weights_f) = leader, follower
    ratio = _centre(values_f) / _centre(values_l)
    if measure not in TIMINGS or len(values_l) < 2 or len(values_f) < 2:
        return Margin(ratio, None)
    # The error the verdict test used: its processes, weighted as it weighs them.
    return Margin(
        ratio, 2 * ratio * joint_error(values_l, values_f, _weights(weights_l, weights_f))
    )


def _tier(fidelity: str, entries: list[Entry], measure: str) -> Tier:
    entries.sort(key=lambda entry: (_centre(entry[1]), entry[0]))
    groups: list[list[str]] = []
    leaders: list[Entry] = []
    blind: list[float | None] = []  # per group: the largest difference its test could miss
    for entry in entries:
        codec = entry[0]
        if leaders:
            tied, detectable = _tied(leaders[-1], entry, measure)
            if tied:
                groups[-1].append(codec)
                if detectable is not None:
                    blind[-1] = max(blind[-1] or 0.0, detectable)
                continue
        groups.append([codec])
        leaders.append(entry)
        blind.append(None)
    return Tier(
        fidelity,
        tuple(Group(tuple(g), _centre(v[1]), b) for g, v, b in zip(groups, leaders, blind)),
        tuple(_margin(a, b, measure) for a, b in zip(leaders, leaders[1:])),
    )


def rank(
    candidates: Iterable[Candidate], measure: str = DEFAULT_MEASURE, *, exact_only: bool = False
) -> Ranking:
    """The candidates in order by `measure`, by the rules in this module's docstring."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    by_class: dict[str, list[Entry]] = {c: [] for c in CLASSES}
    left_out: list[tuple[str, str]] = []
    for candidate in candidates:
        values = candidate.values(measure)
        fidelity = candidate.fidelity or UNKNOWN
        if not values or any(v <= 0 or not math.isfinite(v) for v in values):
            left_out.append((candidate.codec, candidate.why_not or "not measured"))
        elif exact_only and fidelity != EXACT:
            left_out.append((candidate.codec, f"{fidelity}: left out by exact-only"))
        else:
            by_class[fidelity].append((candidate.codec, values, candidate.weights(measure)))
    tiers = tuple(_tier(c, entries, measure) for c, entries in by_class.items() if entries)
    return Ranking(measure, tiers, tuple(left_out), exact_only)


def ranking_dict(ranking: Ranking) -> dict[str, Any]:
    """The ranking for JSON: its classes, groups and margins, and its lines in words."""
    return {
        **asdict(ranking),
        "left_out": [{"codec": codec, "why": why} for codec, why in ranking.left_out],
        "verdict": verdict_line(ranking),
        "lines": ranking_lines(ranking),
        "rule": rule_text(ranking.measure, ranking.exact_only),
    }


# --- in words -------------------------------------------------------------------------


def _names(codecs: Sequence[str], most: int | None = None) -> str:
    if most is not None and len(codecs) > most:
        return f"{', '.join(codecs[:most])} and {len(codecs) - most} more"
    if len(codecs) == 1:
        return codecs[0]
    return f"{', '.join(codecs[:-1])} and {codecs[-1]}"


def group_text(group: Group, most: int | None = None) -> str:
    """`orjson and msgspec-json: tied`, with `within 12 %` where the test could miss up to
    that; or one codec's name. With `most`, at most that many names, and how many more."""
    names = _names(group.codecs, most)
    if len(group.codecs) == 1:
        return names
    if group.within is None:
        return f"{names}: tied"
    if group.within >= BLIND:
        return f"{names}: tied, too scattered to tell apart"
    return f"{names}: tied within {percent(group.within)}"


def margin_text(margin: Margin, measure: str) -> str:
    """`1.9x ± 0.1 faster`, `1.04x smaller`, `1.9x faster (untested: ...)`: a timing's ratio
    to the places of its ±, which has one significant digit."""
    word = "faster" if measure in TIMINGS else "smaller"
    if margin.plus_minus is not None and margin.plus_minus > 0:
        places = max(0, -math.floor(math.log10(margin.plus_minus)))
        return f"{margin.ratio:.{places}f}x ± {margin.plus_minus:.{places}f} {word}"
    ratio = f"{significant(margin.ratio, 3)}x"
    if measure in TIMINGS:
        return f"{ratio} {word} (untested: one process or sample)"
    return f"{ratio} {word}"


def value_text(value: float, measure: str) -> str:
    return seconds(value) if measure in TIMINGS else bytes_binary(value)


def tier_text(
    tier: Tier, measure: str, *, limit: int | None = None, most: int | None = None
) -> str:
    """`orjson and msgspec-json: tied (1.00 µs); 1.9x ± 0.1 faster than ujson; ujson 1.2x ...`.

    With `limit`, only the first `limit` groups, and how many codecs follow; with `most`,
    at most that many names a group."""
    shown = tier.groups if limit is None else tier.groups[:limit]
    parts = [f"{group_text(shown[0], most)} ({value_text(shown[0].median, measure)})"]
    for i, group in enumerate(shown[1:], start=1):
        lead = "" if i == 1 else f"{tier.groups[i - 1].codecs[0]} "
        margin = margin_text(tier.margins[i - 1], measure)
        parts.append(f"{lead}{margin} than {group_text(group, most)}")
    rest = sum(len(g.codecs) for g in tier.groups[len(shown) :])
    text = "; ".join(parts)
    return text + (f"; then {rest} more" if rest else "")


def class_words(fidelity: str) -> str:
    return {
        EXACT: "exact",
        KEY_ORDER_ONLY: "lossy in dict key order only",
        LOSSY: "lossy",
        UNKNOWN: UNKNOWN,
    }[fidelity]


def verdict_line(ranking: Ranking) -> str:
    """One line: the best of the first class and its margin, then any faster lossy ones."""
    if not ranking.tiers:
        return f"{MEASURE_WORDS[ranking.measure]}: no codec measured"
    first = ranking.tiers[0]
    best = "fastest" if ranking.measure in TIMINGS else "smallest"
    head = f"{best} {class_words(first.fidelity)}, by {MEASURE_WORDS[ranking.measure]}: "
    text = head + tier_text(first, ranking.measure, limit=2, most=VERDICT_NAMES)
    # A lossy class's leader ahead of the winner is worth knowing: it is ranked apart.
    ahead = [
        f"{tier.groups[0].codecs[0]} ({class_words(tier.fidelity)})"
        for tier in ranking.tiers[1:]
        if tier.groups[0].median < first.groups[0].median
    ]
    if ahead:
        word = "faster" if ranking.measure in TIMINGS else "smaller"
        text += f". {word.capitalize()}, but not exact, so ranked apart: {', '.join(ahead)}"
    return text


def ranking_lines(ranking: Ranking) -> list[str]:
    """Every class in order, one line each, then what was not ranked."""
    lines = [
        f"{class_words(tier.fidelity)}: {tier_text(tier, ranking.measure)}"
        for tier in ranking.tiers
    ]
    if ranking.left_out:
        by_why: dict[str, list[str]] = {}
        for codec, why in ranking.left_out:
            by_why.setdefault(why, []).append(codec)
        lines.append(
            "not ranked: "
            + "; ".join(f"{_names(codecs)} ({why})" for why, codecs in by_why.items())
        )
    return lines


def rule_text(measure: str, exact_only: bool = False) -> str:
    """The rule, in a sentence, for a legend."""
    classes = (
        "exact codecs only"
        if exact_only
        else "exact codecs first, then those lossy in dict key order only, then other lossy "
        "ones, each class ranked apart"
    )
    if measure in TIMINGS:
        how = (
            f"by the median of the typical processes of the {MEASURE_WORDS[measure]}; "
            f"codecs the verdict test ({TIE_TEST}, at {percent(ALPHA, 1)}) cannot tell "
            "from a group's fastest are tied with it; margins are ratios of medians ± about "
            "a 95 % interval"
        )
    else:
        how = f"by {MEASURE_WORDS[measure]} in bytes; equal sizes tie"
    return f"Ranked {how}; {classes}."
