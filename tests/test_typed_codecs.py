"""The schema codecs: typed objects out and in, fidelity as plain data, validation probes."""

from __future__ import annotations

import dataclasses

import pytest

from serkit.checks.fidelity import (
    ACCEPTED_CHANGED,
    EXACT,
    LOSSY,
    NO_SCHEMA,
    PASSED_THROUGH,
    REJECTED,
    TYPED_COMPARISON,
    check_round_trip,
)
from serkit.checks.validation import check_validation
from serkit.cli import main
from serkit.codecs.conversion import typed_converter
from serkit.codecs.registry import default_fixtures, get_codec, registry
from serkit.errors import NoSchema, UnknownCodec
from serkit.inputs.fixtures import load_fixture
from serkit.schemas.derive import derive
from serkit.suite.cases import Selection
from serkit.suite.preparation import prepare, prepare_object, schema_number

TYPED = [name for name in registry.names() if registry.spec(name).needs_schema]


def test_the_schema_codecs_are_registered_and_bind() -> None:
    assert set(TYPED) == {
        "msgspec-struct-json",
        "msgspec-struct-msgpack",
        "pydantic-json",
        "protobuf",
        "fastavro",
        "orjson-dataclass",
        "cattrs-orjson",
        "mashumaro-orjson",
    }
    for name in TYPED:
        codec = get_codec(name)
        assert codec.needs_schema and codec.schema is None
        with pytest.raises(NoSchema, match="bind it to a schema first"):
            codec.round_trip({"a": 1})
    # Compiled where the library is: msgspec (C), pydantic-core and orjson (Rust), upb.
    for name in ("msgspec-struct-json", "pydantic-json", "protobuf", "orjson-dataclass"):
        assert get_codec(name).implementation == "c"


@pytest.mark.parametrize("name", TYPED)
def test_each_times_typed_objects_and_gives_back_small_dict_exactly(name: str) -> None:
    case = prepare(name, "small-dict")
    assert case.bound is not None and case.bound.schema is not None
    assert case.schema_sha256 == load_fixture.__globals__["FIXTURES"]["small-dict"].schema_sha256
    decoded = case.config.loads(case.payload)
    if name != "fastavro":  # a Struct, model, message or dataclass; Avro's records are dicts
        assert not isinstance(case.obj, dict) and not isinstance(decoded, dict)
    assert case.bound.to_plain(decoded) == load_fixture("small-dict")
    result = check_round_trip(name, "small-dict", load_fixture("small-dict"))
    assert result.compared == TYPED_COMPARISON
    if name == "protobuf":  # a protobuf map keeps no order
        assert result.status == LOSSY and [d.kind for d in result.differences] == ["key-order"]
    else:
        assert result.status == EXACT, result.detail
    assert result.schema_sha256 == case.schema_sha256


def test_a_schema_a_library_cannot_express_is_no_schema_with_the_reason() -> None:
    avro = check_round_trip("fastavro", "random-dicts-10", load_fixture("random-dicts-10"))
    assert avro.status == NO_SCHEMA and "Avro's are strings" in avro.detail
    dataclass = check_round_trip("orjson-dataclass", "senate-bios", load_fixture("senate-bios"))
    assert dataclass.status == NO_SCHEMA and "named 'class'" in dataclass.detail
    mixed = check_round_trip("msgspec-struct-json", "int-float-bool", [1, 1.0, True])
    assert mixed.status == NO_SCHEMA and "several types" in mixed.detail


def test_absent_optional_fields_stay_absent_where_the_library_can_say_so() -> None:
    document = [{"id": 1, "note": "x"}, {"id": 2}]
    for name, status in (("msgspec-struct-json", EXACT), ("pydantic-json", EXACT)):
        assert check_round_trip(name, "doc", document).status == status
    # A dataclass and an Avro record have every field: the absent one comes back as null.
    for name in ("orjson-dataclass", "fastavro"):
        result = check_round_trip(name, "doc", document)
        assert result.status == LOSSY and "value-changed" in result.detail


def test_a_derived_schema_is_used_for_a_document_that_is_not_a_fixture() -> None:
    document = {"rows": [{"x": 1.5, "label": "a"}]}
    case = prepare_object("protobuf", "mine.json", document, keep_decoded=True)
    assert case.schema_sha256 == derive(document).sha256
    assert case.bound is not None and case.bound.to_plain(case.decoded) == document


@dataclasses.dataclass
class Row:
    id: int
    tags: list[str]


def test_a_flat_record_is_built_in_one_call_with_what_a_field_walk_would_give() -> None:
    to_typed = typed_converter(derive({"id": 1, "tags": ["a"]}).root, lambda _record: Row)
    tags = ["a", "b"]
    built = to_typed({"id": 1, "tags": tags})
    assert built == Row(1, ["a", "b"]) and built.tags is tags  # a list of scalars: uncopied
    assert to_typed({"id": 2, "tags": [], "extra": True}) == Row(2, [])  # the extra dropped
    with pytest.raises(TypeError):
        to_typed({"tags": []})  # a field it needs is missing either way


def test_a_default_run_times_schema_codecs_on_their_declared_fixtures_only() -> None:
    default = Selection()
    assert default.excludes("msgspec-struct-json", "twitter") is None
    assert "unless SERKIT_BENCH_FIXTURES names small-dict" in (
        default.excludes("msgspec-struct-json", "small-dict") or ""
    )
    assert default.excludes("cattrs-orjson", "twitter") is not None  # named only
    named = Selection(fixtures=("small-dict",))
    assert named.excludes("cattrs-orjson", "small-dict") is None
    assert default.excludes("json", "small-dict") is None  # schemaless codecs as before


def test_default_fixtures_reads_each_codecs_one_declaration() -> None:
    assert default_fixtures("json") is None  # every fixture a default run times
    assert default_fixtures("msgspec-struct-json") == ("twitter",)
    assert default_fixtures("bson") == ("twitter",)
    assert default_fixtures("cattrs-orjson") == ()  # only where a run names fixtures
    for name in registry.names():
        assert default_fixtures(name) == registry.spec(name).fixtures
    with pytest.raises(UnknownCodec, match="unknown codec 'nope'"):
        default_fixtures("nope")


def test_the_schema_fact_is_the_pinned_hash_and_skips_what_needs_none() -> None:
    pin = load_fixture.__globals__["FIXTURES"]["twitter"].schema_sha256
    assert f"{schema_number('msgspec-struct-json', 'twitter'):012x}" == pin[:12]
    with pytest.raises(Exception, match="needs no schema"):
        schema_number("json", "twitter")


@pytest.mark.parametrize(
    ("codec", "probe", "outcome"),
    [
        ("msgspec-struct-json", "schema-wrong-type", REJECTED),
        ("msgspec-struct-json", "schema-missing-field", REJECTED),
        ("msgspec-struct-json", "schema-extra-field", ACCEPTED_CHANGED),  # ignored, dropped
        ("pydantic-json", "schema-wrong-type", ACCEPTED_CHANGED),  # lax: "1" becomes 1
        ("pydantic-json", "schema-missing-field", REJECTED),
        ("orjson-dataclass", "schema-wrong-type", PASSED_THROUGH),  # no validation at all
        ("orjson-dataclass", "schema-extra-field", ACCEPTED_CHANGED),  # dropped, no error
        ("json", "schema-wrong-type", PASSED_THROUGH),
    ],
)
def test_validation_probes_tell_rejecting_from_passing_through(
    codec: str, probe: str, outcome: str
) -> None:
    assert check_validation(codec, probe).status == outcome


def test_fidelity_lists_the_validation_probes(capsys: pytest.CaptureFixture[str]) -> None:
    codecs = ["--codec", "msgspec-struct-json", "--codec", "json"]
    code = main(["fidelity", *codecs, "--fixture", "schema-wrong-type", "--fixture", "small-dict"])
    out = capsys.readouterr().out
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()}
    assert "rejected" in rows["msgspec-struct-json"]
    assert "passed through" in rows["json"]
    assert "rejected: validation probe: loads refused the bytes that break the schema" in out


def test_list_shows_which_codecs_derive_a_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("pydantic-json "))
    assert " derived " in row
    limited = out.split("times these on some only:")[1]
    assert "    msgspec-struct-json: twitter" in limited
    assert "    cattrs-orjson: none (name fixtures to time it)" in limited
    assert "    json:" not in limited


def test_conformance_leaves_the_schema_codecs_out() -> None:
    from serkit.checks.conformance import json_codecs

    assert "msgspec-struct-json" not in json_codecs() and "orjson" in json_codecs()
