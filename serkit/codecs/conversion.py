"""The way into a schema codec's types and back out to plain data, generated from the schema.

Every schema codec shares these two walks and differs only in how it builds one record
(a Struct, a model, a message, a dataclass) and reads one back: `build(record)` gives a
callable taking the present fields as keywords, `read(record)` one that yields the present
fields of an instance as (name, value). On the way in, subtrees that hold only scalars are
passed through untouched, so the walk costs what the records cost (orjson-dataclass's
loads times it). On the way out, for fidelity only, lists and maps become plain list and
dict: protobuf's containers are neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Callable, Optional

from serkit.schemas.types import ListOf, MapOf, Nullable, Record, Scalar, Type

Convert = Optional[Callable[[Any], Any]]  # None: the value passes through as it is
Build = Callable[[Record], Callable[..., Any]]
Read = Callable[[Record], Callable[[Any], Iterable[tuple[str, Any]]]]


def _fields_of(value: Any) -> Any:
    """A record's fields as a mapping: a dict as it is, a namedtuple's as a dict."""
    return value if isinstance(value, dict) else value._asdict()


def typed_converter(node: Type, build: Build) -> Convert:
    """Plain data -> the codec's typed objects (records built, int map keys made ints)."""
    if isinstance(node, Scalar):
        return None
    if isinstance(node, Nullable):
        maybe = typed_converter(node.inner, build)
        if maybe is None:
            return None
        inner: Callable[[Any], Any] = maybe
        return lambda value: None if value is None else inner(value)
    if isinstance(node, ListOf):
        item = typed_converter(node.item, build)
        if item is None:
            return None  # a list of scalars is its own typed value: no copy
        return lambda value: [item(x) for x in value]
    if isinstance(node, MapOf):
        values = typed_converter(node.value, build)
        if node.key == "int":  # a JSON or msgpack key read back as text
            if values is None:
                return lambda value: {int(k): x for k, x in value.items()}
            int_keyed: Callable[[Any], Any] = values
            return lambda value: {int(k): int_keyed(x) for k, x in value.items()}
        if values is None:
            return None
        str_keyed: Callable[[Any], Any] = values
        return lambda value: {k: str_keyed(x) for k, x in value.items()}
    make = build(node)
    pairs = [(f.name, typed_converter(f.type, build)) for f in node.fields]

    def record(value: Any) -> Any:
        fields = _fields_of(value)
        kwargs = {}
        for name, convert in pairs:
            if name in fields:
                found = fields[name]
                # None for a record or list: a codec that writes an absent field as null.
                kwargs[name] = found if convert is None or found is None else convert(found)
        return make(**kwargs)

    if any(convert is not None for _, convert in pairs):
        return record

    def flat(value: Any) -> Any:
        # Every field passes as it is: the record takes them in one call, as a hand-written
        # one would; a key it lacks (or lacks and needs) goes the field-by-field way.
        try:
            return make(**_fields_of(value))
        except TypeError:
            return record(value)

    return flat


def plain_converter(node: Type, read: Read) -> Convert:
    """The codec's typed objects -> plain data: records as dicts of their present fields."""
    if isinstance(node, Scalar):
        return None
    if isinstance(node, Nullable):
        maybe = plain_converter(node.inner, read)
        if maybe is None:
            return None
        inner: Callable[[Any], Any] = maybe
        return lambda value: None if value is None else inner(value)
    if isinstance(node, ListOf):
        item = plain_converter(node.item, read)
        if item is None:
            return list
        return lambda value: [item(x) for x in value]
    if isinstance(node, MapOf):
        values = plain_converter(node.value, read)
        if values is None:
            return dict
        each: Callable[[Any], Any] = values
        return lambda value: {k: each(x) for k, x in value.items()}
    present = read(node)
    converts = {f.name: plain_converter(f.type, read) for f in node.fields}

    def record(value: Any) -> dict[str, Any]:
        out = {}
        for name, found in present(value):
            convert = converts[name]
            out[name] = found if convert is None or found is None else convert(found)
        return out

    return record


def attribute_names(
    record: Record, reserved: Callable[[str], bool] = lambda name: False
) -> dict[str, str]:
    """Each field's attribute name on a class: its own where it is an identifier the library
    allows, else `field_<it, in identifier characters>`, made unique. A library that can
    name a field on the wire apart from its attribute (msgspec's rename, pydantic's alias,
    protobuf, whose wire has numbers) keeps the key as the document has it."""
    taken = {field.name for field in record.fields}
    names = {}
    for field in record.fields:
        internal = field.name
        if not internal.isidentifier() or reserved(internal):
            internal = "field_" + re.sub(r"\W", "_", field.name)
            while internal in taken or reserved(internal):
                internal += "_"
            taken.add(internal)
        names[field.name] = internal
    return names


def renamed(make: Callable[..., Any], names: dict[str, str]) -> Callable[..., Any]:
    """`make`, taking each field by its key rather than its attribute name."""
    if all(key == attribute for key, attribute in names.items()):
        return make
    return lambda **given: make(**{names[k]: v for k, v in given.items()})


def both(node: Type, build: Build, read: Read) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """(to_typed, to_plain) for a schema's root, each a callable even where nothing converts."""
    to_typed = typed_converter(node, build) or (lambda value: value)
    to_plain = plain_converter(node, read) or (lambda value: value)
    return to_typed, to_plain
