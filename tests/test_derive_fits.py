"""A derived schema fits the document it came from, whatever the document's shape.

Hypothesis builds JSON-like documents of the shapes real ones have: records whose keys come
and go from item to item, fields of several kinds, keys that look like numbers or clash with
a library's own names, maps with arbitrary keys, empty lists and dicts, records nested in
lists in maps. For each, either derivation refuses with its reason, or every schema codec
either refuses the schema with its reason or gives the document back: never a schema that
its own document breaks (a codec that cannot build its typed objects, or decode its own
output). Derandomized, so that a run is the same on every machine.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serkit.checks.fidelity import EXACT, LOSSY, NO_SCHEMA, check_round_trip
from serkit.codecs.registry import registry
from serkit.errors import NoSchema
from serkit.schemas.derive import derive

TYPED = [name for name in registry.names() if registry.spec(name).needs_schema]
FITS = (EXACT, LOSSY, NO_SCHEMA)  # a codec that accepted the schema gave the document back
# Field names that recur across records (so some records lack them), with names that clash
# with the libraries' own (json, copy, schema, items, model_config), a keyword, and keys that
# look like numbers or are no identifiers at all, which make their dict a map.
NAMES = ["id", "name", "region", "tags", "json", "copy", "schema", "items", "class"]
NAMES += ["model_config", "fooBar", "foo_bar"]
ODD_KEYS = ["1", "01", "-2", "1.5", "us-east-1", "a b", "_x", ""]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**31), max_value=2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f != int(f)),
    st.text(max_size=5),
    # Beyond JSON: what YAML and pickle documents hold (ints stay within 64 bits, where the
    # libraries' own encoders stop, schema or none).
    st.dates(),
    st.datetimes(),
)


def _documents() -> st.SearchStrategy[Any]:
    def grow(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        records = st.dictionaries(st.sampled_from(NAMES), inner, max_size=4)
        maps = st.dictionaries(st.sampled_from(ODD_KEYS + NAMES[:3]), inner, max_size=4)
        return st.one_of(
            st.lists(inner, max_size=4),
            st.lists(records, max_size=5),  # records whose keys differ item to item
            records,
            maps,
        )

    return st.recursive(scalars, grow, max_leaves=12)


def assert_fits(document: Any) -> None:
    try:
        derive(document)
    except NoSchema as refused:
        assert str(refused), "a refusal says why"
        return
    for name in TYPED:
        result = check_round_trip(name, "hypothesis", document)
        assert result.status in FITS, f"{name}: {result.status}: {result.detail}\n{document!r}"
        if result.status == NO_SCHEMA:
            assert result.detail


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@pytest.mark.slow  # 150 examples, each derived and checked by every schema codec
@given(_documents())
def test_a_derived_schema_fits_its_own_document(document: Any) -> None:
    assert_fits(document)


# The shapes that broke derivation on real documents, each by name.
SHAPES = {
    # A map (region names) of records where one value is empty and the others differ: each
    # value's keys are optional, though GenSON merged them as required (endpoints.json).
    "map values with keys missing": {
        "services": {
            "us-east-1": {"credentialScope": {"region": "us-east-1"}, "hostname": "a"},
            "us-west-2": {},
            "eu-west-1": {"credentialScope": {"service": "s3"}},
        }
    },
    "optional field in list items": [{"id": 1, "note": "x"}, {"id": 2}, {}],
    "records in lists in maps": {"1": [{"a": 1}], "2": [{"b": "x"}, {}], "3": []},
    "keys that look like numbers": {"1": 1, "2": 2, "10": 3},
    "empty lists and dicts": {"items": [], "meta": {}, "more": [[], [{}]]},
    "nullable field": [{"id": 1, "parent": None}, {"id": 2, "parent": 1}],
    # Keys no identifier ("$ref", "bom-ref") over values of several kinds: a record, not a
    # map (a JSON Schema's property, a CycloneDX component).
    "keys that are no identifiers": [
        {"$ref": "Dataset", "readOnly": True},
        {"bom-ref": "pkg:x", "name": "x", "licenses": [{"license": {"id": "MIT"}}]},
    ],
    # A key starting with _ beside values of several kinds: a record field orjson never writes.
    "a key starting with _": {"_x": [], "id": False},
    "nulls in lists and maps": {"tags": [None], "by_id": {"1": None}, "empty": [], "none": {}},
    # Hypothesis found it in CI on 2026-11-27: the values of a map merged as dates.
    "a map of a string and a date": {"1": "", "01": datetime.date(2000, 1, 1)},
}


@pytest.mark.parametrize("shape", SHAPES)
def test_real_shapes_fit(shape: str) -> None:
    assert_fits(SHAPES[shape])


def test_mixed_kinds_are_refused_with_the_place_and_the_kinds() -> None:
    with pytest.raises(NoSchema, match=r"\['v'\] holds values of several types"):
        derive([{"v": 1}, {"v": "one"}, {"v": None}])
    day = datetime.date(2000, 1, 1)
    with pytest.raises(NoSchema, match=r"^\[\] holds values of several types \(date, string\)"):
        derive(["", day])


def test_a_string_and_a_date_are_two_kinds_not_a_map_of_dates() -> None:
    """Merging a map's values took a plain string into a date's schema (GenSON keeps the
    date's format), so a map of "" and a date read as a map of dates, which no codec could
    decode its own output of. Two kinds make the dict a record, as two dates make a map."""
    day = datetime.date(2000, 1, 1)
    (record,) = derive(SHAPES["a map of a string and a date"]).records()
    assert [(f.name, str(f.type)) for f in record.fields] == [
        ("1", str(derive("").root)),
        ("01", str(derive(day).root)),
    ]
    assert type(derive({"1": day, "01": day}).root).__name__ == "MapOf"


def test_a_map_value_missing_a_key_makes_that_key_optional() -> None:
    schema = derive(SHAPES["map values with keys missing"])
    (record,) = [r for r in schema.records() if r.name == "ServicesValue"]
    assert {f.name: f.required for f in record.fields} == {
        "credentialScope": False,
        "hostname": False,
    }
    # Outside maps nothing changed: a key every record has stays required.
    (item,) = derive(SHAPES["optional field in list items"]).records()
    assert {f.name: f.required for f in item.fields} == {"id": False, "note": False}
    assert all(f.required for f in derive([{"id": 1}, {"id": 2}]).records()[0].fields)


def test_names_a_library_reserves_or_clashes_on_keep_every_codec() -> None:
    # pydantic refuses a field named model_config; protobuf camel-cases foo_bar into fooBar.
    document = [{"model_config": 1, "fooBar": "a", "foo_bar": 2.5, "json": True}, {}]
    for name in ("pydantic-json", "protobuf", "msgspec-struct-json", "fastavro"):
        result = check_round_trip(name, "hypothesis", document)
        assert result.status in (EXACT, LOSSY), (name, result.detail)


def test_keys_that_are_no_identifiers_are_kept_or_refused_with_the_name() -> None:
    document = {"$ref": "Dataset", "readOnly": True, "bom-ref": 3}
    (record,) = derive(document).records()
    assert [f.name for f in record.fields] == ["$ref", "readOnly", "bom-ref"]
    for name in ("msgspec-struct-json", "msgspec-struct-msgpack", "pydantic-json", "protobuf"):
        result = check_round_trip(name, "hypothesis", document)
        assert result.status == EXACT, (name, result.detail)
    for name in ("orjson-dataclass", "cattrs-orjson", "mashumaro-orjson", "fastavro"):
        result = check_round_trip(name, "hypothesis", document)
        assert result.status == NO_SCHEMA and "'$ref'" in result.detail, (name, result.detail)
    # A map's values of one kind stay a map, whatever its keys.
    assert type(derive({"$a": 1, "b-c": 2}).root).__name__ == "MapOf"


def test_nulls_in_a_list_are_refused_by_protobuf_alone_and_said_why() -> None:
    document = {"tags": [None, None], "empty": []}
    statuses = {name: check_round_trip(name, "hypothesis", document) for name in TYPED}
    assert statuses["protobuf"].status == NO_SCHEMA
    assert "null inside a list or map" in statuses["protobuf"].detail
    assert all(r.status == EXACT for n, r in statuses.items() if n != "protobuf"), statuses
