"""The content hash: one sha256 per document, the same on every machine and Python version.

Every fixture is pinned by it (:mod:`serkit.inputs.fixtures`), and so is every document a
user declares (:mod:`serkit.inputs.user_fixtures`).
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterator
from typing import Any


def _tokens(obj: Any) -> Iterator[bytes]:
    # Type-tagged and length-prefixed, so no two different objects share a stream;
    # floats by their exact hex form, which no Python version formats differently.
    kind = type(obj)
    if obj is None or kind is bool:
        yield repr(obj).encode()
    elif kind is int:
        yield b"i%d;" % obj
    elif kind is float:
        yield b"f" + obj.hex().encode() + b";"
    elif kind is str:
        raw = obj.encode("utf-8", "surrogatepass")
        yield b"s%d:" % len(raw)
        yield raw
    elif kind is bytes:
        yield b"b%d:" % len(obj)
        yield obj
    elif kind is datetime.datetime or kind is datetime.date:
        # ISO 8601, offset included: the same text on every Python. A datetime is tagged
        # apart from a date, and both apart from a str of the same text.
        yield b"T" if kind is datetime.datetime else b"D"
        yield obj.isoformat().encode() + b";"
    elif kind is dict:
        yield b"d%d:" % len(obj)
        for key, value in obj.items():
            yield from _tokens(key)
            yield from _tokens(value)
    elif kind is list or kind is tuple:
        yield b"l%d:" % len(obj) if kind is list else b"t%d:" % len(obj)
        for item in obj:
            yield from _tokens(item)
    elif isinstance(obj, tuple) and hasattr(kind, "_fields"):
        yield b"n%s:%d:" % (kind.__qualname__.encode(), len(obj))
        for item in obj:
            yield from _tokens(item)
    else:
        raise TypeError(f"fixture_hash cannot hash {kind.__name__}")


def content_hash(obj: Any) -> str:
    """sha256 of a canonical, type-tagged walk of `obj`, stable across Python versions."""
    digest = hashlib.sha256()
    chunk: list[bytes] = []
    for token in _tokens(obj):
        chunk.append(token)
        if len(chunk) >= 65536:
            digest.update(b"".join(chunk))
            chunk.clear()
    digest.update(b"".join(chunk))
    return digest.hexdigest()
