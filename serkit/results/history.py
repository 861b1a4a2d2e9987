"""A store keyed by run: every run of an environment keeps its own results file.

asv keeps one results file per machine, commit and environment, `<commit8>-<env>.json`. A
second run at the same commit loads that file and overwrites each value it measures again
(asv/results.py, `Results.load_data`), so a weekly run at an unchanged commit left one
point, its values a mix of both runs, and a merge of the two refused the second.

serkit files each finished run under a name of its own: asv's name with the run's
moment, `<commit8>-<env>@<YYYYMMDDTHHMMSSZ>.json`. The moment is asv's own record, the
latest `started_at` in the file (when the run took its last values,
serkit.results.tree.run_moment), so any copy of the file names it the same way, and
`serkit results merge` files a run from any source exactly as `serkit bench` did.

asv's own tools still read the store: asv reads every `.json` file of a machine's folder
as a result (asv/results.py, `iter_results_paths`), and takes the commit from the name's
first 8 characters (`iter_results_for_machine_and_hash`). `asv publish` plots the mean of
a commit's runs as its one point (asv/graph.py, `Graph.get_data`); `asv compare` of two
commits reads one run of each. serkit's report shows every run, by its date.

The alternatives, and why not: `asv run --append-samples` pools every run's samples
into one value, so a change between two days is lost in the pool; a run date in
asv's `params` would split asv's graph of every benchmark into one line per run.
"""

from __future__ import annotations

import datetime
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.results.host_file import read_runs, run_of_file
from serkit.results.tree import (
    Environment,
    Measurement,
    ResultsFileError,
    load_json,
    read_tree,
    run_moment,
)

RUN_MARK = "@"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
# asv's name, then serkit's mark and the run's moment.
DATED = re.compile(r"^(?P<plain>.+)" + RUN_MARK + r"(?P<stamp>\d{8}T\d{6}Z)\.json$")


def stamp(millis: int) -> str:
    """A run's moment (milliseconds since the epoch) as its file name carries it, in UTC."""
    moment = datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    return moment.strftime(STAMP_FORMAT)


def dated_name(name: str, millis: int) -> str:
    """The name of one run's results file: asv's `name` with the run's moment."""
    return f"{plain_name(name)[: -len('.json')]}{RUN_MARK}{stamp(millis)}.json"


def plain_name(name: str) -> str:
    """asv's own name for a results file, whether or not serkit filed it by run."""
    found = DATED.match(name)
    return found["plain"] + ".json" if found else name


def is_dated(name: str) -> bool:
    return DATED.match(name) is not None


def file_moment(path: Path) -> int | None:
    """The run moment of the results file at `path`; None where asv recorded none or the
    file is not asv's."""
    try:
        return run_moment(load_json(path))
    except (OSError, ResultsFileError):
        return None


def file_run(path: Path, warnings: list[str] | None = None) -> Path:
    """File asv's results file at `path` under its run's name; the path it has now.

    A file already so named, or with no run moment (asv recorded no `started_at`), stays
    as it is. Where the run's name is taken by the same content, the copy under asv's name
    goes; by other content, both stay, said in `warnings`: nothing measured is lost.
    """
    if is_dated(path.name) or not path.is_file():
        return path
    moment = file_moment(path)
    if moment is None:
        return path
    target = path.with_name(dated_name(path.name, moment))
    if target.exists():
        if target.read_bytes() == path.read_bytes():
            path.unlink()
            return target
        if warnings is not None:
            warnings.append(
                f"{path} was left under asv's name: {target.name} holds another run of the "
                "same moment"
            )
        return path
    path.replace(target)  # one folder: a rename, whole or not at all
    return target


def file_runs(folder: Path, names: Iterable[str], warnings: list[str] | None = None) -> list[Path]:
    """File each of asv's results files `names` in `folder` that exists; their new paths."""
    return [file_run(folder / name, warnings) for name in names if (folder / name).is_file()]


@dataclass(frozen=True)
class StoredRun:
    """One run a store holds for a machine: what it measured, with what, and where."""

    name: str  # its results file's name
    env: Environment
    code: dict[str, str | None]  # asv's version hash of each benchmark it measured
    host: Mapping[str, Any] | None  # the host the run recorded (serkit-host.yaml), if any
    run_at: int  # when it took its last values, milliseconds since the epoch (0: unknown)


def stored_runs(store: Path, machine: str, warnings: list[str]) -> list[StoredRun]:
    """Every run `store` holds for `machine`, newest first; [] where it holds none."""
    if not (store / machine).is_dir():
        return []
    tree = read_tree(store, machines=[machine])
    warnings += tree.warnings
    by_file: dict[Path, list[Measurement]] = defaultdict(list)
    found = tree.machines.get(machine)
    for m in found.measurements if found else []:
        by_file[m.file].append(m)
    hosts = read_runs(store / machine, warnings) or []
    runs = [
        StoredRun(
            path.name,
            measured[0].env,
            {m.benchmark: m.code_version for m in measured},
            run_of_file(hosts, path.name),
            measured[0].run_at,
        )
        for path, measured in by_file.items()
    ]
    return sorted(runs, key=lambda r: (r.run_at, r.name), reverse=True)
