"""serkit/run/points.py: an environment is measured again only where its point would change."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from serkit.results.history import StoredRun
from serkit.results.tree import Environment
from serkit.run.matrix import MatrixEnvironment
from serkit.run.points import Now, measured_as, why_measure
from serkit.suite.cases import LIBRARY_ENV

# A run of one Python: every library's newest release in one environment.
BASELINE = MatrixEnvironment("3.12", None, (("orjson", "3.13.0"), ("ujson", "6.1.0")))
# The matrix: one library's release, with what its codecs need beside it.
AXIS = MatrixEnvironment.of("3.12", "ujson", "5.10.0")
CATTRS = MatrixEnvironment.of("3.12", "cattrs", "26.2.1", {"orjson": "3.13.0"})
HOST: dict[str, Any] = {
    "cpu_model": "AMD EPYC 7763",
    "logical_cpus": 4,
    "kernel": "6.8.0-1017-azure",
    "image": "ubuntu24 20241201.1.0",
    "cpu_flags": "avx2 sse2",
}
CODE = {"bench_time.Dumps.time_dumps": "aa11", "bench_size.Size.track_bytes": "bb22"}
NOW = Now(HOST, {"3.12": "3.12.8"}, CODE)


def stored(env: MatrixEnvironment, run_at: int = 1, **changes: Any) -> StoredRun:
    """A run of `env` in a store, recorded on NOW's host with NOW's code, but for `changes`."""
    env_vars = ((LIBRARY_ENV, env.library),) if env.library else ()
    host = {
        **HOST,
        "pythons": {env.python: {"version": NOW.pythons[env.python]}},
        "measured_as": "full",
    }
    run = StoredRun(
        f"run-{run_at}.json",
        Environment(env.python, tuple(sorted(env.requirements.items())), env_vars),
        dict(CODE),
        host,
        run_at,
    )
    return replace(run, **changes)


def test_a_point_as_it_would_be_measured_now_is_not_measured_again() -> None:
    assert why_measure(BASELINE, [stored(BASELINE)], NOW) is None
    assert why_measure(AXIS, [stored(AXIS), stored(BASELINE)], NOW) is None


def test_never_measured() -> None:
    assert why_measure(BASELINE, [], NOW) == "never measured here"
    # The axis environment of another ujson release is another point.
    other = MatrixEnvironment.of("3.12", "ujson", "5.8.0")
    assert why_measure(AXIS, [stored(other)], NOW) == "never measured here"
    assert why_measure(BASELINE, [stored(AXIS)], NOW) == "never measured here"


def test_a_new_release() -> None:
    before = MatrixEnvironment("3.12", None, (("orjson", "3.12.0"), ("ujson", "6.1.0")))
    assert why_measure(BASELINE, [stored(before)], NOW) == "new release: orjson 3.12.0 → 3.13.0"
    # A library's environment whose companion moved: cattrs-orjson calls another orjson.
    older = MatrixEnvironment.of("3.12", "cattrs", "26.2.1", {"orjson": "3.12.0"})
    assert why_measure(CATTRS, [stored(older)], NOW) == "new release: orjson 3.12.0 → 3.13.0"


def test_a_new_python() -> None:
    run = stored(BASELINE)
    older = replace(run, host={**(run.host or {}), "pythons": {"3.12": {"version": "3.12.7"}}})
    assert why_measure(BASELINE, [older], NOW) == "new Python: 3.12.7 → 3.12.8"


def test_a_new_host_or_one_not_recorded() -> None:
    run = stored(BASELINE)
    moved = replace(run, host={**(run.host or {}), "image": "ubuntu24 20241124.1.0"})
    assert why_measure(BASELINE, [moved], NOW) == (
        "new host: image ubuntu24 20241124.1.0 → ubuntu24 20241201.1.0"
    )
    assert why_measure(BASELINE, [replace(run, host=None)], NOW) == (
        "the host of its newest point (run-1.json) was not recorded"
    )
    old_record = {"cpu_model": "AMD EPYC 7763", "pythons": {"3.12": {"version": "3.12.8"}}}
    assert why_measure(BASELINE, [replace(run, host=old_record)], NOW) == (
        "new host: its identity was not recorded"
    )


def test_benchmark_code_that_changed_or_was_not_measured() -> None:
    changed = stored(BASELINE, code={**CODE, "bench_size.Size.track_bytes": "cc33"})
    assert why_measure(BASELINE, [changed], NOW) == (
        "benchmark code changed or not measured: bench_size.Size.track_bytes"
    )
    narrowed = stored(BASELINE, code={"bench_time.Dumps.time_dumps": "aa11"})
    assert why_measure(BASELINE, [narrowed], NOW) == (
        "benchmark code changed or not measured: bench_size.Size.track_bytes"
    )


def test_any_stored_point_that_matches_will_do_and_the_newest_says_why_not() -> None:
    old_host = replace(stored(BASELINE, run_at=1), host={**HOST, "kernel": "6.5.0"})
    matching = stored(BASELINE, run_at=2)
    newest = stored(BASELINE, run_at=3, host=None)
    assert why_measure(BASELINE, [newest, matching, old_host], NOW) is None
    assert why_measure(BASELINE, [old_host, newest], NOW) == (
        "the host of its newest point (run-3.json) was not recorded"
    )


def test_a_point_measured_another_way_is_measured_again() -> None:
    quick = measured_as(quick=True, selection={"SERKIT_BENCH_CODECS": "json"})
    assert quick == "quick, SERKIT_BENCH_CODECS=json"
    run = stored(BASELINE)
    narrowed = replace(run, host={**(run.host or {}), "measured_as": quick})
    assert why_measure(BASELINE, [narrowed], NOW) == (
        "measured as quick, SERKIT_BENCH_CODECS=json, now full"
    )
    assert why_measure(BASELINE, [narrowed], replace(NOW, plan=quick)) is None


def test_how_a_run_measures_in_one_line() -> None:
    assert measured_as(quick=False, memory=True, instructions=True) == "full"
    assert measured_as(quick=True, memory=True) == "quick, memory"
    args = ["--machine", "ci-1", "-b", "Dumps", "--machine=x"]
    assert measured_as(quick=True, asv_args=args) == "quick, asv -b Dumps"
