"""Schema codecs whose schema is a wire format's own: protobuf messages and Avro records.

Protobuf's messages are described at run time, as a `FileDescriptorProto` built from the
derived schema and added to a descriptor pool of their own, so no `protoc` and no
generated code is needed. Avro's schema is the derived schema written as Avro JSON, which
fastavro parses once.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any, Callable

from serkit.codecs.conversion import attribute_names, both, renamed
from serkit.codecs.spec import Config, SchemaBinding
from serkit.errors import NoSchema
from serkit.schemas.types import Field, ListOf, MapOf, Nullable, Record, Scalar, Schema, Type

# --- protobuf -----------------------------------------------------------------------------

PROTO_PACKAGE = "serkit.schema"
# What the top level becomes when it is not a record: a message with one field.
ROOT_WRAPPER, ROOT_FIELD = "SerkitDocument", "value"


def _place(path: str) -> str:
    return path or "the top level"


class _ProtoFile:
    """Builds the descriptor of one schema's messages, refusing what proto3 cannot say."""

    def __init__(self, schema: Schema) -> None:
        from google.protobuf import descriptor_pb2

        self.types = descriptor_pb2.FieldDescriptorProto
        self.file = descriptor_pb2.FileDescriptorProto(
            name=f"serkit_{schema.sha256[:16]}.proto", package=PROTO_PACKAGE, syntax="proto3"
        )
        self.scalars = {
            "bool": self.types.TYPE_BOOL,
            "int": self.types.TYPE_SINT64,  # zigzag: a derived int may be negative
            "float": self.types.TYPE_DOUBLE,
            "str": self.types.TYPE_STRING,
            "null": self.types.TYPE_STRING,  # never set: proto3 has no null
        }

    def message(self, record: Record) -> None:
        message = self.file.message_type.add(name=record.name)
        names = attribute_names(record)  # a key that is no identifier ("$ref") is renamed
        for number, field in enumerate(record.fields, start=1):
            self.field(message, field, names[field.name], number, f"{record.name}.{field.name}")

    def field(self, message: Any, field: Field, name: str, number: int, path: str) -> None:
        node = field.type
        nullable = isinstance(node, Nullable)
        inner = node.inner if isinstance(node, Nullable) else node
        # The field's JSON name is its own: protobuf's default camel-cases it, so `foo_bar`
        # would clash with a `fooBar` beside it, though neither is ever written as JSON here.
        added = message.field.add(name=name, number=number, json_name=name)
        if isinstance(inner, (ListOf, MapOf)):
            if nullable:
                raise NoSchema(f"protobuf: {path} is a list or map that may be null")
            added.label = self.types.LABEL_REPEATED
            if isinstance(inner, ListOf):
                self.element(added, inner.item, f"{path}[]")
            else:
                self.map_entry(message, added, inner, path)
            return
        added.label = self.types.LABEL_OPTIONAL
        self.element(added, inner, path)
        if isinstance(inner, Scalar) and (nullable or not field.required or inner.kind == "null"):
            # proto3 `optional`: presence is kept, so absent and null differ from zero.
            added.proto3_optional = True
            added.oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name=f"_{name}")

    def element(self, added: Any, node: Type, path: str) -> None:
        if isinstance(node, Scalar):
            if node.kind not in self.scalars:
                raise NoSchema(f"protobuf: {path} is a {node.kind}, which proto3 has no type for")
            added.type = self.scalars[node.kind]
        elif isinstance(node, Record):
            added.type = self.types.TYPE_MESSAGE
            added.type_name = f".{PROTO_PACKAGE}.{node.name}"
        else:  # a list of lists, of maps, of nullables: proto3 needs a wrapper message
            raise NoSchema(f"protobuf: {path} holds a list, map or null inside a list or map")

    def map_entry(self, message: Any, added: Any, node: MapOf, path: str) -> None:
        entry = message.nested_type.add(name=f"{added.name.title().replace('_', '')}Entry")
        entry.options.map_entry = True
        key = entry.field.add(name="key", number=1, label=self.types.LABEL_OPTIONAL)
        key.type = self.types.TYPE_STRING if node.key == "str" else self.types.TYPE_SINT64
        value = entry.field.add(name="value", number=2, label=self.types.LABEL_OPTIONAL)
        self.element(value, node.value, f"{path}[*]")
        added.type = self.types.TYPE_MESSAGE
        added.type_name = f".{PROTO_PACKAGE}.{message.name}.{entry.name}"


def _proto_reader(record: Record) -> Callable[[Any], Iterator[tuple[str, Any]]]:
    """The fields present in a message: what a plain dict of it holds.

    proto3 keeps presence for messages and `optional` scalars only: an unset one is null
    where the field is always there, and absent where it is optional. An empty list or
    map of an optional field reads as absent, as protobuf cannot tell them apart.
    """
    plan = []
    attributes = attribute_names(record)
    for field in record.fields:
        node = field.type
        inner = node.inner if isinstance(node, Nullable) else node
        has_presence = (
            isinstance(inner, Record)
            or isinstance(node, Nullable)
            or not field.required
            or inner == Scalar("null")
        )
        if isinstance(inner, (ListOf, MapOf)):
            has_presence = False
        many = isinstance(inner, (ListOf, MapOf))
        plan.append((field.name, attributes[field.name], field.required, has_presence, many))

    def present(message: Any) -> Iterator[tuple[str, Any]]:
        for name, attribute, required, has_presence, many in plan:
            if has_presence and not message.HasField(attribute):
                if required:
                    yield name, None
                continue
            value = getattr(message, attribute)
            if many and not required and not value:
                continue
            yield name, value

    return present


def protobuf_messages(schema: Schema) -> SchemaBinding:
    """The schema's messages, from a descriptor built here; serialized with the installed
    protobuf's implementation (upb, C++ or pure Python)."""
    from google.protobuf import descriptor_pool, message_factory

    proto = _ProtoFile(schema)
    root: Type = schema.root
    wrapped = not isinstance(root, Record)
    for record in schema.records():
        proto.message(record)
    if wrapped:
        proto.message(Record(ROOT_WRAPPER, (Field(ROOT_FIELD, root),)))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto.file)
    make_class = message_factory.GetMessageClass
    classes = {
        name: make_class(pool.FindMessageTypeByName(f"{PROTO_PACKAGE}.{name}"))
        for name in [r.name for r in schema.records()] + ([ROOT_WRAPPER] if wrapped else [])
    }

    def build(record: Record) -> Callable[..., Any]:
        return renamed(classes[record.name], attribute_names(record))

    to_typed, to_plain = both(root, build, _proto_reader)
    top = classes[ROOT_WRAPPER if wrapped else root.name]  # type: ignore[union-attr]
    if wrapped:
        inner_typed, inner_plain = to_typed, to_plain

        def to_typed(document: Any) -> Any:
            return top(**{ROOT_FIELD: inner_typed(document)})

        def to_plain(message: Any) -> Any:
            return inner_plain(getattr(message, ROOT_FIELD))

    return SchemaBinding((Config(top.SerializeToString, top.FromString),), to_typed, to_plain)


# --- Avro ---------------------------------------------------------------------------------

_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AVRO_SCALARS: dict[str, Any] = {
    "bool": "boolean",
    "int": "long",
    "float": "double",
    "str": "string",
    "null": "null",
    "date": {"type": "int", "logicalType": "date"},
    "datetime": {"type": "long", "logicalType": "timestamp-micros"},
}


def avro_schema(node: Type, path: str = "") -> Any:
    """The Avro JSON schema of `node`. Every record is defined where it first appears."""
    if isinstance(node, Scalar):
        return _AVRO_SCALARS[node.kind]
    if isinstance(node, Nullable):
        inner = avro_schema(node.inner, path)
        return inner if inner == "null" else ["null", inner]  # a union holds "null" once
    if isinstance(node, ListOf):
        return {"type": "array", "items": avro_schema(node.item, f"{path}[]")}
    if isinstance(node, MapOf):
        if node.key != "str":
            raise NoSchema(
                f"Avro: {_place(path)} is a map with {node.key} keys; Avro's are strings"
            )
        return {"type": "map", "values": avro_schema(node.value, f"{path}[*]")}
    fields = []
    for field in node.fields:
        if not _AVRO_NAME.fullmatch(field.name):
            raise NoSchema(
                f"Avro: {_place(path)} has a field named {field.name!r}; Avro's field names "
                "are letters, digits and _"
            )
        kind = avro_schema(field.type, f"{path}[{field.name!r}]")
        if not field.required and not isinstance(field.type, Nullable):
            # Avro has no absent field: an optional one is written as null.
            kind = ["null", kind]
        entry: dict[str, Any] = {"name": field.name, "type": kind}
        if isinstance(kind, list):
            entry["default"] = None
        fields.append(entry)
    return {"type": "record", "name": node.name, "fields": fields}


def _defined_once(schema: Any, seen: set[str]) -> Any:
    """The schema with each record's second appearance replaced by its name, as Avro wants."""
    if isinstance(schema, list):
        return [_defined_once(item, seen) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "record":
        if schema["name"] in seen:
            return schema["name"]
        seen.add(schema["name"])
        fields = [{**f, "type": _defined_once(f["type"], seen)} for f in schema["fields"]]
        return {**schema, "fields": fields}
    return {key: _defined_once(value, seen) for key, value in schema.items()}


def avro_json(schema: Schema) -> Any:
    """The schema as Avro JSON, each record defined once: what fastavro.parse_schema reads."""
    return _defined_once(avro_schema(schema.root), set())


def fastavro_schemaless(schema: Schema) -> SchemaBinding:
    """fastavro's schemaless writer and reader: the bytes of one datum, no container file.
    Records are dicts, in and out; the schema is the one both sides must share."""
    import fastavro

    parsed = fastavro.parse_schema(avro_json(schema))
    writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader

    def dumps(obj: Any) -> bytes:
        stream = io.BytesIO()
        writer(stream, parsed, obj)
        return stream.getvalue()

    def loads(payload: bytes) -> Any:
        return reader(io.BytesIO(payload), parsed, None)

    def fields(record: Record) -> Callable[..., Any]:
        return dict

    def items(record: Record) -> Callable[[Any], Any]:
        return lambda value: value.items()

    to_typed, to_plain = both(schema.root, fields, items)
    return SchemaBinding((Config(dumps, loads),), to_typed, to_plain)
