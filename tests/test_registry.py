from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import serkit
from serkit.codecs.builtin import BUILTIN_CODECS
from serkit.codecs.registry import FORMATS, Binding, CodecRegistry, CodecSpec, Config, is_compiled

SCHEMALESS_IDS = [
    *("pickle-p0", "pickle-p2", "pickle-p4", "pickle-p5", "marshal"),
    *("json", "simplejson", "ujson", "orjson", "rapidjson", "msgspec-json"),
    *("msgpack", "msgpack-ext", "ormsgpack", "msgspec-msgpack", "cbor2", "yaml", "yaml-c"),
    "bson",
]
# Typed and validated: each encodes the objects of a schema derived from the document.
SCHEMA_IDS = [
    *("msgspec-struct-json", "msgspec-struct-msgpack", "pydantic-json", "protobuf"),
    *("fastavro", "orjson-dataclass", "cattrs-orjson", "mashumaro-orjson"),
]
ALL_IDS = sorted(SCHEMALESS_IDS + SCHEMA_IDS)
# Pure Python by design: PyYAML's own loader, and cattrs' and mashumaro's structuring.
PURE_PYTHON_IDS = {"yaml", "cattrs-orjson", "mashumaro-orjson"}


def test_codec_names_lists_all_27_sorted() -> None:
    assert serkit.codec_names() == ALL_IDS
    assert [n for n in ALL_IDS if serkit.registry.spec(n).needs_schema] == sorted(SCHEMA_IDS)


def _described(name: str) -> serkit.Codec:
    codec = serkit.get_codec(name)
    assert codec.name == name
    assert codec.format in FORMATS
    assert codec.version and codec.version[0].isdigit()
    assert codec.implementation in ("c", "python")
    return codec


@pytest.mark.parametrize("name", sorted(SCHEMALESS_IDS))
def test_every_codec_is_available_and_described(name: str) -> None:
    codec = _described(name)
    assert isinstance(codec.dumps({"a": [1, 2.5, None, True]}), bytes)


@pytest.mark.parametrize("name", sorted(SCHEMA_IDS))
def test_every_schema_codec_is_available_described_and_encodes_once_bound(name: str) -> None:
    document = {"a": [1.5, 2.5], "b": True, "c": "x"}
    codec, typed = _described(name).for_document("a document", document)
    assert codec.schema is not None
    payload = codec.dumps(typed)
    assert isinstance(payload, bytes)
    assert codec.to_plain(codec.loads(payload)) == document


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="C extensions are CPython's")
@pytest.mark.parametrize("name", [n for n in ALL_IDS if n not in PURE_PYTHON_IDS])
def test_compiled_implementations_are_detected(name: str) -> None:
    assert serkit.get_codec(name).implementation == "c"


@pytest.mark.parametrize("name", sorted(PURE_PYTHON_IDS))
def test_pure_python_codecs_are_declared_so(name: str) -> None:
    assert serkit.registry.spec(name).pure_python
    assert serkit.get_codec(name).implementation == "python"


def test_codecs_unsafe_on_untrusted_input_are_declared() -> None:
    unsafe = {s.name for s in BUILTIN_CODECS if not s.safe_for_untrusted_input}
    assert unsafe == {"pickle-p0", "pickle-p2", "pickle-p4", "pickle-p5", "marshal"}
    assert "runs code" in serkit.registry.spec("pickle-p0").untrusted_input_hazard
    assert serkit.registry.spec("yaml").untrusted_input_hazard == ""


def test_serkit_never_names_an_unsafe_yaml_loader() -> None:
    """The yaml codecs and the Senate fixture load with SafeLoader or CSafeLoader only."""
    import yaml

    source = "\n".join(p.read_text() for p in Path(serkit.__file__).parent.rglob("*.py"))
    for unsafe in ("UnsafeLoader", "FullLoader", "Loader=yaml.Loader", "unsafe_load", "full_load"):
        assert unsafe not in source, unsafe
    assert "CSafeLoader" in source and "Loader=yaml.SafeLoader" in source
    codec = serkit.get_codec("yaml")
    with pytest.raises(serkit.DecodeError) as refused:  # a Python object tag is refused
        codec.loads(b"!!python/object/apply:os.system ['true']")
    assert isinstance(refused.value.__cause__, yaml.constructor.ConstructorError)


def test_pure_yaml_is_reported_as_python() -> None:
    assert serkit.get_codec("yaml").implementation == "python"


def _list_json(env: dict[str, str], code: str = "") -> dict[str, Any]:
    """`serkit list --format json` in a fresh interpreter, after running `code` there."""
    script = f"{code}\nfrom serkit.cli import main; main(['list', '--format', 'json'])"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    ).stdout
    return {row["id"]: row for row in json.loads(out)}


@pytest.mark.slow
def test_msgpack_fallback_is_detected_as_python(monkeypatch: pytest.MonkeyPatch) -> None:
    # msgpack reads MSGPACK_PUREPYTHON at import and then loads its pure-Python fallback.
    import os

    rows = _list_json({**os.environ, "MSGPACK_PUREPYTHON": "1"})
    assert rows["msgpack"]["implementation"] == "python"
    assert rows["msgpack-ext"]["implementation"] == "python"
    assert rows["orjson"]["implementation"] == "c"


@pytest.mark.slow
def test_json_and_simplejson_without_speedups_are_python() -> None:
    import os

    code = (
        "import json.encoder, simplejson\n"
        "json.encoder.c_make_encoder = None\n"
        "simplejson._toggle_speedups(False)"
    )
    rows = _list_json(dict(os.environ), code)
    assert rows["json"]["implementation"] == "python"
    assert rows["simplejson"]["implementation"] == "python"


def test_yaml_c_refuses_to_run_without_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    fresh = CodecRegistry()
    with pytest.raises(serkit.CodecNotInstalled, match="libyaml"):
        fresh.get("yaml-c")
    assert fresh.get("yaml").implementation == "python"


def test_a_fresh_registry_reads_its_specs_for_their_first_reader() -> None:
    # Read first through `specs`, a registry once held none yet, and so called pickle safe.
    fresh = CodecRegistry()
    assert not fresh.specs["pickle-p5"].safe_for_untrusted_input
    assert set(fresh.specs) == set(fresh.names()) >= {"json", "pickle-p5", "marshal"}


def test_is_compiled_tells_c_from_python() -> None:
    import json
    import pickle

    assert is_compiled(pickle.dumps)
    assert not is_compiled(pickle._dumps)  # type: ignore[attr-defined]
    assert not is_compiled(json.dumps)
    assert not is_compiled(None)


def test_adapters_hand_over_the_library_callable() -> None:
    import marshal

    import cbor2
    import msgpack
    import msgspec
    import orjson
    import ormsgpack
    import ujson

    pairs = {
        "orjson": (orjson.dumps, orjson.loads),
        "ormsgpack": (ormsgpack.packb, ormsgpack.unpackb),
        "msgpack": (msgpack.packb, msgpack.unpackb),
        "msgspec-json": (msgspec.json.encode, msgspec.json.decode),
        "msgspec-msgpack": (msgspec.msgpack.encode, msgspec.msgpack.decode),
        "cbor2": (cbor2.dumps, cbor2.loads),
        "marshal": (marshal.dumps, marshal.loads),
    }
    for name, (dumps, loads) in pairs.items():
        base = serkit.get_codec(name).configs[0]
        assert (base.dumps, base.loads) == (dumps, loads), name
    assert serkit.get_codec("ujson").configs[0].loads is ujson.loads


def test_text_codecs_return_utf8_bytes() -> None:
    doc = {"name": "Luján", "n": 1}
    for name in ("json", "simplejson", "ujson", "rapidjson", "yaml", "yaml-c"):
        payload = serkit.get_codec(name).dumps(doc)
        assert isinstance(payload, bytes), name
        payload.decode("utf-8")
        assert serkit.get_codec(name).loads(payload) == doc, name


# --- errors ------------------------------------------------------------------------------


def test_unknown_codec_is_named() -> None:
    with pytest.raises(serkit.UnknownCodec, match="unknown codec 'nope'") as info:
        serkit.get_codec("nope")
    assert isinstance(info.value, serkit.SerkitError)


def _spec(name: str, bind: Any, library: str = "stdlib") -> CodecSpec:
    return CodecSpec(name, "json", library, bind)


def test_missing_library_raises_codec_not_installed_with_hint() -> None:
    def bind() -> Binding:
        import serkit_no_such_library  # type: ignore[import-not-found]  # noqa: F401

        raise AssertionError("unreachable")

    fresh = CodecRegistry()
    fresh.register(_spec("ghost", bind, library="ghost-lib"))
    with pytest.raises(serkit.CodecNotInstalled, match=r"pip install ghost-lib"):
        fresh.get("ghost")


def test_a_plugin_that_crashes_while_binding_gets_a_named_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def bind() -> Binding:
        raise RuntimeError("plugin bug")

    fresh = CodecRegistry()
    fresh.register(_spec("buggy", bind))
    with pytest.raises(serkit.SerkitError, match="codec 'buggy' failed to load: RuntimeError"):
        fresh.get("buggy")
    # `serkit list` still lists every other codec, and says what is wrong with this one.
    from serkit.cli import list as list_command
    from serkit.cli import main

    monkeypatch.setattr(list_command, "registry", fresh)
    monkeypatch.setattr(list_command, "codec_names", fresh.names)
    assert main(["list", "--format", "json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["buggy"]["available"] is False and "plugin bug" in rows["buggy"]["reason"]
    assert rows["orjson"]["available"] is True


def test_duplicate_registration_is_refused_unless_clobbered() -> None:
    fresh = CodecRegistry()
    with pytest.raises(serkit.CodecConflict, match="'orjson' is already registered"):
        fresh.register(_spec("orjson", BUILTIN_CODECS[0].bind))  # refused before first use too
    replacement = _spec("orjson", BUILTIN_CODECS[0].bind)
    fresh.register(replacement, clobber=True)
    assert fresh.spec("orjson") is replacement


def test_specs_view_is_read_only() -> None:
    with pytest.raises(TypeError):
        serkit.registry.specs["x"] = BUILTIN_CODECS[0]  # type: ignore[index]


def test_encode_and_decode_errors_wrap_the_library_error() -> None:
    import orjson

    with pytest.raises(serkit.EncodeError) as encode:
        serkit.get_codec("orjson").dumps({1j: 1})
    assert isinstance(encode.value.__cause__, orjson.JSONEncodeError)
    with pytest.raises(serkit.DecodeError) as decode:
        serkit.get_codec("json").loads(b"{not json")
    assert isinstance(decode.value.__cause__, ValueError)
    assert isinstance(decode.value, serkit.SerkitError)


def test_unsupported_pair_raises_encode_error_from_config_for() -> None:
    with pytest.raises(serkit.EncodeError, match="marshal cannot encode ImuSample"):
        serkit.get_codec("marshal").config_for(serkit.load_fixture("sensor-record"))


# --- options a user needs only for some data --------------------------------------------


def test_fallback_options_are_used_only_where_the_data_needs_them() -> None:
    orjson = serkit.get_codec("orjson")
    assert orjson.config_for(serkit.load_fixture("small-dict")).options == ""
    assert orjson.config_for(serkit.load_fixture("random-dicts-10")).options == (
        "option=OPT_NON_STR_KEYS"
    )
    msgpack = serkit.get_codec("msgpack")
    assert msgpack.config_for(serkit.load_fixture("random-dicts-10")).options == (
        "unpackb(strict_map_key=False)"
    )
    # The safe API finds the fallback too.
    assert serkit.get_codec("orjson").dumps({1: 2}) == b'{"1":2}'
    assert msgpack.loads(msgpack.dumps({1: 2})) == {1: 2}


# --- third-party codecs ------------------------------------------------------------------


def _install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    """A distribution on sys.path declaring one `serkit.codecs` entry point."""
    (tmp_path / "serkit_plugin_demo.py").write_text(
        "from serkit import Binding, CodecSpec, Config\n"
        "def _bind():\n"
        "    import json\n"
        "    return Binding((Config(lambda o: json.dumps(o).encode(), json.loads),), ())\n"
        "SPEC = CodecSpec('demo-json', 'json', 'serkit-plugin-demo', _bind)\n"
    )
    info = tmp_path / "serkit_plugin_demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: serkit-plugin-demo\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[serkit.codecs]\ndemo = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_entry_point_codecs_are_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, monkeypatch, "serkit_plugin_demo:SPEC")
    fresh = CodecRegistry()
    assert "demo-json" in fresh.names()
    codec = fresh.get("demo-json")
    assert codec.version == "1.0"
    assert codec.implementation == "python"  # a lambda is Python code
    assert codec.loads(codec.dumps([1, "a"])) == [1, "a"]


def test_broken_entry_point_warns_and_keeps_builtins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_plugin(tmp_path, monkeypatch, "serkit_plugin_demo:MISSING")
    fresh = CodecRegistry()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = fresh.names()
    assert names == ALL_IDS
    assert any("skipped codec entry point 'demo'" in str(w.message) for w in caught)


def test_config_rejects_unknown_format() -> None:
    with pytest.raises(ValueError, match="format must be one of"):
        CodecSpec("x", "xml", "stdlib", lambda: Binding((Config(bytes, bytes),), ()))
