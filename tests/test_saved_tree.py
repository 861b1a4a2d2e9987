"""A results tree written before a change reads the same after it: same values, same verdicts.

tests/data/saved_tree is a small tree written once (by `write_tree`, below) with serkit's
own notes inside its results files: each sample's canary readings before and after it, some
processes in the slow state, a memory canary, the `asv run`s recorded, and host records
that put two runs on one host (judged against one fast canary, each pair's corrected
values at its own slow ratio in its run). What the public entry points make
of it (the tree as read, `serkit compare` between two machines, the report's ranked
verdict) was recorded as literals from the code before the reading was moved into one
module; the saved copy, and one written now, must read to them still.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from results_factory import results_file, write_benchmarks, write_machine

from serkit.compare.comparison import compare
from serkit.compare.json_form import as_json
from serkit.compare.verdict_words import ranking_dict
from serkit.report.runs import latest_runs
from serkit.report.snapshot import snapshot
from serkit.results.asv_runs import RUNS_KEY
from serkit.results.canary import CANARY_KEY, params_key
from serkit.results.host_file import HOST_FILE, write_runs
from serkit.results.tree import ResultsTree, read_tree
from serkit.suite.benchmark_names import DUMPS, LOADS, SIZE

SAVED = Path(__file__).parent / "data" / "saved_tree"
CODECS = ("json", "ujson")
FIXTURES = ("small-dict", "random-dicts-10")
GRID = [[repr(c) for c in CODECS], [repr(f) for f in FIXTURES]]
SUITE = {
    DUMPS: {"type": "time", "unit": "seconds", "grid": GRID, "repeat": 5},
    LOADS: {"type": "time", "unit": "seconds", "grid": GRID, "repeat": 5},
    SIZE: {"type": "track", "unit": "bytes", "grid": GRID},
}
ENV = {"python": "3.11", "requirements": {"ujson": "5.10.0"}}
REF = 20_000  # the fast canary, ns
# Each process's five samples: (value factor, canary factor) per sample. Five wholly fast
# processes, one partly fast (with an unclear reading), two slow throughout, where the
# call slows 1.1x more than the canary.
FAST = [(1.0 + 0.002 * k, 1.0 + 0.01 * k) for k in range(5)]
PARTLY = [(1.0, 1.0), (1.01, 1.05), (1.02, 1.1), (1.98, 1.8), (1.6, 1.3)]
SLOW = [(1.98 + 0.01 * k, 1.8 + 0.01 * k) for k in range(5)]
PROCESSES = [FAST, FAST, FAST, FAST, FAST, PARTLY, SLOW, SLOW]
# Each process's own offset: processes of one pair spread by a few per mille.
OFFSETS = [1.0, 1.004, 0.997, 1.009, 1.002, 0.995, 1.006, 1.001]
# c ran fewer processes: two wholly fast, the partly fast one, one slow.
C_PROCESSES = [0, 1, 5, 6]
# In grid order: (json, small-dict), (json, random-dicts-10), (ujson, small-dict), ...
TIMES = {DUMPS: [10e-6, 40e-6, 5e-6, 20e-6], LOADS: [12e-6, 50e-6, 6e-6, 30e-6]}
SIZES = [1762, 3000, 1500, 2800]
# Each machine: its host's name, its code's speed, and its run's canary speed. a and b
# ran on one host (b's whole run 6 % slower, canary too; its ujson dumps 20 % slower), c
# on another.
MACHINES = {"a": ("vm", 1.0, 1.0), "b": ("vm", 1.06, 1.06), "c": ("other-vm", 1.3, 1.0)}
B_UJSON_DUMPS = 1.2


def _num(x: float) -> float:
    return float(f"{x:.6g}")


def _file(machine: str) -> dict[str, Any]:
    _, speed, canary = MACHINES[machine]
    chosen = C_PROCESSES if machine == "c" else range(len(PROCESSES))
    processes = [[(f * OFFSETS[j], c) for f, c in PROCESSES[j]] for j in chosen]
    results: dict[str, list[float | None]] = {SIZE: list(SIZES)}
    samples: dict[str, list[list[float] | None]] = {}
    rows: dict[str, dict[str, list[Any]]] = {}
    for name, times in TIMES.items():
        results[name], samples[name], rows[name] = [], [], {}
        for i, base in enumerate(times):
            slower = B_UJSON_DUMPS if machine == "b" and name == DUMPS and i >= 2 else 1.0
            value = base * speed * slower
            kept = [_num(value * f) for process in processes for f, _ in process]
            results[name].append(_num(min(kept)))
            samples[name].append(kept)
            notes = []
            for process in processes:
                intervals = [_num(value * f) for f, _ in process]
                readings = [
                    [round(REF * c * canary), round(REF * c * canary * 1.01)] for _, c in process
                ]
                memory = [[30_000 + 100 * k, 30_050 + 100 * k] for k in range(len(process))]
                notes.append([intervals, readings] + ([memory] if machine == "a" else []))
            codec, fixture = GRID[0][i // 2], GRID[1][i % 2]
            rows[name][params_key([codec, fixture])] = notes
    data = results_file(machine, results, env=ENV, benchmarks=SUITE, samples=samples)
    data[CANARY_KEY] = {"version": 2, "rows": rows}
    data[RUNS_KEY] = [{"wall_s": 120.0, "recorded_s": 100.0, "build_s": 5.0, "waited_s": 3.5}]
    return data


def write_tree(root: Path) -> Path:
    """The saved tree: machines a, b (one host) and c (another), one results file each."""
    write_benchmarks(root, SUITE)
    for machine, (hostname, _, _) in MACHINES.items():
        folder = write_machine(root, machine, [_file(machine)])
        (path,) = folder.glob("*-*.json")
        run = {"hostname": hostname, "kernel": "6.1", "cpu_model": "EPYC", "results": [path.name]}
        write_runs(folder / HOST_FILE, machine, [run])
    return root


def _r(x: Any) -> Any:
    """Numbers to 10 significant digits, so that the order of a sum cannot move them."""
    if isinstance(x, float):
        return float(f"{x:.10g}")
    if isinstance(x, (list, tuple)):
        return [_r(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _r(v) for k, v in x.items()}
    return x


def tree_reading(tree: ResultsTree) -> dict[str, Any]:
    """Each timed measurement's processes, with how each was taken and its weight, and
    what judged them; each machine's state in words."""
    out: dict[str, Any] = {}
    for name, machine in sorted(tree.machines.items()):
        for m in sorted(machine.measurements, key=lambda m: (m.benchmark, m.params)):
            if tree.benchmark(m.benchmark).kind != "time":
                continue
            key = f"{name} {m.benchmark.rsplit('.', 1)[-1]} {','.join(m.params)}"
            out[key] = _r(
                {
                    "value": m.value,
                    "processes": m.process_values,
                    "how": [p.how for p in m.processes],
                    "weights": m.weights,
                    "reference": m.canary_reference,
                    "slow_ratio": m.slow_ratio,
                }
            )
        out[f"{name} state"] = tree.state_share(machine.measurements).in_words()
    return out


def comparison(tree: ResultsTree, a: str, b: str) -> dict[str, Any]:
    """`serkit compare`'s answer between machines a and b, as its JSON gives it (less the
    rules' words, which say how, not what; and the tree's place, which varies)."""
    result = as_json(compare(tree, a, b))
    kept = {k: v for k, v in result.items() if not k.endswith("_rule") and k != "schema"}
    return _r(json.loads(json.dumps(kept).replace(str(tree.root), "<root>")))


def report(tree: ResultsTree) -> dict[str, Any]:
    """The report's ranked verdict on each fixture of each machine's newest run, with the
    times and processes its table shows."""
    out: dict[str, Any] = {}
    for run in latest_runs(tree):
        for fixture in FIXTURES:
            table = snapshot(run, fixture)
            rows = {
                row.codec: {"times": row.times, "processes": row.processes, "weights": row.weights}
                for row in table.rows
                if row.measured
            }
            out[f"{run.machine} {fixture}"] = _r(
                {"verdict": ranking_dict(table.verdict), "rows": rows}
            )
    return out


def everything(root: Path) -> dict[str, Any]:
    tree = read_tree(root)
    return {
        "tree": tree_reading(tree),
        "a-b": comparison(read_tree(root), "a", "b"),
        "a-c": comparison(read_tree(root), "a", "c"),
        "report": report(read_tree(root)),
    }


EXPECTED: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "saved_tree.json").read_text()
)


@pytest.mark.parametrize("source", ["saved", "written now"])
def test_a_saved_tree_reads_as_it_did(tmp_path: Path, source: str) -> None:
    root = tmp_path / "results"
    if source == "saved":
        shutil.copytree(SAVED, root)
    else:
        write_tree(root)
    found = json.loads(json.dumps(everything(root)))
    for part in EXPECTED:
        assert found[part] == EXPECTED[part], part


def test_the_saved_tree_exercises_what_judging_a_process_does() -> None:
    """The saved tree is worth keeping only while it holds what judging depends on."""
    tree = EXPECTED["tree"]
    hows = {how for key, v in tree.items() if not key.endswith("state") for how in v["how"]}
    assert hows == {"fast", "corrected"}
    assert any(v.get("slow_ratio") for v in tree.values() if isinstance(v, dict))


def test_the_saved_trees_verdicts_quote_their_tables(tmp_path: Path) -> None:
    """Real verdicts from saved results: each group's value is the table's dumps + loads of
    its leader, each margin the ratio of two of those, and the words quote them."""
    from serkit.compare.ranking import TIE_SPAN
    from serkit.compare.verdict_words import ranking_lines
    from serkit.units import seconds

    root = tmp_path / "results"
    shutil.copytree(SAVED, root)
    checked = 0
    for run in latest_runs(read_tree(root)):
        for fixture in FIXTURES:
            table = snapshot(run, fixture)
            times = {row.codec: row.times for row in table.rows}
            (tier,) = table.verdict.tiers
            sums = [times[g.codecs[0]]["dumps"] + times[g.codecs[0]]["loads"] for g in tier.groups]
            assert [g.median for g in tier.groups] == sums
            assert [m.ratio for m in tier.margins] == [b / a for a, b in zip(sums, sums[1:])]
            assert all(g.within is None or g.within <= TIE_SPAN for g in tier.groups if g.resolved)
            assert f"({seconds(sums[0])})" in ranking_lines(table.verdict)[0]
            checked += 1
    assert checked == 6
