"""Which value on one side is the same value on the other: matched by what it is.

A value is its benchmark, its parameters and its environment as `match_env` reads it: for
a serkit codec, the Python and the releases the codec ran with (recorded in its results
file by the run, else by this checkout's declarations), so that a codec's values pair
whichever matrix environment measured them.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from serkit.codecs.registry import STDLIB, registry
from serkit.errors import UnknownCodec
from serkit.results.tree import Benchmark, Environment, Measurement
from serkit.run.libraries import companions
from serkit.suite.cases import LIBRARY_ENV

# A value's key: benchmark name, parameters (asv's repr() of each), environment matched.
Key = tuple[str, tuple[str, ...], Environment]


def decode_param(value: str) -> Any:
    """asv's repr() of a parameter, back to the value when it is a plain literal."""
    try:
        decoded = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return value
    plain = decoded is None or isinstance(decoded, (str, int, float, bool))
    return decoded if plain else value


def named_params(benchmark: Benchmark, params: tuple[str, ...]) -> dict[str, Any]:
    names = benchmark.param_names
    if len(names) != len(params):  # not described in benchmarks.json: asv's own default names
        names = tuple(f"param{i + 1}" for i in range(len(params)))
    return {name: decode_param(value) for name, value in zip(names, params)}


def match_env(m: Measurement) -> Environment | None:
    """The environment a value is matched by (see the module's docstring): for a value of
    a serkit codec, the Python and the releases it ran with, whichever environment
    measured it; None for a codec's skipped value where its library was not installed
    (a matrix environment of another library); else the environment as asv recorded it."""
    needs = m.ran_with if m.ran_with is not None else _declared_here(m)
    if needs is None:
        return m.env
    library = needs[0]
    installed = dict(m.env.requirements)
    if library != STDLIB and library not in installed:
        return None if m.value is None else m.env
    names = () if library == STDLIB else needs
    ran_with = tuple(sorted((n, installed[n]) for n in names if n in installed))
    env_vars = tuple((k, v) for k, v in m.env.env_vars if k != LIBRARY_ENV)
    return Environment(m.env.python, ran_with, env_vars, m.env.other)


def _declared_here(m: Measurement) -> tuple[str, ...] | None:
    """What a value's codec runs with by this checkout's declarations (its library, then its
    companions): for results whose run did not record it (Measurement.ran_with); None for
    another suite's parameter, or a plugin not installed here."""
    codec = decode_param(m.params[0]) if m.params else None
    try:
        library = registry.spec(codec).library if isinstance(codec, str) else None
    except UnknownCodec:
        return None
    return None if library is None else (library, *companions(library))


def by_key(
    measurements: Iterable[Measurement], commit: str | None, warnings: list[str]
) -> dict[Key, dict[str, Measurement]]:
    """Each value by what it is (benchmark, parameters, match_env), then by commit: of two
    runs at one commit the newer; at `commit` alone where given."""
    index: dict[Key, dict[str, Measurement]] = defaultdict(dict)
    for m in measurements:
        if commit is not None and m.commit != commit:
            continue
        env = match_env(m)
        if env is None:
            continue
        by_commit = index[m.benchmark, m.params, env]
        earlier = by_commit.get(m.commit)
        if earlier is None or earlier.value is None:  # of two records, the one with a value
            by_commit[m.commit] = m
        elif m.value is not None and m.run_at != earlier.run_at:
            # Two runs at one commit (serkit.results.history): the newer one stands.
            if m.run_at > earlier.run_at:
                by_commit[m.commit] = m
        elif m.value is not None:
            warnings.append(
                f"{m.benchmark} was recorded twice for {m.machine} at commit {m.commit[:8]} "
                f"in the same environment ({earlier.file.name}, {m.file.name}): "
                f"using {earlier.file.name}"
            )
    return index
