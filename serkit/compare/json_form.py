"""A comparison's stable JSON form, `serkit compare --json`: its keys are documented in the
README (`serkit compare`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from serkit.compare.comparison import COMMIT_RULE, SCHEMA, Comparison, GroupSummary, OneSide, Pair
from serkit.compare.in_words import power_text, warnings_of
from serkit.compare.verdicts import CYCLES_RULE, INSTRUCTIONS_RULE, NOISE_RULE
from serkit.results.tree import Measurement
from serkit.sample_speed import STATE_RULE


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
