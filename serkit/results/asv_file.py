"""One asv results file (format version 2): its layout, read and written in this module only.

asv 0.6 keeps `results/<machine>/machine.json`, one `results/<machine>/<commit8>-<env>.json`
per commit and environment, and one shared `results/benchmarks.json`. Each result row
lines up with the file's `result_columns`; its values are flattened in
`itertools.product(*params)` order, with the parameters stored as `repr()` strings, and a
skipped value is a bare `NaN` token (Python's json module reads it).

Beside asv's keys a file serkit ran keeps serkit's notes: each sample's canary readings
(serkit.results.canary), what each `asv run` cost (serkit.results.asv_runs) and what each
codec ran with (CODECS_KEY). asv rewrites the file with its own keys on every run, so
`attach_notes` writes them all back, in one rewrite. Every other module asks this one
(`read_file`, `rows`, `durations`) and never parses a results file itself; `results_data`
is the one writer (`serkit try --into`).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.checkout import plain_notes_dir
from serkit.errors import RefusedFile
from serkit.files import atomic_write
from serkit.inputs.documents import read_record
from serkit.results import asv_runs, canary
from serkit.results.asv_runs import BUILD, RUNS_KEY, AsvRun
from serkit.results.canary import CANARY_KEY, CANARY_VERSION, Note
from serkit.results.host_file import CLOCK_SKEW_MIN, latest_instant

RESULTS_VERSION = 2
MACHINE_FILE = "machine.json"
BENCHMARKS_FILE = "benchmarks.json"
# asv names each results file <first 8 hex digits of the commit>-<environment>.json;
# anything else in a machine's folder (machine.json, serkit-host.yaml) is not a result.
RESULTS_FILE = re.compile(r"^[0-9a-fA-F]{8}-.+\.json$")
REQUIRED_KEYS = ("commit_hash", "params", "python", "requirements", "result_columns", "results")
COLUMNS_KEY = "result_columns"
# What each codec of the run ran with: its library, then what its calls need beside it
# (serkit.run.libraries), as the checkout that ran it declared them. A comparison pairs a
# codec's values by these releases, so that it reads them from the files, not from the
# codecs of the serkit reading them; files written before it was kept have none.
CODECS_KEY = "serkit_codecs"


class ResultsFileError(ValueError):
    """A file in the results tree that is not what asv writes."""


def load_json(path: Path, root: Path | None = None) -> Any:
    """A JSON file of a results tree, through serkit's guarded reader: a regular file,
    under the size cap on a record, nesting under its depth cap (and inside `root`, when
    given). ResultsFileError, saying which rule, for anything else."""
    try:
        return read_record(path, root=root, what="a results tree's file")
    except RefusedFile as exc:
        raise ResultsFileError(exc.rule) from None


def rows(data: Any) -> dict[str, dict[str, Any]]:
    """Each benchmark's row in a results file's data, its columns by name; ResultsFileError
    where the rows are not laid out as asv's."""
    try:
        columns, found = data[COLUMNS_KEY], data["results"]
    except (TypeError, KeyError) as exc:
        raise ResultsFileError(f"not an asv results file: no {exc}") from None
    if not isinstance(found, dict) or not isinstance(columns, list):
        raise ResultsFileError("its results are not laid out as asv's")
    out = {}
    for name, values in found.items():
        if not isinstance(values, list):
            raise ResultsFileError(f"its row for {name!r} is not a list")
        out[str(name)] = dict(zip(columns, values))
    return out


def rows_or_none(data: Any) -> dict[str, dict[str, Any]]:
    """`rows`, {} where the data holds none as asv lays them out (a file being written)."""
    try:
        return rows(data)
    except ResultsFileError:
        return {}


def param_sets(row: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """A row's parameter sets, in the order its values are flattened."""
    axes = row.get("params") or []
    return [tuple(str(p) for p in combo) for combo in itertools.product(*axes)]


def column(row: Mapping[str, Any], name: str, size: int) -> list[Any]:
    """A row's column `name`, one entry per parameter set (None each where absent)."""
    values = row.get(name)
    if values is None:
        return [None] * size
    if not isinstance(values, list) or len(values) != size:
        raise ResultsFileError(f"its {name} column does not line up with its results")
    return values


def keep_rows(data: dict[str, Any], keep: Callable[[str, Mapping[str, Any]], bool]) -> None:
    """Leave in `data` only the rows `keep(name, row)` accepts (in place)."""
    found = rows(data)
    data["results"] = {
        name: values for name, values in data["results"].items() if keep(name, found[str(name)])
    }


# A value's columns in asv's rows: the value, its 99 % interval and its quartiles.
VALUE_COLUMNS = ("result", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75")


def with_values(
    data: dict[str, Any], values: Mapping[tuple[str, tuple[str, ...]], Sequence[float | None]]
) -> int:
    """Put `values` into `data`'s rows in place of asv's (in place): by benchmark and
    parameter set, one entry per VALUE_COLUMNS (None: not known, which asv leaves out).
    How many values were put in."""
    columns = data[COLUMNS_KEY]
    at = {name: columns.index(name) for name in VALUE_COLUMNS if name in columns}
    put = 0
    for name, row in data["results"].items():
        by_name = dict(zip(columns, row))
        grid = param_sets(by_name)
        for i, params in enumerate(grid):
            given = values.get((str(name), params))
            if given is None:
                continue
            for column_name, value in zip(VALUE_COLUMNS, given):
                if column_name not in at:
                    continue
                row.extend([None] * (at[column_name] + 1 - len(row)))  # asv drops trailing nulls
                kept = row[at[column_name]]
                if not isinstance(kept, list) or len(kept) != len(grid):
                    kept = [None] * len(grid)  # asv writes a column of no values as null
                kept[i] = value
                row[at[column_name]] = kept
            put += 1
    return put


def read_data(path: Path) -> dict[str, Any]:
    """A results file's data as asv left it, {} where there is none yet or it is unreadable
    (a file between two `asv run`s of serkit's rounds: not checked as a tree's are)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_moment(data: Any) -> int | None:
    """When a results file's run took its last values: the latest `started_at` asv recorded
    (milliseconds since the epoch), or None where it recorded none."""
    try:
        found = rows(data)
    except (ResultsFileError, AttributeError):
        return None
    moments = [row["started_at"] for row in found.values() if _is_moment(row.get("started_at"))]
    return int(max(moments)) if moments else None


def checked_moment(value: Any, what: str) -> int:
    """A moment a results file records, in ms since the epoch (0: none recorded).
    ResultsFileError for one that is no number from 1970 to now (+ CLOCK_SKEW): a run
    dated in 2100 would pass for the newest, and hide the genuine one."""
    if value is None:
        return 0
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    latest = latest_instant() * 1000
    if not (number and math.isfinite(value) and 0 <= value <= latest):
        ahead = number and value > latest  # not NaN, and not before 1970
        raise ResultsFileError(
            f"its {what} {value!r} is no moment from 1970 to now (+{CLOCK_SKEW_MIN} min)"
            + (": a run cannot come from the future" if ahead else "")
        )
    return int(value)


def _is_moment(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


def durations(data: Any) -> dict[str, Any]:
    """Each benchmark's duration in its last `asv run`, as recorded; {} where none is."""
    return {name: row["duration"] for name, row in rows_or_none(data).items() if "duration" in row}


def with_durations(path: Path, kept: Mapping[str, Any]) -> None:
    """Put back each benchmark's duration in `kept` into the results file at `path`."""
    data = read_data(path)
    columns, found = data.get(COLUMNS_KEY), data.get("results")
    if not isinstance(columns, list) or "duration" not in columns or not isinstance(found, dict):
        return  # asv's own error says more
    at = columns.index("duration")
    for name, row in found.items():
        if name in kept and isinstance(row, list) and len(row) > at:
            row[at] = kept[name]
    atomic_write(path, json.dumps(data).encode())


def _asv_durations(data: Mapping[str, Any]) -> dict[str, float]:
    """asv's own entries in a results file's `durations`: each setup_cache, the build."""
    raw = data.get("durations")
    if not isinstance(raw, dict):
        return {}
    try:
        return {str(k): float(v) for k, v in raw.items()}
    except (TypeError, ValueError):
        return {}


def _stamped(data: Mapping[str, Any]) -> dict[str, tuple[Any, float]]:
    """Each benchmark's (started_at, duration) in a results file's data."""
    try:
        return {
            name: (row.get("started_at"), float(row.get("duration") or 0.0))
            for name, row in rows_or_none(data).items()
        }
    except (TypeError, ValueError):
        return {}


def recorded_run(
    before: Mapping[str, Any], after: Mapping[str, Any], wall_s: float, waited_s: float = 0.0
) -> AsvRun:
    """One `asv run`'s record (serkit.results.asv_runs), from its results file's data before
    and after it: what it ran is what asv stamped anew (a benchmark's started_at, a
    duration's value)."""
    old_rows, new_rows = _stamped(before), _stamped(after)
    ran = sum(
        duration
        for name, (started, duration) in new_rows.items()
        if old_rows.get(name, (None, 0.0))[0] != started
    )
    old, new = _asv_durations(before), _asv_durations(after)
    changed = {key: value for key, value in new.items() if old.get(key) != value}
    build = changed.pop(BUILD, 0.0)
    recorded_s = round(ran + sum(changed.values()), 3)
    return AsvRun(round(wall_s, 3), recorded_s, round(build, 3), round(waited_s, 1))


def attach_notes(
    results: Path, folder: Path, codecs: Mapping[str, Sequence[str]] | None = None
) -> bool:
    """Write serkit's notes in `folder` (the canary's, the `asv run`s') into the results file
    at `results`, with what each codec ran with (`codecs`: its library first), in one
    rewrite; whether it did."""
    notes = canary.read_notes(folder)
    runs = asv_runs.read_notes(folder)
    if not notes and not runs and not codecs:
        return False
    data = read_data(results)
    if not data:
        return False  # asv wrote nothing readable: its own error says more
    data.update(serkit_keys(notes, codecs))
    if runs:
        data[RUNS_KEY] = [asv_runs.as_row(r) for r in runs]
    atomic_write(results, json.dumps(data).encode())
    return True


def serkit_keys(
    notes: Mapping[str, Mapping[str, Sequence[Any]]] | None,
    codecs: Mapping[str, Sequence[str]] | None,
) -> dict[str, Any]:
    """serkit's keys in a results file: the canary's `notes` (rows as
    serkit.results.canary.read_notes makes them) and what each codec ran with (`codecs`:
    its library first); only those given."""
    found: dict[str, Any] = {}
    if codecs:
        found[CODECS_KEY] = {name: list(libraries) for name, libraries in sorted(codecs.items())}
    if notes:
        found[CANARY_KEY] = {"version": CANARY_VERSION, "rows": notes}
    return found


def results_data(
    header: Mapping[str, Any],
    results: Mapping[str, Mapping[str, Any]],
    notes: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
    codecs: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """A results file's data: asv's keys in `header` (commit_hash, env_name, date, params,
    python, requirements, env_vars), each benchmark's row given by column name, and
    serkit's keys (`serkit_keys`)."""
    columns = list(dict.fromkeys(c for row in results.values() for c in row))
    return {
        "version": RESULTS_VERSION,
        **header,
        COLUMNS_KEY: columns,
        "results": {name: [row.get(c) for c in columns] for name, row in results.items()},
        "durations": {},
        **serkit_keys(notes, codecs),
    }


@dataclass(frozen=True)
class ResultsFile:
    """What one results file holds, as read: asv's keys, its rows, and serkit's notes."""

    path: Path
    commit: str
    date: int  # the commit's, milliseconds since the epoch (0: not recorded)
    python: str
    requirements: Any  # as recorded: an object of names and versions, checked by the tree
    params: Any
    env_vars: Any
    rows: dict[str, dict[str, Any]]
    # Each sample's canary notes, by (benchmark, params_key) (serkit.results.canary).
    notes: dict[tuple[str, str], list[Note]]
    runs: list[AsvRun]  # the `asv run`s it records (serkit.results.asv_runs)
    durations: dict[str, Any]  # asv's own entries: setup_cache and the build
    run_at: int  # its run's moment (`run_moment`), 0 where unknown
    # By codec, what it ran with: its library, then its companions (CODECS_KEY); {} where
    # the file does not say.
    codecs: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def samples_per_process(self) -> dict[str, int]:
        """Each benchmark's samples per process in its run, from its notes."""
        return canary.samples_per_process(self.notes)

    @property
    def waited_s(self) -> float:
        return sum(run.waited_s for run in self.runs)

    def notes_of(self, benchmark: str, params: Sequence[str]) -> list[Note]:
        return self.notes.get((benchmark, canary.params_key(params)), [])


def check_version(data: Any) -> None:
    """ResultsFileError unless `data` is an asv results file of RESULTS_VERSION."""
    if not isinstance(data, dict) or data.get("version") != RESULTS_VERSION:
        found = data.get("version") if isinstance(data, dict) else None
        older = isinstance(found, int) and 0 < found < RESULTS_VERSION
        hint = "; `asv update` converts older results" if older else ""
        raise ResultsFileError(
            f"not an asv results file of version {RESULTS_VERSION} (version: {found!r}){hint}"
        )
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ResultsFileError(f"not an asv results file: no {', '.join(missing)}")


def partial_file(path: Path) -> ResultsFile | None:
    """The results file at `path` as asv left it between two `asv run`s of one run: its rows
    and serkit's notes, its other keys as far as written; None where it holds no rows."""
    data = read_data(path)
    try:
        return _results_file(path, data, rows(data))
    except (ResultsFileError, LookupError, TypeError, ValueError, AttributeError):
        return None


def _results_file(
    path: Path, data: Mapping[str, Any], found: dict[str, dict[str, Any]]
) -> ResultsFile:
    raw = data.get("durations")
    return ResultsFile(
        path=path,
        commit=str(data.get("commit_hash", "")),
        date=checked_moment(data.get("date"), "date"),
        python=str(data.get("python", "")),
        requirements=data.get("requirements", {}),
        params=data.get("params", {}),
        env_vars=data.get("env_vars") or {},
        rows=found,
        notes=canary.notes_of(data) or _plain_notes(path, data, found),
        runs=asv_runs.runs_of(data),
        durations=dict(raw) if isinstance(raw, dict) else {},
        run_at=checked_moment(run_moment(data), "latest started_at"),
        codecs=_codecs(data.get(CODECS_KEY)),
    )


def _plain_notes(
    path: Path, data: Mapping[str, Any], found: Mapping[str, Mapping[str, Any]]
) -> dict[tuple[str, str], list[Note]]:
    """The canary notes a plain `asv run` kept for this file in its results tree
    (serkit.checkout.plain_notes_dir, beside the machine's folder), matched to its samples;
    {} where there are none."""
    commit, env_name = data.get("commit_hash"), data.get("env_name")
    if not isinstance(commit, str) or not isinstance(env_name, str):
        return {}
    folder = plain_notes_dir(path.parent.parent, commit, env_name)
    if not folder.is_dir():
        return {}
    samples: dict[tuple[str, str], list[float]] = {}
    for name, row in found.items():
        grid = param_sets(row)
        for params, kept in zip(grid, column(row, "samples", len(grid))):
            if isinstance(kept, list):
                numbers = [float(s) for s in kept if isinstance(s, (int, float)) and s > 0]
                samples[(name, canary.params_key(params))] = numbers
    return canary.matched_notes(folder, samples)


def _codecs(block: Any) -> dict[str, tuple[str, ...]]:
    """CODECS_KEY's codecs, each with a library and names as strings; {} where not so."""
    if not isinstance(block, dict):
        return {}
    return {
        str(name): tuple(libraries)
        for name, libraries in block.items()
        if isinstance(libraries, list) and libraries and all(isinstance(x, str) for x in libraries)
    }


def read_file(path: Path, machine: str | None = None) -> ResultsFile:
    """The results file at `path`, checked to be asv's (and, where `machine` is named, to
    hold that machine's results); ResultsFileError where it is not."""
    data = load_json(path)
    check_version(data)
    recorded = data["params"].get("machine") if isinstance(data["params"], dict) else None
    if machine is not None and recorded != machine:
        raise ResultsFileError(f"it holds results of machine {recorded!r}, not {machine!r}")
    return _results_file(path, data, rows(data))
