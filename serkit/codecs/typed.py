"""The schema codecs: typed and validated decoding, each over a schema derived from the document.

Their `dumps` takes typed objects (Structs, models, messages, dataclasses) built once from
the document, and their `loads` gives typed objects back: what a program that uses these
libraries holds. So the same operation is timed as for every codec, bytes out and bytes
in, with the library's types on the Python side. Fidelity compares what `loads` gave back
after converting it to plain data again (Codec.to_plain), and says so.

Each codec's types come from the document's schema (serkit.schemas.derive) at run time,
through Binding.for_schema. `fixtures` names the record-shaped fixtures a run that names
no fixtures times them on, so that the quick run stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from serkit.codecs import typed_models, typed_wire
from serkit.codecs.spec import RECORD_FIXTURES, Binding, CodecSpec
from serkit.errors import CodecNotInstalled

# Timed only on the fixtures a run names: they are here for post 006's comparison.
NAMED_ONLY: tuple[str, ...] = ()


def _msgspec(builder: Any) -> Any:
    def bind() -> Binding:
        import msgspec

        if not hasattr(msgspec, "UnsetType"):
            raise CodecNotInstalled("msgspec is too old for schema codecs (needs UNSET, 0.18+)")
        return Binding((), (msgspec.json.encode, msgspec.json.decode), builder)

    return bind


def _pydantic() -> Binding:
    import pydantic
    import pydantic_core

    if not pydantic.VERSION.startswith("2."):
        raise CodecNotInstalled(f"pydantic-json needs pydantic 2, not {pydantic.VERSION}")
    # The validator and serializer are pydantic-core's, compiled (from Rust).
    parts = (pydantic_core.SchemaValidator, pydantic_core.SchemaSerializer)
    return Binding((), parts, typed_models.pydantic_json)


def _protobuf() -> Binding:
    from google.protobuf.internal import api_implementation

    kind = api_implementation.Type()  # "upb", "cpp" or "python": the one that runs
    if kind == "upb":
        from google._upb import _message

        parts: tuple[object, ...] = (_message.Message,)
    elif kind == "cpp":  # no wheel ships it any more; a build from source may
        parts = (importlib.import_module("google.protobuf.pyext._message").CMessage,)
    else:
        from google.protobuf.internal import python_message

        parts = (python_message.GeneratedProtocolMessageType,)
    return Binding((), parts, typed_wire.protobuf_messages)


def _fastavro() -> Binding:
    import fastavro

    # Compiled (Cython) unless fastavro fell back to fastavro._write_py and _read_py.
    return Binding(
        (), (fastavro.schemaless_writer, fastavro.schemaless_reader), typed_wire.fastavro_schemaless
    )


def _orjson_dataclass() -> Binding:
    import orjson

    return Binding((), (orjson.dumps, orjson.loads), typed_models.orjson_dataclass)


def _cattrs() -> Binding:
    import cattrs.preconf.orjson  # noqa: F401

    return Binding((), (), typed_models.cattrs_orjson)


def _mashumaro() -> Binding:
    import mashumaro.codecs.orjson  # noqa: F401

    return Binding((), (), typed_models.mashumaro_orjson)


TYPED_CODECS: tuple[CodecSpec, ...] = (
    CodecSpec(
        "msgspec-struct-json",
        "json",
        "msgspec",
        _msgspec(typed_models.msgspec_json),
        "msgspec.json.Decoder(Struct).decode(b) and Encoder().encode(obj), Structs from the schema",
        module="msgspec",
        variant="Structs made from the derived schema (msgspec.defstruct); decoding validates",
        needs_schema=True,
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "msgspec-struct-msgpack",
        "msgpack",
        "msgspec",
        _msgspec(typed_models.msgspec_msgpack),
        "msgspec.msgpack.Decoder(Struct).decode(b) and Encoder().encode(obj)",
        module="msgspec",
        variant="Structs made from the derived schema (msgspec.defstruct); decoding validates",
        needs_schema=True,
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "pydantic-json",
        "json",
        "pydantic",
        _pydantic,
        "TypeAdapter(Model).validate_json(b) and dump_json(obj, exclude_unset=True)",
        module="pydantic",
        variant="models made from the derived schema (pydantic.create_model); lax validation",
        needs_schema=True,
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "protobuf",
        "protobuf",
        "protobuf",
        _protobuf,
        "Message.FromString(b) and msg.SerializeToString(), messages from the schema",
        module="google.protobuf",
        variant="messages described at run time from the derived schema (no protoc); "
        "a top level that is not a record is wrapped in a message of one field",
        needs_schema=True,
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "fastavro",
        "avro",
        "fastavro",
        _fastavro,
        "fastavro.schemaless_reader(stream, schema) and schemaless_writer(stream, schema, obj)",
        module="fastavro",
        variant="the derived schema written as Avro; one datum, no container file",
        needs_schema=True,
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "orjson-dataclass",
        "json",
        "orjson",
        _orjson_dataclass,
        "orjson.dumps(dataclass); orjson.loads(b), then the dataclasses built from it",
        module="orjson",
        variant="dataclasses made from the derived schema; loads builds them without validating",
        needs_schema=True,
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "cattrs-orjson",
        "json",
        "cattrs",
        _cattrs,
        "cattrs.preconf.orjson converter: loads(b, Root) and dumps(obj)",
        module="cattrs",
        variant="dataclasses made from the derived schema, structured by cattrs over orjson",
        pure_python=True,
        needs_schema=True,
        fixtures=NAMED_ONLY,
    ),
    CodecSpec(
        "mashumaro-orjson",
        "json",
        "mashumaro",
        _mashumaro,
        "mashumaro.codecs.orjson ORJSONDecoder(Root).decode(b) and ORJSONEncoder(Root).encode",
        module="mashumaro",
        variant="dataclasses made from the derived schema, code-generated by mashumaro over orjson",
        pure_python=True,
        needs_schema=True,
        fixtures=NAMED_ONLY,
    ),
)
