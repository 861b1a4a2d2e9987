"""`serkit compare --fail-on`: which pairs fail a CI check, by the comparison's own verdicts.

A timing fails `slower:PCT` when the comparison judged it slower (the noise rule of
serkit.compare.comparison: Welch's t-test between processes and the hosts' noise floor, or
disjoint intervals) and B/A exceeds 1 + PCT / 100. A ratio alone never fails a check: one
beyond PCT that the rule calls within noise is noise. A pair the rule could not judge (a
single sample, no spread recorded) never fails either; the check says how many there were.

Where both runs counted the call's simulated cycles (`serkit bench --instructions`), a
timing fails only when the cycles agree that the code changed (comparison.disagreement).
Time alone cannot tell a change from the machine here: on a 2-vCPU cloud VM, whole quick
runs of one commit read up to 11 % apart (geometric mean over 172 pairs), in states its
canary does not see, and time alone failed 27 of 172 pairs of such an A/A pair at
slower:10 (docs/trust.md). The counts cannot move with the machine. A timing without
cycles on both sides is judged by time alone, and the check says how many were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from serkit.compare.comparison import (
    NO_SPREAD,
    SINGLE_SAMPLE,
    SLOWER,
    Comparison,
    Pair,
    disagreement,
)

DEFAULT_PERCENT = 10.0
VERDICTS = (SLOWER,)  # what a check can fail on; the word on the command line is the verdict


@dataclass(frozen=True)
class FailOn:
    """A check: fail on pairs of this verdict whose B/A is beyond 1 + percent / 100."""

    verdict: str
    percent: float

    @property
    def text(self) -> str:
        return f"{self.verdict}:{self.percent:g}"


def parse_fail_on(text: str) -> FailOn:
    """`slower` or `slower:PCT` (a percentage, 0 to 1000); ValueError says what is wrong."""
    verdict, sep, amount = text.strip().partition(":")
    if verdict not in VERDICTS:
        raise ValueError(f"must be {' or '.join(VERDICTS)}[:PCT], not {text!r}")
    if not sep:
        return FailOn(verdict, DEFAULT_PERCENT)
    try:
        percent = float(amount.strip().removesuffix("%"))
    except ValueError:
        raise ValueError(f"PCT must be a percentage such as 10, not {amount!r}") from None
    if not 0 <= percent <= 1000:  # also NaN
        raise ValueError(f"PCT must be from 0 to 1000, not {amount}")
    return FailOn(verdict, percent)


@dataclass(frozen=True)
class CheckResult:
    rule: FailOn
    failed: tuple[Pair, ...]  # judged `rule.verdict` and beyond its percentage
    unjudged: int  # timings the rule gave no verdict (single sample, no spread)
    checked: int  # timings compared
    # Judged `rule.verdict` beyond its percentage by time, but not by their simulated
    # cycles: the machine's change, not the code's. Each with why, in words.
    cleared: tuple[tuple[Pair, str], ...] = ()
    time_only: int = 0  # timings judged without cycles on both sides

    @property
    def ok(self) -> bool:
        return not self.failed


def check(result: Comparison, rule: FailOn) -> CheckResult:
    """The timings of `result` that fail `rule` (see the module docstring)."""
    timings = [p for p in result.pairs if p.benchmark.kind == "time"]
    cycles = result.cycles_beside()
    limit = 1 + rule.percent / 100
    failed, cleared = [], []
    for pair in timings:
        if pair.verdict != rule.verdict or pair.ratio is None or pair.ratio <= limit:
            continue
        why = disagreement(pair, cycles.get(id(pair)), result.floor)
        if why is None:
            failed.append(pair)
        else:
            cleared.append((pair, why))
    unjudged = sum(1 for p in timings if p.verdict in (SINGLE_SAMPLE, NO_SPREAD))
    time_only = sum(1 for p in timings if id(p) not in cycles)
    return CheckResult(rule, tuple(failed), unjudged, len(timings), tuple(cleared), time_only)


def check_lines(found: CheckResult, machine_a: str, machine_b: str) -> Sequence[str]:
    """What the check found, in lines for stderr: the verdict first, then each failing pair."""
    rule = found.rule
    limit = f"more than {rule.percent:g} % {rule.verdict}"
    unjudged = (
        f"; {found.unjudged} had no verdict (a single sample or no spread) and cannot fail it"
        if found.unjudged
        else ""
    )
    head = f"--fail-on {rule.text}:"
    if found.ok:
        lines = [
            f"{head} passed: none of {found.checked} timing(s) on {machine_b} judged {limit} "
            f"than on {machine_a}{' by time and simulated cycles' if found.cleared else ''}"
            f"{unjudged}"
        ]
    else:
        lines = [
            f"{head} FAILED: {len(found.failed)} of {found.checked} timing(s) on {machine_b} "
            f"judged {limit} than on {machine_a}{unjudged}:"
        ]
        lines += [f"  - {_pair_line(pair)}" for pair in found.failed]
    if found.cleared:
        lines.append(
            f"{head} {len(found.cleared)} timing(s) judged {limit} by time alone did not fail: "
            "their simulated cycles say the code did not change that much:"
        )
        lines += [f"  - {_pair_line(pair)}: {why}" for pair, why in found.cleared]
    if found.time_only:
        lines.append(
            f"{head} {found.time_only} of {found.checked} timing(s) were judged by time alone "
            "(no simulated cycles in both runs: `serkit bench --instructions` counts them); on a "
            "shared VM whole runs move by several percent, so time alone can fail on the machine"
        )
    return lines


def _pair_line(pair: Pair) -> str:
    params = ", ".join(str(v) for v in pair.params.values())
    return f"{pair.benchmark.name} [{params}] in {pair.env.label}: B/A {pair.ratio:.3f}"
