"""How `serkit compare` shows a comparison as text or Markdown: by default one screen of what
changed, with `--all` every pair in full tables, with `--explain` the rules."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from tabulate import tabulate

from serkit.compare.comparison import COMMIT_RULE, Comparison, GroupSummary, Pair
from serkit.compare.in_words import (
    beside_text,
    disagreement_lines,
    params_text,
    power_text,
    same_run_line,
)
from serkit.compare.verdicts import (
    CI_99,
    CYCLES_RULE,
    DIFFERS,
    FASTER,
    HIGHER,
    INSTRUCTIONS_RULE,
    LOWER,
    NOISE_RULE,
    SIZE_MISMATCH,
    SLOWER,
    spreads,
)
from serkit.results.tree import Environment, Interval, Measurement
from serkit.sample_speed import STATE_RULE
from serkit.stats import spread
from serkit.text import markdown_text, terminal
from serkit.units import bytes_exact, decimal, format_value, percent, plural, times


def _interval_text(interval: Interval | None, unit: str) -> str:
    if interval is None:
        return "-"
    return f"{format_value(interval[0], unit)} to {format_value(interval[1], unit)}"


def _heading(text: str, markdown: bool) -> str:
    return f"\n### {text}\n" if markdown else f"\n{text}"


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str], markdown: bool) -> str:
    if not markdown:
        return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    cells = [[str(cell).replace("|", "\\|") for cell in row] for row in rows]  # not a column
    return tabulate(cells, headers=headers, tablefmt="github", disable_numparse=True)


def _spread_text(
    pair: Pair, m: Measurement, judged: Sequence[float], interval: Interval | None, kind: str
) -> str:
    """The quartiles of the processes the shown value is the median of (the typical ones
    the verdict judged), with how many of how many and any modes; else the interval."""
    processes = m.process_values
    unit = pair.benchmark.unit
    if len(processes) == 1:
        return "single sample (1 process)"
    if len(processes) >= 2 and judged:
        found = spread(judged)
        modes = spread(processes).modes
        split = f", {len(modes)} modes" if len(modes) > 1 else ""
        of = f"{len(judged)} typical of {len(processes)}" if len(judged) < len(processes) else ""
        text = _interval_text((found.q1, found.q3), unit)
        return f"{text} (IQR of {of or len(processes)} processes{split})"
    if interval is None:
        return _interval_text(None, unit)
    return _interval_text(interval, unit) + ("" if kind == CI_99 else f" ({kind})")


def _pair_rows(
    pairs: Iterable[Pair],
    with_commit: bool,
    beside: dict[int, Pair] | None = None,
    cycles: dict[int, Pair] | None = None,
    disagreeing: dict[int, str] | None = None,
) -> list[list[str]]:
    rows = []
    for p in pairs:
        unit = p.benchmark.unit
        used = spreads(p.a, p.b)
        kind, a_spread, b_spread = used if used else (CI_99, None, None)
        row = [
            p.benchmark.name,
            params_text(p.params),
            format_value(p.value_a, unit),
            _spread_text(p, p.a, p.judged[0], a_spread, kind),
            format_value(p.value_b, unit),
            _spread_text(p, p.b, p.judged[1], b_spread, kind),
            decimal(p.ratio),
            "-" if p.detectable is None else percent(p.detectable),
            p.verdict,
        ]
        if beside is not None:
            row.append(beside_text(beside.get(id(p))))
        if cycles is not None:
            marked = " DISAGREES" if disagreeing and id(p) in disagreeing else ""
            row.append(beside_text(cycles.get(id(p))) + marked)
        rows.append([*row, p.commit[:8]] if with_commit else row)
    return rows


def _mismatch_lines(result: Comparison) -> list[str]:
    mismatches = result.size_mismatches
    if not mismatches:
        return []
    lines = [
        f"!! {SIZE_MISMATCH}: the hosts did not run the same thing. {len(mismatches)} "
        "size(s) differ in the same environment, where they must be equal:"
    ]
    for p in mismatches:
        note = "" if p.env.versions_recorded else " (library versions were not recorded)"
        a, b = int(p.a.value or 0), int(p.b.value or 0)
        lines.append(
            f"  - {p.benchmark.name} [{params_text(p.params)}] in {p.env.label}: "
            f"{bytes_exact(a)} on {result.machine_a}, {bytes_exact(b)} on {result.machine_b}{note}"
        )
    return lines


def _summary_rows(groups: Sequence[GroupSummary], overall: GroupSummary) -> list[list[str]]:
    rows = []
    for g in [*groups, overall]:
        others = g.timings - sum(g.verdicts.get(v, 0) for v in ("faster", "slower", "within noise"))
        rows.append(
            [
                g.group,
                str(g.timings),
                decimal(g.geomean),
                str(g.verdicts.get("faster", 0)),
                str(g.verdicts.get("slower", 0)),
                str(g.verdicts.get("within noise", 0)),
                str(others),
            ]
        )
    return rows


def _envs_text(envs: Sequence[Environment]) -> list[str]:
    return [f"  - {env.label}" for env in envs]


# Verdicts that say a value moved: the rows shown without --all, an alarm first.
CHANGED = (SIZE_MISMATCH, SLOWER, FASTER, HIGHER, LOWER, DIFFERS)
# The changed rows shown without --all, the largest change first: with the lines around
# them, one screen (and a PR comment of at most 60 lines).
MOST_SHOWN = 20
UNKNOWN_STATE = "not recorded (no canary in these results)"


def render(
    result: Comparison, markdown: bool = False, *, every: bool = False, explain: bool = False
) -> str:
    """The comparison as text, in pyperf's `compare_to` manner: by default what changed,
    the summary and the machines' state; `every` adds each pair and what only one host
    measured, `explain` the rules behind each verdict. A run compared with itself is one line."""
    if result.same_run:
        text = same_run_line(result) + "\n"
        return markdown_text(text) if markdown else terminal(text)
    out = [_headline_text(result, markdown), _intro(result), *_mismatch_lines(result)]
    out += _every_pair(result, markdown) if every else _changed(result, markdown)
    out += ["", _state_line(result, explain)]
    out += _rules(result, markdown) if explain else []
    out += _hint({"--all": every, "--explain": explain}, markdown)
    if markdown:  # each line its own paragraph, but a table's rows and a list's items
        out = [line if line.startswith(("  - ", "|", "\n")) else line + "\n" for line in out]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n") + "\n"
    # Markdown passes raw HTML through: a host's or environment's name could carry markup.
    return markdown_text(text) if markdown else terminal(text)


def headline(result: Comparison) -> str:
    """The comparison in a few words, in CodSpeed's manner: how many timings moved, and
    by up to how much (B/A): "3 of 172 timings slower, up to x1.14"."""
    timed = [p for p in result.pairs if p.benchmark.kind == "time"]
    slower = [p.ratio for p in timed if p.verdict == SLOWER and p.ratio is not None]
    faster = [p.ratio for p in timed if p.verdict == FASTER and p.ratio is not None]
    of = f" of {plural(len(timed), 'timing')}"
    parts = []
    if slower:
        parts.append(f"{len(slower)}{of} slower, up to x{max(slower):.2f}")
    if faster:
        parts.append(f"{len(faster)}{'' if slower else of} faster, down to x{min(faster):.2f}")
    if not parts:
        parts.append(f"none{of} slower or faster" if timed else "no timing compared")
    others = sum(1 for p in result.pairs if p.verdict in CHANGED and p.benchmark.kind != "time")
    if others:
        parts.append(f"{plural(others, 'other value')} changed")
    mismatches = len(result.size_mismatches)
    differ = "differs" if mismatches == 1 else "differ"
    alarm = f"{plural(mismatches, 'size')} {differ} (must be equal); " if mismatches else ""
    return alarm + "; ".join(parts)


def _headline_text(result: Comparison, markdown: bool) -> str:
    words = headline(result)
    return f"### serkit compare: {words}" if markdown else f"{words[0].upper()}{words[1:]}."


def _intro(result: Comparison) -> str:
    """Who is A and who is B, the commit, the noise floor, and the timings' mean ratio."""
    commits = {p.commit[:8] for p in result.pairs}
    at = f"commit {next(iter(commits))}" if len(commits) == 1 else "each value's newest commit"
    _, overall = result.summary()
    mean = (
        f"; geometric mean of B/A over the timings {decimal(overall.geomean)}"
        if overall.timings
        else ""
    )
    return (
        f"A = {result.machine_a}, B = {result.machine_b}, {at}: B/A below 1 is B faster (or "
        f"smaller); noise floor {percent(result.floor)}{mean}."
    )


def _row_key(pair: Pair) -> tuple[str, tuple[Any, ...]]:
    return pair.benchmark.name, tuple(pair.params.items())


def _change(pair: Pair, disagreeing: dict[int, str]) -> str:
    """A changed pair's change in pyperf's words: "1.11x slower", "1.08x faster"."""
    ratio = pair.ratio
    if ratio is not None and pair.verdict == SLOWER:
        words = f"{times(ratio)} slower"
    elif ratio is not None and pair.verdict == FASTER:
        words = f"{times(1 / ratio)} faster"
    else:
        words = pair.verdict
    return words + (" (cycles disagree)" if id(pair) in disagreeing else "")


def _changed(result: Comparison, markdown: bool) -> list[str]:
    """What moved, largest first (at most MOST_SHOWN), what did not, in counts, and in one
    line each what --all would list."""
    changed = [p for p in result.pairs if p.verdict in CHANGED]
    changed.sort(
        key=lambda p: (p.verdict != SIZE_MISMATCH, -abs(math.log(p.ratio)) if p.ratio else 0)
    )
    shown = changed[:MOST_SHOWN]
    # An environment names a row only where a benchmark and its parameters ran in several.
    keys = [_row_key(p) for p in result.pairs]
    with_env = len(keys) != len(set(keys))
    disagreeing = {id(pair): words for pair, words in result.disagreements()}
    out: list[str] = []
    if shown:
        headers = ["benchmark", "params", *(["environment"] if with_env else [])]
        rows = [
            [
                p.benchmark.name,
                params_text(p.params),
                *([p.env.label] if with_env else []),
                format_value(p.value_a, p.benchmark.unit),
                format_value(p.value_b, p.benchmark.unit),
                decimal(p.ratio),
                _change(p, disagreeing),
            ]
            for p in shown
        ]
        out += ["", _table(rows, [*headers, "A", "B", "B/A", "change"], markdown), ""]
        if len(changed) > len(shown):
            out.append(f"... and {len(changed) - len(shown)} more changed (--all lists them)")
    if markdown:  # a PR comment's summary: every verdict, timings apart from the rest
        out += [_verdict_table(result), ""]
    else:
        unchanged: dict[str, int] = {}
        for pair in result.pairs:
            if pair.verdict not in CHANGED:
                unchanged[pair.verdict] = unchanged.get(pair.verdict, 0) + 1
        if unchanged:
            listed = ", ".join(f"{n} {verdict}" for verdict, n in unchanged.items())
            out.append(f"Not shown, unchanged: {listed}.")
    out += _counted_lines(result, every=False)
    aside = _one_side_counts(result)
    if aside:
        out.append(f"Not compared: {aside} (--all lists them).")
    return out


def _verdict_table(result: Comparison) -> str:
    """How many pairs got each verdict, timings and other values apart, changes first."""
    found: dict[str, list[int]] = {verdict: [0, 0] for verdict in CHANGED}
    for pair in result.pairs:
        found.setdefault(pair.verdict, [0, 0])[pair.benchmark.kind != "time"] += 1
    rows = [[verdict, str(t), str(o)] for verdict, (t, o) in found.items() if t or o]
    return _table(rows, ["verdict", "timings", "other values"], markdown=True)


def _one_side_counts(result: Comparison) -> str:
    """What only one host measured, or could not be compared, in counts."""
    parts = []
    for host in (result.machine_a, result.machine_b):
        envs, names = result.only_envs[host], result.only_benchmarks[host]
        values = result.only_values[host]
        if envs:
            parts.append(f"{plural(len(envs), 'environment')} only {host} ran")
        if names:
            parts.append(f"{plural(len(names), 'benchmark')} only {host} ran")
        if values:
            parts.append(f"{plural(len(values), 'value')} measured only on {host}")
    if result.not_comparable:
        parts.append(f"{plural(len(result.not_comparable), 'value')} that cannot be compared")
    return "; ".join(parts)


def _counted_lines(result: Comparison, every: bool) -> list[str]:
    """The instruction counts and estimated cycles compared, a line each, and where time
    and cycles disagree (each such timing, with `every`)."""
    out = []
    counted, cycled = result.instruction_summary(), result.cycle_summary()
    if counted.timings:
        verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counted.verdicts.items()))
        out.append(
            f"Instructions per call: {counted.timings} counts compared, B/A geometric mean "
            f"{decimal(counted.geomean)}: {verdicts}."
        )
    if cycled.timings:
        verdicts = ", ".join(f"{n} {v}" for v, n in sorted(cycled.verdicts.items()))
        out.append(
            f"Estimated cycles per call: {cycled.timings} compared, B/A geometric mean "
            f"{decimal(cycled.geomean)}: {verdicts}."
        )
        disagreements = result.disagreements()
        if every or not disagreements:
            out += disagreement_lines(disagreements)
        else:
            out.append(
                f"Time and simulated cycles disagree on {len(disagreements)} timing(s) "
                "(--all lists them)."
            )
    return out


def _state_line(result: Comparison, explain: bool = False) -> str:
    """Each host's machine state while it timed the compared values, in one line: in a few
    words each, or (`explain`) with how the canary corrected the values."""
    states = result.states if explain else result.briefs
    if not result.canary:
        state = f"Machine state: {UNKNOWN_STATE}."
    elif len(set(states.values())) == 1:
        hosts = " and ".join(states)
        state = f"Machine state on {hosts}: {next(iter(states.values()))}."
    else:
        state = f"Machine state on {'; on '.join(f'{h}: {w}' for h, w in states.items())}."
    shift = f" Between the runs: {result.memory_shift}." if result.memory_shift else ""
    return state + shift


def _hint(given: dict[str, bool], markdown: bool) -> list[str]:
    """A line naming the flags not given, and what each shows."""
    shows = {
        "--all": "every pair",
        "--explain": "the rules behind each verdict and the state in full",
    }
    quote = "`" if markdown else ""
    missing = [f"{quote}{flag}{quote} shows {shows[flag]}" for flag, on in given.items() if not on]
    return [f"More: {', '.join(missing)}."] if missing else []


def _rules(result: Comparison, markdown: bool) -> list[str]:
    """The rules each verdict follows, for --explain; the machine's state only where a
    canary recorded it."""
    rule = f"commit {result.commit[:8]}" if result.commit else COMMIT_RULE
    out = [
        _heading("How the verdicts were reached", markdown),
        f"Commit: {rule}.",
        f"Noise: {NOISE_RULE}. Noise floor: {percent(result.floor)}.",
        *(
            f"What verdicts on {host} can see: {power_text(record)}."
            for host, record in result.power.items()
        ),
        *([f"Timings: {STATE_RULE}"] if result.canary else []),
    ]
    if result.instruction_summary().timings:
        out.append(
            f"Instructions per call: {INSTRUCTIONS_RULE}. Beside each timing, its count: where "
            "the time is within noise, the count still says whether the work moved."
        )
    if result.cycle_summary().timings:
        out.append(
            f"Estimated cycles per call: {CYCLES_RULE}. Beside each timing, its cycles: where "
            "time and cycles disagree about a change, the row says DISAGREES and the list "
            "below says how."
        )
    return out


def _every_pair(result: Comparison, markdown: bool) -> list[str]:
    """Every pair, a table per environment with each side's spread; the summary per
    group; and what only one host measured (--all)."""
    out = [
        "detectable: the smallest change each timing could have called; spread: 99% CI unless "
        "marked."
    ]
    with_commit = len({p.commit for p in result.pairs}) > 1
    headers = ["benchmark", "params", "A", "A spread", "B", "B spread", "B/A", "detectable"]
    headers += ["verdict"]
    beside = result.instructions_beside() or None
    headers += ["instructions"] if beside else []
    cycles = result.cycles_beside() or None
    headers += ["cycles"] if cycles else []
    headers += ["commit"] if with_commit else []
    disagreeing = {id(pair): words for pair, words in result.disagreements()}
    by_env: dict[Environment, list[Pair]] = {}
    for pair in result.pairs:
        by_env.setdefault(pair.env, []).append(pair)
    for env, pairs in by_env.items():
        commits = sorted({p.commit[:8] for p in pairs})
        title = env.label if with_commit else f"{env.label} (commit {commits[0]})"
        out += [
            _heading(title, markdown),
            _table(_pair_rows(pairs, with_commit, beside, cycles, disagreeing), headers, markdown),
        ]
    groups, overall = result.summary()
    if overall.timings:
        by = "per codec, or per benchmark without a codec parameter"
        out.append(_heading(f"Timings: geometric mean of B/A ({by})", markdown))
        summary_headers = ["group", "timings", "B/A", "faster", "slower", "within noise", "other"]
        out.append(_table(_summary_rows(groups, overall), summary_headers, markdown))
    counted = _counted_lines(result, every=True)
    if counted:
        out += [_heading("Instructions and estimated cycles per call", markdown), *counted]
    return out + _one_side_lines(result, markdown)


def _one_side_lines(result: Comparison, markdown: bool) -> list[str]:
    out: list[str] = []
    for host in (result.machine_a, result.machine_b):
        envs, names = result.only_envs[host], result.only_benchmarks[host]
        values = result.only_values[host]
        if envs:
            out.append(
                _heading(f"Environments only {host} ran ({len(envs)}), not compared", markdown)
            )
            out += _envs_text(envs)
        if names:
            out.append(
                _heading(f"Benchmarks only {host} ran ({len(names)}), not compared", markdown)
            )
            out += [f"  - {name}" for name in names]
        if values:
            title = f"Measured only on {host} ({len(values)}), skipped or failed on the other"
            rows = [
                [
                    v.benchmark,
                    params_text(v.params),
                    v.env.label,
                    v.commit[:8],
                    format_value(v.value, v.unit),
                ]
                for v in values
            ]
            out.append(_heading(title, markdown))
            out.append(
                _table(rows, ["benchmark", "params", "environment", "commit", "value"], markdown)
            )
    if result.not_comparable:
        out.append(_heading(f"Not compared ({len(result.not_comparable)})", markdown))
        rows = [
            [v.benchmark, params_text(v.params), v.env.label, v.reason]
            for v in result.not_comparable
        ]
        out.append(_table(rows, ["benchmark", "params", "environment", "why"], markdown))
    return out
