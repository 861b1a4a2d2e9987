"""The 19 built-in schemaless codecs: each configured the idiomatic fast way for its library.

Rules every entry follows:
- `dumps` returns bytes. A library that returns str is wrapped by `_utf8`, the same
  wrapper for every text codec, so every codec's timing ends at bytes and every text
  codec pays for the encode in the same way.
- Where no transformation is needed, the library's own callable is handed over as is.
- Library defaults are kept, except where noted in `summary` and, where the option
  changes speed, in `variant`. An option a library
  needs only for some data (int dict keys) is a fallback `Config`, labelled, and used
  only on the data that needs it.
- `native_parts` names the objects that must be compiled for the codec to count as C.
- `direct` is the same work as a user would write it, without the adapter: the overhead
  benchmark times one beside the other.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, cast

from serkit.codecs.spec import (
    RECORD_FIXTURES,
    STDLIB,
    Binding,
    CodecSpec,
    Config,
    DirectCall,
    Dumps,
)
from serkit.errors import CodecNotInstalled
from serkit.inputs.records import ImuSample, Vec3


def _utf8(text_dumps: Callable[[Any], str]) -> Dumps:
    """Turn a str-returning dumps into a bytes-returning one, by UTF-8."""

    # encode() without arguments is UTF-8, and skips parsing one (about 5 ns a call here).
    def dumps(obj: Any) -> bytes:
        return text_dumps(obj).encode()

    return dumps


def _pickle(protocol: int) -> Callable[[], Binding]:
    def bind() -> Binding:
        import pickle

        pickle_dumps = pickle.dumps

        # Positional: _pickle parses a protocol= keyword ~150 ns slower than the argument.
        def dumps(obj: Any) -> bytes:
            return pickle_dumps(obj, protocol)

        return Binding((Config(dumps, pickle.loads),), (pickle.dumps, pickle.loads))

    return bind


def _marshal() -> Binding:
    import marshal

    return Binding((Config(marshal.dumps, marshal.loads),), (marshal.dumps, marshal.loads))


def _json() -> Binding:
    import json.encoder
    import json.scanner

    return Binding(
        (Config(_utf8(json.dumps), json.loads),),
        # None when CPython was built without its _json accelerator.
        (
            getattr(json.encoder, "c_make_encoder", None),
            getattr(json.scanner, "c_make_scanner", None),
        ),
    )


def _simplejson() -> Binding:
    import simplejson
    import simplejson.encoder
    import simplejson.scanner

    return Binding(
        (Config(_utf8(simplejson.dumps), simplejson.loads),),
        (simplejson.encoder.c_make_encoder, simplejson.scanner.c_make_scanner),
    )


def _ujson() -> Binding:
    import ujson

    return Binding((Config(_utf8(ujson.dumps), ujson.loads),), (ujson.dumps, ujson.loads))


def _orjson() -> Binding:
    import orjson

    # OPT_NON_STR_KEYS doubles dumps time on str-keyed data here, so it is a fallback.
    non_str_keys = partial(orjson.dumps, option=orjson.OPT_NON_STR_KEYS)
    return Binding(
        (
            Config(orjson.dumps, orjson.loads),
            Config(non_str_keys, orjson.loads, "option=OPT_NON_STR_KEYS"),
        ),
        (orjson.dumps, orjson.loads),
    )


def _rapidjson() -> Binding:
    import rapidjson

    coerce_keys = partial(rapidjson.dumps, mapping_mode=rapidjson.MM_COERCE_KEYS_TO_STRINGS)
    return Binding(
        (
            Config(_utf8(rapidjson.dumps), rapidjson.loads),
            Config(_utf8(coerce_keys), rapidjson.loads, "mapping_mode=MM_COERCE_KEYS_TO_STRINGS"),
        ),
        (rapidjson.dumps, rapidjson.loads),
    )


def _msgspec_json() -> Binding:
    import msgspec

    return Binding(
        (Config(msgspec.json.encode, msgspec.json.decode),),
        (msgspec.json.encode, msgspec.json.decode),
    )


def _msgpack() -> Binding:
    import msgpack

    # msgpack >= 1.0 refuses non-str map keys on unpack unless told otherwise.
    lenient = partial(msgpack.unpackb, strict_map_key=False)
    return Binding(
        (
            Config(msgpack.packb, msgpack.unpackb),
            Config(msgpack.packb, lenient, "unpackb(strict_map_key=False)"),
        ),
        (msgpack.Packer, msgpack.unpackb),
    )


# Post 002's ExtType codes for its two record types.
SENSOR_EXT_TYPES: dict[int, type[tuple[Any, ...]]] = {0: Vec3, 10: ImuSample}


def sensor_hooks() -> tuple[Callable[[Any], Any], Callable[[int, bytes], Any]]:
    """msgpack's `default` and `ext_hook` for post 002's namedtuples, as ExtType 0 and 10."""
    import msgpack

    codes = {cls: code for code, cls in SENSOR_EXT_TYPES.items()}

    def default(obj: Any) -> Any:
        code = codes.get(type(obj))
        if code is not None:
            # A list, not the tuple itself: strict_types refuses tuples (asv-notes).
            return msgpack.ExtType(
                code, msgpack.packb(list(obj), default=default, strict_types=True)
            )
        if isinstance(obj, tuple):  # strict_types sends every tuple here
            return list(obj)
        raise TypeError(f"can not serialize {type(obj).__name__!r} object")

    def ext_hook(code: int, data: bytes) -> Any:
        cls = SENSOR_EXT_TYPES.get(code)
        if cls is None:
            return msgpack.ExtType(code, data)
        return cls(*msgpack.unpackb(data, ext_hook=ext_hook))

    return default, ext_hook


def _msgpack_ext() -> Binding:
    import msgpack

    default, ext_hook = sensor_hooks()
    dumps = partial(msgpack.packb, default=default, strict_types=True)
    return Binding(
        (
            Config(dumps, partial(msgpack.unpackb, ext_hook=ext_hook)),
            Config(
                dumps,
                partial(msgpack.unpackb, ext_hook=ext_hook, strict_map_key=False),
                "unpackb(strict_map_key=False)",
            ),
        ),
        (msgpack.Packer, msgpack.unpackb),
    )


def _ormsgpack() -> Binding:
    import ormsgpack

    option = ormsgpack.OPT_NON_STR_KEYS
    return Binding(
        (
            Config(ormsgpack.packb, ormsgpack.unpackb),
            Config(
                partial(ormsgpack.packb, option=option),
                partial(ormsgpack.unpackb, option=option),
                "option=OPT_NON_STR_KEYS",
            ),
        ),
        (ormsgpack.packb, ormsgpack.unpackb),
    )


def _msgspec_msgpack() -> Binding:
    import msgspec

    return Binding(
        (Config(msgspec.msgpack.encode, msgspec.msgpack.decode),),
        (msgspec.msgpack.encode, msgspec.msgpack.decode),
    )


def _cbor2() -> Binding:
    import cbor2

    return Binding((Config(cbor2.dumps, cbor2.loads),), (cbor2.dumps, cbor2.loads))


def _yaml() -> Binding:
    import yaml

    # With no stream, yaml.dump returns str (its stubs cannot say so through partial).
    dump = cast("Callable[[Any], str]", partial(yaml.dump, Dumper=yaml.SafeDumper, sort_keys=False))
    return Binding(
        (Config(_utf8(dump), partial(yaml.load, Loader=yaml.SafeLoader)),),
        (yaml.SafeDumper, yaml.SafeLoader),  # pure Python by design
    )


def _yaml_c() -> Binding:
    import yaml

    if not getattr(yaml, "__with_libyaml__", False):
        # Never fall back to the pure loader under the C codec's name.
        raise CodecNotInstalled(
            "yaml-c needs PyYAML built with libyaml, and this PyYAML has none "
            "(pip install --force-reinstall --only-binary=:all: pyyaml)"
        )
    import yaml.cyaml

    # With no stream, yaml.dump returns str (its stubs cannot say so through partial).
    dump = cast(
        "Callable[[Any], str]", partial(yaml.dump, Dumper=yaml.CSafeDumper, sort_keys=False)
    )
    return Binding(
        (Config(_utf8(dump), partial(yaml.load, Loader=yaml.CSafeLoader)),),
        (yaml.cyaml.CParser, yaml.cyaml.CEmitter),  # type: ignore[attr-defined]
    )


# What BSON cannot hold at its top level (a list, a str): a user would wrap it in a document.
BSON_WRAPPER_KEY = "document"


def _bson() -> Binding:
    import bson

    if not hasattr(bson, "encode") or not hasattr(bson, "has_c"):
        # The `bson` distribution on PyPI also installs a module named bson.
        raise CodecNotInstalled("the bson module here is not pymongo's (pip install pymongo)")

    def wrapped_dumps(obj: Any) -> bytes:
        return bson.encode({BSON_WRAPPER_KEY: obj})

    def wrapped_loads(payload: bytes) -> Any:
        return bson.decode(payload)[BSON_WRAPPER_KEY]

    # None when pymongo's C extension did not load: pure Python then.
    native = getattr(getattr(bson, "_cbson", None), "_dict_to_bson", None)
    return Binding(
        (
            Config(bson.encode, bson.decode),
            Config(
                wrapped_dumps, wrapped_loads, f"top level wrapped as {{'{BSON_WRAPPER_KEY}': obj}}"
            ),
        ),
        (native,),
    )


def _plain(
    module: str, dumps: str = "dumps", loads: str = "loads", *, text: bool = False
) -> DirectCall:
    """The library's two functions, called as a user would; str encoded as a user would."""
    encode = ".encode()" if text else ""
    return DirectCall(
        f"from {module} import {dumps}, {loads}", f"{dumps}(obj){encode}", f"{loads}(payload)"
    )


SORT_KEYS_VARIANT = "sort_keys=False: keys in insertion order (yaml.dump sorts them by default)"

# The two codecs whose `loads` must never see untrusted bytes. The yaml codecs load with
# SafeLoader/CSafeLoader, which build only plain data: PyYAML's unsafe loaders are not used.
PICKLE_HAZARD = "runs code: the payload names callables and loads calls them"
MARSHAL_HAZARD = "not secure against malformed data (Python docs): may crash the interpreter"

BUILTIN_CODECS: tuple[CodecSpec, ...] = (
    *(
        CodecSpec(
            f"pickle-p{p}",
            "pickle",
            STDLIB,
            _pickle(p),
            f"pickle.dumps(obj, protocol={p})",
            module="pickle",
            untrusted_input_hazard=PICKLE_HAZARD,
            direct=DirectCall(
                "from pickle import dumps, loads", f"dumps(obj, {p})", "loads(payload)"
            ),
            variant="protocol passed positionally (a protocol= keyword costs about 150 ns a call)",
        )
        for p in (0, 2, 4, 5)
    ),
    CodecSpec(
        "marshal",
        "marshal",
        STDLIB,
        _marshal,
        "marshal.dumps(obj)",
        module="marshal",
        untrusted_input_hazard=MARSHAL_HAZARD,
        direct=_plain("marshal"),
    ),
    CodecSpec(
        "json",
        "json",
        STDLIB,
        _json,
        "json.dumps(obj), UTF-8 encoded",
        module="json",
        direct=_plain("json", text=True),
    ),
    CodecSpec(
        "simplejson",
        "json",
        "simplejson",
        _simplejson,
        "simplejson.dumps(obj), UTF-8 encoded",
        module="simplejson",
        direct=_plain("simplejson", text=True),
    ),
    CodecSpec(
        "ujson",
        "json",
        "ujson",
        _ujson,
        "ujson.dumps(obj), UTF-8 encoded",
        module="ujson",
        direct=_plain("ujson", text=True),
    ),
    CodecSpec(
        "orjson",
        "json",
        "orjson",
        _orjson,
        "orjson.dumps(obj)",
        module="orjson",
        direct=_plain("orjson"),
    ),
    CodecSpec(
        "rapidjson",
        "json",
        "python-rapidjson",
        _rapidjson,
        "rapidjson.dumps(obj), UTF-8 encoded",
        module="rapidjson",
        direct=_plain("rapidjson", text=True),
    ),
    CodecSpec(
        "msgspec-json",
        "json",
        "msgspec",
        _msgspec_json,
        "msgspec.json.encode(obj)",
        module="msgspec.json",
        direct=_plain("msgspec.json", "encode", "decode"),
    ),
    CodecSpec(
        "msgpack",
        "msgpack",
        "msgpack",
        _msgpack,
        "msgpack.packb(obj)",
        module="msgpack",
        direct=_plain("msgpack", "packb", "unpackb"),
    ),
    CodecSpec(
        "msgpack-ext",
        "msgpack",
        "msgpack",
        _msgpack_ext,
        "msgpack.packb(obj, strict_types=True), post 002's namedtuples as ExtType 0 and 10",
        module="msgpack",
        direct=DirectCall(
            "from msgpack import packb, unpackb\n"
            "from serkit.codecs.builtin import sensor_hooks\n"
            "default, ext_hook = sensor_hooks()",
            "packb(obj, default=default, strict_types=True)",
            "unpackb(payload, ext_hook=ext_hook)",
        ),
        variant="strict_types=True, with default= and ext_hook= for post 002's namedtuples",
    ),
    CodecSpec(
        "ormsgpack",
        "msgpack",
        "ormsgpack",
        _ormsgpack,
        "ormsgpack.packb(obj)",
        module="ormsgpack",
        direct=_plain("ormsgpack", "packb", "unpackb"),
    ),
    CodecSpec(
        "msgspec-msgpack",
        "msgpack",
        "msgspec",
        _msgspec_msgpack,
        "msgspec.msgpack.encode(obj)",
        module="msgspec.msgpack",
        direct=_plain("msgspec.msgpack", "encode", "decode"),
    ),
    CodecSpec(
        "bson",
        "bson",
        "pymongo",
        _bson,
        "bson.encode(obj) (pymongo), a document at the top level",
        module="bson",
        direct=_plain("bson", "encode", "decode"),
        # A schemaless binary format beside the schema codecs: a default run times it where
        # they run, so the quick run stays cheap.
        fixtures=RECORD_FIXTURES,
    ),
    CodecSpec(
        "cbor2", "cbor", "cbor2", _cbor2, "cbor2.dumps(obj)", module="cbor2", direct=_plain("cbor2")
    ),
    CodecSpec(
        "yaml",
        "yaml",
        "pyyaml",
        _yaml,
        "yaml.dump(obj, Dumper=SafeDumper, sort_keys=False), UTF-8 encoded",
        module="yaml",
        direct=DirectCall(
            "from yaml import SafeDumper, SafeLoader, dump, load",
            "dump(obj, Dumper=SafeDumper, sort_keys=False).encode()",
            "load(payload, Loader=SafeLoader)",
        ),
        variant=SORT_KEYS_VARIANT,
        pure_python=True,
    ),
    CodecSpec(
        "yaml-c",
        "yaml",
        "pyyaml",
        _yaml_c,
        "yaml.dump(obj, Dumper=CSafeDumper, sort_keys=False), UTF-8 encoded",
        module="yaml",
        direct=DirectCall(
            "from yaml import CSafeDumper, CSafeLoader, dump, load",
            "dump(obj, Dumper=CSafeDumper, sort_keys=False).encode()",
            "load(payload, Loader=CSafeLoader)",
        ),
        variant=SORT_KEYS_VARIANT,
    ),
)
