"""Running the asv suite: the quick run, the whole matrix, and publishing the HTML.

serkit drives asv as a user would, through its command line, after doing what asv
cannot do alone: find real interpreters (pyenv shims break asv's virtualenv plugin),
pick the matrix's environments by name, create the machine profile without a prompt,
and refuse a mistyped SERKIT_BENCH_* before an environment is built.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from serkit.checkout import CONFIG_NAME, PYTHONS_DIR
from serkit.errors import SerkitError
from serkit.run.interpreters import expose, find_pythons
from serkit.run.matrix import PYTHONS, MatrixEnvironment, baseline, environments
from serkit.suite.cases import (
    FULL_ROUNDS,
    ROUNDS_ENV,
    WARMUP_ENV,
    Selection,
    rounds_from_env,
    warmup_from_env,
)

# Every timed pair takes one sample in each of `rounds` processes (serkit.suite.cases
# ROUNDS_ENV), interleaved over the grid, and asv keeps the samples: they are the
# per-process values that spreads and verdicts are computed from.
SAMPLE_ARGS = ("--record-samples", "--interleave-rounds")
# The quick run: the fewest processes that still give a between-process spread and a
# test that can call a difference (with 5 processes a side, Welch's t on the logs).
QUICK_ROUNDS = 5
# Not `-a warmup_time`, which would also give a second warm-up to the long calls that
# their preparation already warmed up (serkit.suite.cases.WARMED_CALL_S).
QUICK_WARMUP_S = "0.02"
QUICK_DESCRIPTION = f"{QUICK_ROUNDS} processes of 1 sample each per pair, 0.02 s of warm-up"
FULL_DESCRIPTION = f"{FULL_ROUNDS} processes of 1 sample each per pair, asv's warm-up"


def current_python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


@dataclass(frozen=True)
class Plan:
    """The environments one `asv run` covers, and the Pythons it has to leave out."""

    environments: tuple[MatrixEnvironment, ...]
    missing_pythons: tuple[str, ...]
    asv_env: dict[str, str]  # the process environment asv runs with
    pythons: dict[str, Path]  # the interpreters the environments are built from


def plan(root: Path, *, matrix: bool, pythons: Sequence[str] | None = None) -> Plan:
    """Which environments to run: the current Python's baseline, or the whole matrix."""
    Selection.from_env()  # a typo in SERKIT_BENCH_* fails here, before any env is built
    warmup_from_env()
    rounds_from_env()
    if not matrix:
        wanted: tuple[str, ...] = (current_python(),)
        if wanted[0] not in PYTHONS:
            raise SerkitError(f"Python {wanted[0]} is not in the matrix ({', '.join(PYTHONS)})")
    else:
        wanted = tuple(pythons or PYTHONS)
        unknown = [p for p in wanted if p not in PYTHONS]
        if unknown:
            raise SerkitError(f"not in the matrix: Python {', '.join(unknown)}")
    # asv builds an object for every environment in its config, then picks; exposing
    # every Python found keeps it from warning about the ones this run leaves out.
    found = find_pythons(PYTHONS)
    missing = tuple(p for p in wanted if found[p] is None)
    present = tuple(p for p in wanted if p not in missing)
    if not present:
        raise SerkitError(f"no interpreter found for Python {', '.join(wanted)}")
    chosen = environments(present) if matrix else (baseline(p) for p in present)
    asv_env = expose(found, root / PYTHONS_DIR)
    return Plan(tuple(chosen), missing, asv_env, {p: path for p in present if (path := found[p])})


def asv(
    root: Path, args: Sequence[str], env: dict[str, str] | None = None, *, quiet: bool = False
) -> int:
    """Run one asv command in the checkout; its output goes to the user unless `quiet`,
    and then only when the command fails."""
    command = [sys.executable, "-m", "asv", *args]
    done = subprocess.run(command, cwd=root, env=env, check=False, capture_output=quiet, text=True)
    if quiet and done.returncode not in (0, 2):
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
    return done.returncode


def ensure_machine(root: Path, env: dict[str, str] | None = None) -> None:
    """Create asv's machine profile (CPU, OS, RAM) once, without asv's interactive prompt."""
    home = Path((env or os.environ).get("HOME") or Path.home())
    if not (home / ".asv-machine.json").exists() and asv(root, ["machine", "--yes"], env) != 0:
        raise SerkitError("asv machine --yes failed; run it yourself to see why")


def run(root: Path, plan_: Plan, *, quick: bool, extra: Sequence[str] = ()) -> int:
    """`asv run` over the plan's environments, for the checked-out commit."""
    for python in plan_.missing_pythons:
        print(f"serkit: skipping Python {python}: no interpreter found", file=sys.stderr)
    ensure_machine(root, plan_.asv_env)
    args = ["run", "HEAD^!"]
    for environment in plan_.environments:
        args += ["-E", environment.asv_name]
    args += SAMPLE_ARGS
    env = dict(plan_.asv_env)
    if quick:
        env.setdefault(ROUNDS_ENV, str(QUICK_ROUNDS))
        env.setdefault(WARMUP_ENV, QUICK_WARMUP_S)
    return asv(root, [*args, *extra], env)


def scratch_config(root: Path, scratch: Path) -> Path:
    """An asv config for running this checkout in the current interpreter, results in `scratch`.

    For checks that must not touch the real results: `existing` environments record no
    library versions, so their results do not belong beside the matrix's.
    """
    config = {
        "version": 1,
        "project": "serkit",
        "repo": str(root),
        "branches": ["main"],
        "environment_type": "existing",
        "launch_method": "forkserver",
        "benchmark_dir": str(root / "benchmarks"),
        "env_dir": str(scratch / "env"),
        "results_dir": str(scratch / "results"),
        "html_dir": str(scratch / "html"),
    }
    path = scratch / CONFIG_NAME
    path.write_text(json.dumps(config))
    return path


def machine_name(extra: Sequence[str] = (), home: Path | None = None) -> str:
    """The machine name `asv run` files its results under, as asv itself picks it:
    `--machine`, else the only profile in ~/.asv-machine.json, else the host name's."""
    for i, arg in enumerate(extra):
        if arg.startswith("--machine="):
            return arg.split("=", 1)[1]
        if arg in ("--machine", "-m") and i + 1 < len(extra):
            return extra[i + 1]
    node = platform.node()
    try:
        profiles = json.loads(((home or Path.home()) / ".asv-machine.json").read_text())
    except (OSError, ValueError):
        return node
    entries = {k: v for k, v in profiles.items() if k != "version" and isinstance(v, dict)}
    chosen = entries.get(node) or (next(iter(entries.values())) if len(entries) == 1 else None)
    return str(chosen.get("machine", node)) if chosen else node
