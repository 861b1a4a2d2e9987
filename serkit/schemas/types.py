"""A record type, as serkit's schema codecs read it: the shape every library's types come from.

A derived schema (:mod:`serkit.schemas.derive`) is a tree of these. Each schema codec
(:mod:`serkit.codecs.typed`) turns the same tree into its library's types: msgspec
Structs, pydantic models, protobuf messages, an Avro schema, dataclasses. The tree's
sha256 (:func:`schema_hash`) pins it: a change of the inference changes the hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union

# Where a schema comes from (Schema.origin): derived from the document, or a JSON Schema
# the user supplied for it (serkit.schemas.supplied).
DERIVED, SUPPLIED = "derived", "user-supplied"

# The scalar kinds a document's leaves can have. "null" is a value never seen as anything
# but None (or the items of a list that was always empty): the schema says only that.
SCALARS = ("bool", "int", "float", "str", "date", "datetime", "null")


@dataclass(frozen=True)
class Scalar:
    kind: str  # one of SCALARS

    def __post_init__(self) -> None:
        if self.kind not in SCALARS:
            raise ValueError(f"scalar kind must be one of {SCALARS}, not {self.kind!r}")


@dataclass(frozen=True)
class Nullable:
    """A value that is sometimes None and otherwise of `inner`'s type."""

    inner: Type


@dataclass(frozen=True)
class ListOf:
    item: Type


@dataclass(frozen=True)
class MapOf:
    """A dict whose keys are data (ids, numbers), not field names."""

    key: str  # "str" or "int"
    value: Type


@dataclass(frozen=True)
class Field:
    name: str
    type: Type
    # False: some records of this type lack the field (absent, which is not null).
    required: bool = True


@dataclass(frozen=True)
class Record:
    """A dict with fixed field names, or a namedtuple's fields: a struct, model or message."""

    name: str  # unique in its schema: message and record names need that
    fields: tuple[Field, ...]


Type = Union[Scalar, Nullable, ListOf, MapOf, Record]


@dataclass(frozen=True)
class Schema:
    """A document's type: its root, and what the inference had to guess."""

    root: Type
    # Where a type was not observed (only nulls, only empty lists) and so was guessed.
    notes: tuple[str, ...] = ()
    origin: str = DERIVED  # or SUPPLIED

    @property
    def sha256(self) -> str:
        return schema_hash(self.root)

    def records(self) -> list[Record]:
        """Every record type, each once, innermost first: the order to declare them in."""
        found: dict[str, Record] = {}
        for node in walk(self.root):
            if isinstance(node, Record):
                found.setdefault(node.name, node)
        return list(found.values())


def walk(node: Type) -> Iterator[Type]:
    """Every type in the tree, children before their parents."""
    if isinstance(node, Nullable):
        yield from walk(node.inner)
    elif isinstance(node, ListOf):
        yield from walk(node.item)
    elif isinstance(node, MapOf):
        yield from walk(node.value)
    elif isinstance(node, Record):
        for field in node.fields:
            yield from walk(field.type)
    yield node


def as_data(node: Type) -> Any:
    """The tree as plain JSON data: what its hash is taken over, and what `--format json` shows."""
    if isinstance(node, Scalar):
        return node.kind
    if isinstance(node, Nullable):
        return {"nullable": as_data(node.inner)}
    if isinstance(node, ListOf):
        return {"list": as_data(node.item)}
    if isinstance(node, MapOf):
        return {"map": {"key": node.key, "value": as_data(node.value)}}
    return {
        "record": node.name,
        "fields": [[f.name, as_data(f.type), f.required] for f in node.fields],
    }


def schema_hash(node: Type) -> str:
    """The sha256 of the tree's canonical JSON: equal trees, equal hashes, on every machine."""
    text = json.dumps(as_data(node), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


# asv records numbers only: a schema's hash goes into the results as its first 12 hex
# digits read as an integer (48 bits, exact in a double), and is read back as hex.
HASH_DIGITS = 12


def hash_number(sha256: str) -> int:
    return int(sha256[:HASH_DIGITS], 16)


def hash_text(number: float) -> str:
    return f"{int(number):0{HASH_DIGITS}x}"
