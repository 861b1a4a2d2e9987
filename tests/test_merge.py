"""serkit/results/merge.py: many results trees into one store, safely."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from results_factory import (
    COMMIT,
    ENV,
    RUNNERS,
    SUITE,
    results_file,
    shard_results,
    values,
    write_benchmarks,
    write_results,
)

from serkit.results.host_file import HOST_FILE, read_runs
from serkit.results.merge import MergeError, merge
from serkit.results.tree import read_tree
from serkit.run.runner import discover_benchmarks

ROOT = Path(__file__).resolve().parents[1]
X86, ARM, MAC = RUNNERS


def fake_discover(folder: Path) -> Path:
    """The suite's benchmarks.json, as discovery would write it (the real one takes 3 s)."""
    write_benchmarks(folder, SUITE)
    return folder / "benchmarks.json"


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def values_of(root: Path) -> set[tuple[object, ...]]:
    """Every value of the tree, as (machine, commit, env, benchmark, params, value)."""
    tree = read_tree(root)
    assert not tree.warnings
    return {
        (m.machine, m.commit, m.env, m.benchmark, m.params, m.value)
        for machine in tree.machines.values()
        for m in machine.measurements
    }


def test_shards_of_two_runner_kinds_merge_into_one_store(tmp_path: Path) -> None:
    sources = [
        shard_results(tmp_path / f"artifact-{machine[:6]}-{k}", machine, k, 2)
        for machine in (X86, ARM)
        for k in (1, 2)
    ]
    store = tmp_path / "store"
    result = merge(sources, store, fake_discover)
    assert result.machines == sorted([X86, ARM]) and len(result.added) == 8
    assert set().union(*(values_of(s) for s in sources)) == values_of(store)  # every value
    for machine in (X86, ARM):
        runs = read_runs(store / machine, [])
        assert runs is not None and [r["shard"] for r in runs] == ["1/2", "2/2"]


def test_written_files_are_as_readable_as_any_new_file(tmp_path: Path) -> None:
    import os
    import stat

    store = tmp_path / "store"
    merge([shard_results(tmp_path / "s1", X86, 1, 2)], store, fake_discover)
    umask = os.umask(0)
    os.umask(umask)
    for path in (store / X86).iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path.name


def test_merging_twice_changes_nothing(tmp_path: Path) -> None:
    sources = [shard_results(tmp_path / f"s{k}", X86, k, 2) for k in (1, 2)]
    store = tmp_path / "store"
    merge(sources, store, fake_discover)
    before = snapshot(store)
    again = merge(sources, store, fake_discover)
    assert snapshot(store) == before
    assert not again.changed and again.identical == 4
    merge([store], store, fake_discover)  # the store into itself: nothing either
    assert snapshot(store) == before


def test_benchmarks_json_comes_from_the_suite_never_a_source(tmp_path: Path) -> None:
    source = shard_results(tmp_path / "s1", X86, 1, 2)
    assert "stale.Old.time_gone" in (source / "benchmarks.json").read_text()
    store = tmp_path / "store"
    result = merge([source], store, fake_discover)
    assert result.benchmarks_rewritten
    written = json.loads((store / "benchmarks.json").read_text())
    assert "stale.Old.time_gone" not in written and set(SUITE) <= set(written)


@pytest.mark.slow
def test_the_real_discovery_writes_this_suites_benchmarks(tmp_path: Path) -> None:
    path = discover_benchmarks(ROOT, tmp_path)
    described = json.loads(path.read_text())
    assert "bench_time.Dumps.time_dumps" in described
    assert described["bench_time.Dumps.time_dumps"]["param_names"][0] == "codec"


def test_a_different_result_of_the_same_run_is_refused(tmp_path: Path) -> None:
    first = tmp_path / "first"
    write_results(first, "box", [results_file("box", values())])
    store = tmp_path / "store"
    merge([first], store, fake_discover)
    before = snapshot(store)
    # A new machine that would merge fine, then the conflict: nothing at all is written.
    fine = shard_results(tmp_path / "fine", MAC, 1, 2)
    rerun = tmp_path / "rerun"
    # Other values under the same run's moment (asv's started_at): not another run.
    write_results(rerun, "box", [results_file("box", values(time_factor=1.1))])
    with pytest.raises(MergeError) as caught:
        merge([fine, rerun], store, fake_discover)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"refusing to merge {rerun / 'box'}")
    assert f"the same run of machine box, commit {COMMIT[:12]}, environment virtualenv" in message
    assert "run at 20231114T221320Z" in message and "nothing was written" in message
    assert snapshot(store) == before


DAY_MS = 86_400_000


def test_three_runs_of_one_commit_on_three_days_are_all_kept(tmp_path: Path) -> None:
    """What issue 23 asks: runs of an unchanged commit are points, never conflicts."""
    sources = []
    for day in range(3):
        source = tmp_path / f"week-{day}"
        data = results_file(
            "box", values(1 + day / 10), started_at=1_700_000_000_000 + day * 7 * DAY_MS
        )
        write_results(source, "box", [data])  # under asv's one name for all three
        sources.append(source)
    store = tmp_path / "store"
    merge(sources[:1], store, fake_discover)
    result = merge(sources[1:], store, fake_discover)  # a week later, and the week after
    names = sorted(p.name for p in (store / "box").glob("1234*.json"))
    assert [name.rsplit("@", 1)[1] for name in names] == [
        "20231114T221320Z.json",
        "20231121T221320Z.json",
        "20231128T221320Z.json",
    ]
    assert len(result.added) == 2 and not result.warnings
    tree = read_tree(store)
    timings = sorted(
        m.value for m in tree.machines["box"].measurements if m.benchmark.endswith("startup")
    )
    assert timings == pytest.approx([0.02, 0.022, 0.024])
    assert merge(sources, store, fake_discover).identical == 3  # and again: nothing new


def test_a_run_merged_before_runs_were_filed_is_not_added_twice(tmp_path: Path) -> None:
    source = tmp_path / "source"
    folder = write_results(source, "box", [results_file("box", values())])
    store = tmp_path / "store"
    (name,) = [p.name for p in folder.glob("1234*.json")]
    (store / "box").mkdir(parents=True)
    (store / "box" / name).write_bytes((folder / name).read_bytes())  # as an older merge did
    result = merge([source], store, fake_discover)
    assert result.identical == 1 and not result.added


def test_two_sources_that_disagree_are_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_results(a, "box", [results_file("box", values())])
    write_results(b, "box", [results_file("box", values(time_factor=2.0))])
    with pytest.raises(MergeError, match="holds a different result"):
        merge([a, b], tmp_path / "store", fake_discover)
    assert not (tmp_path / "store").exists()


def test_the_same_result_written_differently_is_not_a_conflict(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    data = results_file("box", values())
    folder = write_results(a, "box", [data])
    write_results(b, "box", [data])
    (name,) = [p.name for p in folder.glob("1234*.json")]
    (b / "box" / name).write_text(json.dumps(data, indent=4, sort_keys=True))  # asv's layout
    result = merge([a, b], tmp_path / "store", fake_discover)
    # Filed under its run's moment (asv's started_at: 1,700,000,000,000 ms).
    assert [str(p) for p in result.added] == [f"box/{name[:-5]}@20231114T221320Z.json"]


def test_a_broken_results_file_is_refused_by_name(tmp_path: Path) -> None:
    source = tmp_path / "s"
    folder = write_results(source, "box", [results_file("box", values())])
    (broken,) = folder.glob("1234*.json")
    broken.write_text(broken.read_text()[:100])
    with pytest.raises(MergeError, match=f"refusing to merge {broken}: not valid JSON"):
        merge([source], tmp_path / "store", fake_discover)
    other = tmp_path / "other"
    write_results(other, "box", [results_file("elsewhere", values())])
    with pytest.raises(MergeError, match="holds results of machine 'elsewhere', not 'box'"):
        merge([other], tmp_path / "store", fake_discover)


def test_a_failed_discovery_writes_nothing(tmp_path: Path) -> None:
    def failing(folder: Path) -> Path:
        raise MergeError("asv could not discover the suite's benchmarks")

    with pytest.raises(MergeError, match="discover"):
        merge([shard_results(tmp_path / "s", X86, 1, 2)], tmp_path / "store", failing)
    assert not (tmp_path / "store").exists()


def test_sources_that_are_not_results(tmp_path: Path) -> None:
    with pytest.raises(MergeError, match="no results folder at"):
        merge([tmp_path / "missing"], tmp_path / "store", fake_discover)
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("hi")
    result = merge([tmp_path / "empty", tmp_path / "notes"], tmp_path / "store", fake_discover)
    assert any("holds no asv results" in w for w in result.warnings)
    assert any("not asv results: README.md" in w for w in result.warnings)


def test_the_last_profile_wins_and_the_change_is_said(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_results(a, "box", [results_file("box", values())], {"os": "Linux 6.1"})
    write_results(b, "box", [], {"os": "Linux 6.8"})
    store = tmp_path / "store"
    merge([a], store, fake_discover)
    result = merge([b], store, fake_discover)
    assert json.loads((store / "box" / "machine.json").read_text())["os"] == "Linux 6.8"
    assert any("machine profile replaced" in w and "changed: os" in w for w in result.warnings)


def test_host_runs_of_old_and_new_format_are_kept(tmp_path: Path) -> None:
    import yaml

    old = tmp_path / "old"
    folder = write_results(old, X86, [])
    (folder / HOST_FILE).write_text(
        yaml.safe_dump(
            {"serkit_host_format": 1, "machine": X86, "recorded_at": "2025", "cpu_model": "x"}
        )
    )
    store = tmp_path / "store"
    merge([old, shard_results(tmp_path / "new", X86, 1, 2)], store, fake_discover)
    runs = read_runs(store / X86, [])
    assert runs is not None and runs[0]["recorded_at"] == "2025" and len(runs) == 2


# --- properties over many random splits ------------------------------------------------------

FILES = [
    results_file(machine, values(1 + i / 10), env={**ENV, "python": python}, commit=commit)
    for i, (machine, python, commit) in enumerate(
        (m, p, c) for m in ("m1", "m2") for p in ("3.11", "3.12") for c in (COMMIT, "f" * 40)
    )
]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.sampled_from(range(len(FILES))), max_size=8), min_size=1, max_size=4))
def test_any_split_merges_to_the_union_and_merging_again_is_a_no_op(
    split: list[list[int]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        sources = []
        for i, picked in enumerate(split):
            source = base / f"src{i}"
            source.mkdir()
            for index in picked:
                data = FILES[index]
                machine = data["params"]["machine"]
                write_results(source, machine, [data])
            sources.append(source)
        store = base / "store"
        merge(sources, store, fake_discover)
        wanted = {FILES[i]["params"]["machine"] for p in split for i in p}
        assert {p.name for p in store.iterdir() if p.is_dir()} == wanted
        assert values_of(store) == set().union(*(values_of(s) for s in sources))
        before = snapshot(store)
        merge(list(reversed(sources)), store, fake_discover)
        assert snapshot(store) == before


# --- hostile trees ---------------------------------------------------------------------------


def test_links_in_a_source_are_left_out_saying_so_and_never_copied(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"not": "yours"}')
    source = shard_results(tmp_path / "artifact", X86, 1, 2)
    folder = source / X86
    (folder / "abs.json").symlink_to(secret)
    (folder / "up.json").symlink_to(Path("..") / ".." / "secret.json")
    outside = tmp_path / "outside-machine"
    outside.mkdir()
    (outside / "machine.json").write_text('{"machine": "intruder"}')
    (source / "intruder").symlink_to(outside)
    store = tmp_path / "store"
    result = merge([source], store, fake_discover)
    assert result.machines == [X86]
    assert not (store / "intruder").exists()
    assert not any(p.is_symlink() for p in store.rglob("*"))
    assert not any(b'"not": "yours"' in p.read_bytes() for p in store.rglob("*") if p.is_file())
    linked = [w for w in result.warnings if "symbolic link" in w]
    assert len(linked) == 3, result.warnings


def test_incoming_host_records_cannot_push_out_the_stores_runs(tmp_path: Path) -> None:
    import yaml

    from serkit.results.host_file import MAX_RUNS, write_runs

    store = tmp_path / "store"
    merge([shard_results(tmp_path / "genuine", X86, 1, 2)], store, fake_discover)
    (genuine,) = read_runs(store / X86, []) or []
    hostile = tmp_path / "hostile"
    folder = write_results(hostile, X86, [])
    future = [{"recorded_at": f"2099-01-01T00:00:{i % 60:02d}", "n": i} for i in range(MAX_RUNS)]
    write_runs(folder / HOST_FILE, X86, future)
    result = merge([hostile], store, fake_discover)
    runs = read_runs(store / X86, []) or []
    assert runs == [genuine]
    assert any(
        f"left out {MAX_RUNS} incoming host record(s) dated after now" in w for w in result.warnings
    )
    # Dated now, naming no results file: they fill the room left, and displace nothing.
    now = [{"recorded_at": f"2026-01-01T00:00:{i % 60:02d}", "n": i} for i in range(MAX_RUNS)]
    write_runs(folder / HOST_FILE, X86, now)
    result = merge([hostile], store, fake_discover)
    runs = read_runs(store / X86, []) or []
    assert genuine in runs and len(runs) == MAX_RUNS
    assert any(
        "left out 1 incoming host record(s) that name no results file" in w for w in result.warnings
    )
    assert yaml.safe_load((store / X86 / HOST_FILE).read_text())["runs"]
