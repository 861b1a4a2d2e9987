"""`serkit compare --fail-on`: which pairs fail a CI check, by the comparison's own verdicts.

A timing fails `slower:PCT` when the comparison judged it slower (the noise rule of
serkit.compare.comparison: Welch's t-test between processes and the hosts' noise floor, or
disjoint intervals) and B/A exceeds 1 + PCT / 100. A ratio alone never fails a check: one
beyond PCT that the rule calls within noise is noise. A pair the rule could not judge (a
single sample, no spread recorded) never fails either; the check says how many there were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from serkit.compare.comparison import NO_SPREAD, SINGLE_SAMPLE, SLOWER, Comparison, Pair

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

    @property
    def ok(self) -> bool:
        return not self.failed


def check(result: Comparison, rule: FailOn) -> CheckResult:
    """The timings of `result` that fail `rule` (see the module docstring)."""
    timings = [p for p in result.pairs if p.benchmark.kind == "time"]
    limit = 1 + rule.percent / 100
    failed = tuple(
        p for p in timings if p.verdict == rule.verdict and p.ratio is not None and p.ratio > limit
    )
    unjudged = sum(1 for p in timings if p.verdict in (SINGLE_SAMPLE, NO_SPREAD))
    return CheckResult(rule, failed, unjudged, len(timings))


def check_lines(found: CheckResult, host_a: str, host_b: str) -> Sequence[str]:
    """What the check found, in lines for stderr: the verdict first, then each failing pair."""
    rule = found.rule
    limit = f"more than {rule.percent:g} % {rule.verdict}"
    unjudged = (
        f"; {found.unjudged} had no verdict (a single sample or no spread) and cannot fail it"
        if found.unjudged
        else ""
    )
    if found.ok:
        return [
            f"--fail-on {rule.text}: passed: none of {found.checked} timing(s) on {host_b} "
            f"judged {limit} than on {host_a}{unjudged}"
        ]
    lines = [
        f"--fail-on {rule.text}: FAILED: {len(found.failed)} of {found.checked} timing(s) on "
        f"{host_b} judged {limit} than on {host_a}{unjudged}:"
    ]
    for pair in found.failed:
        params = ", ".join(str(v) for v in pair.params.values())
        lines.append(
            f"  - {pair.benchmark.name} [{params}] in {pair.env.label}: B/A {pair.ratio:.3f}"
        )
    return lines
