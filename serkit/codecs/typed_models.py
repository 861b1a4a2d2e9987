"""Schema codecs whose types are Python classes: msgspec Structs, pydantic models, dataclasses.

Each builder takes a derived schema and returns the codec's calls over it
(:class:`~serkit.codecs.spec.SchemaBinding`). Classes are made at run time from the
schema (`msgspec.defstruct`, `pydantic.create_model`, `dataclasses.make_dataclass`), never
written by hand, so every document gets its own.
"""

from __future__ import annotations

import dataclasses
import datetime
import keyword
import sys
import warnings
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any, Callable, Optional, Union

from serkit.codecs.conversion import attribute_names, both, renamed
from serkit.codecs.spec import Config, SchemaBinding
from serkit.errors import NoSchema
from serkit.schemas.types import ListOf, MapOf, Nullable, Record, Scalar, Schema, Type

# Subscripted at run time with types only known then (mypy reads no type from these).
_LIST: Any = list
_DICT: Any = dict
PYTHON_TYPES: dict[str, Any] = {
    "bool": bool,
    "int": int,
    "float": float,
    "str": str,
    "date": datetime.date,
    "datetime": datetime.datetime,
    "null": type(None),
}


NONE_TYPE = type(None)


def annotation(node: Type, classes: dict[str, Any], null: Any = NONE_TYPE) -> Any:
    """The type annotation a class-based library reads for `node`; `null` for a value only
    ever seen as None (cattrs and mashumaro have no structure hook for NoneType: Any)."""
    if isinstance(node, Scalar):
        return null if node.kind == "null" else PYTHON_TYPES[node.kind]
    if isinstance(node, Nullable):
        return Optional[annotation(node.inner, classes, null)]
    if isinstance(node, ListOf):
        return _LIST[annotation(node.item, classes, null)]
    if isinstance(node, MapOf):
        value = annotation(node.value, classes, null)
        return _DICT[PYTHON_TYPES[node.key], value]
    return classes[node.name]


# --- msgspec ----------------------------------------------------------------------------


def msgspec_structs(schema: Schema) -> tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]:
    """The schema's Structs: (root type, to_typed, to_plain). An absent optional field is UNSET,
    which msgspec leaves out when it encodes."""
    import msgspec

    unset = msgspec.UNSET
    classes: dict[str, Any] = {}
    attributes: dict[str, dict[str, str]] = {}
    for record in schema.records():
        names = attributes[record.name] = attribute_names(record)
        fields: list[Any] = []
        for field in record.fields:
            kind = annotation(field.type, classes)
            if field.required:
                fields.append((names[field.name], kind))
            else:
                fields.append((names[field.name], Union[kind, msgspec.UnsetType], unset))
        # A key that is no identifier ("$ref") is the encoded name of the field holding it.
        rename = {a: key for key, a in names.items() if a != key} or None
        classes[record.name] = msgspec.defstruct(record.name, fields, kw_only=True, rename=rename)

    def read(record: Record) -> Callable[[Any], Iterator[tuple[str, Any]]]:
        names = list(attributes[record.name].items())

        def present(obj: Any) -> Iterator[tuple[str, Any]]:
            for name, attribute in names:
                value = getattr(obj, attribute)
                if value is not unset:
                    yield name, value

        return present

    def build(record: Record) -> Callable[..., Any]:
        return renamed(classes[record.name], attributes[record.name])

    to_typed, to_plain = both(schema.root, build, read)
    return annotation(schema.root, classes), to_typed, to_plain


def msgspec_json(schema: Schema) -> SchemaBinding:
    import msgspec

    root, to_typed, to_plain = msgspec_structs(schema)
    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder(root)
    return SchemaBinding((Config(encoder.encode, decoder.decode),), to_typed, to_plain)


def msgspec_msgpack(schema: Schema) -> SchemaBinding:
    import msgspec

    root, to_typed, to_plain = msgspec_structs(schema)
    encoder, decoder = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder(root)
    return SchemaBinding((Config(encoder.encode, decoder.decode),), to_typed, to_plain)


# --- pydantic ---------------------------------------------------------------------------


def pydantic_json(schema: Schema) -> SchemaBinding:
    """pydantic models; an absent optional field is unset, and `exclude_unset` leaves it out.
    A field whose key pydantic reserves, or that is no identifier, is kept under another
    attribute, aliased to the key."""
    import pydantic

    def reserved(name: str) -> bool:
        # pydantic refuses `model_config` and warns of the rest of its namespace; a field
        # that only shadows a method (`json`, `copy`) works, and keeps its own name.
        return name.startswith("model_")

    classes: dict[str, Any] = {}
    attributes: dict[str, dict[str, str]] = {}
    with warnings.catch_warnings():  # a field named like a BaseModel method only warns
        warnings.simplefilter("ignore")
        for record in schema.records():
            names = attributes[record.name] = attribute_names(record, reserved)
            fields: dict[str, Any] = {}
            for field in record.fields:
                default = ... if field.required else None
                kind = annotation(field.type, classes)
                if names[field.name] == field.name:
                    fields[field.name] = (kind, default)
                else:
                    fields[names[field.name]] = (kind, pydantic.Field(default, alias=field.name))
            classes[record.name] = pydantic.create_model(record.name, **fields)
        adapter = pydantic.TypeAdapter(annotation(schema.root, classes))

    def build(record: Record) -> Callable[..., Any]:
        return renamed(classes[record.name].model_construct, attributes[record.name])

    def read(record: Record) -> Callable[[Any], Iterator[tuple[str, Any]]]:
        names = list(attributes[record.name].items())

        def present(obj: Any) -> Iterator[tuple[str, Any]]:
            given = obj.model_fields_set
            for name, internal in names:
                if internal in given:
                    yield name, getattr(obj, internal)

        return present

    to_typed, to_plain = both(schema.root, build, read)
    dumps = partial(adapter.dump_json, exclude_unset=True, by_alias=True)
    return SchemaBinding((Config(dumps, adapter.validate_json),), to_typed, to_plain)


# --- dataclasses ------------------------------------------------------------------------


def dataclass_types(schema: Schema) -> tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]:
    """The schema's dataclasses: (root type, to_typed, to_plain). A dataclass has every field,
    so an absent optional field is None, and comes back as null."""
    classes: dict[str, Any] = {}
    for record in schema.records():
        for field in record.fields:
            if keyword.iskeyword(field.name) or not field.name.isidentifier():
                raise NoSchema(f"a dataclass cannot have a field named {field.name!r}")
        fields = [
            (f.name, annotation(f.type, classes, Any))
            if f.required
            else (
                f.name,
                Optional[annotation(f.type, classes, Any)],
                dataclasses.field(default=None),
            )
            for f in record.fields
        ]
        if sys.version_info >= (3, 10):
            made = dataclasses.make_dataclass(record.name, fields, kw_only=True)
        else:  # before 3.10, fields with defaults must come last
            fields.sort(key=lambda entry: len(entry) == 3)
            made = dataclasses.make_dataclass(record.name, fields)
        classes[record.name] = made

    def read(record: Record) -> Callable[[Any], Iterable[tuple[str, Any]]]:
        names = [field.name for field in record.fields]
        return lambda obj: [(name, getattr(obj, name)) for name in names]

    to_typed, to_plain = both(schema.root, lambda record: classes[record.name], read)
    return annotation(schema.root, classes, Any), to_typed, to_plain


def orjson_dataclass(schema: Schema) -> SchemaBinding:
    """orjson writes dataclasses itself; its loads gives plain data, which the schema's own
    converter builds into the dataclasses (no validation: orjson has none)."""
    import orjson

    for record in schema.records():
        hidden = [field.name for field in record.fields if field.name.startswith("_")]
        if hidden:  # orjson writes no field whose name starts with _: they would be lost
            raise NoSchema(f"orjson leaves out a dataclass field named {hidden[0]!r}")
    _, to_typed, to_plain = dataclass_types(schema)

    def loads(payload: bytes) -> Any:
        return to_typed(orjson.loads(payload))

    non_str_keys = partial(orjson.dumps, option=orjson.OPT_NON_STR_KEYS)
    return SchemaBinding(
        (
            Config(orjson.dumps, loads),
            Config(non_str_keys, loads, "option=OPT_NON_STR_KEYS"),
        ),
        to_typed,
        to_plain,
    )


def cattrs_orjson(schema: Schema) -> SchemaBinding:
    """cattrs' orjson converter: unstructure then orjson.dumps; orjson.loads then structure."""
    from cattrs.preconf.orjson import make_converter

    root, to_typed, to_plain = dataclass_types(schema)
    converter = make_converter()
    return SchemaBinding(
        (Config(converter.dumps, partial(converter.loads, cl=root)),), to_typed, to_plain
    )


def mashumaro_orjson(schema: Schema) -> SchemaBinding:
    """mashumaro's orjson codecs, compiled for the schema's root type."""
    from mashumaro.codecs.orjson import ORJSONDecoder, ORJSONEncoder

    root, to_typed, to_plain = dataclass_types(schema)
    encoder, decoder = ORJSONEncoder(root), ORJSONDecoder(root)
    return SchemaBinding((Config(encoder.encode, decoder.decode),), to_typed, to_plain)
