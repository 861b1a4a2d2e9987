"""serkit-host.yaml: the hosts a machine name's runs ran on, one entry per run.

`serkit.results.hosts.record_host` adds an entry after every run (each shard of a CI
matrix is a run), and `serkit results merge` unites the entries of many trees. Format 2
holds a list of runs; format 1, written before shards, held one host and reads as one
run. A machine name whose runs saw different CPUs is flagged (`mixed_cpu_warnings`):
results filed under one name are honest only if they came from one kind of hardware.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.errors import RefusedFile
from serkit.files import atomic_write
from serkit.inputs.documents import read_record
from serkit.units import plural

HOST_FILE = "serkit-host.yaml"
# Not asv's `version` key: `asv update` rewrites any file in the results tree whose
# `version` is below its own, and asv only warns about a file without one.
FORMAT_KEY, FORMAT = "serkit_host_format", 2
READABLE_FORMATS = (1, 2)
RUNS_KEY = "runs"
# The newest runs kept per machine: a nightly matrix adds a few entries a night.
MAX_RUNS = 200


def run_instant(run: Mapping[str, Any]) -> float | None:
    """When the run was recorded (`recorded_at`, ISO 8601 with its offset; without one, UTC),
    in seconds since the epoch; None where it holds no such moment from 1970 on.

    Compared as instants, never as text: as text, `…T00:25:29-23:00`, 23 hours ahead,
    sorts before `…T01:00:00+00:00`."""
    text = run.get("recorded_at")
    try:
        moment = datetime.datetime.fromisoformat(text) if isinstance(text, str) else None
        if moment is not None and moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.timezone.utc)
        instant = moment.timestamp() if moment is not None else None
    except (ValueError, OverflowError, OSError):  # year 1 at +01:00 is before year 1 in UTC
        return None
    return instant if instant is not None and instant >= 0 else None


def _run_order(run: Mapping[str, Any]) -> tuple[float, str, str]:
    return (run_instant(run) or 0.0, str(run.get("hostname") or ""), _canonical(run))


def _canonical(run: Mapping[str, Any]) -> str:
    return json.dumps(run, sort_keys=True, default=str)


def merge_runs(run_lists: Iterable[Iterable[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Every run of the lists once, oldest first; the newest MAX_RUNS of them."""
    unique = {_canonical(run): dict(run) for runs in run_lists for run in runs}
    return sorted(unique.values(), key=_run_order)[-MAX_RUNS:]


# An incoming run may be dated at most this far ahead of this machine's clock: CI runners'
# clocks agree to seconds; a run "from 2099" would otherwise outrank every genuine one.
CLOCK_SKEW = datetime.timedelta(hours=1)
CLOCK_SKEW_MIN = int(CLOCK_SKEW.total_seconds() // 60)


@dataclass
class Merged:
    """A machine's runs after a merge, and the incoming runs left out, by reason."""

    runs: list[dict[str, Any]]
    future: int = 0  # dated after now + CLOCK_SKEW
    no_room: int = 0  # no results file in the store, and no room left beside its runs
    rotated: int = 0  # the store's oldest, displaced by newer runs backed by results
    claimed: int = 0  # naming a results file a stored run names: another run's file


def merge_incoming(
    stored: Sequence[Mapping[str, Any]],
    incoming: Iterable[Mapping[str, Any]],
    files: set[str],
    now: datetime.datetime | None = None,
) -> Merged:
    """The store's runs with another tree's: no incoming run dated after now + CLOCK_SKEW
    (one at no readable moment counts as the oldest), and none that displaces a stored
    run unless it is newer and names a results file the merge brings (`files`, their
    names); none that names a file a stored run names.
    Runs naming no such file are kept only while there is room among the newest MAX_RUNS."""
    latest = latest_instant(now)
    known = {_canonical(run) for run in stored}
    fresh = {_canonical(r): dict(r) for r in incoming if _canonical(r) not in known}
    future = [r for r in fresh.values() if (run_instant(r) or 0.0) > latest]
    # A results file names its run's moment, so one run wrote it: an incoming record that
    # names a file a stored run names would pass for that run, or push it out.
    stored_files = {str(name) for run in stored for name in _named(run)}
    claims = [r for r in fresh.values() if any(str(n) in stored_files for n in _named(r))]
    valid = [r for r in fresh.values() if r not in future and r not in claims]

    def backed(run: Mapping[str, Any]) -> bool:
        return any(str(name) in files for name in _named(run))

    with_results = merge_runs([stored, [r for r in valid if backed(r)]])
    rotated = sum(1 for r in stored if _canonical(r) not in {_canonical(k) for k in with_results})
    room = MAX_RUNS - len(with_results)
    others = sorted((r for r in valid if not backed(r)), key=_run_order, reverse=True)
    kept = others[: max(room, 0)]
    runs = sorted([*with_results, *kept], key=_run_order)
    claimed = len([r for r in claims if r not in future])
    return Merged(runs, len(future), len(others) - len(kept), rotated, claimed)


def _named(run: Mapping[str, Any]) -> list[Any]:
    named = run.get("results")
    return named if isinstance(named, list) else []


def latest_instant(now: datetime.datetime | None = None) -> float:
    """The latest instant a run may be recorded at: now, plus the clock skew allowed."""
    return ((now or datetime.datetime.now(datetime.timezone.utc)) + CLOCK_SKEW).timestamp()


def render_runs(machine: str, runs: Sequence[Mapping[str, Any]]) -> str:
    data = {FORMAT_KEY: FORMAT, "machine": machine, RUNS_KEY: [dict(r) for r in runs]}
    import yaml  # imported when a file is written: reading the CLI stays light

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_runs(path: Path, machine: str, runs: Sequence[Mapping[str, Any]]) -> bool:
    """Write the host file atomically, and only when its text changes; whether it did."""
    text = render_runs(machine, runs)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    atomic_write(path, text.encode("utf-8"))
    return True


def read_runs(
    folder: Path, warnings: list[str], *, future: bool = False
) -> list[dict[str, Any]] | None:
    """Every run recorded in folder/serkit-host.yaml, oldest first (a run at no readable
    moment first of all); None without the file, or where it cannot be read. A run
    recorded after now (+ CLOCK_SKEW) is left out, said in `warnings`, unless `future` (a
    merge judges each incoming run itself): it would pass for the newest run, and hide
    the genuine one."""
    path = folder / HOST_FILE
    if not os.path.lexists(path):
        return None
    try:
        data = read_record(path, format="yaml", what="a host file", follow_links=False)
    except RefusedFile as exc:
        warnings.append(f"skipped {path}: {exc.rule}")
        return None
    found = data.get(FORMAT_KEY) if isinstance(data, dict) else None
    if not isinstance(data, dict) or found not in READABLE_FORMATS:
        formats = " or ".join(str(f) for f in READABLE_FORMATS)
        warnings.append(f"skipped {path}: not a serkit host file of format {formats}")
        return None
    runs: Any
    if found == 1:  # one host, as recorded before shards: one run
        runs = [{k: v for k, v in data.items() if k not in (FORMAT_KEY, "machine")}]
    else:
        runs = data.get(RUNS_KEY)
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        warnings.append(f"skipped {path}: its {RUNS_KEY} are not a list of entries")
        return None
    if not future:
        latest = latest_instant()
        dated = [r for r in runs if (run_instant(r) or 0.0) <= latest]
        if len(dated) < len(runs):
            warnings.append(
                f"{path}: left out {len(runs) - len(dated)} host record(s) dated after now "
                f"(+{CLOCK_SKEW_MIN} min): a run cannot come from the future"
            )
        runs = dated
    return sorted(runs, key=_run_order)


def run_of_file(runs: Iterable[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The run that filed the results file `name` (serkit.results.history), if recorded."""
    for run in runs:
        filed = run.get("results")
        if isinstance(filed, list) and name in filed:
            return run
    return None


def cpus_seen(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each distinct CPU (model and logical count) the runs saw, with its runs and shards."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        key = (str(run.get("cpu_model") or "not recorded"), str(run.get("logical_cpus") or "?"))
        entry = seen.setdefault(
            key,
            {"cpu_model": key[0], "logical_cpus": run.get("logical_cpus"), "runs": 0},
        )
        entry["runs"] += 1
        entry.setdefault("shards", set()).add(run.get("shard") or "whole")
        entry.setdefault("commits", set()).add(str(run.get("commit") or "?")[:8])
        entry["last"] = max(str(entry.get("last") or ""), str(run.get("recorded_at") or ""))
    return [
        {**e, "shards": sorted(e["shards"]), "commits": sorted(e["commits"])}
        for _, e in sorted(seen.items())
    ]


def mixed_cpu_warnings(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per machine name whose runs saw different CPUs (from `describe_hosts`)."""
    out = []
    for row in rows:
        cpus = row.get("cpus") or []
        if len(cpus) > 1:
            each = "; ".join(
                f"{c['cpu_model']} x{c['logical_cpus']} ({plural(c['runs'], 'run')}, shards "
                f"{', '.join(c['shards'])}, commits {', '.join(c['commits'])})"
                for c in cpus
            )
            out.append(
                f"machine {row['machine']}: its runs saw {len(cpus)} different CPUs, so its "
                f"results do not all come from one kind of hardware: {each}"
            )
    return out


def same_run(runs: Iterable[Mapping[str, Any]], file_a: str, file_b: str) -> bool:
    """Whether one recorded run wrote both results files (asv's names, as in a machine's
    folder): its environments then took their rounds in turn, interleaved, so that what
    moved the whole machine meanwhile moved both alike."""
    return any(
        file_a in files and file_b in files
        for files in (run.get("results") or () for run in runs)
        if isinstance(files, list)
    )


# --- `serkit hosts` ------------------------------------------------------------------
