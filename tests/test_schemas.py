"""Deriving a record type from a document (serkit.schemas), and pinning it by its hash."""

from __future__ import annotations

import dataclasses
import datetime
import re

import pytest

from serkit.errors import NoSchema, SchemaChanged
from serkit.inputs import fixtures
from serkit.inputs.fixtures import FIXTURES, Vec3, fixture_names, get_fixture, load_fixture
from serkit.schemas import pinned
from serkit.schemas.derive import derive
from serkit.schemas.supplied import check_fits, from_json_schema
from serkit.schemas.types import (
    SUPPLIED,
    Field,
    ListOf,
    MapOf,
    Nullable,
    Record,
    Scalar,
    hash_number,
    hash_text,
)


def test_a_list_of_dicts_is_a_list_of_one_record_with_required_and_optional_fields() -> None:
    schema = derive([{"id": 1, "name": "a", "nick": None}, {"id": 2, "name": "b", "age": 3.5}])
    assert schema.root == ListOf(
        Record(
            "DocumentItem",
            (
                Field("id", Scalar("int")),
                Field("name", Scalar("str")),
                Field("nick", Scalar("null"), required=False),
                Field("age", Scalar("float"), required=False),
            ),
        )
    )
    assert schema.notes == ("[]['nick']: only ever null, typed null",)


def test_dicts_keyed_by_data_are_maps_and_ints_and_floats_merge() -> None:
    schema = derive({"scores": {"1": 2, "2": 2.5}, "by_id": {7: "x"}, "empty": {}})
    assert isinstance(schema.root, Record)
    types = {f.name: f.type for f in schema.root.fields}
    assert types == {
        "scores": MapOf("str", Scalar("float")),
        "by_id": MapOf("int", Scalar("str")),
        "empty": MapOf("str", Scalar("null")),
    }


def test_nulls_make_a_field_nullable_and_namedtuples_records() -> None:
    schema = derive([{"at": Vec3(1.0, 2.0, 3.0), "when": datetime.date(2020, 1, 1)}, {"at": None}])
    record = schema.root.item  # type: ignore[union-attr]
    at, when = record.fields
    assert at.type == Nullable(Record("At", tuple(Field(n, Scalar("float")) for n in "xyz")))
    assert when == Field("when", Scalar("date"), required=False)


@pytest.mark.parametrize(
    ("document", "place"),
    [
        ([1, "one"], "[] holds values of several types (integer, string)"),
        ({"a": [{"b": 1}, {"b": "x"}]}, "['a'][]['b'] holds values of several types"),
        ({1: "a", "b": "c"}, "keys of several types"),
        (b"bytes", "a value JSON Schema has no type for"),
    ],
)
def test_a_document_no_record_type_fits_says_where_and_why(document: object, place: str) -> None:
    with pytest.raises(NoSchema, match=re.escape(place)):
        derive(document)


def test_the_hash_is_of_the_type_only_and_changes_with_it() -> None:
    first = derive([{"a": 1}, {"a": 2}])
    assert first.sha256 == derive([{"a": 5}]).sha256  # other values, the same type
    assert first.sha256 != derive([{"a": 1.5}]).sha256
    assert first.sha256 != derive([{"b": 1}]).sha256
    assert hash_text(hash_number(first.sha256)) == first.sha256[:12]


@pytest.mark.parametrize(
    "name", [n for n in fixture_names() if not get_fixture(n).slow or n == "citm-catalog"]
)
def test_every_fixture_derives_the_schema_it_is_pinned_to(name: str) -> None:
    pin = FIXTURES[name].schema_sha256
    assert pin is not None, f"{name} has no pinned schema"
    assert derive(load_fixture(name)).sha256 == pin


def test_a_changed_inference_is_named_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = dataclasses.replace(FIXTURES["small-dict"], schema_sha256="0" * 64)
    monkeypatch.setitem(fixtures._FIXTURES, "small-dict", changed)
    monkeypatch.setattr(pinned, "_DERIVED", {})
    with pytest.raises(SchemaChanged, match=r"pinned 000000000000… \(genson .*\): the inference"):
        pinned.fixture_schema("small-dict")


# --- a schema the user supplies (serkit.schemas.supplied) --------------------------------

ORDERS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Orders",
    "type": "object",
    "properties": {
        "orders": {
            "type": "array",
            "items": {
                "title": "Order",
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "total": {"type": "number"},
                    "note": {"type": ["string", "null"]},
                    "placed": {"type": "string", "format": "date-time"},
                },
                "required": ["id", "total"],
            },
        },
        "stock": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
    "required": ["orders"],
}


def test_a_json_schema_of_the_users_reads_as_a_record_type() -> None:
    schema = from_json_schema(ORDERS_SCHEMA)
    order = Record(
        "Order",
        (
            Field("id", Scalar("int")),
            Field("total", Scalar("float")),
            Field("note", Nullable(Scalar("str")), required=False),
            Field("placed", Scalar("datetime"), required=False),
        ),
    )
    assert schema.root == Record(
        "Orders",
        (
            Field("orders", ListOf(order)),
            Field("stock", MapOf("str", Scalar("int")), required=False),
        ),
    )
    assert schema.origin == SUPPLIED
    # A check no record type holds is named, not silently dropped.
    assert schema.notes == ("['orders'][]['id']: minimum not checked by the codecs",)


@pytest.mark.parametrize(
    ("schema", "refusal"),
    [
        ({"$ref": "#/$defs/x"}, "cannot say $ref"),
        ({"oneOf": [{"type": "string"}]}, "cannot say oneOf"),
        ({"type": ["string", "integer"]}, "may be one of several types (integer, string)"),
        ({"type": "object", "properties": {"first-name": {"type": "string"}}}, "field name"),
        ({"type": "array"}, "an array needs one schema for its items"),
        ({"properties": {}}, "no type"),
        ({"type": "object"}, "needs properties (a record) or an additionalProperties"),
        ({"type": "object", "properties": {}, "required": ["x"]}, "required must list"),
    ],
)
def test_what_a_record_type_cannot_say_is_refused_by_place(schema: object, refusal: str) -> None:
    with pytest.raises(NoSchema, match=re.escape(refusal)):
        from_json_schema(schema)


@pytest.mark.parametrize(
    ("document", "place"),
    [
        ({"orders": [{"id": "1", "total": 2}]}, "['orders'][0]['id']: the schema says int, the "),
        ({"orders": [{"id": 1}]}, "['orders'][0]: required field 'total' is missing"),
        ({"orders": [], "extra": 1}, "'extra' is not a field of Orders"),
        ({"orders": [{"id": True, "total": 1.0}]}, "says int, the document has bool"),
        ({"orders": [], "stock": {"a": 1.5}}, "['stock']['a']: the schema says int"),
        (
            {"orders": [{"id": 1, "total": 2, "placed": "2024-07-02T00:00:00Z"}]},
            "says datetime, the document has str (a JSON document holds dates as text",
        ),
    ],
)
def test_a_document_that_does_not_fit_the_users_schema_is_named_where(
    document: object, place: str
) -> None:
    with pytest.raises(NoSchema, match=re.escape(place)):
        check_fits(from_json_schema(ORDERS_SCHEMA), document)


def test_a_document_that_fits_passes_and_the_pin_is_the_schemas_hash() -> None:
    document = {
        "orders": [{"id": 1, "total": 2, "note": None, "placed": datetime.datetime(2020, 1, 1)}],
        "stock": {"a": 3},
    }
    schema = from_json_schema(ORDERS_SCHEMA)
    check_fits(schema, document)
    assert pinned.schema_pin(document, ORDERS_SCHEMA) == schema.sha256
    # Without one, the document's own schema is derived; none fits a mixed list.
    assert pinned.schema_pin(document) == derive(document).sha256
    assert pinned.schema_pin([1, "a"]) == fixtures.NO_SCHEMA_PIN
