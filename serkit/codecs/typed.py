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
from serkit.codecs.spec import RECORD_FIXTURES, Binding, CodecSpec, DirectCall
from serkit.errors import CodecNotInstalled

# Timed only on the fixtures a run names: they are here for post 006's comparison.
NAMED_ONLY: tuple[str, ...] = ()

# The direct calls (bench_overhead, on small-dict, one record) name the root type as
# type(obj): the class a user's code names. `schema` is the schema the codec is bound to.
_ROOT = "Root = type(obj)"


def _encoder_decoder(module: str) -> DirectCall:
    """A library's Encoder and typed Decoder, made once, as their documentation shows."""
    return DirectCall(
        f"from {module} import Decoder, Encoder\n{_ROOT}\n"
        "encode, decode = Encoder().encode, Decoder(Root).decode",
        "encode(obj)",
        "decode(payload)",
    )


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
        direct=_encoder_decoder("msgspec.json"),
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
        direct=_encoder_decoder("msgspec.msgpack"),
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
        direct=DirectCall(
            f"from pydantic import TypeAdapter\n{_ROOT}\nadapter = TypeAdapter(Root)",
            "adapter.dump_json(obj, exclude_unset=True)",
            "adapter.validate_json(payload)",
        ),
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
        direct=DirectCall(_ROOT, "obj.SerializeToString()", "Root.FromString(payload)"),
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
        # The user's Avro schema, parsed once; fastavro writes to a stream, read back whole.
        direct=DirectCall(
            "from io import BytesIO\n"
            "from fastavro import parse_schema, schemaless_reader, schemaless_writer\n"
            "from serkit.codecs.typed_wire import avro_json\n"
            "parsed = parse_schema(avro_json(schema))",
            "[schemaless_writer(stream := BytesIO(), parsed, obj), stream.getvalue()][1]",
            "schemaless_reader(BytesIO(payload), parsed, None)",
        ),
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
        # One flat record: the dataclass takes the decoded dict's items as they are.
        direct=DirectCall(
            f"from orjson import dumps, loads\n{_ROOT}", "dumps(obj)", "Root(**loads(payload))"
        ),
    ),
    CodecSpec(
        "cattrs-orjson",
        "json",
        "cattrs",
        _cattrs,
        "cattrs.preconf.orjson converter: loads(b, Root) and dumps(obj)",
        module="cattrs",
        needs=("orjson",),
        variant="dataclasses made from the derived schema, structured by cattrs over orjson",
        pure_python=True,
        needs_schema=True,
        fixtures=NAMED_ONLY,
        direct=DirectCall(
            f"from cattrs.preconf.orjson import make_converter\n{_ROOT}\n"
            "converter = make_converter()",
            "converter.dumps(obj)",
            "converter.loads(payload, Root)",
        ),
    ),
    CodecSpec(
        "mashumaro-orjson",
        "json",
        "mashumaro",
        _mashumaro,
        "mashumaro.codecs.orjson ORJSONDecoder(Root).decode(b) and ORJSONEncoder(Root).encode",
        module="mashumaro",
        needs=("orjson",),
        variant="dataclasses made from the derived schema, code-generated by mashumaro over orjson",
        pure_python=True,
        needs_schema=True,
        fixtures=NAMED_ONLY,
        direct=DirectCall(
            f"from mashumaro.codecs.orjson import ORJSONDecoder, ORJSONEncoder\n{_ROOT}\n"
            "encode, decode = ORJSONEncoder(Root).encode, ORJSONDecoder(Root).decode",
            "encode(obj)",
            "decode(payload)",
        ),
    ),
)
