"""How `serkit compare` shows a comparison: a text table, Markdown, or documented JSON."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from tabulate import tabulate

from serkit.compare.comparison import COMMIT_RULE, SCHEMA, Comparison, GroupSummary, OneSide, Pair
from serkit.compare.verdicts import (
    CI_99,
    CYCLES_RULE,
    INSTRUCTIONS_RULE,
    NOISE_RULE,
    SIZE_MISMATCH,
    spreads,
)
from serkit.results.noise import POWER_NOT_MEASURED, NoNoise, PowerRecord
from serkit.results.tree import Environment, Interval, Measurement
from serkit.sample_speed import STATE_RULE
from serkit.stats import spread
from serkit.text import markdown_text, terminal
from serkit.units import bytes_exact, decimal, percent
from serkit.units import format_value as format_value  # re-exported: the CLI imports it here


def _interval_text(interval: Interval | None, unit: str) -> str:
    if interval is None:
        return "-"
    return f"{format_value(interval[0], unit)} to {format_value(interval[1], unit)}"


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(str(v) for v in params.values())


# --- JSON ------------------------------------------------------------------------------


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


def _spread_json(pair: Pair, m: Measurement, judged: Sequence[float]) -> dict[str, Any]:
    return {
        "ci_99": list(m.ci_99) if m.ci_99 else None,
        "iqr": list(m.iqr) if m.iqr else None,
        "processes": list(m.process_values) or None,  # one value per process, seconds
        "judged": list(judged) or None,  # the processes the value and verdict come from
        "asv_value": m.value,  # asv's median of every sample
    }


def _beside_json(counted: Pair | None) -> dict[str, Any] | None:
    if counted is None:
        return None
    return {
        "a": counted.a.value,
        "b": counted.b.value,
        "ratio": counted.ratio,
        "verdict": counted.verdict,
    }


def beside_text(counted: Pair | None) -> str:
    """A timing's instruction count between the hosts: "same", or the change and its verdict."""
    if counted is None or counted.ratio is None:
        return "-"
    if counted.verdict == "same":
        return "same"
    return f"{(counted.ratio - 1) * 100:+.2f} % ({counted.verdict})"


def _pair_json(
    pair: Pair,
    counted: Pair | None = None,
    cycles: Pair | None = None,
    disagrees: str | None = None,
) -> dict[str, Any]:
    return {
        "benchmark": pair.benchmark.name,
        "params": pair.params,
        "env": pair.env.as_dict(),
        "commit": pair.commit,
        "kind": pair.benchmark.kind,
        "unit": pair.benchmark.unit,
        "a": pair.value_a,
        "b": pair.value_b,
        "ratio": pair.ratio,
        "a_spread": _spread_json(pair, pair.a, pair.judged[0]),
        "b_spread": _spread_json(pair, pair.b, pair.judged[1]),
        "verdict": pair.verdict,
        "detectable": pair.detectable,
        "multimodal": pair.multimodal,
        "group": pair.group,
        # The same call's instruction count on both hosts, where counted (a timing only).
        "instructions": _beside_json(counted),
        # The same call's estimated cycles on both hosts, where counted (a timing only),
        # and, where they contradict the time's verdict, why in words (else null).
        "cycles": _beside_json(cycles),
        "disagreement": disagrees,
    }


def _one_side_json(entry: OneSide) -> dict[str, Any]:
    out = {
        "benchmark": entry.benchmark,
        "params": entry.params,
        "env": entry.env.as_dict(),
        "commit": entry.commit,
    }
    if entry.reason:
        return {**out, "reason": entry.reason}
    return {**out, "value": entry.value, "unit": entry.unit}


def _group_json(summary: GroupSummary) -> dict[str, Any]:
    return {
        "group": summary.group,
        "timings": summary.timings,
        "geomean": summary.geomean,
        "verdicts": summary.verdicts,
    }


def as_json(result: Comparison) -> dict[str, Any]:
    """The stable JSON form; its keys are documented in the README (`serkit compare`)."""
    groups, overall = result.summary()
    beside, cycles = result.instructions_beside(), result.cycles_beside()
    disagreeing = {id(pair): words for pair, words in result.disagreements()}
    sides = {}
    for host in (result.machine_a, result.machine_b):
        sides[host] = {
            "environments": [env.as_dict() for env in result.only_envs[host]],
            "benchmarks": result.only_benchmarks[host],
            "values": [_one_side_json(v) for v in result.only_values[host]],
        }
    return {
        "schema": SCHEMA,
        "machine_a": result.machine_a,
        "machine_b": result.machine_b,
        "commit": result.commit,
        "commit_rule": f"commit {result.commit}" if result.commit else COMMIT_RULE,
        "noise_rule": NOISE_RULE,
        "noise_floor": result.floor,
        "power": {host: power_text(record) for host, record in result.power.items()},
        "machine_state": result.states,
        "memory_shift": result.memory_shift,
        "state_rule": STATE_RULE,
        "instructions_rule": INSTRUCTIONS_RULE,
        "instructions": _group_json(result.instruction_summary()),
        "cycles_rule": CYCLES_RULE,
        "cycles": _group_json(result.cycle_summary()),
        "disagreements": len(disagreeing),
        "pairs": [
            _pair_json(p, beside.get(id(p)), cycles.get(id(p)), disagreeing.get(id(p)))
            for p in result.pairs
        ],
        "summary": {"groups": [_group_json(g) for g in groups], "overall": _group_json(overall)},
        "size_mismatches": len(result.size_mismatches),
        "only_a": sides[result.machine_a],
        "only_b": sides[result.machine_b],
        "not_comparable": [_one_side_json(v) for v in result.not_comparable],
        "warnings": warnings_of(result),
    }


# --- table and Markdown ----------------------------------------------------------------


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
            _params_text(p.params),
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
            f"  - {p.benchmark.name} [{_params_text(p.params)}] in {p.env.label}: "
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


def render(result: Comparison, markdown: bool = False) -> str:
    """The comparison as text: a table per environment, the summary, then one-sided values."""
    a, b = result.machine_a, result.machine_b
    rule = f"commit {result.commit[:8]}" if result.commit else COMMIT_RULE
    out = [
        f"A = {a}, B = {b}. B/A below 1: B is faster (or smaller).",
        f"Commit: {rule}.",
        f"Noise: {NOISE_RULE}. Noise floor: {percent(result.floor)}.",
        *(
            f"What verdicts on {host} can see: {power_text(record)}."
            for host, record in result.power.items()
        ),
        *(f"Machine state on {host}: {words}." for host, words in result.states.items()),
        *([f"Between the runs: {result.memory_shift}."] if result.memory_shift else []),
        f"Timings: {STATE_RULE}.",
        "detectable: the smallest change each timing could have called; spread: 99% CI unless "
        "marked.",
    ]
    counted = result.instruction_summary()
    if counted.timings:
        out.append(
            f"Instructions per call: {INSTRUCTIONS_RULE}. Beside each timing, its count: where "
            "the time is within noise, the count still says whether the work moved."
        )
    cycled = result.cycle_summary()
    if cycled.timings:
        out.append(
            f"Estimated cycles per call: {CYCLES_RULE}. Beside each timing, its cycles: where "
            "time and cycles disagree about a change, the row says DISAGREES and the list "
            "below says how."
        )
    out += _mismatch_lines(result)
    if markdown:  # each note its own paragraph
        out = [line if line.startswith("  - ") else line + "\n" for line in out]
    with_commit = len({p.commit for p in result.pairs}) > 1
    headers = ["benchmark", "params", "A", "A spread", "B", "B spread", "B/A", "detectable"]
    headers += ["verdict"]
    beside = result.instructions_beside() or None
    headers += ["instructions"] if beside else []
    cycles = result.cycles_beside() or None
    headers += ["cycles"] if cycles else []
    headers += ["commit"] if with_commit else []
    disagreements = result.disagreements()
    disagreeing = {id(pair): words for pair, words in disagreements}
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
    if counted.timings:
        verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counted.verdicts.items()))
        out.append(_heading("Instructions per call", markdown))
        out.append(
            f"{counted.timings} counts compared, B/A geometric mean {decimal(counted.geomean)}: "
            f"{verdicts}."
        )
    if cycled.timings:
        verdicts = ", ".join(f"{n} {v}" for v, n in sorted(cycled.verdicts.items()))
        out.append(_heading("Estimated cycles per call", markdown))
        out.append(
            f"{cycled.timings} compared, B/A geometric mean {decimal(cycled.geomean)}: {verdicts}."
        )
        out += disagreement_lines(disagreements)
    out += _one_side_lines(result, markdown)
    text = "\n".join(out) + "\n"
    # Markdown passes raw HTML through: a host's or environment's name could carry markup.
    return markdown_text(text) if markdown else terminal(text)


def disagreement_lines(disagreements: Sequence[tuple[Pair, str]]) -> list[str]:
    """Each timing whose simulated cycles contradict its verdict, in words; or that none do."""
    if not disagreements:
        return ["Time and simulated cycles agree on every timing that has both."]
    lines = [f"Time and simulated cycles disagree on {len(disagreements)} timing(s):"]
    for pair, words in disagreements:
        lines.append(f"  - {pair.benchmark.name} [{_params_text(pair.params)}]: {words}")
    return lines


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
                    _params_text(v.params),
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
            [v.benchmark, _params_text(v.params), v.env.label, v.reason]
            for v in result.not_comparable
        ]
        out.append(_table(rows, ["benchmark", "params", "environment", "why"], markdown))
    return out
