"""Merging asv results trees into one store: CI artifacts, another checkout, an rsync'd folder.

The rules, each tested:

- Every results file of every source lands in the store, filed by run
  (serkit.results.history): `<machine>/<commit8>-<env>@<run moment>.json`, the moment
  being asv's own latest `started_at` in the file. Two runs of one machine, commit and
  environment, on different days, are two files: both are kept, and neither is a conflict.
  A file already there with the same content (as JSON: asv's formatting may differ), under
  either name, is left alone, so merging twice changes nothing.
- A file that would overwrite a different result of the same run (the same machine,
  commit, environment and moment) is refused, with one line naming both files, and
  nothing is written: a silent overwrite would lose values.
- Each machine's host record (serkit-host.yaml) becomes the union of every source's
  runs, so each shard's host stays on record; but an incoming run dated after now (plus
  an hour's skew) is left out, and so is one naming a results file a stored run names;
  one displaces a stored run only when it is newer and names a results file this merge
  brings. A results file dated after now is left out. Each is said, one line each.
- Files are copied as bytes, never as links: a symbolic link in a source, to a file or
  as a machine folder, is left out with a warning, and so is anything not a regular
  file. Every file is read through serkit's guarded reader (its size and depth caps).
- asv's machine profile (machine.json) describes the machine and is not a result: the
  last source's wins, with a warning when it changes the store's.
- benchmarks.json is never copied: asv's sources carry whichever suite ran last there.
  It is written from the suite by the `discover` callable (serkit.run.runner's
  `discover_benchmarks`: `asv run --bench just-discover`).
- Everything is checked before anything is written, and each file is written whole
  (a temporary file renamed over it). A merge stopped half-way by a crash leaves whole
  files only, and running it again completes it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.errors import RefusedFile, SerkitError
from serkit.files import atomic_write
from serkit.inputs.documents import read_bytes
from serkit.inputs.limits import record_max_bytes
from serkit.results.history import dated_name, file_moment, is_dated, plain_name, stamp
from serkit.results.host_file import (
    CLOCK_SKEW_MIN,
    HOST_FILE,
    MAX_RUNS,
    Merged,
    merge_incoming,
    read_runs,
    write_runs,
)
from serkit.results.tree import (
    BENCHMARKS_FILE,
    MACHINE_FILE,
    RESULTS_FILE,
    RESULTS_VERSION,
    ResultsFileError,
    checked_moment,
    load_json,
    machine_folders,
    run_moment,
)

# A link in a tree from elsewhere could name any file the person merging can read.
LINK = "a symbolic link; a merge copies files' bytes and never follows a link"

Discover = Callable[[Path], Path]  # writes benchmarks.json into the folder given; its path


class MergeError(SerkitError):
    """The trees cannot be merged as they are; nothing was written."""


@dataclass
class MergeResult:
    into: Path
    sources: list[Path]
    machines: list[str]
    added: list[Path] = field(default_factory=list)  # relative to `into`
    identical: int = 0  # results files already in the store, unchanged
    profiles: list[str] = field(default_factory=list)  # machine.json written, by machine
    hosts: list[str] = field(default_factory=list)  # serkit-host.yaml written, by machine
    benchmarks_rewritten: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.profiles or self.hosts or self.benchmarks_rewritten)


@dataclass
class _Plan:
    files: dict[Path, Path] = field(default_factory=dict)  # relative target -> source file
    profiles: dict[str, Path] = field(default_factory=dict)  # machine -> source machine.json
    host_runs: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)  # machine -> its files' names
    identical: int = 0
    machines: set[str] = field(default_factory=set)


def _canonical(path: Path) -> str:
    """A file's content as JSON, so that formatting does not make two results differ."""
    return json.dumps(load_json(path), sort_keys=True)


def _check_results_file(path: Path, machine: str) -> None:
    """A results file asv wrote for this machine, or MergeError naming it."""
    try:
        data = load_json(path)
        if not isinstance(data, dict) or data.get("version") != RESULTS_VERSION:
            raise ResultsFileError(f"not an asv results file of version {RESULTS_VERSION}")
        params = data.get("params")
        recorded = params.get("machine") if isinstance(params, dict) else None
        if recorded != machine:
            raise ResultsFileError(f"it holds results of machine {recorded!r}, not {machine!r}")
        commit = str(data.get("commit_hash", ""))
        if not commit.lower().startswith(path.name[:8].lower()):
            raise ResultsFileError(f"its commit {commit[:12]!r} is not the one its name gives")
    except ResultsFileError as exc:
        raise MergeError(f"refusing to merge {path}: {exc}; nothing was written") from None


def _from_the_future(path: Path) -> str | None:
    """Why a results file's dates leave it out (a commit or run dated after now, or at no
    moment at all), or None: it would pass for the newest run, and hide the genuine one."""
    try:
        data = load_json(path)
    except ResultsFileError:
        return None  # _check_results_file names what else is wrong with it
    try:
        checked_moment(data.get("date") if isinstance(data, dict) else None, "date")
        checked_moment(run_moment(data), "latest started_at")
    except ResultsFileError as exc:
        return str(exc)
    return None


def _describe(path: Path) -> str:
    data = load_json(path)
    moment = file_moment(path)
    when = f", run at {stamp(moment)}" if moment is not None else ""
    return f"machine {path.parent.name}, commit {str(data.get('commit_hash'))[:12]}, " + (
        f"environment {data.get('env_name') or path.stem[9:]}{when}"
    )


def _run_name(into: Path, relative: Path, source: Path) -> Path | None:
    """Where a results file goes in the store: under its run's name; None where the store
    already holds that run under asv's plain name (merged before runs were filed)."""
    moment = file_moment(source)
    if moment is None:  # a run's name must carry its own moment, or none
        return relative.with_name(plain_name(relative.name))
    if is_dated(relative.name):  # named by a source: named again from its content
        return relative.with_name(dated_name(relative.name, moment))
    stored = into / relative
    try:
        if stored.is_file() and _canonical(stored) == _canonical(source):
            return None
    except ResultsFileError:
        pass  # the stored file is not asv's: the run goes in beside it
    return relative.with_name(dated_name(relative.name, moment))


def _plan_file(plan: _Plan, into: Path, relative: Path, source: Path, results: bool) -> None:
    """Add one file to the plan, or refuse it: the store's or an earlier source's differs."""
    if results:
        _check_results_file(source, relative.parent.name)
        filed = _run_name(into, relative, source)
        if filed is None:
            plan.identical += 1
            return
        relative = filed
    earlier = plan.files.get(relative)
    stored = into / relative
    against = earlier if earlier is not None else (stored if stored.is_file() else None)
    if against is None:
        plan.files[relative] = source
        return
    try:
        same = _read(against) == _read(source) or (
            results and _canonical(against) == _canonical(source)
        )
    except ResultsFileError:
        same = False
    if not same:
        what = f"the same run of {_describe(source)}" if results else "the same file"
        raise MergeError(
            f"refusing to merge {source}: {against} holds a different result for {what}; "
            "nothing was written (remove one of the two to keep the other)"
        )
    if earlier is None:
        plan.identical += 1


def _plan(sources: Sequence[Path], into: Path, warnings: list[str]) -> _Plan:
    plan = _Plan()
    for source in sources:
        if not source.is_dir():
            raise MergeError(f"no results folder at {source}; nothing was written")
        if source.resolve() == into.resolve():
            continue  # the store itself: everything in it is already there
        folders = machine_folders(source)
        if not folders:
            warnings.append(f"{source} holds no asv results (no machine folders): nothing from it")
        skipped = [
            p.name
            for p in sorted(source.iterdir())
            if p.name != BENCHMARKS_FILE and p not in folders and not p.name.startswith(".")
        ]
        if skipped:
            warnings.append(f"left out of {source}, not asv results: {', '.join(skipped)}")
        for folder in folders:
            machine = folder.name
            if folder.is_symlink():
                warnings.append(f"left out {folder}: {LINK}")
                continue
            plan.machines.add(machine)
            plan.names.setdefault(machine, set())
            for path in sorted(folder.iterdir()):
                relative = Path(machine) / path.name
                if path.name.startswith("."):
                    continue
                if path.is_symlink():
                    warnings.append(f"left out {path}: {LINK}")
                elif path.is_dir():
                    warnings.append(f"left out {path}: a folder inside a machine's folder")
                elif not path.is_file():
                    warnings.append(f"left out {path}: not a regular file (a FIFO, a device)")
                elif path.name == MACHINE_FILE:
                    plan.profiles[machine] = path
                elif path.name == HOST_FILE:
                    runs = read_runs(folder, warnings, future=True)  # judged on merging
                    if runs is not None:
                        plan.host_runs.setdefault(machine, []).append(runs)
                elif RESULTS_FILE.match(path.name) and (future := _from_the_future(path)):
                    warnings.append(f"left out {path}: {future}")
                else:
                    plan.names[machine].add(path.name)
                    _plan_file(plan, into, relative, path, bool(RESULTS_FILE.match(path.name)))
    return plan


def merge(sources: Sequence[Path], into: Path, discover: Discover) -> MergeResult:
    """Merge the results trees `sources` into the store `into` (created if missing)."""
    warnings: list[str] = []
    plan = _plan([Path(s) for s in sources], into, warnings)
    result = MergeResult(into, list(sources), sorted(plan.machines), warnings=warnings)
    # The suite's benchmarks.json, discovered before anything is written: if discovery
    # fails, the store is left as it was.
    with tempfile.TemporaryDirectory(prefix="serkit-merge-") as scratch:
        fresh = discover(Path(scratch)).read_bytes()
        for relative, source in sorted(plan.files.items()):
            atomic_write(into / relative, _read(source))
            result.added.append(relative)
        result.identical = plan.identical
        for machine, source in sorted(plan.profiles.items()):
            if _write_profile(into / machine / MACHINE_FILE, source, warnings):
                result.profiles.append(machine)
        for machine, run_lists in sorted(plan.host_runs.items()):
            path = into / machine / HOST_FILE
            stored = read_runs(path.parent, warnings) or []
            # Only a results file this merge brings backs a run: a record naming a file
            # the store already held would push out the run that wrote it.
            files = {r.name for r in plan.files if r.parent.name == machine}
            merged = merge_incoming(stored, [r for runs in run_lists for r in runs], files)
            warnings.extend(_dropped(path, merged))
            if write_runs(path, machine, merged.runs):
                result.hosts.append(machine)
        target = into / BENCHMARKS_FILE
        if not target.is_file() or target.read_bytes() != fresh:
            atomic_write(target, fresh)
            result.benchmarks_rewritten = True
    return result


def _read(source: Path) -> bytes:
    """A source file's bytes, through the guarded reader: a regular file, under the cap."""
    try:
        return read_bytes(source, record_max_bytes(), what="a results tree's file")
    except RefusedFile as exc:
        raise MergeError(f"refusing to merge {exc}") from None


def _dropped(path: Path, merged: Merged) -> list[str]:
    """What the merge left out of a host file, or rotated out of it, one line each."""
    lines = []
    if merged.future:
        lines.append(
            f"{path}: left out {merged.future} incoming host record(s) dated after now "
            f"(+{CLOCK_SKEW_MIN} min): a run cannot come from the future"
        )
    if merged.claimed:
        lines.append(
            f"{path}: left out {merged.claimed} incoming host record(s) naming a results file "
            "a stored run names: each results file is one run's"
        )
    if merged.no_room:
        lines.append(
            f"{path}: left out {merged.no_room} incoming host record(s) that name no results "
            f"file in the store: the {MAX_RUNS} runs kept are full, and such a record never "
            "displaces one"
        )
    if merged.rotated:
        lines.append(
            f"{path}: the store's {merged.rotated} oldest host record(s) made room for newer "
            f"runs whose results came in (the newest {MAX_RUNS} are kept)"
        )
    return lines


def _write_profile(target: Path, source: Path, warnings: list[str]) -> bool:
    content = _read(source)
    if target.is_file():
        if target.read_bytes() == content:
            return False
        try:
            old, new = load_json(target), load_json(source)
            changed = sorted(k for k in {*old, *new} if old.get(k) != new.get(k))
        except (ResultsFileError, AttributeError):
            changed = ["(unreadable before)"]
        warnings.append(
            f"{target}: asv's machine profile replaced by {source} (changed: {', '.join(changed)})"
        )
    atomic_write(target, content)
    return True
