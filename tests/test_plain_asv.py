"""A plain `asv run` judged as `serkit bench`'s runs are (issue 55, point 2).

Its timed processes note their canary readings in the results tree's default folder
(serkit.suite.canary.notes_folder, serkit.checkout.plain_notes_dir), and serkit reads
them with its results files, matched to their samples (serkit.results.canary.matched_notes);
asv's own pages in the report show the values serkit judged
(serkit.results.publishable).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from results_factory import COMMIT, GRID, per_process_tree, results_file, two_hosts

from serkit.checkout import plain_notes_dir
from serkit.compare.comparison import compare
from serkit.compare.verdicts import SLOWER
from serkit.results.canary import params_key
from serkit.results.publishable import JUDGED_CODE, VALUES_KEY, publishable_copy
from serkit.results.tree import read_tree
from serkit.suite.budget import NOTES_ENV
from serkit.suite.canary import RESULTS_ENV, notes_folder

REF = 20_000.0  # the fast canary, ns
SLOW_FACTOR = 1.8  # this VM's slow state
DUMPS = "bench_time.Dumps.time_dumps"
NUMBER = 7  # asv's `number`: each note's interval is a sample times it


def _env_name() -> str:
    (data,) = [results_file("a", {DUMPS: [1.0] * 4})]
    return str(data["env_name"])


def _note_processes(folder: Path, tag: str, samples: list[float], factors: list[float]) -> None:
    """One note a process (one sample each) for every pair of the grid, as a plain run's
    timed processes write them: its interval, and the canary before and after it."""
    folder.mkdir(parents=True, exist_ok=True)
    for codec in GRID[0]:
        for fixture in GRID[1]:
            for i, (sample, factor) in enumerate(zip(samples, factors)):
                note = {
                    "benchmark": DUMPS,
                    "params": [codec, fixture],
                    "t": [sample * NUMBER],
                    "canary": [[REF * factor, REF * factor]],
                }
                name = f"canary-{tag}-{codec.strip(chr(39))}-{fixture.strip(chr(39))}-{i}.note"
                (folder / name).write_text(json.dumps(note))


def test_a_plain_run_notes_in_its_results_tree_by_commit_and_environment(
    tmp_path: Path,
) -> None:
    asv = {"ASV_COMMIT": COMMIT, "ASV_ENV_NAME": "py3.11-orjson", RESULTS_ENV: str(tmp_path)}
    assert notes_folder(asv) == plain_notes_dir(tmp_path, COMMIT, "py3.11-orjson")
    # serkit's environment type names the results tree; else it is the checkout's.
    checkout = {"ASV_COMMIT": COMMIT, "ASV_ENV_NAME": "e", "ASV_CONF_DIR": str(tmp_path)}
    assert notes_folder(checkout) == plain_notes_dir(tmp_path / ".asv" / "results", COMMIT, "e")
    # `serkit bench` names its own folder; outside asv there is none.
    assert notes_folder({**asv, NOTES_ENV: str(tmp_path / "bench")}) == tmp_path / "bench"
    assert notes_folder({}) is None
    # Another environment, or another commit, is another folder.
    folders = {plain_notes_dir(tmp_path, c, e) for c in ("a" * 40, "b" * 40) for e in "xy"}
    assert len(folders) == 4


def test_a_plain_asv_tree_is_judged_by_the_notes_in_its_default_folder(tmp_path: Path) -> None:
    """Two plain runs of one commit and environment under two machine names, a and b: one
    notes folder, which holds both runs' notes. b timed most processes in the slow state.
    Each file takes only its own notes, so b is judged by its state and agrees with a."""
    fast = [10e-6 * (1 + 0.01 * i) for i in range(6)]
    factors = [1.0, *[SLOW_FACTOR] * 5]  # one process fast: the fast canary
    slow = [v * f for v, f in zip(fast, factors)]
    per_process_tree(tmp_path, [fast] * 4, [slow] * 4)
    raw = compare(read_tree(tmp_path), "a", "b")
    assert all(p.ratio == pytest.approx(1.8) for p in raw.pairs)  # no notes: asv's values

    folder = plain_notes_dir(tmp_path, COMMIT, _env_name())
    _note_processes(folder, "a", fast, [1.0] * len(fast))
    _note_processes(folder, "b", slow, factors)
    # A third run's notes, whose intervals are no sample of either file: never taken.
    _note_processes(folder, "old", [v * 1.37 for v in fast], [SLOW_FACTOR] * len(fast))
    # ... one of which took two samples a process, as another plan would.
    stale = {
        "benchmark": DUMPS,
        "params": [GRID[0][0], GRID[1][0]],
        "t": [3.1234567e-3, 4.2345678e-3],
    }
    (folder / "canary-old-two.note").write_text(json.dumps({**stale, "canary": [[REF, REF]] * 2}))
    (folder / "canary-torn.note").write_text('{"t": [1')  # a process cut short

    tree = read_tree(tmp_path)
    result = compare(tree, "a", "b")
    assert not [p for p in result.pairs if p.verdict == SLOWER]
    assert all(p.ratio == pytest.approx(1.0, abs=0.03) for p in result.pairs)
    # Each run's state, recorded: b's 20 slow samples of 24, a's none.
    assert result.states["b"].startswith(
        "slow state in 83% of 24 samples, where the canary took x1.80 its fast time"
    )
    assert result.states["a"] == "fast state throughout (24 samples)"
    b = [m for m in tree.machines["b"].measurements if m.benchmark == DUMPS]
    assert all(len(m.processes) == len(fast) and m.samples_per_process == 1 for m in b)
    assert all(m.canary == tuple(REF * f for f in factors) for m in b)


def test_a_results_file_with_notes_inside_takes_no_others(tmp_path: Path) -> None:
    """A file `serkit bench` wrote carries its notes: the default folder is not read."""
    fast = [10e-6 * (1 + 0.01 * i) for i in range(6)]
    per_process_tree(tmp_path, [fast] * 4, [fast] * 4)
    (path,) = (tmp_path / "a").glob("*-*.json")
    data = json.loads(path.read_text())
    key = params_key([GRID[0][0], GRID[1][0]])
    rows = [[[t * NUMBER], [[REF, REF]]] for t in fast]
    data["serkit_canary"] = {"version": 2, "rows": {DUMPS: {key: rows}}}
    path.write_text(json.dumps(data))
    _note_processes(plain_notes_dir(tmp_path, COMMIT, _env_name()), "x", fast, [2.0] * 6)
    a = {m.params: m for m in read_tree(tmp_path).machines["a"].measurements}
    assert a[(GRID[0][0], GRID[1][0])].canary == (REF,) * 6  # its own, fast
    assert a[(GRID[0][1], GRID[1][0])].canary == ()  # none inside: no folder's taken


def _copied(into: Path, machine: str) -> dict[str, Any]:
    (path,) = (p for p in (into / machine).glob("*.json") if p.name != "machine.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _column(data: dict[str, Any], name: str, column: str) -> list[Any]:
    row = dict(zip(data["result_columns"], data["results"][name]))
    values: list[Any] = row[column]
    return values


def test_asv_pages_read_the_values_serkit_judged(tmp_path: Path) -> None:
    """The copy `asv publish` reads holds each timing as serkit judged it, not asv's median
    of every sample, and says so; a value with no processes keeps asv's."""
    fast = [10e-6 * (1 + 0.01 * i) for i in range(6)]
    factors = [1.0, 1.0, *[SLOW_FACTOR] * 4]
    slow = [v * f for v, f in zip(fast, factors)]
    results = tmp_path / "results"
    per_process_tree(results, [fast] * 4, [slow] * 4)
    _note_processes(plain_notes_dir(results, COMMIT, _env_name()), "b", slow, factors)
    tree = read_tree(results)
    into = tmp_path / "copy"
    assert publishable_copy(tree, into) == []

    b = {m.params: m for m in tree.machines["b"].measurements if m.benchmark == DUMPS}
    copied = _copied(into, "b")
    judged = _column(copied, DUMPS, "result")
    asv_values = [statistics.median(slow)] * 4  # what asv recorded: slow samples and all
    assert [b[p].judged_value for p in b] == judged
    assert all(j == pytest.approx(statistics.median(fast), rel=0.03) for j in judged)
    assert all(j < a / 1.3 for j, a in zip(judged, asv_values))
    # Its interval and quartiles are its processes' too, around the value shown.
    low, high = _column(copied, DUMPS, "stats_ci_99_a"), _column(copied, DUMPS, "stats_ci_99_b")
    assert all(lo < j < hi for lo, j, hi in zip(low, judged, high))
    q25, q75 = _column(copied, DUMPS, "stats_q_25"), _column(copied, DUMPS, "stats_q_75")
    assert all(lo <= j <= hi for lo, j, hi in zip(q25, judged, q75))
    # Said where a reader of the copy and asv's pages find it.
    assert VALUES_KEY in copied and "judged" in copied[VALUES_KEY]
    described = json.loads((into / "benchmarks.json").read_text())
    assert described[DUMPS]["code"].startswith(JUDGED_CODE.split(":")[0])
    # The original results file is untouched: asv's values stay asv's.
    (source,) = (results / "b").glob("*-*.json")
    original = json.loads(source.read_text())
    assert _column(original, DUMPS, "result") == pytest.approx(asv_values)


def test_a_copy_without_processes_keeps_asvs_values(tmp_path: Path) -> None:
    """Results asv kept no samples of: nothing judged, nothing put in, nothing said."""
    two_hosts(tmp_path / "results")
    tree = read_tree(tmp_path / "results")
    publishable_copy(tree, tmp_path / "copy")
    copied = _copied(tmp_path / "copy", "a")
    source = next(p for p in (tmp_path / "results" / "a").glob("*-*.json"))
    assert copied["results"] == json.loads(source.read_text())["results"]
    assert VALUES_KEY not in copied
    described = json.loads((tmp_path / "copy" / "benchmarks.json").read_text())
    assert not any(
        str(info.get("code", "")).startswith("# Values shown")
        for info in described.values()
        if isinstance(info, dict)
    )


def test_a_plain_run_keeps_every_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """serkit's asv plugin keeps the samples of a plain run's last round, as
    `--record-samples` does: without them its notes would match nothing."""
    from serkit.run import asv_env

    seen: dict[str, Any] = {}
    monkeypatch.setattr(asv_env, "_add_result", lambda self, *a, **kw: seen.update(kw))
    asv_env.add_result_with_samples(object(), "bench", {}, record_samples=False)
    assert seen["record_samples"] is True


def test_serkits_environment_tells_its_processes_where_the_results_go(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """asv passes its environment's ASV_ variables to every benchmark process: serkit's
    environment type adds the config's results tree, where the notes then go."""
    from types import SimpleNamespace

    from asv.plugins.virtualenv import Virtualenv

    from serkit.run import asv_env

    def made(self: Any, conf: Any, *args: Any) -> None:  # asv's own, without a Python
        self._global_env_vars = {"ASV": "true"}

    monkeypatch.setattr(Virtualenv, "__init__", made)
    monkeypatch.chdir(tmp_path)  # asv runs in its config's folder: relative paths from it
    env = asv_env.OneCallVirtualenv(SimpleNamespace(results_dir="out/results"), "3.11", {}, {})
    assert env._global_env_vars[RESULTS_ENV] == str(tmp_path / "out" / "results")
