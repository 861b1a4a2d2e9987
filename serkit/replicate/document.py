"""The saved replication document: what ran where, written whole, and checked when read back."""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit import __version__
from serkit.checkout import git_commit, project_root
from serkit.codecs.registry import get_codec
from serkit.errors import RefusedFile, SerkitError
from serkit.files import atomic_write
from serkit.inputs.documents import read_record

SCHEMA = 1


class ReplicationFileError(SerkitError):
    """A saved replication document is missing, corrupt, or not one serkit wrote."""


def _suite_commit() -> str | None:
    """The suite commit that ran: the checkout here, else the one serkit was loaded from."""
    try:
        root = project_root()
    except SerkitError:
        root = Path(__file__).resolve().parent
    return git_commit(root)


def _codec_facts(codecs: Iterable[str]) -> dict[str, dict[str, str]]:
    facts = {}  # a codec that is not installed is left out: its rows say why
    for name in sorted(set(codecs)):
        try:
            codec = get_codec(name)
        except SerkitError:
            continue
        facts[name] = {
            "library": codec.library,
            "version": codec.version,
            "implementation": codec.implementation,
        }
    return facts


def provenance(codecs: Iterable[str]) -> dict[str, Any]:
    """The document's opening fields: its schema, and what ran where (the suite, host, codecs)."""
    facts = _codec_facts(codecs)
    return {
        "schema": SCHEMA,
        "serkit_version": __version__,
        "git_commit": _suite_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": {
            fact["library"]: fact["version"]
            for fact in facts.values()
            if fact["library"] != "stdlib"
        },
        "codecs": facts,
    }


# --- saving and reading ---------------------------------------------------------------


def _object(required: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": dict(required)}


_STRING, _LIST = {"type": "string"}, {"type": "array"}
_ROWS = {"type": "array", "items": {"type": "array"}}
# What a reader may rely on; a writer may add fields (the schema number says when it may not).
DOCUMENT_SCHEMA: Mapping[str, Any] = _object(
    {
        "schema": {"type": "integer"},
        "serkit_version": _STRING,
        "git_commit": {"type": ["string", "null"]},
        "date": _STRING,
        "host": _STRING,
        "python": _STRING,
        "libraries": {"type": "object"},
        "statistic": _STRING,
        "posts": {
            "type": "array",
            "items": _object(
                {
                    "post": _STRING,
                    "title": _STRING,
                    "source": _STRING,
                    "tables": {
                        "type": "array",
                        "items": _object(
                            {
                                "title": _STRING,
                                "headers": _LIST,
                                "rows": _ROWS,
                                "text_rows": _ROWS,
                                "notes": _LIST,
                            }
                        ),
                    },
                    "claims": {
                        "type": "array",
                        "items": _object(
                            {"claim": _STRING, "then": _STRING, "now": _STRING, "verdict": _STRING}
                        ),
                    },
                }
            ),
        },
    }
)


def save(document: Mapping[str, Any], path: Path) -> Path:
    """Write `document` to `path` (folders created), whole or not at all."""
    atomic_write(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return path


def _where(path: Sequence[str | int]) -> str:
    """A place in the document as a reader finds it: `posts[0].tables[1]`, `the document.host`."""
    text = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)
    return text[1:] if text.startswith(".posts[") else f"the document{text}"


def _structure_problem(document: Any) -> str | None:
    try:
        import jsonschema  # in the report extra, as is the one reader of saved documents
    except ImportError:
        raise SerkitError(
            "reading a saved replication document needs jsonschema: pip install 'serkit[report]'"
        ) from None
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(DOCUMENT_SCHEMA).iter_errors(document)
    )
    if error is None:
        return None
    where, found = _where(list(error.absolute_path)), error.instance
    if error.validator == "required":
        missing = next(k for k in error.validator_value if k not in found)
        return f"{where} has no {missing!r}"
    if error.validator == "type" and error.validator_value == "object":
        return f"{where} is not an object"
    return f"{where} has the wrong type ({type(found).__name__})"


def _problem(document: Any) -> str | None:
    """What makes `document` not a replication document of this schema, or None."""
    problem = _structure_problem(document)
    if problem:
        return problem
    if document["schema"] != SCHEMA:
        return f"schema {document['schema']!r}, this serkit reads schema {SCHEMA}"
    # Beyond what JSON Schema can say: every row as wide as its table's headers.
    for i, post in enumerate(document["posts"]):
        for j, table in enumerate(post["tables"]):
            where, width = f"posts[{i}].tables[{j}]", len(table["headers"])
            for name in ("rows", "text_rows"):
                if any(len(row) != width for row in table[name]):
                    return f"{where}.{name} has a row that does not match its {width} headers"
            if len(table["rows"]) != len(table["text_rows"]):
                return f"{where} has not as many text rows as rows"
    return None


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a saved replication document; ReplicationFileError if it is not one."""
    where = Path(path)
    try:  # the guarded reader: a file from elsewhere, under a record's caps
        document = read_record(where, what="a replication document")
    except RefusedFile as exc:
        raise ReplicationFileError(f"cannot read {where}: {exc.rule}") from None
    problem = _problem(document)
    if problem:
        raise ReplicationFileError(
            f"{where} is not a serkit replication document: {problem} "
            "(write one with `serkit replicate --save FILE`)"
        )
    assert isinstance(document, dict)
    return document
