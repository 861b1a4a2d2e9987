"""The sentinel slice: a few pairs every scheduled run measures again, new or not.

A scheduled run measures only new points (serkit.run.points): an environment whose
releases, Python build and host identity have not changed is not measured again. So
nothing would show the runners themselves drifting (a slower pool of machines behind
one runner label, a noisier neighbour) until a release happened to be measured on them.
The sentinel is measured on every scheduled run, on every runner kind, and its series
dates that drift. Its runs are filed under a machine name of their own, the runner
kind's with SENTINEL_SUFFIX: a run of a few pairs is then never the newest run of the
standard library's environment on the runner kind itself, which the report's pages
would otherwise show in place of that environment's full point.

Its pairs are the standard library's codecs, in the standard library's environment of
one Python: no library release ever changes what they run, so a step in a sentinel
pair with the same Python build and the same host identity is the runner's, never a
library's (serkit.report.history labels it so). Three codecs of three kinds of work
(a JSON text encoder, a binary object format, a binary serializer) on two small
documents, `dumps` and `loads`: twelve pairs, a few minutes of runner time (docs/cost.md).
"""

from __future__ import annotations

from serkit.codecs.spec import STDLIB
from serkit.run.matrix import MatrixEnvironment
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV

SENTINEL_SUFFIX = "-sentinel"  # the runner kind's machine name, then this
SENTINEL_PYTHON = "3.12"  # on every runner kind, with wheels or not: nothing is installed
SENTINEL_CODECS = ("json", "marshal", "pickle-p5")
SENTINEL_FIXTURES = ("small-dict", "random-dicts-100")
SENTINEL_OPERATIONS = ("dumps", "loads")
# asv's -b: the timed dumps and loads only (no sizes, facts, memory or instructions).
SENTINEL_BENCHMARKS = r"bench_time\.(?:Dumps|Loads)\."


def sentinel_pairs() -> tuple[tuple[str, str, str], ...]:
    """(codec, fixture, operation) of every sentinel pair."""
    return tuple(
        (codec, fixture, operation)
        for codec in SENTINEL_CODECS
        for fixture in SENTINEL_FIXTURES
        for operation in SENTINEL_OPERATIONS
    )


def sentinel_environment() -> MatrixEnvironment:
    """The environment the sentinel runs in: the standard library's on SENTINEL_PYTHON."""
    return MatrixEnvironment.of(SENTINEL_PYTHON, STDLIB)


def sentinel_selection() -> dict[str, str]:
    """The SERKIT_BENCH_* settings that narrow a run's grid to the sentinel's."""
    return {CODECS_ENV: ",".join(SENTINEL_CODECS), FIXTURES_ENV: ",".join(SENTINEL_FIXTURES)}


def sentinel_machine(machine: str) -> str:
    """The machine name a runner kind's sentinel runs are filed under."""
    return machine if is_sentinel_machine(machine) else machine + SENTINEL_SUFFIX


def is_sentinel_machine(machine: str) -> bool:
    return machine.endswith(SENTINEL_SUFFIX)
