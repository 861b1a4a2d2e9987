"""The part of a results tree that asv's own pages can show safely (`serkit report`).

asv's pages insert strings from the results tree into HTML as they are: a benchmark's
name (in links), code, pretty name and unit (tooltips), a machine's profile (tooltips),
each key of an environment's parameters and variables (asv makes `env-<key>` a panel
heading). A results tree merged from many runners could carry markup in any of them.
So `asv publish` reads a copy built from an allow-list: each field asv may receive has
one rule below, and a field no rule names is not copied. A name must match a
conservative pattern, free text is escaped (serkit.text.html_text), a number must be a
number; a record breaking a rule is left out, and named.

Its timings are the values serkit judged, not asv's: each the median of its processes as
judged by the machine's state when the tree was read (Measurement.judged_value), with a
99 % interval from their spread, where asv's is the median of every sample, slow ones
included. So asv's graphs show what serkit's own pages show; the copy says so in each
results file (VALUES_KEY) and in each such benchmark's code.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.files import write_together
from serkit.results.asv_file import COLUMNS_KEY, keep_rows, with_values
from serkit.results.measurement import Measurement
from serkit.results.tree import (
    ASV_MACHINE_FIELDS,
    BENCHMARKS_FILE,
    MACHINE_FILE,
    ResultsFileError,
    ResultsTree,
    load_json,
    safe_row,
    shown,
)
from serkit.stats import Z_99, spread, standard_error
from serkit.text import html_text

# A name: a machine's (its folder's, its profile's `machine`), each key of a results
# file's `params`, `requirements` and `env_vars`, a benchmark's parameter names and version.
SAFE_NAME = re.compile(r"[A-Za-z0-9_.+\-@]{1,200}")
# A commit, as asv names it in a results file and in a link to the commit.
SAFE_COMMIT = re.compile(r"[0-9a-f]{7,40}")
# A benchmark's unit: asv's seconds and bytes, or a track's own words ("1 = exact round
# trip, 0 = lossy"). asv's point tooltip renders it as HTML.
SAFE_UNIT = re.compile(r"[A-Za-z0-9_ ,.:;=/%()+\-]{1,200}")
# A benchmark's parameter value as asv writes it, repr() of a string or a number: quotes
# only around it, so that it cannot end an attribute (serkit's reader allows its characters).
SAFE_PARAM_VALUE = re.compile(r"'[^'\"]*'|\"[^'\"]*\"|[^'\"]*")
BENCHMARK_TYPES = frozenset({"time", "track", "memory", "peakmemory"})
# An environment's name and Python version: asv's pages show them and build paths from them.
SAFE_ENVIRONMENT = re.compile(r"[\w .,:+\-/=~@()\[\]]{0,1000}")


# What the copy's timings are, said where asv's tools and a reader of the copy find it:
# a key of each results file whose values serkit put in (asv ignores it), and a comment
# heading the code of each benchmark shown so (asv's pages show the code).
VALUES_KEY = "serkit_values"
JUDGED_VALUES = (
    "serkit's judged values: each timing the median of its processes, each process judged "
    "by the machine's state (fast samples, or slow ones corrected by the canary), with a "
    "99 % interval and quartiles over those processes; not asv's median of every sample"
)
JUDGED_CODE = f"# Values shown: {JUDGED_VALUES}.\n"

Key = tuple[str, tuple[str, ...]]  # a benchmark and one set of its parameters
Judged = dict[Path, dict[Key, Sequence[float | None]]]  # by results file


def judged_columns(m: Measurement) -> tuple[float | None, ...] | None:
    """`m` as serkit judged it, in asv's value columns (serkit.results.asv_file.VALUE_COLUMNS):
    the value, its 99 % interval (from the standard error of its typical processes; None
    under two) and the quartiles of its processes; None where no process was judged."""
    values, shown_value = m.process_values, m.judged_value
    if not values or shown_value is None:
        return None
    between, error = spread(values), standard_error(values)
    low = high = None
    if error is not None:
        low, high = shown_value * math.exp(-Z_99 * error), shown_value * math.exp(Z_99 * error)
    return (shown_value, low, high, between.q1, between.q3)


def _judged_by_file(measurements: Iterable[Measurement]) -> Judged:
    """Each results file's values as serkit judged them (`judged_columns`), where it did."""
    found: Judged = {}
    for m in measurements:
        columns = judged_columns(m)
        if columns is not None:
            found.setdefault(m.file, {})[(m.benchmark, m.params)] = columns
    return found


class Refused(ValueError):
    """A record breaking a rule of the allow-list: which rule."""


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
        raise Refused(f"its {what} {shown(str(value))} is not a plain name")
    return value


def _scalar(value: Any, what: str) -> Any:
    """A value shown as text: a string escaped, a finite number or None as it is."""
    if isinstance(value, str):
        return html_text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise Refused(f"a value of its {what} is not text or a number")


def _named_text(mapping: Any, what: str) -> dict[str, Any]:
    """A mapping asv shows: each key a plain name, each value text or a number."""
    if not isinstance(mapping, dict):
        raise Refused(f"its {what} is not an object")
    return {_name(k, f"{what} key"): _scalar(v, what) for k, v in mapping.items()}


def _profile(name: str, profile: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """machine.json as asv may show it: asv's own fields, each value text. The keys left
    out, named."""
    if profile.get("machine") != name:
        raise Refused(f"its {MACHINE_FILE} is missing or not an asv machine profile")
    extra = sorted(shown(str(k)) for k in profile if k not in ASV_MACHINE_FIELDS)
    kept = {k: v for k, v in profile.items() if k in ASV_MACHINE_FIELDS}
    if not all(isinstance(v, (str, int)) for v in kept.values()):
        raise Refused(f"its {MACHINE_FILE} is missing or not an asv machine profile")
    return {**{k: _scalar(v, MACHINE_FILE) for k, v in kept.items()}, "version": 1}, extra


def _benchmark(key: str, row: Mapping[str, Any], judged: bool = False) -> dict[str, Any]:
    """One benchmark of benchmarks.json as asv may receive it: what its pages read; its
    code headed by JUDGED_CODE where its values in the copy are serkit's (`judged`)."""
    if row.get("name") != key:
        raise Refused(f"its name is not {key}")
    params, names = row.get("params"), row.get("param_names")
    if not isinstance(params, list) or not isinstance(names, list) or len(params) != len(names):
        raise Refused("it has no parameters and parameter names that line up, as asv needs")
    if not all(isinstance(p, str) and SAFE_PARAM_VALUE.fullmatch(p) for a in params for p in a):
        raise Refused("a parameter value is not one quoted string or a number")
    kept: dict[str, Any] = {
        "name": key,
        "params": params,
        "param_names": [_name(n, "parameter name") for n in names],
        "version": None if row.get("version") is None else _name(row["version"], "version"),
    }
    if "type" in row:
        if row["type"] not in BENCHMARK_TYPES:
            raise Refused(f"its type {shown(str(row['type']))} is not one of asv's")
        kept["type"] = row["type"]
    if "unit" in row:
        if not isinstance(row["unit"], str) or not SAFE_UNIT.fullmatch(row["unit"]):
            raise Refused(f"its unit {shown(str(row['unit']))} is not a plain unit")
        kept["unit"] = row["unit"]
    kept.update({k: html_text(row[k]) for k in ("code", "pretty_name") if k in row})
    if judged:
        kept["code"] = html_text(JUDGED_CODE) + kept.get("code", "")
    return kept


def _environment(data: Mapping[str, Any], machine: str) -> dict[str, Any]:
    """A results file's own fields as asv may receive them: its commit, date, Python and
    environment's name checked, its parameters, requirements and variables by
    _named_text, the machine its folder's. Its rows are filtered apart."""
    named = [data.get("env_name"), data.get("python")]
    if not all(isinstance(v, str) and SAFE_ENVIRONMENT.fullmatch(v) for v in named):
        raise Refused("its environment's name holds characters unsafe in a page")
    commit = data.get("commit_hash")
    if not isinstance(commit, str) or not SAFE_COMMIT.fullmatch(commit):
        raise Refused(f"its commit {shown(str(commit))} is not a commit's hash")
    date = data.get("date")
    if isinstance(date, bool) or not isinstance(date, int):
        raise Refused("its date is not a time in milliseconds")
    return {
        "version": data.get("version"),
        "commit_hash": commit,
        "env_name": data["env_name"],
        "date": date,
        "params": {**_named_text(data.get("params"), "params"), "machine": machine},
        "python": data["python"],
        "requirements": _named_text(data.get("requirements"), "requirements"),
        "env_vars": _named_text(data.get("env_vars") or {}, "env_vars"),
        COLUMNS_KEY: data[COLUMNS_KEY],
        "results": data["results"],
    }


def publishable_copy(tree: ResultsTree, into: Path) -> list[str]:
    """Write into `into` the part of `tree` that asv's own tools can read safely: each
    machine with a profile, the results files serkit read, without the rows it skipped
    as unsafe and with its timings as serkit judged them, and benchmarks.json likewise,
    each by the allow-list above. Says, one line each, what was left out."""
    left_out: list[str] = []
    writes: dict[Path, bytes | str] = {}
    judged = _judged_by_file(m for machine in tree.machines.values() for m in machine.measurements)
    judged_names = {name for by_key in judged.values() for name, _ in by_key}
    source = tree.root / BENCHMARKS_FILE
    if source.is_file():
        try:
            listed = load_json(source)
        except ResultsFileError:
            listed = None
        if isinstance(listed, dict):
            described: dict[str, Any] = {"version": listed.get("version")}
            for key, row in listed.items():
                if key == "version" or not (isinstance(row, dict) and safe_row(key, row)):
                    continue  # unsafe as serkit's reader reads it (it names such rows of results)
                try:
                    described[key] = _benchmark(key, row, key in judged_names)
                except Refused as refused:
                    left_out.append(f"benchmark {shown(key)}: {refused}")
            writes[into / BENCHMARKS_FILE] = json.dumps(described)
    for name, machine in tree.machines.items():
        files = sorted({m.file for m in machine.measurements})
        if not files:
            continue
        if not SAFE_NAME.fullmatch(name):
            left_out.append(f"machine {shown(name)}: its name holds characters unsafe in a page")
            continue
        try:
            profile, extra = _profile(name, machine.profile)
        except Refused as refused:
            left_out.append(f"{name}: {refused}")
            continue
        if extra:
            left_out.append(f"{name}: its {MACHINE_FILE}'s fields {', '.join(extra)}, not asv's")
        kept: dict[str, dict[str, Any]] = {}
        for path in files:
            try:
                data = _environment(load_json(path), name)
            except Refused as refused:
                left_out.append(f"{path}: {refused}")
                continue
            keep_rows(data, safe_row)
            if with_values(data, judged.get(path, {})):
                data[VALUES_KEY] = JUDGED_VALUES
            kept[path.name] = data
        if kept:  # a machine with no results file left would be a button with nothing
            writes[into / name / MACHINE_FILE] = json.dumps(profile)
            writes.update({into / name / f: json.dumps(data) for f, data in kept.items()})
    into.mkdir(parents=True, exist_ok=True)
    write_together(writes, within=into, sync=False)  # a scratch copy: whole, not durable
    return left_out
