"""A user's own document, read from a file: JSON, YAML, msgpack, or (if allowed) pickle.

The format comes from the file's extension; a file with another extension is sniffed:
a pickle's protocol header, then JSON, msgpack and YAML in turn. Bad input ends in one
:class:`~serkit.errors.DocumentError` line, and a file over the size limit is refused
from its size alone, before a byte of it is read.

Loading a pickle runs code named by the file, so a pickle is read only when the caller
passes ``allow_pickle=True`` (``--allow-pickle`` on the command line).
"""

from __future__ import annotations

import json
import os
import pickle
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

from serkit.errors import DocumentError
from serkit.units import bytes_binary

FORMATS = ("json", "yaml", "msgpack", "pickle")
EXTENSIONS: Mapping[str, str] = MappingProxyType(
    {
        ".json": "json",
        ".yaml": "yaml",
        ".yml": "yaml",
        ".msgpack": "msgpack",
        ".mpk": "msgpack",
        ".msgp": "msgpack",
        ".pickle": "pickle",
        ".pkl": "pickle",
        ".pck": "pickle",
    }
)
# The extension a document of each format is stored under (serkit.inputs.user_fixtures).
CANONICAL_EXTENSION: Mapping[str, str] = MappingProxyType(
    {"json": ".json", "yaml": ".yaml", "msgpack": ".msgpack", "pickle": ".pickle"}
)

MAX_BYTES_ENV = "SERKIT_MAX_DOCUMENT_BYTES"
# Parsed, a document takes several times its file size in memory, and every codec's
# output is kept beside it: 256 MiB of JSON already needs gigabytes.
DEFAULT_MAX_BYTES = 256 * 2**20

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}
PICKLE_HAZARD = (
    "loading a pickle runs code named by the file: pass --allow-pickle "
    "(allow_pickle=True) only for a file you trust"
)


@dataclass(frozen=True)
class Document:
    """A document read from a file, and how serkit read it."""

    path: Path
    format: str  # one of FORMATS
    obj: Any
    bytes: int  # the file's size
    recognised_by: str  # "extension", "content" (sniffed) or "caller" (format given)


def parse_size(text: str) -> int:
    """`"2GiB"`, `"512 MB"`, `"1000000"` -> bytes; DocumentError for anything else."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise DocumentError(
            f"{text!r} is not a size: give bytes, or a number with kB, MB, GB, KiB, MiB or GiB"
        )
    return int(float(match.group(1)) * _UNITS[unit])


def max_bytes_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """SERKIT_MAX_DOCUMENT_BYTES, else DEFAULT_MAX_BYTES."""
    value = environ.get(MAX_BYTES_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(value)
    except DocumentError as exc:
        raise DocumentError(f"{MAX_BYTES_ENV}: {exc}") from None


# --- readers ---------------------------------------------------------------------------


def _json(data: bytes) -> Any:
    return json.loads(data)  # bytes: UTF-8, -16 or -32, as RFC 8259 allows


def _yaml(data: bytes) -> Any:
    import yaml

    # Safe loading only: YAML tags must not build arbitrary objects.
    return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _msgpack(data: bytes) -> Any:
    try:
        import msgpack
    except ImportError:
        raise DocumentError("reading msgpack needs msgpack (pip install msgpack)") from None
    # Int map keys are common in msgpack written by other languages: keep them.
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def _pickle(data: bytes) -> Any:
    return pickle.loads(data)


READERS: Mapping[str, Callable[[bytes], Any]] = MappingProxyType(
    {"json": _json, "yaml": _yaml, "msgpack": _msgpack, "pickle": _pickle}
)


def _brief(exc: BaseException, limit: int = 100) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def looks_like_pickle(data: bytes) -> bool:
    """Protocol 2 and later start with PROTO (0x80) and a protocol number, and end with STOP."""
    return len(data) >= 3 and data[0] == 0x80 and 2 <= data[1] <= 5 and data.endswith(b".")


def read_bytes(path: Path, max_bytes: int | None = None) -> bytes:
    """The file's bytes, refused by size before reading when over `max_bytes` (the limit)."""
    max_bytes = max_bytes_from_env() if max_bytes is None else max_bytes
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise DocumentError(f"{path}: no such file") from None
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if path.is_dir():
        raise DocumentError(f"{path} is a folder, not a document")
    if size > max_bytes:
        raise DocumentError(
            f"{path} is {bytes_binary(size)}, over the {bytes_binary(max_bytes)} limit for a "
            f"document; to raise it, set {MAX_BYTES_ENV} (e.g. {MAX_BYTES_ENV}=4GiB)"
        )
    try:
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)  # the file may have grown since stat()
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise DocumentError(f"{path} grew past the {bytes_binary(max_bytes)} limit while read")
    if not data:
        raise DocumentError(f"{path} is empty")
    return data


def _decode(path: Path, data: bytes, fmt: str, allow_pickle: bool) -> Any:
    if fmt == "pickle" and not allow_pickle:
        raise DocumentError(f"{path} is a pickle; {PICKLE_HAZARD}")
    try:
        return READERS[fmt](data)
    except DocumentError:
        raise
    except Exception as exc:  # each library raises its own classes
        raise DocumentError(f"{path} is not valid {fmt}: {_brief(exc)}") from exc


def _sniff(path: Path, data: bytes, allow_pickle: bool) -> tuple[str, Any]:
    """The first reader that reads the whole file; YAML only when it gives a mapping or list."""
    if looks_like_pickle(data):
        return "pickle", _decode(path, data, "pickle", allow_pickle)
    failures = []
    for fmt in ("json", "msgpack", "yaml"):
        try:
            obj = _decode(path, data, fmt, allow_pickle)
        except DocumentError as exc:
            failures.append(f"{fmt}: {_brief(exc.__cause__ or exc, 60)}")
            continue
        # Almost any text is one YAML scalar: only a structure is evidence of YAML.
        if fmt == "yaml" and not isinstance(obj, (dict, list)):
            failures.append(f"yaml: the text is one {type(obj).__name__}, not a document")
            continue
        return fmt, obj
    raise DocumentError(
        f"{path}: no reader can read it (tried {'; '.join(failures)}); "
        f"known extensions: {', '.join(EXTENSIONS)}"
    )


def decode(
    path: Path, data: bytes, *, allow_pickle: bool = False, format: str | None = None
) -> Document:
    """Read `data`, the bytes of `path`: see read_document."""
    if format is not None and format not in FORMATS:
        raise DocumentError(f"unknown document format {format!r}; known: {', '.join(FORMATS)}")
    if format is not None:
        obj = _decode(path, data, format, allow_pickle)
        return Document(path, format, obj, len(data), "caller")
    by_extension = EXTENSIONS.get(path.suffix.lower())
    if by_extension is not None:
        obj = _decode(path, data, by_extension, allow_pickle)
        return Document(path, by_extension, obj, len(data), "extension")
    fmt, obj = _sniff(path, data, allow_pickle)
    return Document(path, fmt, obj, len(data), "content")


def read_document(
    path: str | os.PathLike[str],
    *,
    allow_pickle: bool = False,
    max_bytes: int | None = None,
    format: str | None = None,
) -> Document:
    """Read one document; DocumentError, in one line, for anything that stops it.

    `format` forces a reader; otherwise the extension decides, and an unknown extension
    is sniffed. `max_bytes` defaults to SERKIT_MAX_DOCUMENT_BYTES, else 256 MiB.
    """
    where = Path(path)
    data = read_bytes(where, max_bytes)
    return decode(where, data, allow_pickle=allow_pickle, format=format)
