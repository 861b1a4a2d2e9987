"""The ranked verdict in words: lines for a terminal, a report page and JSON.

What the rules decided (serkit.compare.ranking) said one way everywhere: a group as
`orjson and msgspec-json: tied within 2 % (1.00 µs)`, a margin as `1.9x ± 0.1 faster`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY
from serkit.compare.ranking import (
    BLIND,
    DEFAULT_MEASURE,
    MEASURE_WORDS,
    TIE_SPAN,
    TIE_TEST,
    TIMINGS,
    UNKNOWN,
    UNSAFE,
    VERDICT_NAMES,
    Group,
    Margin,
    Ranking,
    Tier,
)
from serkit.stats import ALPHA
from serkit.units import bytes_binary, percent, percent_within, seconds, significant


def ranking_dict(ranking: Ranking) -> dict[str, Any]:
    """The ranking for JSON: its classes, groups and margins, and its lines in words."""
    return {
        **asdict(ranking),
        "left_out": [{"codec": codec, "why": why} for codec, why in ranking.left_out],
        "verdict": verdict_line(ranking),
        "lines": ranking_lines(ranking),
        "rule": rule_text(ranking.measure, ranking.exact_only, ranking.safe_only, ranking.floor),
    }


def _names(codecs: Sequence[str], most: int | None = None) -> str:
    if most is not None and len(codecs) > most:
        return f"{', '.join(codecs[:most])} and {len(codecs) - most} more"
    if len(codecs) == 1:
        return codecs[0]
    return f"{', '.join(codecs[:-1])} and {codecs[-1]}"


def _named(group: Group, lost: Mapping[str, str], most: int | None) -> tuple[str, ...]:
    """The group's names, each lossy one with what it lost: `msgspec-msgpack (namedtuple->list)`."""
    shown = group.codecs if most is None else group.codecs[:most]
    named = tuple(f"{c} ({lost[c]})" if c in lost else c for c in shown)
    return named + group.codecs[len(shown) :]


def _unresolved(group: Group, values: str = "") -> str:
    """How far apart an unresolved group is (its `values`, if given), and how finely its
    samples could tell."""
    within = f"within {percent_within(group.within or 0.0)}" + (f" ({values})" if values else "")
    if group.precision is None:
        return f"{within}; untested: one process or sample"
    if group.precision >= BLIND:
        return f"{within}; samples too scattered to order them"
    return f"{within}; a gap of up to {percent(group.precision)} could hide in their samples"


def group_text(
    group: Group,
    most: int | None = None,
    lost: Mapping[str, str] | None = None,
    measure: str | None = DEFAULT_MEASURE,
) -> str:
    """`orjson and msgspec-json: tied within 2 % (1.00 µs)`; `not resolved: msgspec-msgpack
    and ormsgpack within 14 % (665 µs to 756 µs); a gap of up to 19 % could hide ...`; or
    one codec's name and value, with what it lost: `bson (type-changed; 1.00 ms)`. With
    `most`, at most that many names, and how many more; with no `measure`, no value."""
    values = "" if measure is None else value_text(group.median, measure)
    if len(group.codecs) == 1:
        said = [w for w in ((lost or {}).get(group.codecs[0]), values) if w]
        return f"{group.codecs[0]} ({'; '.join(said)})" if said else group.codecs[0]
    names = _names(_named(group, lost or {}, most), most)
    if group.within is None:
        text = f"{names}: tied"
    elif group.resolved:
        text = f"{names}: tied within {percent_within(group.within or 0.0)}"
    else:
        if measure is not None:
            values += f" to {value_text(group.last or group.median, measure)}"
        return f"not resolved: {names} {_unresolved(group, values)}"
    return f"{text} ({values})" if values else text


def following_text(
    group: Group, most: int | None = None, lost: Mapping[str, str] | None = None
) -> str:
    """A group after a margin: `ujson`, `ujson and json (tied within 3 %)`, `ujson and
    json (not resolved, within 14 %; a gap of up to 20 % could hide in their samples)`."""
    names = _names(_named(group, lost or {}, most), most)
    if len(group.codecs) == 1:
        return names
    if group.within is None:
        return f"{names} (tied)"
    if group.resolved:
        return f"{names} (tied within {percent_within(group.within or 0.0)})"
    return f"{names} (not resolved, {_unresolved(group)})"


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
    """`orjson and msgspec-json: tied within 2 % (1.00 µs); 1.9x ± 0.1 faster than ujson;
    ujson 1.2x ...`.

    With `limit`, only the first `limit` groups, and how many codecs follow; with `most`,
    at most that many names a group."""
    shown = tier.groups if limit is None else tier.groups[:limit]
    parts = [group_text(shown[0], most, tier.lost, measure)]
    for i, group in enumerate(shown[1:], start=1):
        lead = "" if i == 1 else f"{tier.groups[i - 1].codecs[0]} "
        margin = margin_text(tier.margins[i - 1], measure)
        parts.append(f"{lead}{margin} than {following_text(group, most, tier.lost)}")
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


def tier_words(tier: Tier, codec: str | None = None) -> str:
    """`exact`, `exact, unsafe on untrusted bytes`; with `codec`, what it lost: `lossy:
    namedtuple->list`."""
    words = class_words(tier.fidelity)
    if codec is not None and codec in tier.lost:
        words += f": {tier.lost[codec]}"
    return f"{words}, {UNSAFE}" if tier.unsafe else words


def verdict_line(ranking: Ranking) -> str:
    """One line: the best of the first class and its margin, then the leaders of the
    classes ranked apart that are ahead of it (lossy, unsafe), each with its class."""
    if not ranking.tiers:
        return f"{MEASURE_WORDS[ranking.measure]}: no codec measured"
    first = ranking.tiers[0]
    best = "fastest" if ranking.measure in TIMINGS else "smallest"
    head = f"{best} {tier_words(first)}, by {MEASURE_WORDS[ranking.measure]}: "
    text = head + tier_text(first, ranking.measure, limit=2, most=VERDICT_NAMES)
    # A leader ranked apart and ahead of the winner is worth knowing, with why it is apart.
    ahead = [
        f"{tier.groups[0].codecs[0]} ({tier_words(tier, tier.groups[0].codecs[0])})"
        for tier in ranking.tiers[1:]
        if tier.groups[0].median < first.groups[0].median
    ]
    if ahead:
        word = "faster" if ranking.measure in TIMINGS else "smaller"
        text += f". {word.capitalize()}, but ranked apart: {', '.join(ahead)}"
    return text


def ranking_lines(ranking: Ranking) -> list[str]:
    """Every class in order, one line each, then what was not ranked."""
    lines = [f"{tier_words(tier)}: {tier_text(tier, ranking.measure)}" for tier in ranking.tiers]
    if ranking.left_out:
        by_why: dict[str, list[str]] = {}
        for codec, why in ranking.left_out:
            said = f"{UNSAFE}; {why}" if codec in ranking.unsafe else why
            by_why.setdefault(said, []).append(codec)
        lines.append(
            "not ranked: "
            + "; ".join(f"{_names(codecs)} ({why})" for why, codecs in by_why.items())
        )
    return lines


def rule_text(
    measure: str, exact_only: bool = False, safe_only: bool = False, floor: float = 0.0
) -> str:
    """The rule, in a sentence, for a legend."""
    classes = (
        "exact codecs only"
        if exact_only
        else "exact codecs first, then those lossy in dict key order only, then other lossy "
        "ones, each class ranked apart"
    )
    unsafe = (
        f"codecs {UNSAFE} (serkit list: UNSAFE) left out"
        if safe_only
        else f"codecs {UNSAFE} (serkit list: UNSAFE) ranked apart after all the safe ones "
        "(serkit try's and serkit bench's --safe-only leaves them out)"
    )
    if measure in TIMINGS:
        how = (
            f"by the {MEASURE_WORDS[measure]} the table shows; codecs the verdict test "
            f"({TIE_TEST}, at {percent(ALPHA, 1)}) cannot tell from a group's fastest are "
            f"tied with it where they are within {percent(TIE_SPAN)} and the test could miss "
            f"no more than {percent(TIE_SPAN)}, else not resolved"
            + (
                f"; any codec within {percent(floor)} of a group's fastest joins it"
                if floor
                else ""
            )
            + "; margins are ratios of those values ± about a 95 % interval"
        )
    else:
        how = f"by {MEASURE_WORDS[measure]} in bytes; equal sizes tie"
    return f"Ranked {how}; {unsafe}; {classes}."
