"""Planning a run of the asv suite: which environments, which pairs, how each is sampled,
and the few lines that say so before it starts (serkit.run.runner drives it)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from serkit.checkout import PYTHONS_DIR
from serkit.codecs.registry import registry
from serkit.errors import SerkitError
from serkit.inputs.fixtures import default_fixture_names
from serkit.results.history import stored_runs
from serkit.run.index import platform_here
from serkit.run.interpreters import expose, find_pythons
from serkit.run.matrix import (
    COUNTS_PYTHON,
    MatrixEnvironment,
    counted,
    environments,
    installed_set,
    newest_set,
)
from serkit.run.points import Now, why_measure
from serkit.run.precision import LEAST_PROCESSES, MOST_PROCESSES
from serkit.run.quick import (
    FULL_BUDGET_S,
    QUICK_FIXTURES,
    REFERENCE_SPEED,
    PairSelection,
    plan_full,
    plan_quick,
)
from serkit.run.releases import current_python, load
from serkit.run.round_selection import split_bench_args
from serkit.run.shards import Shard, shard_slice
from serkit.suite.cases import (
    CODECS_ENV,
    FULL_ROUNDS,
    FULL_SEES,
    QUICK_SEES,
    ROUNDS_ENV,
    SAMPLES_PER_PROCESS,
    TYPICAL_PROCESSES,
    WARMUP_ENV,
    Selection,
    rounds_from_env,
    warmup_from_env,
    warmup_words,
)
from serkit.units import plural

# Every timed pair takes one sample in each of `rounds` processes (serkit.suite.cases
# ROUNDS_ENV), one per round, the rounds interleaved over the grid: serkit runs them,
# one `asv run` each (serkit.run.rounds).
# The quick run: the fewest processes that still give a between-process spread and a
# test that can call a difference (with 5 processes a side, Welch's t on the logs).
QUICK_ROUNDS = 5
# Not `-a warmup_time`, which would also give a second warm-up to the long calls that
# their preparation already warmed up (serkit.suite.preparation.WARMED_CALL_S). Seconds of the
# pair's calls, made while preparing it: so 0.01 s read as asv's 0.02 s of whole samples
# did (2026-11-28, three quick runs against seven: the values' ratios at the median
# 0.986-1.007, as between runs with asv's; with no warm-up they read 1.003-1.014), and
# saved about 2 s a round (docs/trust.md, "A warm-up of calls alone").
QUICK_WARMUP_S = "0.01"


def run_warmup(quick: bool, selection: Mapping[str, str]) -> float | None:
    """The warm-up a run's timed processes make, in seconds of the pair's calls (the run's
    WARMUP_ENV, else the quick run's); None where asv warms them up (a full run)."""
    given = selection.get(WARMUP_ENV) or (QUICK_WARMUP_S if quick else "")
    return warmup_from_env({WARMUP_ENV: given})


# What one timed pair may cost in the quick run, warm-up included (serkit.suite.budget):
# a pair over it is timed once, in one process, and shown as a single sample.
QUICK_BUDGET_S = 2.0


def _more(sees: float) -> str:
    return (
        f"up to as many again while fewer than {TYPICAL_PROCESSES} are typical or they place "
        f"the pair too loosely to see a {sees:.0%} change"
    )


QUICK_DESCRIPTION = (
    f"every codec's dumps and loads, sizes and fidelity on {', '.join(QUICK_FIXTURES)}; "
    f"{QUICK_ROUNDS} processes of {SAMPLES_PER_PROCESS} samples each per pair "
    f"({_more(QUICK_SEES)} between runs), {QUICK_WARMUP_S} s of warm-up; a pair predicted to "
    f"cost over {QUICK_BUDGET_S:g} s is left to --full (with your -b: timed in 1 process)"
)
FULL_DESCRIPTION = (
    f"{LEAST_PROCESSES} to {MOST_PROCESSES} processes of {SAMPLES_PER_PROCESS} samples each "
    f"per pair: after {LEAST_PROCESSES}, one more a round while fewer than {TYPICAL_PROCESSES} "
    f"are typical or they place the pair too loosely to see a {FULL_SEES:.0%} change "
    f"(planned {FULL_ROUNDS}, and up to as many again), asv's warm-up"
)


@dataclass(frozen=True)
class RunScope:
    """The environments one `asv run` covers, and the Pythons it has to leave out."""

    environments: tuple[MatrixEnvironment, ...]
    missing_pythons: tuple[str, ...]
    asv_env: dict[str, str]  # the process environment asv runs with
    pythons: dict[str, Path]  # the interpreters the environments are built from
    shard: Shard | None = None
    measured: tuple[MatrixEnvironment, ...] = ()  # left out: already in the results (skip_measured)
    matrix: bool = False
    asked: tuple[str, ...] | None = None  # the Pythons asked for (--python), if any
    # The runner kind's platform whose wheels chose the releases; None: not one serkit
    # knows, so every release with a wheel on any of them (serkit.run.index.PLATFORMS).
    platform: str | None = None
    # A matrix run's environments that another environment counts for (counted).
    uncounted: tuple[str, ...] = ()

    def own_codecs(self) -> dict[str, list[str]]:
        """A matrix run's environments of one library, each with the codecs it times."""
        if not self.matrix:
            return {}
        return {
            env.asv_name: [
                name for name in registry.names() if registry.spec(name).library == env.library
            ]
            for env in self.environments
            if env.library is not None
        }


def plan(
    root: Path,
    *,
    matrix: bool,
    pythons: Sequence[str] | None = None,
    shard: Shard | None = None,
) -> RunScope:
    """Which environments to run: the current Python's newest set (each library's newest
    release, in one environment), or the whole matrix (or one shard of it: see
    serkit.run.shards); only releases with a compiled wheel for this platform."""
    selection = Selection.from_env()  # a typo in SERKIT_BENCH_* fails here, before any build
    warmup_from_env()
    rounds_from_env()
    if shard is not None and not matrix:
        raise SerkitError("--shard slices the matrix: use it with --matrix")
    data = load()
    here = platform_here()
    where = here.name if here else None
    if not matrix:
        wanted: tuple[str, ...] = (current_python(),)
        if wanted[0] not in data.pythons:
            print(
                f"serkit: Python {wanted[0]} is not in the matrix ({', '.join(data.pythons)}): "
                "this run installs each library at the release installed beside serkit here",
                file=sys.stderr,
            )
    else:
        wanted = tuple(pythons or data.pythons)
        unknown = [p for p in wanted if p not in data.pythons]
        if unknown:
            raise SerkitError(f"not in the matrix: Python {', '.join(unknown)}")
    # asv builds an object for every environment in its config, then picks; exposing
    # every Python found keeps it from warning about the ones this run leaves out.
    found = find_pythons(dict.fromkeys((*data.pythons, *wanted)))
    if matrix:
        # Sliced before interpreters are looked for: every runner cuts the same slices.
        everything = tuple(environments(wanted, platform=where, data=data))
        chosen = shard_slice(everything, shard) if shard else everything
        if not chosen:
            held = plural(len(everything), "env")
            raise SerkitError(f"shard {shard} is empty: the matrix has {held}")
        if selection.codecs is not None:
            # An environment of a library none of whose codecs is selected would time nothing.
            measured = {registry.spec(codec).library for codec in selection.codecs}
            chosen = tuple(env for env in chosen if env.library in measured)
            if not chosen:
                raise SerkitError(f"no environment of this slice measures {CODECS_ENV}")
        wanted = tuple(p for p in wanted if any(env.python == p for env in chosen))
    elif wanted[0] not in data.pythons:
        chosen = (installed_set(wanted[0], data=data),)
    else:
        chosen = (newest_set(wanted[0], platform=where, data=data),)
    missing = tuple(p for p in wanted if found[p] is None)
    present = tuple(p for p in wanted if p not in missing)
    if not present:
        raise SerkitError(f"no interpreter found for Python {', '.join(wanted)}")
    runnable = tuple(env for env in chosen if env.python in present)
    asv_env = expose(found, root / PYTHONS_DIR)
    pythons_ = {p: path for p in present if (path := found[p])}
    asked = tuple(pythons) if pythons else None
    uncounted: tuple[str, ...] = ()
    if matrix:  # the rule is the whole matrix's, whatever slice of it runs here
        counting = counted(environments(platform=where, data=data))
        uncounted = tuple(env.asv_name for env in runnable if env not in counting)
    return RunScope(
        runnable,
        missing,
        asv_env,
        pythons_,
        shard,
        matrix=matrix,
        asked=asked,
        platform=where,
        uncounted=uncounted,
    )


def skip_measured(
    plan_: RunScope, store: Path, machine: str, now: Now
) -> tuple[RunScope, dict[str, str], list[str]]:
    """The plan without the environments whose point `store` (a results tree, such as the
    results branch checked out) already holds as a run now would make it
    (serkit.run.points); why each one left in is measured; and what reading the store said."""
    warnings: list[str] = []
    stored = stored_runs(store, machine, warnings)
    reasons = {env.asv_name: why_measure(env, stored, now) for env in plan_.environments}
    done = tuple(env for env in plan_.environments if reasons[env.asv_name] is None)
    kept = tuple(env for env in plan_.environments if env not in done)
    why = {env.label: str(reasons[env.asv_name]) for env in kept}
    return replace(plan_, environments=kept, measured=plan_.measured + done), why, warnings


def quick_plan(extra: Sequence[str]) -> PairSelection | None:
    """The quick run's own pairs (serkit.run.quick); None where the user's -b chooses what
    runs. What it leaves to --full is said once, up front, by plan_lines."""
    if split_bench_args(extra)[0]:
        return None
    rounds = rounds_from_env() if os.environ.get(ROUNDS_ENV, "").strip() else QUICK_ROUNDS
    selection = Selection.from_env()
    return plan_quick(selection, rounds=rounds, budget_s=QUICK_BUDGET_S)


def full_plan(extra: Sequence[str], plan_: RunScope | None = None) -> PairSelection | None:
    """A full run's pairs (serkit.run.quick.plan_full): its grid less the pairs predicted
    not worth timing; None where the user's -b chooses what runs. Of a matrix slice, only
    the codecs its environments measure are predicted."""
    if split_bench_args(extra)[0]:
        return None
    rounds = rounds_from_env() if os.environ.get(ROUNDS_ENV, "").strip() else FULL_ROUNDS
    selection = Selection.from_env()
    if plan_ is not None and plan_.matrix:
        libraries = {env.library for env in plan_.environments}
        codecs = [name for name in selection.codecs or registry.names()]
        wanted = tuple(c for c in codecs if registry.spec(c).library in libraries)
        if not wanted:  # nothing of the slice is timed: nothing to leave out
            return PairSelection((), kind="full", budget_s=FULL_BUDGET_S)
        selection = replace(selection, codecs=wanted)
    return plan_full(selection, rounds=rounds)


# How many names a plan line lists before it counts the rest.
LISTED = 4


def _processes(count: int) -> str:
    return f"{count} process{'' if count == 1 else 'es'}"


def _listed(names: Sequence[str]) -> str:
    if len(names) <= LISTED + 1:  # "and 1 more" would say no less than the name
        return ", ".join(names)
    return f"{', '.join(names[:LISTED])} and {len(names) - LISTED} more"


def plan_lines(
    plan_: RunScope,
    machine: str,
    *,
    quick: bool,
    chosen: PairSelection | None,
    extra: Sequence[str],
) -> list[str]:
    """A few short lines saying what this run measures, true for its slice: the machine and
    environments, the pairs (counted from the run's own selection), how each is sampled,
    and what a quick run leaves to --full."""
    labels = [env.label for env in plan_.environments]
    shard = f", shard {plan_.shard}" if plan_.shard else ""
    wheels = f"{plan_.platform}'s wheels" if plan_.platform else "any runner kind's wheels"
    lines = [
        f"machine {machine}{shard}: {plural(len(labels), 'environment')} "
        f"({_listed(labels)}; {wheels})"
    ]
    rounds = rounds_from_env() if os.environ.get(ROUNDS_ENV, "").strip() else None
    if quick:
        rounds = rounds or QUICK_ROUNDS
        sampling = (
            f"{_processes(rounds)} of {SAMPLES_PER_PROCESS} samples, up to {rounds} more "
            f"where the pair is placed too loosely to see a {QUICK_SEES:.0%} change between "
            f"runs; {warmup_words(run_warmup(True, os.environ))}"
        )
    else:
        rounds = rounds or FULL_ROUNDS
        least = min(LEAST_PROCESSES, rounds)
        sampling = (
            f"{least} to {2 * rounds} processes of {SAMPLES_PER_PROCESS} samples, by its "
            f"spread: after {least}, one more a round while the pair is placed too loosely "
            f"to see a {FULL_SEES:.0%} change; {warmup_words(run_warmup(False, os.environ))}"
        )
    kind = "quick" if quick else "full"
    if split_bench_args(extra)[0]:
        lines.append(f"{kind} run of the benchmarks your -b selects; each pair: {sampling}")
    elif chosen is not None and chosen.kind == "quick":
        codecs = list(dict.fromkeys(codec for codec, _ in chosen.pairs))
        fixtures = chosen.as_record()["fixtures"]  # in the registry's order
        lines.append(
            f"{kind} run: {plural(len(chosen.pairs), 'pair')} of {plural(len(codecs), 'codec')} "
            f"on {_listed(fixtures)}: dumps, loads, sizes and fidelity"
            + "".join(f", {name}" for name in chosen.asked)
        )
        lines.append(f"each pair: {sampling}")
        if chosen.left_out:
            pairs = [f"{item.codec} x {item.fixture}" for item in chosen.left_out]
            lines.append(
                f"left to --full: {plural(len(pairs), 'pair')} predicted over the "
                f"{QUICK_BUDGET_S:g} s budget at {REFERENCE_SPEED} ({_listed(pairs)})"
            )
        lines.extend(chosen.notes[:LISTED])
        if len(chosen.notes) > LISTED:
            lines.append(f"and {plural(len(chosen.notes) - LISTED, 'more pair')} not predicted")
    else:
        selection = Selection.from_env()
        codecs = list(selection.codecs or registry.names())
        fixtures = list(selection.fixtures or default_fixture_names(slow=selection.slow))
        lines.append(
            f"{kind} run: {plural(len(codecs), 'codec')} on {plural(len(fixtures), 'fixture')} "
            f"({_listed(fixtures)}): times, sizes, fidelity, memory per call and instructions"
        )
        lines.append(f"each pair: {sampling}")
        if chosen is not None and chosen.left_out:
            pairs = [f"{item.codec} x {item.fixture}" for item in chosen.left_out]
            lines.append(
                f"not timed: {plural(len(pairs), 'pair')} predicted over the {FULL_BUDGET_S:g} s "
                f"a pair a full run affords ({_listed(pairs)}; asv's -b times them)"
            )
        if plan_.uncounted:
            names = set(plan_.uncounted)
            skipped = [env.label for env in plan_.environments if env.asv_name in names]
            lines.append(
                f"memory per call and instructions: not in {plural(len(skipped), 'environment')} "
                f"({_listed(skipped)}): each release counts them on Python {COUNTS_PYTHON}, "
                "each Python in its newest releases"
            )
    return lines
