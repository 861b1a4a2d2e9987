"""serkit/report/runs.py and versions.py: what the report shows per library release, composed
from environments of one library each, and after a release bump in an older matrix's store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from results_factory import NEW, SUITE, results_file, write_benchmarks, write_machine

from serkit.report.runs import baseline_runs, latest_runs
from serkit.report.versions import library_views
from serkit.results.tree import read_tree
from serkit.suite.benchmark_names import DUMPS
from serkit.suite.cases import LIBRARY_ENV

# NEW's values are in grid order: (json, small-dict), (json, random-dicts-10), then ujson's.
JSON_ONLY = {k: [*v[:2], None, None] if len(v) == 4 else v for k, v in NEW.items()}
UJSON_ONLY = {k: [None, None, *v[2:]] if len(v) == 4 else v for k, v in NEW.items()}
OLD, NEWER = "a" * 40, "b" * 40


def _env(requirements: dict[str, str], library: str | None = None) -> dict[str, Any]:
    env: dict[str, Any] = {"python": "3.11", "requirements": requirements}
    if library is not None:
        env["env_vars"] = {LIBRARY_ENV: library}
    return env


def _ujson_dumps(values: dict[str, list[Any]], small: float) -> dict[str, list[Any]]:
    dumps = list(values[DUMPS])
    dumps[2] = small
    return {**values, DUMPS: dumps}


def _tree(root: Path, files: list[dict[str, Any]]) -> Path:
    write_benchmarks(root, SUITE)
    write_machine(root, "box", files)
    return root


def test_the_newest_set_is_composed_of_one_environment_per_library(tmp_path: Path) -> None:
    files = [
        results_file("box", JSON_ONLY, env=_env({}, "stdlib"), benchmarks=SUITE, commit=OLD),
        results_file(
            "box", UJSON_ONLY, env=_env({"ujson": "6.1.0"}, "ujson"), benchmarks=SUITE, commit=NEWER
        ),
        results_file(
            "box",
            _ujson_dumps(UJSON_ONLY, 9e-6),
            env=_env({"ujson": "5.10.0"}, "ujson"),
            benchmarks=SUITE,
            commit=NEWER,
        ),
    ]
    tree = read_tree(_tree(tmp_path / "results", files))
    (shown,) = baseline_runs(latest_runs(tree))
    assert shown.codecs == ["json", "ujson"]
    assert dict(shown.env.requirements) == {"ujson": "6.1.0"}  # the newest of the two
    assert shown.value(DUMPS, "ujson", "small-dict") == NEW[DUMPS][2]
    assert shown.version_of("json") == "Python 3.11" and shown.version_of("ujson") == "6.1.0"
    assert shown.commits == sorted([OLD, NEWER])  # two commits behind one table: said
    (ujson,) = library_views(latest_runs(tree), tree)
    assert [p.version for p in ujson.points] == ["5.10.0", "6.1.0"]


def test_after_a_bump_the_releases_chart_takes_the_later_matrix_not_the_first_label(
    tmp_path: Path,
) -> None:
    """An older matrix's two baselines at one commit, before and after a bump of cbor2:
    both installed ujson 6.1.0. The ujson chart's 6.1.0 is the later matrix's (cbor2
    6.3.0), where "cbor2 6.2.1" sorts first by label."""
    before_bump = _env({"cbor2": "6.2.1", "ujson": "6.1.0"})
    after_bump = _env({"cbor2": "6.3.0", "ujson": "6.1.0"})
    axis = _env({"cbor2": "6.3.0", "ujson": "5.10.0"}, "ujson")
    files = [
        results_file("box", _ujson_dumps(NEW, 4e-6), env=before_bump, benchmarks=SUITE),
        results_file("box", _ujson_dumps(NEW, 7e-6), env=after_bump, benchmarks=SUITE),
        results_file("box", _ujson_dumps(NEW, 9e-6), env=axis, benchmarks=SUITE),
    ]
    tree = read_tree(_tree(tmp_path / "results", files))
    runs = latest_runs(tree)
    (ujson,) = library_views(runs, tree)
    newest = ujson.points[-1]
    assert newest.version == "6.1.0"
    assert newest.run.value(DUMPS, "ujson", "small-dict") == 7e-6
    (shown,) = baseline_runs(runs)
    assert shown.value(DUMPS, "ujson", "small-dict") == 7e-6
    assert dict(shown.env.requirements)["ujson"] == "6.1.0"


def test_a_newer_commit_stands_over_an_older_one_of_the_same_release(tmp_path: Path) -> None:
    older = results_file(
        "box",
        _ujson_dumps(NEW, 7e-6),
        env=_env({"cbor2": "6.3.0", "ujson": "6.1.0"}),
        benchmarks=SUITE,
        commit=OLD,
        date=1_700_000_000_000,
    )
    newer = results_file(
        "box",
        _ujson_dumps(UJSON_ONLY, 5e-6),
        env=_env({"ujson": "6.1.0"}, "ujson"),
        benchmarks=SUITE,
        commit=NEWER,
        date=1_700_000_100_000,
    )
    tree = read_tree(_tree(tmp_path / "results", [older, newer]))
    (shown,) = baseline_runs(latest_runs(tree))
    assert shown.value(DUMPS, "ujson", "small-dict") == 5e-6  # the environment of ujson alone
    assert shown.value(DUMPS, "json", "small-dict") == NEW[DUMPS][0]  # from the old baseline
