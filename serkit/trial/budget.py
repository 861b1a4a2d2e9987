"""How `serkit try` spends its time on a document: which codec gets its next timed process.

The answer must come in well under a minute, so the document gets at most TARGET_S,
preparing included. A first pass gives FIRST_PROCESSES processes to each codec, the
cheapest first while its share of the time lasts (a codec none fit is reported from its
first call). Then the headline comes first: while the verdict's first place is undecided,
each pass times its codecs alone. A place is undecided while its group is tied only within
more than PRECISION, or "not resolved", or called apart from the next group by under
CLOSE_CALL on few processes. Once the first place is decided, each pass gives one process
to each of the codecs the first pass could not fit, then to those of every other
undecided place, the nearest the top first. A run ends at its budget, or once every
place is decided. Several processes a codec, timed one at a time in a random order
across the codecs, let neither one slow process nor one slow stretch decide a run.
"""

from __future__ import annotations

import math
import random
import timeit
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, TypeVar

from serkit.compare.ranking import TIE_SPAN, Ranking
from serkit.progress import progress
from serkit.trial.sampling import Process
from serkit.units import plural

# Per document, preparing included; the command's start and reading the file come on top
# (2.5-5.7 s at load averages of 10-16 here, 2026-11-29): a run in 30 s.
TARGET_S = 24.0
MIN_SAMPLING_S = 3.0  # sampling still gets this much (at most its share) after preparing
FIRST_PROCESSES = 2  # every codec's in the first pass: the verdict test needs two a side
MAX_PROCESSES = 40  # a codec's most in one run, however long it stays undecided
FIRST_PASS_SHARE = 0.5  # of the sampling time, for the first pass; the rest is targeted
# A tie within this is decided ("cannot be told apart at the precision a quick run aims
# at"); a wider one is not, and its codecs get more processes.
PRECISION = TIE_SPAN
PASS_CODECS = 6  # codecs given a process each in one further pass, nearest the top first
# One group called faster than the next by under CLOSE_CALL is called on at least
# CLOSE_CALL_PROCESSES processes a codec. Each process's own layout moves a call by up to
# 25 % here (msgspec-struct-msgpack's loads of a 153 KiB document: 227-286 µs over 21 new
# interpreters in two runs, 2026-11-29), and on 3-5 processes a codec one run called it
# 1.14x faster than the next group, which two other runs tied with it.
CLOSE_CALL = 1.25
CLOSE_CALL_PROCESSES = 8
# Sampling time one codec may take in the first pass: more buys little for a call already
# this slow beside the others, and a small document should not wait on pure-Python YAML.
KEY_CAP_S = 2.0
_K = TypeVar("_K")


class Undecided(NamedTuple):
    """The places a ranking has not decided: the headline's, and the others."""

    # The first place of the verdict's first class: its group, with the next one while a
    # close call holds them; () once decided.
    headline: tuple[str, ...]
    others: list[tuple[str, ...]]  # nearest the top first


def undecided(
    ranked: Ranking,
    precision: float = PRECISION,
    processes: Callable[[str], int] = lambda codec: CLOSE_CALL_PROCESSES,
) -> Undecided:
    """The groups whose order the verdict has not decided, nearest the top first (the
    first group of every class, then the second, ...): each of several codecs that the
    test tied only within more than `precision`, or "not resolved" however close; and two
    neighbouring groups whose leaders are under CLOSE_CALL apart while a codec of theirs
    has fewer than CLOSE_CALL_PROCESSES `processes`, as one. Those at the first class's
    first place are the headline's."""
    open_groups = [
        (position, tier_at, group.codecs)
        for tier_at, tier in enumerate(ranked.tiers)
        for position, group in enumerate(tier.groups)
        if len(group.codecs) > 1
        and (not group.resolved or group.within is None or group.within > precision)
    ]
    open_groups += [
        (position, tier_at, (*ahead.codecs, *behind.codecs))
        for tier_at, tier in enumerate(ranked.tiers)
        for position, (ahead, behind, margin) in enumerate(
            zip(tier.groups, tier.groups[1:], tier.margins)
        )
        if margin.ratio < CLOSE_CALL
        and min(map(processes, (*ahead.codecs, *behind.codecs))) < CLOSE_CALL_PROCESSES
    ]
    at_top = [codecs for position, tier_at, codecs in open_groups if position == tier_at == 0]
    others = [codecs for position, tier_at, codecs in sorted(open_groups) if position or tier_at]
    headline = tuple(dict.fromkeys(codec for codecs in at_top for codec in codecs))
    return Undecided(headline, list(dict.fromkeys(others)))


def plan_samples(
    costs: Mapping[_K, float], budget_s: float, max_rounds: int, key_cap_s: float = math.inf
) -> dict[_K, int]:
    """Rounds per key within `budget_s`: the cheapest keys first, each as many as
    `max_rounds`, and no more than `key_cap_s` pays for, while the budget lasts.

    So a short budget measures the cheapest codecs well rather than every codec once or
    none (a fair share each, on a megabyte, paid for no codec's process at all); the
    cap keeps a slow call from taking what the others need. A key may get 0.
    """
    counts: dict[_K, int] = {}
    left = budget_s
    for key in sorted(costs, key=lambda key: costs[key]):
        cost = max(costs[key], 1e-9)
        counts[key] = min(max_rounds, math.floor(min(key_cap_s, left) / cost))
        left -= counts[key] * cost
    return counts


def sample_processes(
    costs: Mapping[str, float],
    take: Callable[[Sequence[str]], Sequence[tuple[Process | None, float]]],
    still_open: Callable[[Mapping[str, Sequence[Process]]], Undecided],
    sampling_s: float,
    *,
    clock: Callable[[], float] = timeit.default_timer,
    rng: random.Random | None = None,
    max_processes: int = MAX_PROCESSES,
    key_cap_s: float = KEY_CAP_S,
    tick: Callable[[str], None] = lambda doing: None,
) -> dict[str, list[Process]]:
    """Each codec's processes within `sampling_s`: `take(codecs)` times one for each, in
    order (None where it failed) with what each cost, `costs` predicts each codec's, and
    `still_open(taken)` names the places whose order is undecided (see the module).

    The first pass is planned (`plan_samples`, FIRST_PASS_SHARE of the time), round by
    round in a random order. Each further pass gives one process to each of the first
    PASS_CODECS codecs still open, in a random order: the headline's alone while it is
    undecided; else those the first pass could not fit (within `key_cap_s` each),
    cheapest first, then the other undecided places, group by group. In a group, those
    with the fewest processes come first, since the least known widen a tie most. No
    process starts that its predicted cost would carry past the end; a codec's cost is
    what its last process took.
    """
    rng = rng or random.Random()
    end = clock() + sampling_s
    cost = dict(costs)
    taken: dict[str, list[Process]] = {codec: [] for codec in costs}
    failures: dict[str, int] = dict.fromkeys(costs, 0)
    spent: dict[str, float] = dict.fromkeys(costs, 0.0)

    def run(codecs: Sequence[str]) -> None:
        left, fitting = end - clock(), []
        for codec in codecs:  # those whose predicted costs fit in what is left, in order
            if cost[codec] <= left:
                fitting.append(codec)
                left -= cost[codec]
        for codec, (found, cost_s) in zip(fitting, take(fitting) if fitting else ()):
            cost[codec] = max(cost_s, 1e-6)
            spent[codec] += cost[codec]
            if found is None:
                failures[codec] += 1
            else:
                taken[codec].append(found)

    planned = plan_samples(cost, sampling_s * FIRST_PASS_SHARE, FIRST_PROCESSES, key_cap_s)
    for round_ in range(max(planned.values(), default=0)):
        tick(f"first pass, round {round_ + 1} of {FIRST_PROCESSES}")
        codecs = [codec for codec, count in planned.items() if count > round_]
        run(rng.sample(codecs, len(codecs)))

    def eligible(codec: str) -> bool:
        # Codecs failing twice are left as they are: a process killed for time, or crashed.
        return (
            len(taken[codec]) < max_processes
            and failures[codec] < 2
            and cost[codec] <= end - clock()
        )

    def least_known(group: Sequence[str]) -> list[str]:
        return [c for c in sorted(group, key=lambda c: len(taken[c])) if taken[c] and eligible(c)]

    while True:
        open_ = still_open(taken)
        # The headline alone while it is open: the answer a user reads first gets every
        # process it can use (on a 1.2 MiB document, four passes of six codecs gave its
        # four codecs 4-7 processes each, 2026-11-29).
        top = least_known(open_.headline)[:PASS_CODECS]
        if top:
            tick(f"{plural(len(top), 'codec')} undecided at the top")
            run(rng.sample(top, len(top)))
            continue
        # Then the codecs the first pass could not fit, as their costs now allow (a plan
        # rests on predictions), then the other undecided places.
        behind = sorted(
            (
                c
                for c in cost
                if len(taken[c]) < FIRST_PROCESSES and spent[c] + cost[c] <= key_cap_s
            ),
            key=lambda codec: cost[codec],
        )
        targeted = [codec for group in open_.others for codec in least_known(group)]
        chosen = [c for c in dict.fromkeys([*behind, *targeted]) if eligible(c)][:PASS_CODECS]
        if not chosen:
            return taken
        tick(f"{plural(len(chosen), 'codec')} undecided")
        run(rng.sample(chosen, len(chosen)))


class ProgressLine:
    """The one line on stderr while a document is measured, for a person at a terminal
    (serkit.progress hides it elsewhere): what it is doing, time spent and at most left."""

    def __init__(self, label: str, budget_s: float, clock: Callable[[], float]) -> None:
        self.label, self.budget_s, self.clock, self.start = label, budget_s, clock, clock()
        self.bar = progress(total=None, desc=label, unit="s", bar_format="{desc}")

    def __call__(self, doing: str) -> None:
        self.bar.set_description_str(
            progress_text(self.label, doing, self.clock() - self.start, self.budget_s)
        )

    def close(self) -> None:
        self.bar.close()


def progress_text(label: str, doing: str, elapsed_s: float, budget_s: float) -> str:
    """`doc.json: 4 codecs undecided, 12 s elapsed, at most 13 s left`."""
    left = max(0.0, budget_s - elapsed_s)
    return f"{label}: {doing}, {elapsed_s:.0f} s elapsed, at most {left:.0f} s left"
