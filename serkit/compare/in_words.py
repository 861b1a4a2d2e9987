"""A comparison in words, wherever it is shown: its warnings, each host's noise floor and
`serkit power` record, a counted track beside a timing, where time and cycles disagree, and
a run compared with itself. The text, Markdown and JSON forms and the report all word them
so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from serkit.compare.comparison import Comparison, Pair
from serkit.results.noise import POWER_NOT_MEASURED, NoNoise, PowerRecord


def params_text(params: dict[str, Any]) -> str:
    """A value's parameters as a row shows them: their values, comma-separated."""
    return ", ".join(str(v) for v in params.values())


def no_noise_text(found: NoNoise) -> str:
    """A host without a noise measurement, in words: what its verdicts assume instead."""
    return (
        f"{found.machine} has no noise measurement: timing verdicts assume a floor of "
        f"{found.floor:.0%} (run `serkit noise --machine {found.machine}` on that host)"
    )


def power_text(record: PowerRecord | None) -> str:
    """What a verdict on a host can see, in words, from its `serkit power` record."""
    return record.in_words() if record else POWER_NOT_MEASURED


def warnings_of(result: Comparison) -> list[str]:
    """Everything a comparison warns of, in words: the reading's and matching's warnings,
    then each host without a noise measurement."""
    return [*result.warnings, *map(no_noise_text, result.no_noise)]


def beside_text(counted: Pair | None) -> str:
    """A timing's instruction count between the hosts: "same", or the change and its verdict."""
    if counted is None or counted.ratio is None:
        return "-"
    if counted.verdict == "same":
        return "same"
    return f"{(counted.ratio - 1) * 100:+.2f} % ({counted.verdict})"


def disagreement_lines(disagreements: Sequence[tuple[Pair, str]]) -> list[str]:
    """Each timing whose simulated cycles contradict its verdict, in words; or that none do."""
    if not disagreements:
        return ["Time and simulated cycles agree on every timing that has both."]
    lines = [f"Time and simulated cycles disagree on {len(disagreements)} timing(s):"]
    for pair, words in disagreements:
        lines.append(f"  - {pair.benchmark.name} [{params_text(pair.params)}]: {words}")
    return lines


def same_run_line(result: Comparison) -> str:
    """What `compare X X` says instead of a table of identical values."""
    a, b = result.machine_a, result.machine_b
    who = a if a == b else f"{a} and {b}"
    return (
        f"{who}: this compares a run with itself (each value read from the same results "
        "file on both sides), so nothing can differ; name two runs to compare"
    )
