"""A conformance run as a JSON document: saved by `serkit conformance`, read by the report."""

from __future__ import annotations

import datetime
import json
import platform
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from serkit.checks.conformance import (
    DEFAULT_FILE_TIMEOUT,
    DEFAULT_MEMORY_BYTES,
    OUTCOMES,
    CodecConformance,
    FileOutcome,
)
from serkit.errors import RefusedFile, SerkitError
from serkit.files import atomic_write
from serkit.inputs.documents import read_record
from serkit.inputs.jsontestsuite import expectation

SCHEMA = 1
KIND = "serkit conformance"


class ConformanceFileError(SerkitError):
    """A saved conformance document is missing, corrupt, or not one serkit wrote."""


def document(
    results: Mapping[str, CodecConformance],
    *,
    timeout: float = DEFAULT_FILE_TIMEOUT,
    memory: int = DEFAULT_MEMORY_BYTES,
    wall_s: float = 0.0,
) -> dict[str, Any]:
    """The run as JSON: what ran where, under which limits, and every file's outcome."""
    from serkit import __version__  # deferred: the package imports the layers below it
    from serkit.inputs import jsontestsuite

    files = {r.file for result in results.values() for r in result.files}
    return {
        "kind": KIND,
        "schema": SCHEMA,
        "serkit_version": __version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "suite": {
            "name": "JSONTestSuite test_parsing",
            "commit": jsontestsuite.COMMIT,
            "license": jsontestsuite.LICENSE,
            "files": len(files),
        },
        "limits": {"timeout_s": timeout, "memory_bytes": memory},
        "wall_s": round(wall_s, 2),
        "codecs": [result.as_dict() for result in results.values()],
    }


def save(doc: Mapping[str, Any], path: Path) -> Path:
    """Write `doc` to `path` (folders created), whole or not at all."""
    atomic_write(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


def load(path: Path) -> tuple[dict[str, Any], dict[str, CodecConformance]]:
    """A saved document and its results, checked; ConformanceFileError if it is not one."""
    try:  # the guarded reader: a file from elsewhere, under a record's caps
        doc = read_record(path, what="a conformance document")
    except RefusedFile as exc:
        raise ConformanceFileError(f"cannot read {path}: {exc.rule}") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise ConformanceFileError(f"{path} is not a serkit conformance document")
    if doc.get("schema") != SCHEMA:
        raise ConformanceFileError(
            f"{path} has schema {doc.get('schema')!r}; this serkit reads schema {SCHEMA}"
        )
    try:
        results = {entry["codec"]: _result(entry) for entry in doc["codecs"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise ConformanceFileError(f"{path} has a malformed codec entry ({exc!r})") from exc
    return doc, results


def _result(entry: Mapping[str, Any]) -> CodecConformance:
    files = [
        FileOutcome(str(f["file"]), str(f["expected"]), str(f["outcome"]), str(f["detail"]))
        for f in entry["files"]
    ]
    if any(f.outcome not in OUTCOMES or f.expected != expectation(f.file) for f in files):
        raise ValueError("an outcome or expectation serkit does not write")
    return CodecConformance(
        str(entry["codec"]),
        str(entry["status"]),
        str(entry["version"]),
        str(entry["implementation"]),
        files,
        float(entry["seconds"]),
        str(entry["detail"]),
    )
