"""serkit.stats on synthetic samples whose answers are known."""

from __future__ import annotations

import math
import random

import pytest

from serkit.stats import (
    difference,
    median_paired_ratio,
    modes,
    paired_ratios,
    quartiles,
    spread,
)


def test_paired_ratios_pair_rounds_and_refuse_unpaired_ones() -> None:
    assert paired_ratios([2.0, 6.0], [1.0, 3.0]) == [2.0, 2.0]
    assert median_paired_ratio([1.0, 4.0, 9.0], [1.0, 2.0, 3.0]) == 2.0
    with pytest.raises(ValueError, match="unpaired"):
        paired_ratios([1.0], [1.0, 2.0])


def test_quartiles_of_one_value_and_of_several() -> None:
    assert quartiles([5.0]) == (5.0, 5.0, 5.0)
    assert quartiles([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 3.0, 4.0)


def test_processes_in_two_modes_are_found() -> None:
    # The shape the issue measured: msgpack dumps of small-dict at ~9 us or ~17 us.
    found = spread([9.0e-6, 9.2e-6, 17.0e-6, 17.4e-6, 9.1e-6])
    assert found.multimodal
    assert [count for _, count in found.modes] == [3, 2]
    assert (found.low, found.high) == (9.0e-6, 17.4e-6)
    assert not spread([1.0, 1.05, 1.1, 0.97]).multimodal
    assert modes([1.0, 1.2, 1.44, 1.8], gap=0.25) == ((1.2, 3), (1.8, 1))


def test_a_clear_shift_differs_and_says_what_it_could_detect() -> None:
    a = [1.0, 1.02, 0.98, 1.01, 0.99]
    found = difference(a, [x * 1.3 for x in a])
    assert found.differs and found.ratio == pytest.approx(1.3)
    assert found.p_value is not None and found.p_value < 1e-6
    # These processes agree within 2 %: a few percent was detectable.
    assert 0.0 < found.detectable < 0.06


def test_the_floor_holds_back_a_real_but_small_shift() -> None:
    a = [1.0, 1.02, 0.98, 1.01, 0.99]
    small = [x * 1.05 for x in a]
    assert difference(a, small).differs
    held = difference(a, small, floor=0.10)
    assert not held.differs and held.detectable == pytest.approx(0.10)


def test_spread_out_processes_cannot_detect_a_modest_shift() -> None:
    a = [1.0, 2.0, 1.1, 1.9, 1.05]
    found = difference(a, [x * 1.2 for x in a])
    assert not found.differs
    assert found.detectable > 0.2


def test_identical_processes_are_judged_by_the_floor_alone() -> None:
    assert not difference([1.0, 1.0], [1.0, 1.0]).differs
    assert difference([1.0, 1.0], [2.0, 2.0], floor=0.5).differs
    assert not difference([1.0, 1.0], [1.2, 1.2], floor=0.5).differs


def test_a_single_process_a_side_is_refused() -> None:
    with pytest.raises(ValueError, match="two or more"):
        difference([1.0], [1.0, 2.0])


def test_aa_false_positive_rate_is_at_most_alpha_on_lognormal_processes() -> None:
    # 2,000 A/A pairs of 5 processes each with a 15 % between-process spread: the test
    # alone may call about 1 % of them different, never much more.
    rng = random.Random(20261123)
    false = 0
    for _ in range(2000):
        a = [rng.lognormvariate(0, 0.15) for _ in range(5)]
        b = [rng.lognormvariate(0, 0.15) for _ in range(5)]
        false += difference(a, b).differs
    assert false / 2000 <= 0.015


def test_detectable_shrinks_with_more_processes() -> None:
    rng = random.Random(7)
    few = [rng.lognormvariate(0, 0.1) for _ in range(4)]
    many = few * 5
    assert difference(many, many).detectable < difference(few, few).detectable
    assert math.isfinite(difference(few, few).detectable)
