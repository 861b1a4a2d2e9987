"""serkit/run/shards.py: the K-th of N slices of the matrix, and `plan` with a shard."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serkit.codecs.spec import STDLIB
from serkit.errors import SerkitError
from serkit.run import planning, runner
from serkit.run.index import platform_here
from serkit.run.matrix import MatrixEnvironment, environments
from serkit.run.releases import load
from serkit.run.shards import BadShard, Shard, shard_slice

ROOT = Path(__file__).resolve().parents[1]
CURRENT = f"{sys.version_info[0]}.{sys.version_info[1]}"
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14", "3.14t")
HERE = platform_here()
MATRIX = tuple(environments(platform=HERE.name if HERE else None))
LIBRARIES = (STDLIB, "lib-a", "lib-b", "lib-c", "lib-d")


def _environment(i: int, python: str, library: str) -> MatrixEnvironment:
    return MatrixEnvironment.of(python, library, None if library == STDLIB else f"1.{i}")


environment_sets = st.lists(
    st.tuples(st.sampled_from(PYTHONS), st.sampled_from(LIBRARIES)), max_size=120
).map(
    lambda specs: list(dict.fromkeys(_environment(i, p, lib) for i, (p, lib) in enumerate(specs)))
)
counts = st.integers(1, 20)


def _key(env: MatrixEnvironment) -> tuple[str, str | None, tuple[tuple[str, str], ...]]:
    """What tells environments apart."""
    return (env.python, env.library, env.requirements_)


def _slices(envs: list[MatrixEnvironment], n: int) -> list[tuple[MatrixEnvironment, ...]]:
    return [shard_slice(envs, Shard(k, n)) for k in range(1, n + 1)]


@given(environment_sets, counts)
def test_slices_are_disjoint_and_cover_everything(envs: list[MatrixEnvironment], n: int) -> None:
    slices = _slices(envs, n)
    dealt = Counter(_key(env) for one in slices for env in one)
    assert set(dealt) == {_key(env) for env in envs}
    assert all(times == 1 for times in dealt.values())


@given(environment_sets, counts, st.randoms(use_true_random=False))
def test_slices_are_deterministic_whatever_the_order(
    envs: list[MatrixEnvironment], n: int, rng: random.Random
) -> None:
    shuffled = list(envs)
    rng.shuffle(shuffled)
    assert _slices(envs, n) == _slices(shuffled, n) == _slices(envs, n)


@given(environment_sets, counts)
def test_slices_are_balanced_in_size_and_in_each_library(
    envs: list[MatrixEnvironment], n: int
) -> None:
    """Each library's environments cost about the same, so each slice gets its share."""
    slices = _slices(envs, n)
    sizes = [len(one) for one in slices]
    assert max(sizes) - min(sizes) <= 1
    for library in LIBRARIES:
        counted = [sum(env.library == library for env in one) for one in slices]
        assert max(counted) - min(counted) <= 1, library


@pytest.mark.slow
@given(counts.flatmap(lambda n: st.tuples(st.integers(1, n), st.just(n))))
def test_the_real_matrix_in_slices(kn: tuple[int, int]) -> None:
    k, n = kn
    mine = {env.label for env in shard_slice(MATRIX, Shard(k, n))}
    others = [e.label for j in range(1, n + 1) if j != k for e in shard_slice(MATRIX, Shard(j, n))]
    assert not mine & set(others) and len(mine) + len(others) == len(MATRIX)
    assert len(MATRIX) // n <= len(mine) <= -(-len(MATRIX) // n)


@pytest.mark.parametrize("text", ["1/2", "2/2", " 3 / 7 "])
def test_parse(text: str) -> None:
    shard = Shard.parse(text)
    assert str(shard) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2", "1/2/3"])
def test_a_bad_shard_is_one_error(text: str) -> None:
    with pytest.raises(BadShard) as caught:
        Shard.parse(text)
    assert isinstance(caught.value, SerkitError) and "\n" not in str(caught.value)


# --- the plan ----------------------------------------------------------------------------


def test_a_shard_of_the_matrix_plans_only_its_slice() -> None:
    shard = Shard(2, 3)
    planned = planning.plan(ROOT, matrix=True, pythons=[CURRENT], shard=shard)
    expected = shard_slice(environments((CURRENT,)), shard)
    assert planned.environments == expected and planned.shard == shard


@pytest.mark.slow
def test_slices_do_not_depend_on_which_pythons_a_runner_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A runner without Python 3.10 runs the rest of its slice, and no other slice's."""
    everywhere = shard_slice(MATRIX, Shard(1, 4))
    found = {p: (Path(sys.executable) if p != "3.10" else None) for p in load().pythons}
    monkeypatch.setattr(planning, "find_pythons", lambda wanted: found)
    planned = planning.plan(ROOT, matrix=True, shard=Shard(1, 4))
    assert planned.environments == tuple(e for e in everywhere if e.python != "3.10")
    assert planned.missing_pythons == ("3.10",)


def test_a_narrowed_matrix_runs_only_the_environments_of_the_codecs_chosen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERKIT_BENCH_CODECS", "json,orjson")
    planned = planning.plan(ROOT, matrix=True, pythons=[CURRENT])
    assert {env.library for env in planned.environments} == {STDLIB, "orjson"}
    monkeypatch.setenv("SERKIT_BENCH_CODECS", "cbor2")
    with pytest.raises(SerkitError, match="no environment of this slice measures"):
        planning.plan(ROOT, matrix=True, pythons=[CURRENT], shard=Shard(1, 40))


def test_a_shard_needs_the_matrix() -> None:
    with pytest.raises(SerkitError, match="--shard slices the matrix"):
        planning.plan(ROOT, matrix=False, shard=Shard(1, 2))


def test_more_shards_than_environments_is_an_error() -> None:
    with pytest.raises(SerkitError, match="is empty"):
        planning.plan(ROOT, matrix=True, pythons=[CURRENT], shard=Shard(99, 99))


def test_environments_already_measured_are_left_out(tmp_path: Path) -> None:
    from results_factory import results_file

    from serkit.results.history import file_run
    from serkit.results.host_file import HOST_FILE, write_runs
    from serkit.run.points import Now
    from serkit.suite.cases import LIBRARY_ENV

    planned = planning.plan(ROOT, matrix=True, pythons=[CURRENT], shard=Shard(1, 2))
    first, *rest = planned.environments
    older = "abcdef0123456789" * 2 + "abcdef01"  # a point of an older suite commit stands
    shape: dict[str, object] = {"python": first.python, "requirements": first.requirements}
    if first.library:
        shape["env_vars"] = {LIBRARY_ENV: first.library}
    dumps = {"bench_time.Dumps.time_dumps": {"type": "time", "unit": "seconds", "grid": []}}
    data = results_file("box", {"bench_time.Dumps.time_dumps": [1e-6]}, env=shape, commit=older,
                        benchmarks=dumps)  # fmt: skip
    (tmp_path / "box").mkdir()
    plain = tmp_path / "box" / runner.results_name("box", older, first)
    plain.write_text(json.dumps(data))
    filed = file_run(plain)
    host = {"cpu_model": "x", "kernel": "6.8", "pythons": {CURRENT: {"version": "3.x.y"}}}
    entry = {**host, "results": [filed.name], "measured_as": "full"}
    write_runs(tmp_path / "box" / HOST_FILE, "box", [entry])
    now = Now(
        {"cpu_model": "x", "kernel": "6.8"},
        {CURRENT: "3.x.y"},
        {"bench_time.Dumps.time_dumps": "code-of-bench_time.Dumps.time_dumps"},
    )
    left, why, warnings = planning.skip_measured(planned, tmp_path, "box", now)
    assert left.environments == tuple(rest) and left.measured == (first,) and not warnings
    assert set(why.values()) == {"never measured here"} and len(why) == len(rest)
    # Another machine's results are not this one's; a store that is not there holds none.
    assert planning.skip_measured(planned, tmp_path, "other", now)[0] == planned
    assert planning.skip_measured(planned, tmp_path / "missing", "box", now)[0] == planned
