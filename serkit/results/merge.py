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
  file. Every file is read once, through serkit's guarded reader (its size and depth
  caps, opened without following a link), and what was checked is what is copied.
- Only what asv's results layout holds is copied: machine.json, results files named as
  asv names them, and serkit's own records (RECORDS). Anything else is left out, named.
- asv's machine profile (machine.json) describes the machine and is not a result: the
  last source's wins, with a warning when it changes the store's.
- benchmarks.json is never copied: asv's sources carry whichever suite ran last there.
  It is written from the suite by the `discover` callable (serkit.run.runner's
  `discover_benchmarks`: `asv run --bench just-discover`).
- Everything is checked before anything is written, and every file is written whole,
  all of them or none (serkit.files.write_together: each to a temporary beside its place,
  then all renamed in; never through a link or into a FIFO in the store). A merge stopped
  by a full disk leaves the store as it was. A merge stopped half-way by a crash leaves whole
  files only, and running it again completes it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.errors import RefusedFile, SerkitError
from serkit.files import make_folder, write_together
from serkit.inputs.documents import read_record
from serkit.inputs.guarded_read import read_bytes
from serkit.inputs.limits import record_max_bytes
from serkit.results.builds import BUILDS_FILE
from serkit.results.history import dated_name, is_dated, plain_name, stamp
from serkit.results.host_file import (
    CLOCK_SKEW_MIN,
    HOST_FILE,
    MAX_RUNS,
    Merged,
    merge_incoming,
    read_runs,
    render_runs,
)
from serkit.results.noise import NOISE_FILE, POWER_FILE
from serkit.results.tree import (
    BENCHMARKS_FILE,
    MACHINE_FILE,
    RESULTS_FILE,
    RESULTS_VERSION,
    ResultsFileError,
    checked_moment,
    machine_folders,
    run_moment,
)

# A link in a tree from elsewhere could name any file the person merging can read.
LINK = "a symbolic link; a merge copies files' bytes and never follows a link"

# What a machine's folder may hold beside asv's machine.json and results files: serkit's
# own records. Anything else in a source is left out, and named.
RECORDS = frozenset({HOST_FILE, BUILDS_FILE, NOISE_FILE, POWER_FILE})
# The characters of asv's results file names: its environment names, serkit's run mark.
ASV_NAME = re.compile(r"[\w.+\-@]{1,250}", re.ASCII)

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


@dataclass(frozen=True)
class _Read:
    """A source file, read once through the guarded reader (never through a link): what
    was checked is what is copied, whatever is at its path later."""

    path: Path
    data: bytes

    def json(self) -> Any:
        """Its content as JSON, parsed from the bytes read; ResultsFileError, saying why."""
        parsed = self._parsed
        if isinstance(parsed, ResultsFileError):
            raise parsed
        return parsed

    @functools.cached_property
    def _parsed(self) -> Any:
        # Parsed once, within its budget: the checks, the run's name and the summary all
        # read it, and a file near the cap costs seconds a parse.
        try:
            return read_record(self.path, data=self.data, what="a results tree's file")
        except RefusedFile as exc:
            return ResultsFileError(exc.rule)


@dataclass
class _Copies:
    files: dict[Path, _Read] = field(default_factory=dict)  # relative target -> source file
    profiles: dict[str, _Read] = field(default_factory=dict)  # machine -> its machine.json
    host_runs: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)  # machine -> its files' names
    identical: int = 0
    machines: set[str] = field(default_factory=set)


def _canonical(source: _Read) -> str:
    """A file's content as JSON, so that formatting does not make two results differ."""
    return json.dumps(source.json(), sort_keys=True)


def _check_results_file(source: _Read, machine: str) -> None:
    """A results file asv wrote for this machine, or MergeError naming it."""
    path = source.path
    try:
        data = source.json()
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


def _moment(source: _Read) -> int | None:
    try:
        return run_moment(source.json())
    except ResultsFileError:
        return None


def _from_the_future(source: _Read) -> str | None:
    """Why a results file's dates leave it out (a commit or run dated after now, or at no
    moment at all), or None: it would pass for the newest run, and hide the genuine one."""
    try:
        data = source.json()
    except ResultsFileError:
        return None  # _check_results_file names what else is wrong with it
    try:
        checked_moment(data.get("date") if isinstance(data, dict) else None, "date")
        checked_moment(run_moment(data), "latest started_at")
    except ResultsFileError as exc:
        return str(exc)
    return None


def _describe(source: _Read) -> str:
    data = source.json()
    moment = _moment(source)
    when = f", run at {stamp(moment)}" if moment is not None else ""
    path = source.path
    return f"machine {path.parent.name}, commit {str(data.get('commit_hash'))[:12]}, " + (
        f"environment {data.get('env_name') or path.stem[9:]}{when}"
    )


def _stored(into: Path, relative: Path) -> _Read | None:
    """The store's file at `relative`, read once; None where there is none."""
    path = into / relative
    return _Read(path, _read(path)) if os.path.lexists(path) else None


def _run_name(into: Path, relative: Path, source: _Read) -> Path | None:
    """Where a results file goes in the store: under its run's name; None where the store
    already holds that run under asv's plain name (merged before runs were filed)."""
    moment = _moment(source)
    if moment is None:  # a run's name must carry its own moment, or none
        return relative.with_name(plain_name(relative.name))
    if is_dated(relative.name):  # named by a source: named again from its content
        return relative.with_name(dated_name(relative.name, moment))
    try:
        stored = _stored(into, relative)
        if stored is not None and _canonical(stored) == _canonical(source):
            return None
    except (ResultsFileError, MergeError):
        pass  # the stored file is not asv's: the run goes in beside it
    return relative.with_name(dated_name(relative.name, moment))


def _plan_file(plan: _Copies, into: Path, relative: Path, source: _Read, results: bool) -> None:
    """Add one file to the plan, or refuse it: the store's or an earlier source's differs."""
    if results:
        _check_results_file(source, relative.parent.name)
        filed = _run_name(into, relative, source)
        if filed is None:
            plan.identical += 1
            return
        relative = filed
    earlier = plan.files.get(relative)
    against = earlier if earlier is not None else _stored(into, relative)
    if against is None:
        plan.files[relative] = source
        return
    try:
        same = against.data == source.data or (
            results and _canonical(against) == _canonical(source)
        )
    except ResultsFileError:
        same = False
    if not same:
        what = f"the same run of {_describe(source)}" if results else "the same file"
        raise MergeError(
            f"refusing to merge {source.path}: {against.path} holds a different result for "
            f"{what}; nothing was written (remove one of the two to keep the other)"
        )
    if earlier is None:
        plan.identical += 1


def _plan(sources: Sequence[Path], into: Path, warnings: list[str]) -> _Copies:
    plan = _Copies()
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
            if folder.is_symlink():
                warnings.append(f"left out {folder}: {LINK}")
                continue
            _plan_machine(plan, into, folder, warnings)
    return plan


def _plan_machine(plan: _Copies, into: Path, folder: Path, warnings: list[str]) -> None:
    """One machine's folder into the plan: what asv's results layout holds (RECORDS).
    The folder is opened once, never through a link, and its files found in it."""
    try:
        opened = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        warnings.append(f"left out {folder}: {LINK}")  # swapped for a link since listed
        return
    try:
        _plan_files(plan, into, folder, opened, warnings)
    finally:
        os.close(opened)


def _plan_files(plan: _Copies, into: Path, folder: Path, opened: int, warnings: list[str]) -> None:
    machine = folder.name
    plan.machines.add(machine)
    plan.names.setdefault(machine, set())
    unknown = []
    for name in sorted(os.listdir(opened)):
        path = folder / name
        if name.startswith("."):
            continue
        kind = os.stat(name, dir_fd=opened, follow_symlinks=False).st_mode
        if stat.S_ISLNK(kind):
            warnings.append(f"left out {path}: {LINK}")
        elif stat.S_ISDIR(kind):
            warnings.append(f"left out {path}: a folder inside a machine's folder")
        elif not stat.S_ISREG(kind):
            warnings.append(f"left out {path}: not a regular file (a FIFO, a device)")
        elif name == MACHINE_FILE:
            plan.profiles[machine] = _Read(path, _read(path, opened))
        elif name == HOST_FILE:
            runs = read_runs(folder, warnings, future=True)  # judged on merging
            if runs is not None:
                plan.host_runs.setdefault(machine, []).append(runs)
        elif name in RECORDS or _results_name(name):
            source = _Read(path, _read(path, opened))
            if name not in RECORDS and (future := _from_the_future(source)):
                warnings.append(f"left out {path}: {future}")
                continue
            plan.names[machine].add(name)
            _plan_file(plan, into, Path(machine) / name, source, name not in RECORDS)
        else:
            unknown.append(name)
    if unknown:
        warnings.append(
            f"left out of {folder}, not in asv's results layout (machine.json, results files "
            f"named as asv names them, serkit's records): {', '.join(unknown)}"
        )


def _results_name(name: str) -> bool:
    """A results file's name as asv gives it (the commit's 8 hex digits, the environment),
    filed by run or not, in the characters asv's environment names use."""
    return bool(RESULTS_FILE.match(name) and ASV_NAME.fullmatch(name))


def merge(sources: Sequence[Path], into: Path, discover: Discover) -> MergeResult:
    """Merge the results trees `sources` into the store `into` (created if missing)."""
    warnings: list[str] = []
    plan = _plan([Path(s) for s in sources], into, warnings)
    result = MergeResult(into, list(sources), sorted(plan.machines), warnings=warnings)
    # The suite's benchmarks.json, discovered before anything is written: if discovery
    # fails, the store is left as it was.
    with tempfile.TemporaryDirectory(prefix="serkit-merge-") as scratch:
        fresh = discover(Path(scratch)).read_bytes()
    for machine in sorted(plan.machines):
        make_folder(into / machine, within=into)  # a link in the store is never followed
    writes: dict[Path, bytes | str] = {}
    for relative, source in sorted(plan.files.items()):
        writes[into / relative] = source.data
        result.added.append(relative)
    result.identical = plan.identical
    for machine, profile in sorted(plan.profiles.items()):
        if _profile_changed(into, into / machine / MACHINE_FILE, profile, warnings):
            writes[into / machine / MACHINE_FILE] = profile.data
            result.profiles.append(machine)
    for machine, run_lists in sorted(plan.host_runs.items()):
        path = into / machine / HOST_FILE
        stored = read_runs(path.parent, warnings) or []
        # Only a results file this merge brings backs a run: a record naming a file
        # the store already held would push out the run that wrote it.
        files = {r.name for r in plan.files if r.parent.name == machine}
        merged = merge_incoming(stored, [r for runs in run_lists for r in runs], files)
        warnings.extend(_dropped(path, merged))
        text = render_runs(machine, merged.runs)
        before = _stored(into, path.relative_to(into))
        if before is None or before.data != text.encode("utf-8"):
            writes[path] = text
            result.hosts.append(machine)
    stored_benchmarks = _stored(into, Path(BENCHMARKS_FILE))
    if stored_benchmarks is None or stored_benchmarks.data != fresh:
        writes[into / BENCHMARKS_FILE] = fresh
        result.benchmarks_rewritten = True
    # All or none: a full disk part-way leaves the store as it was.
    write_together(writes, within=into)
    return result


def _read(source: Path, folder: int | None = None) -> bytes:
    """A file's bytes, through the guarded reader: a regular file, under the cap, opened
    without following a link (found in the open `folder`, when given)."""
    try:
        cap = record_max_bytes()
        what = "a results tree's file"
        return read_bytes(source, cap, what=what, follow_links=False, folder=folder)
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


def _profile_changed(into: Path, target: Path, source: _Read, warnings: list[str]) -> bool:
    """Whether the store's machine.json differs from `source`'s; said, with what changed."""
    stored = _stored(into, target.relative_to(into))
    if stored is None:
        return True
    if stored.data == source.data:
        return False
    try:
        old, new = stored.json(), source.json()
        changed = sorted(k for k in {*old, *new} if old.get(k) != new.get(k))
    except (ResultsFileError, AttributeError, TypeError):
        changed = ["(unreadable before)"]
    warnings.append(
        f"{target}: asv's machine profile replaced by {source.path} (changed: {', '.join(changed)})"
    )
    return True
