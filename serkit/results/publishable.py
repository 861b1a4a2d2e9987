"""The part of a results tree that asv's own pages can show safely (`serkit report`).

asv's pages render a benchmark's code, its pretty name and parameter names, a machine's
profile and an environment's parameters as HTML. A results tree read from another
machine could carry markup in any of them, so `asv publish` reads a copy: only the rows
serkit read as safe (serkit.results.tree.safe_row), every other string escaped.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from serkit.results.asv_file import keep_rows
from serkit.results.tree import (
    BENCHMARKS_FILE,
    MACHINE_FILE,
    ResultsFileError,
    ResultsTree,
    load_json,
    safe_row,
    shown,
)

# A machine's name, as asv's pages show it (its folder's name, its profile's `machine`).
SAFE_NAME = re.compile(r"[\w.+\-@]{1,200}")
# What asv's pages show of a benchmark as HTML (its tooltips, its label) besides the name.
_SHOWN_AS_HTML = ("code", "pretty_name", "param_names")


def _inert(value: Any) -> Any:
    """A value made text for a page that renders it as HTML: every string escaped."""
    if isinstance(value, str):
        return html.escape(value)
    if isinstance(value, list):
        return [_inert(v) for v in value]
    return value


def _inert_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: _inert(v) if k in _SHOWN_AS_HTML else v for k, v in row.items()}


# An environment's name and Python version: asv's pages show them and build paths from them.
SAFE_ENVIRONMENT = re.compile(r"[\w .,:+\-/=~@()\[\]]{0,1000}")


def _safe_environment(data: Mapping[str, Any]) -> bool:
    """Whether a results file's environment name and Python hold only characters safe to
    show and to name a path with (its parameters are escaped instead: _inert_environment)."""
    named = [str(v) for v in (data.get("env_name"), data.get("python")) if v is not None]
    return all(SAFE_ENVIRONMENT.fullmatch(v) for v in named)


def _inert_environment(data: dict[str, Any]) -> dict[str, Any]:
    """A results file whose environment's parameters and requirements (asv copies the
    machine's profile into them) are made text, as the profile itself is."""
    for key in ("params", "requirements"):
        mapping = data.get(key)
        if isinstance(mapping, dict):
            data[key] = {html.escape(str(k)): _inert(v) for k, v in mapping.items()}
    return data


def publishable_copy(tree: ResultsTree, into: Path) -> list[str]:
    """Write into `into` the part of `tree` that asv's own tools can read safely: each
    machine with a profile, the results files serkit read, without the rows it skipped
    as unsafe, and benchmarks.json likewise. Says, one line each, what was left out."""
    left_out: list[str] = []
    into.mkdir(parents=True, exist_ok=True)
    source = tree.root / BENCHMARKS_FILE
    if source.is_file():
        try:
            listed = load_json(source)
        except ResultsFileError:
            listed = None
        if isinstance(listed, dict):
            kept = {
                k: v if k == "version" else _inert_row(v)
                for k, v in listed.items()
                if k == "version" or (isinstance(v, dict) and safe_row(k, v))
            }
            (into / BENCHMARKS_FILE).write_text(json.dumps(kept))
    for name, machine in tree.machines.items():
        profile = machine.profile
        files = sorted({m.file for m in machine.measurements})
        if not files:
            continue
        if not SAFE_NAME.fullmatch(name):
            left_out.append(f"machine {shown(name)}: its name holds characters unsafe in a page")
            continue
        if profile.get("machine") != name or not all(
            isinstance(v, (str, int)) for v in profile.values()
        ):
            left_out.append(f"{name}: its {MACHINE_FILE} is missing or not an asv machine profile")
            continue
        folder = into / name
        folder.mkdir()
        # asv shows each key and value in a tooltip rendered as HTML: each is made text.
        inert = {
            html.escape(k): html.escape(v) if isinstance(v, str) else v for k, v in profile.items()
        }
        (folder / MACHINE_FILE).write_text(json.dumps({**inert, "version": 1}))
        for path in files:
            data = load_json(path)
            if not _safe_environment(data):
                left_out.append(f"{path}: its environment's name holds characters unsafe in a page")
                continue
            _inert_environment(data)
            keep_rows(data, safe_row)
            (folder / path.name).write_text(json.dumps(data))
    return left_out
