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
from serkit.schemas.types import (
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
