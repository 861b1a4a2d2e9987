"""Only new points are measured: which environments a store already holds as they are now.

A run of an environment is a point of its series (serkit.results.history). Measuring it
again gives a new point only where something that moves its numbers changed since the
newest point the store holds for it. `serkit bench --skip-measured STORE` measures an
environment again only for:

- a new release: the libraries it would install now are not those the point installed
  (asv's recorded requirements);
- a new Python: the interpreter's full version differs from the one the point's run
  recorded (3.11.9 to 3.11.10 is new: a CI image brings one);
- a new host: its image, kernel, libc, CPU model, microcode or flags differ
  (serkit.results.identity), or the point's run recorded none;
- a suite change that touches a benchmark's code: asv's `version` of some benchmark (a
  hash of its source) differs from the suite's now, or the point did not measure it;
- another plan: the point was measured quick and this run is full, or on a narrowed grid
  (SERKIT_BENCH_*, asv's `-b`), or the other way round (`measured_as`).

Everything else, a new suite commit included, adds no point: the same code, libraries,
Python and host would measure the same thing again. The commit does not enter the rule,
so a store's points of an older commit stand for a newer commit that changed no benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from serkit.results.history import StoredRun
from serkit.results.identity import identity_changes, same_host
from serkit.run.matrix import MatrixEnvironment
from serkit.suite.cases import LIBRARY_ENV

CODE_NAMES_SHOWN = 3


@dataclass(frozen=True)
class Now:
    """What a run here would measure with: the host, each Python's full version, the suite."""

    host: Mapping[str, Any]  # serkit.results.hosts.collect's facts (identity and CPU)
    pythons: Mapping[str, str]  # "3.11" -> "3.11.10"
    code: Mapping[str, str]  # benchmark -> asv's version hash, from benchmarks.json
    plan: str = "full"  # how the run measures (`measured_as`), as its host entry records it


def measured_as(
    *,
    quick: bool,
    memory: bool = False,
    instructions: bool = False,
    selection: Mapping[str, str] | None = None,
    asv_args: Sequence[str] = (),
) -> str:
    """How a run measures, in one line: quick or full (a full run also takes memory and
    instructions), its SERKIT_BENCH_* narrowing and asv arguments (the machine's name
    left out: it names where, not how)."""
    words = ["quick" if quick else "full"]
    if quick:
        words += [name for name, on in (("memory", memory), ("instructions", instructions)) if on]
    words += [f"{k}={v}" for k, v in sorted((selection or {}).items())]
    args = list(asv_args)
    for flag in ("--machine", "-m"):
        while flag in args[:-1]:
            at = args.index(flag)
            del args[at : at + 2]
    args = [a for a in args if not a.startswith("--machine=")]
    if args:
        words.append("asv " + " ".join(args))
    return ", ".join(words)


def _role(python: str, library: str | None, requirements: Mapping[str, str]) -> tuple[Any, ...]:
    """What a point stands for in the matrix: the Python, and the library measured at its
    release (the standard library's: none), or a run of one Python's newest set of every
    library (None), whose releases may move between points. A library's companions may
    move too: the rule then measures it again, as a new release."""
    return (python, library, requirements.get(library) if library else None)


def _stored_role(run: StoredRun) -> tuple[Any, ...]:
    library = dict(run.env.env_vars).get(LIBRARY_ENV)
    return _role(run.env.python, library, dict(run.env.requirements))


def why_measure(env: MatrixEnvironment, stored: Sequence[StoredRun], now: Now) -> str | None:
    """None where a stored run is this environment's point as a run now would make it;
    else why it is measured again, in words (against the newest stored run of its role)."""
    role = _role(env.python, env.library, env.requirements)
    candidates = [run for run in stored if _stored_role(run) == role]
    if not candidates:
        return "never measured here"
    reasons = [_difference(env, run, now) for run in candidates]
    if any(reason is None for reason in reasons):
        return None
    newest = max(range(len(candidates)), key=lambda i: candidates[i].run_at)
    return reasons[newest]


def _difference(env: MatrixEnvironment, run: StoredRun, now: Now) -> str | None:
    measured = dict(run.env.requirements)
    if measured != env.requirements:
        names = sorted(set(measured) | set(env.requirements))
        moved = [
            f"{name} {measured.get(name, 'none')} → {env.requirements.get(name, 'none')}"
            for name in names
            if measured.get(name) != env.requirements.get(name)
        ]
        return "new release: " + ", ".join(moved)
    if run.host is None:
        return f"the host of its newest point ({run.name}) was not recorded"
    builds = run.host.get("pythons") or {}
    before = (builds.get(env.python) or {}).get("version") if isinstance(builds, dict) else None
    after = now.pythons.get(env.python)
    if before != after:
        return f"new Python: {before or 'not recorded'} → {after or 'not found'}"
    if not same_host(run.host, now.host):
        changes = identity_changes(run.host, now.host) or ["its identity was not recorded"]
        return "new host: " + "; ".join(changes)
    plan = run.host.get("measured_as")
    if plan != now.plan:
        return f"measured as {plan or 'not recorded'}, now {now.plan}"
    changed = sorted(name for name, code in now.code.items() if run.code.get(name) != code)
    if changed:
        shown = ", ".join(changed[:CODE_NAMES_SHOWN])
        extra = len(changed) - CODE_NAMES_SHOWN
        more = f" and {extra} more" if extra > 0 else ""
        return f"benchmark code changed or not measured: {shown}{more}"
    return None
