"""The ranked verdict (serkit.compare.ranking) on samples whose answer is known."""

from __future__ import annotations

import random
import re

import pytest

from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY, Difference, FidelityResult
from serkit.compare.ranking import (
    DUMPS,
    LOADS,
    ROUND_TRIP,
    SIZE,
    TIE_SPAN,
    UNKNOWN,
    UNSAFE,
    Candidate,
    Group,
    Margin,
    rank,
)
from serkit.compare.verdict_words import (
    group_text,
    ranking_lines,
    rule_text,
    tier_text,
    verdict_line,
)

# Eight processes around a median, spread about ±1 %: fixed, so every run reads the same.
SHAPE = (0.990, 0.994, 0.997, 1.0, 1.0, 1.003, 1.006, 1.010)


def processes(median: float) -> tuple[float, ...]:
    return tuple(median * f for f in SHAPE)


def timed(codec: str, dumps: float, loads: float | None = None, fidelity: str = EXACT) -> Candidate:
    return Candidate(codec, fidelity, processes(dumps), processes(loads or dumps))


def test_a_clear_order_has_one_codec_per_group_and_margins_above_one() -> None:
    ranking = rank([timed("json", 4e-6), timed("orjson", 1e-6), timed("ujson", 2e-6)], DUMPS)
    (tier,) = ranking.tiers
    assert [g.codecs for g in tier.groups] == [("orjson",), ("ujson",), ("json",)]
    assert [round(m.ratio, 3) for m in tier.margins] == [2.0, 2.0]
    assert all(m.plus_minus is not None and m.plus_minus < 0.1 for m in tier.margins)
    assert ranking.leaders == ("orjson",)


def test_codecs_the_test_cannot_tell_apart_are_tied_with_the_leader() -> None:
    # msgspec-json 0.2 % slower than orjson, well inside ±1 % spreads: tied; ujson 2x.
    ranking = rank(
        [timed("ujson", 2e-6), timed("msgspec-json", 1.002e-6), timed("orjson", 1e-6)], DUMPS
    )
    (tier,) = ranking.tiers
    assert [g.codecs for g in tier.groups] == [("orjson", "msgspec-json"), ("ujson",)]
    text = tier_text(tier, DUMPS)
    assert (
        text == "orjson and msgspec-json: tied within 1 % (1.00 µs); 2.00x ± 0.01 faster than ujson"
    )


def test_ties_are_judged_against_the_leader_so_small_steps_do_not_chain() -> None:
    # Each 0.6 % behind the one before: b ties a, c (1.2 % behind a) is apart... and so on.
    steps = [timed(name, 1e-6 * 1.006**i) for i, name in enumerate("abcdefgh")]
    (tier,) = rank(steps, DUMPS).tiers
    assert len(tier.groups) > 1
    for group in tier.groups:  # nobody in a group is far from its leader
        members = [c for c in steps if c.codec in group.codecs]
        assert members[-1].dumps[3] / members[0].dumps[3] < 1.02


def test_a_floor_calls_no_timing_gap_under_it_a_win() -> None:
    # 7 % apart on ±1 % spreads: a win to the test; under a 10 % floor, one tied group.
    found = [timed("orjson", 1e-6), timed("msgspec-json", 1.07e-6), timed("ujson", 1.5e-6)]
    (plain,) = rank(found, DUMPS).tiers
    assert [g.codecs for g in plain.groups] == [("orjson",), ("msgspec-json",), ("ujson",)]
    floored = rank(found, DUMPS, floor=TIE_SPAN)
    (tier,) = floored.tiers
    assert [g.codecs for g in tier.groups] == [("orjson", "msgspec-json"), ("ujson",)]
    assert tier.groups[0].resolved and tier.groups[0].within == pytest.approx(0.07)
    assert "any codec within 10 % of a group's fastest joins it" in rule_text(DUMPS, floor=TIE_SPAN)
    # Sizes are counts: a floor leaves them alone.
    sized = [Candidate(c, EXACT, sizes={SIZE: n}) for c, n in (("a", 100), ("b", 105))]
    (by_size,) = rank(sized, SIZE, floor=TIE_SPAN).tiers
    assert [g.codecs for g in by_size.groups] == [("a",), ("b",)]


def test_lossy_codecs_are_ranked_apart_and_never_first() -> None:
    ranking = rank(
        [
            timed("json", 3e-6),
            timed("protobuf", 0.5e-6, fidelity=LOSSY),
            timed("msgspec-struct-json", 0.8e-6, fidelity=KEY_ORDER_ONLY),
            timed("orjson", 1e-6),
            Candidate("yaml", None, processes(9e-6), processes(9e-6)),
        ],
        ROUND_TRIP,
    )
    assert [t.fidelity for t in ranking.tiers] == [EXACT, KEY_ORDER_ONLY, LOSSY, UNKNOWN]
    assert ranking.tiers[0].codecs == ["orjson", "json"]
    assert ranking.leaders == ("orjson",)
    line = verdict_line(ranking)
    assert line.startswith("fastest exact, by round trip (dumps + loads): orjson (2.00 µs)")
    assert "msgspec-struct-json (lossy in dict key order only), protobuf (lossy)" in line


def test_exact_only_leaves_the_others_out_and_says_why() -> None:
    ranking = rank(
        [timed("orjson", 1e-6), timed("protobuf", 0.5e-6, fidelity=LOSSY)],
        DUMPS,
        exact_only=True,
    )
    assert [t.fidelity for t in ranking.tiers] == [EXACT]
    assert ranking.left_out == (("protobuf", "lossy: left out by exact-only"),)
    assert ranking_lines(ranking)[-1] == "not ranked: protobuf (lossy: left out by exact-only)"


def test_no_exact_codec_means_no_leader() -> None:
    ranking = rank([timed("protobuf", 0.5e-6, fidelity=LOSSY)], DUMPS)
    assert ranking.leaders == ()
    assert verdict_line(ranking).startswith("fastest lossy,")


def test_round_trip_sums_each_rounds_dumps_and_loads() -> None:
    # a: fast dumps, slow loads; b the other way round; the sums decide.
    a = timed("a", 1e-6, 5e-6)
    b = timed("b", 3e-6, 2e-6)
    assert rank([a, b], DUMPS).tiers[0].codecs == ["a", "b"]
    assert rank([a, b], LOADS).tiers[0].codecs == ["b", "a"]
    assert rank([a, b], ROUND_TRIP).tiers[0].codecs == ["b", "a"]
    assert a.values(ROUND_TRIP)[0] == pytest.approx(a.dumps[0] + a.loads[0])


def test_sizes_tie_only_when_equal() -> None:
    sized = [
        Candidate("json", EXACT, sizes={SIZE: 1762}),
        Candidate("orjson", EXACT, sizes={SIZE: 1700}),
        Candidate("ujson", EXACT, sizes={SIZE: 1700}),
        Candidate("msgpack", EXACT, sizes={"gzip-6": 900}),
    ]
    ranking = rank(sized, SIZE)
    (tier,) = ranking.tiers
    assert [g.codecs for g in tier.groups] == [("orjson", "ujson"), ("json",)]
    assert tier.margins[0].plus_minus is None
    assert tier_text(tier, SIZE) == "orjson and ujson: tied (1.66 KiB); 1.04x smaller than json"
    assert ranking.left_out == (("msgpack", "not measured"),)


def test_one_process_a_side_keeps_the_order_untested() -> None:
    one = [Candidate("a", EXACT, (1e-6,), (1e-6,)), Candidate("b", EXACT, (1.001e-6,), (1e-6,))]
    (tier,) = rank(one, DUMPS).tiers
    assert [g.codecs for g in tier.groups] == [("a",), ("b",)]
    assert "untested" in tier_text(tier, DUMPS)


def test_unmeasured_codecs_are_listed_with_their_reason() -> None:
    ranking = rank([timed("orjson", 1e-6), Candidate("avro", EXACT, why_not="no schema")], DUMPS)
    assert ranking.left_out == (("avro", "no schema"),)


def test_unknown_measure_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown measure"):
        rank([], "speed")


def test_fidelity_class_tells_key_order_from_other_losses() -> None:
    order = (Difference("key-order", 3, "[0]"),)
    assert FidelityResult("c", "d", LOSSY, order).fidelity_class == KEY_ORDER_ONLY
    both = (*order, Difference("value-changed", 1, "[1]"))
    assert FidelityResult("c", "d", LOSSY, both).fidelity_class == LOSSY
    assert FidelityResult("c", "d", EXACT).fidelity_class == EXACT
    assert FidelityResult("c", "d", "error").fidelity_class is None


def test_scattered_samples_leave_a_group_not_resolved_never_tied() -> None:
    # Three samples a side, scattered 2x: no test at 0.5 % can order a 1.5x difference,
    # and a group the samples could not split is "not resolved", with its gap.
    wild = (1.0, 2.0, 1.4)
    ranking = rank(
        [
            Candidate("a", EXACT, tuple(1e-6 * f for f in wild), tuple(1e-6 * f for f in wild)),
            Candidate("b", EXACT, tuple(1.5e-6 * f for f in wild), tuple(1.5e-6 * f for f in wild)),
        ],
        ROUND_TRIP,
    )
    (tier,) = ranking.tiers
    assert [g.codecs for g in tier.groups] == [("a", "b")]
    assert ranking.scattered
    assert tier_text(tier, ROUND_TRIP) == (
        "not resolved: a and b within 50 % (2.00 µs to 3.00 µs); samples too scattered to "
        "order them"
    )
    assert "tied" not in tier_text(tier, ROUND_TRIP)


def test_a_tie_weighs_each_process_by_the_state_it_was_timed_in() -> None:
    # ujson's five wholly fast processes read 4 % behind orjson's; its three others,
    # corrected from the slow state, scatter around them. Counted alike, the scatter ties
    # the two; weighted as `serkit compare` weighs them, ujson stands apart.
    fast = (1.0,) * 8
    lead = Candidate("orjson", EXACT, processes(1e-6), processes(1e-6), {}, "", fast, fast)
    scattered = (*(1.04e-6 * f for f in SHAPE[:5]), 0.96e-6, 1.12e-6, 1.06e-6)
    weights = (1.0,) * 5 + (0.25,) * 3
    alike = Candidate("ujson", EXACT, scattered, scattered)
    weighed = Candidate("ujson", EXACT, scattered, scattered, {}, "", weights, weights)
    assert rank([lead, alike], DUMPS).tiers[0].codecs == ["orjson", "ujson"]
    assert len(rank([lead, alike], DUMPS).tiers[0].groups) == 1
    for measure in (DUMPS, ROUND_TRIP):
        groups = rank([lead, weighed], measure).tiers[0].groups
        assert [g.codecs for g in groups] == [("orjson",), ("ujson",)], measure
    # A round trip counts as its less precise half; weights that do not fit are unknown.
    assert weighed.weights(ROUND_TRIP) == weights
    assert Candidate("x", EXACT, (1.0, 2.0), (1.0, 2.0), {}, "", (1.0,)).weights(DUMPS) == ()


def test_a_margin_weighs_each_process_as_the_test_does() -> None:
    # ujson 30 % behind orjson: its five wholly fast processes tight, three corrected
    # ones scattered. Weighted, the scatter widens the margin less; all weights 1 is the
    # unweighted margin itself.
    fast = (1.0,) * 8
    lead = Candidate("orjson", EXACT, processes(1e-6), processes(1e-6), {}, "", fast, fast)
    scattered = (*(1.3e-6 * f for f in SHAPE[:5]), 1.15e-6, 1.5e-6, 1.35e-6)
    weights = (1.0,) * 5 + (0.25,) * 3

    def margin(*weighed: tuple[float, ...]) -> Margin:
        follower = Candidate("ujson", EXACT, scattered, scattered, {}, "", *weighed)
        (found,) = rank([lead, follower], DUMPS).tiers[0].margins
        return found

    alike, weighed, ones = margin(), margin(weights, weights), margin(fast, fast)
    assert alike.ratio == weighed.ratio == pytest.approx(1.3, rel=0.02)  # medians, unweighted
    assert alike.plus_minus is not None and weighed.plus_minus is not None
    assert weighed.plus_minus < 0.7 * alike.plus_minus  # 0.029 against 0.049
    assert ones.plus_minus == pytest.approx(alike.plus_minus)


# --- issue 55 point 3: a verdict that agrees with its table and with itself -------------------


def test_the_verdict_quotes_the_tables_values_a_round_trip_their_sum() -> None:
    # orjson's processes split into modes (a typical median far below the table's): the
    # verdict still quotes the table's 244 µs dumps + 760 µs loads, and compares by them.
    modes = (0.55, 0.56, 0.57, 1.0, 1.0, 1.01, 1.02, 1.03)
    orjson = Candidate(
        "orjson",
        EXACT,
        tuple(244e-6 * f for f in modes),
        tuple(760e-6 * f for f in modes),
        shown={DUMPS: 244e-6, LOADS: 760e-6},
    )
    json_ = Candidate(
        "json", EXACT, processes(2.2e-3), processes(3.0e-3), shown={DUMPS: 2.2e-3, LOADS: 3.0e-3}
    )
    ranking = rank([json_, orjson])
    (tier,) = ranking.tiers
    assert tier.groups[0].median == pytest.approx(244e-6 + 760e-6)
    assert tier.margins[0].ratio == pytest.approx(5.2e-3 / 1.004e-3)
    assert verdict_line(ranking).startswith(
        "fastest exact, by round trip (dumps + loads): orjson (1.00 ms); 5."
    )
    # By one operation, that operation's value.
    assert rank([json_, orjson], LOADS).tiers[0].groups[0].median == pytest.approx(760e-6)


def test_a_gap_the_samples_could_not_tell_is_not_resolved_never_tied() -> None:
    # 665 µs against 756 µs, three processes a side spread ±3 %: the test cannot tell them
    # apart, and 14 % is wider than a tie may be.
    three = (0.97, 1.0, 1.03)

    def few(codec: str, value: float) -> Candidate:
        values = tuple(value / 2 * f for f in three)
        return Candidate(codec, EXACT, values, values, shown={DUMPS: value / 2, LOADS: value / 2})

    ranking = rank([few("ormsgpack", 756e-6), few("msgspec-msgpack", 665e-6)])
    (group,) = ranking.tiers[0].groups
    assert not group.resolved and group.within == pytest.approx(756 / 665 - 1)
    line = verdict_line(ranking)
    assert "tied" not in line
    assert line.startswith(
        "fastest exact, by round trip (dumps + loads): not resolved: msgspec-msgpack and "
        "ormsgpack within 14 % (665 µs to 756 µs); a gap of up to "
    )
    assert line.endswith("could hide in their samples")


def test_one_gap_is_never_a_tie_and_a_win_in_one_sentence() -> None:
    # pickle-p5 scattered 1 % behind pickle-p4, so the test could miss 4 %; pickle-p2, tight,
    # 3 % behind: told from p4, but inside the tie beside it. One group, not "tied within 4 %;
    # 1.03x faster than pickle-p2".
    wide = (0.96, 0.97, 0.99, 1.0, 1.0, 1.01, 1.03, 1.04)
    p5 = tuple(1.01e-6 * f for f in wide)
    ranking = rank(
        [
            timed("pickle-p4", 1e-6),
            Candidate("pickle-p5", EXACT, p5, p5),
            timed("pickle-p2", 1.03e-6),
        ]
    )
    (tier,) = ranking.tiers
    assert [g.codecs for g in tier.groups] == [("pickle-p4", "pickle-p5", "pickle-p2")]
    assert tier.groups[0].resolved and tier.groups[0].within is not None
    assert tier.groups[0].within <= TIE_SPAN
    assert "faster" not in tier_text(tier, ROUND_TRIP)


def _random_candidates(rng: random.Random) -> list[Candidate]:
    """Six codecs 0-40 % apart, each with 2-8 processes spread 0.2-20 %."""
    found = []
    for i in range(6):
        centre = 1e-6 * (1 + rng.uniform(0, 0.4))
        scatter = rng.choice((0.002, 0.01, 0.05, 0.2))
        values = tuple(centre * rng.lognormvariate(0, scatter) for _ in range(rng.randint(2, 8)))
        found.append(Candidate(f"c{i}", EXACT, values, values))
    return found


def test_on_any_measurements_a_tie_spans_10_pct_at_most_and_no_gap_is_both() -> None:
    rng = random.Random(55)
    for _ in range(150):
        (tier,) = rank(_random_candidates(rng)).tiers
        for group in tier.groups:
            if len(group.codecs) > 1 and group.resolved:
                assert group.within is not None and group.within <= TIE_SPAN
                assert group.last is not None and group.last / group.median - 1 <= TIE_SPAN
        for i, margin in enumerate(tier.margins):
            beside = [g.within or 0.0 for g in tier.groups[i : i + 2] if g.resolved]
            assert margin.ratio - 1 > max(beside, default=0.0)
        text = tier_text(tier, ROUND_TRIP)
        assert all(int(n) <= 10 for n in re.findall(r"tied within (\d+) %", text)), text
        assert text.count("tied") == len(re.findall(r"tied within \d+ %", text))


# --- issue 57 point 1: unsafe said wherever ranked, and what a lossy codec lost ---------------


def _with_unsafe() -> list[Candidate]:
    return [
        timed("orjson", 1e-6),
        timed("json", 3e-6),
        Candidate("pickle-p5", EXACT, processes(0.5e-6), processes(0.5e-6), unsafe=True),
        Candidate("marshal", None, why_not="not measured", unsafe=True),
        Candidate(
            "msgspec-msgpack", LOSSY, processes(0.2e-6), processes(0.2e-6), lost="namedtuple->list"
        ),
    ]


def test_unsafe_codecs_are_ranked_apart_and_every_line_naming_one_says_so() -> None:
    ranking = rank(_with_unsafe())
    assert [(t.fidelity, t.unsafe) for t in ranking.tiers] == [
        (EXACT, False),
        (LOSSY, False),
        (EXACT, True),
    ]
    assert ranking.leaders == ("orjson",)
    line = verdict_line(ranking)
    assert line.startswith("fastest exact, by round trip (dumps + loads): orjson (2.00 µs)")
    assert line.endswith(
        "Faster, but ranked apart: msgspec-msgpack (lossy: namedtuple->list), "
        "pickle-p5 (exact, unsafe on untrusted bytes)"
    )
    lines = [line, *ranking_lines(ranking)]
    assert "lossy: msgspec-msgpack (namedtuple->list; 400 ns)" in lines
    assert "exact, unsafe on untrusted bytes: pickle-p5 (1.00 µs)" in lines
    assert lines[-1] == "not ranked: marshal (unsafe on untrusted bytes; not measured)"
    for said in lines:
        if "pickle" in said or "marshal" in said:
            assert UNSAFE in said, said
    assert "ranked apart after all the safe ones" in rule_text(ROUND_TRIP)


def test_safe_only_leaves_the_unsafe_codecs_out_and_says_so() -> None:
    ranking = rank(_with_unsafe(), safe_only=True)
    assert not any(t.unsafe for t in ranking.tiers)
    assert ranking_lines(ranking)[-1] == (
        "not ranked: pickle-p5 (unsafe on untrusted bytes; left out by safe-only); "
        "marshal (unsafe on untrusted bytes; not measured)"
    )
    assert "unsafe on untrusted bytes (serkit list: UNSAFE) left out" in rule_text(
        ROUND_TRIP, safe_only=True
    )


def test_with_only_unsafe_codecs_exact_the_first_line_says_unsafe() -> None:
    only = [Candidate("pickle-p4", EXACT, processes(1e-6), processes(1e-6), unsafe=True)]
    ranking = rank(only)
    assert ranking.leaders == ()
    assert verdict_line(ranking).startswith(
        "fastest exact, unsafe on untrusted bytes, by round trip (dumps + loads): pickle-p4"
    )


def test_a_gap_under_half_a_percent_reads_within_1_percent_never_0() -> None:
    close = Group(("orjson", "msgspec-json"), 1e-6, 0.004, resolved=False, precision=0.14)
    assert "within 1 % (" in group_text(close)
    assert "; a gap of up to 14 % could hide in their samples" in group_text(close)
    assert "tied within 1 %" in group_text(Group(("orjson", "msgspec-json"), 1e-6, 0.0))
    assert "within 3 %" in group_text(Group(("orjson", "ujson"), 1e-6, 0.03, resolved=False))
