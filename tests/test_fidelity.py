from __future__ import annotations

import collections
import copy
import datetime
import math
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import serkit
from serkit.checks.fidelity import (
    DIFFERENCE_KINDS,
    ERROR,
    EXACT,
    LOSSY,
    NO_SCHEMA,
    NOT_INSTALLED,
    UNSUPPORTED,
    Difference,
    check_document,
    check_round_trip,
    compare,
    default_documents,
    document_kind,
    load_document,
)
from serkit.codecs.registry import Binding, CodecRegistry, CodecSpec, Config
from serkit.inputs.fixtures import FIXTURES, Vec3
from serkit.inputs.probes import PROBES, VALIDATION_PROBES, Reading, probe_names

Point = collections.namedtuple("Point", "x y")
UTC = datetime.timezone.utc


def kinds(original: Any, decoded: Any) -> dict[str, tuple[int, str]]:
    return {d.kind: (d.count, d.example_path) for d in compare(original, decoded)}


# --- the comparison ---------------------------------------------------------------------


def test_example_path_is_python_subscripts_into_the_original() -> None:
    original = [{"dict": {i: i / 3 for i in range(20)}} for _ in range(4)]
    decoded = copy.deepcopy(original)
    decoded[3]["dict"][17] = 17 / 3 + 1e-15
    decoded[3]["dict"][18] = 0.5
    assert compare(original, decoded) == (Difference("float-changed", 2, "[3]['dict'][17]"),)
    # The path reaches the spot: evaluated on the original, it gives the changed value.
    assert eval("original" + "[3]['dict'][17]") == original[3]["dict"][17]


def test_top_level_difference_has_an_empty_path() -> None:
    assert kinds((1, 2), [1, 2]) == {"tuple->list": (1, "")}


@pytest.mark.parametrize(
    ("original", "decoded", "expected"),
    [
        ((1, (2, 3)), [1, [2, 3]], {"tuple->list": (2, "")}),
        (Vec3(1.0, 2.0, 3.0), (1.0, 2.0, 3.0), {"namedtuple->tuple": (1, "")}),
        ([Vec3(1.0, 2.0, 3.0)], [[1.0, 2.0, 3.0]], {"namedtuple->list": (1, "[0]")}),
        (Point(1, 2), {"x": 1, "y": 2}, {"namedtuple->dict": (1, "")}),
        ({1: "a", 2: "b"}, {"1": "a", "2": "b"}, {"int-key->str": (2, "[1]")}),
        ([0.1 + 0.2], [0.3], {"float-changed": (1, "[0]")}),
        ([1.0], [1], {"float-changed": (1, "[0]")}),
        ([2**64], [float(2**64)], {"big-int": (1, "[0]")}),
        ([-(2**70)], [-(2**70) + 1], {"big-int": (1, "[0]")}),
        ([2**40], [2**40 + 1], {"value-changed": (1, "[0]")}),
        ({"b": b"ab"}, {"b": "ab"}, {"bytes->str": (1, "['b']")}),
        ([math.nan, math.inf], [None, None], {"nan/inf": (2, "[0]")}),
        ([-math.inf], [math.inf], {"nan/inf": (1, "[0]")}),
        ([-0.0], [0.0], {"negative-zero": (1, "[0]")}),
        ([-0.0], [0], {"negative-zero": (1, "[0]")}),
        (["Luján"], ["Lujan"], {"non-ascii": (1, "[0]")}),
        (["plain"], ["plane"], {"value-changed": (1, "[0]")}),
        ({"b": 1, "a": 2}, {"a": 2, "b": 1}, {"key-order": (1, "")}),
        (
            [datetime.datetime(2019, 2, 23, tzinfo=UTC)],
            ["2019-02-23T00:00:00+00:00"],
            {"datetime": (1, "[0]")},
        ),
        (  # the same instant, in another zone
            datetime.datetime(2019, 2, 23, 12, tzinfo=UTC),
            datetime.datetime(
                2019, 2, 23, 13, tzinfo=datetime.timezone(datetime.timedelta(hours=1))
            ),
            {"datetime": (1, "")},
        ),
        (datetime.date(2019, 2, 23), datetime.datetime(2019, 2, 23), {"datetime": (1, "")}),
        ([True], [1], {"type-changed": (1, "[0]")}),
        ({True: 1}, {"true": 1}, {"type-changed": (1, "[True]")}),
        ([1, 2, 3], [1, 2], {"value-changed": (1, "")}),
        ({"a": 1}, {"a": 1, "b": 2}, {"value-changed": (1, "")}),
        ({"a": 1, "b": 2}, {"a": 1}, {"value-changed": (1, "['b']")}),
    ],
)
def test_each_difference_gets_its_kind(
    original: Any, decoded: Any, expected: dict[str, tuple[int, str]]
) -> None:
    assert kinds(original, decoded) == expected
    assert set(expected) <= set(DIFFERENCE_KINDS)


def test_exact_means_types_and_float_bits() -> None:
    assert compare([math.nan, -0.0, 1, "é", b"x"], [math.nan, -0.0, 1, "é", b"x"]) == ()
    assert compare(Vec3(1.0, 2.0, 3.0), Vec3(1.0, 2.0, 3.0)) == ()
    assert compare(Vec3(1.0, 2.0, 3.0), Point(1.0, 2.0)) != ()  # another namedtuple class
    assert kinds([1], [1.0]) == {"type-changed": (1, "[0]")}


def test_kinds_are_counted_once_each_with_their_first_path() -> None:
    original = {"a": [(1, 2), {3: (4,)}], "b": (5,)}
    decoded = {"a": [[1, 2], {"3": [4]}], "b": [5]}
    assert compare(original, decoded) == (
        Difference("tuple->list", 3, "['a'][0]"),
        Difference("int-key->str", 1, "['a'][1][3]"),
    )


def test_differences_inside_changed_containers_are_found() -> None:
    # The namedtuple came back as a list and, inside it, an int key as str.
    original = [Point({1: "a"}, -0.0)]
    decoded = [[{"1": "a"}, 0.0]]
    assert kinds(original, decoded) == {
        "namedtuple->list": (1, "[0]"),
        "int-key->str": (1, "[0][0][1]"),
        "negative-zero": (1, "[0][1]"),
    }


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_like)
def test_a_deep_copy_is_exact(obj: Any) -> None:
    assert compare(obj, copy.deepcopy(obj)) == ()


@given(json_like)
def test_the_comparison_agrees_with_the_content_hash(obj: Any) -> None:
    """Exact here is exact for `serkit sizes` before this module: equal content hashes."""
    json_codec = serkit.get_codec("json")
    try:
        back = json_codec.loads(json_codec.dumps(obj))
    except serkit.SerkitError:
        return
    same_hash = serkit.inputs.fixtures.content_hash(back) == serkit.inputs.fixtures.content_hash(
        obj
    )
    assert (compare(obj, back) == ()) == same_hash


@pytest.mark.slow
def test_random_dicts_1000_compares_in_seconds_not_minutes() -> None:
    original = serkit.load_fixture("random-dicts-1000")
    decoded = serkit.get_codec("json").round_trip(original).decoded
    started = time.perf_counter()
    differences = compare(original, decoded)
    elapsed = time.perf_counter() - started
    assert differences == (Difference("int-key->str", 100_000, "[0]['dict'][0]"),)
    assert elapsed < 5, elapsed  # ~0.1 s here; minutes would mean a quadratic walk


# --- statuses ---------------------------------------------------------------------------


def test_status_of_each_outcome() -> None:
    assert check_round_trip("json", "x", {"a": 1}).status == EXACT
    lossy = check_round_trip("json", "x", {1: 1})
    assert lossy.status == LOSSY
    assert lossy.differences == (Difference("int-key->str", 1, "[1]"),)
    assert lossy.detail == "int-key->str: 1, first at [1]"
    unsupported = check_round_trip("json", "x", b"bytes")
    assert unsupported.status == UNSUPPORTED and "cannot encode bytes" in unsupported.detail
    assert unsupported.bytes is None
    exact = check_round_trip("msgpack", "x", [1])
    assert exact.implementation == "c" and exact.version == serkit.get_codec("msgpack").version
    assert exact.bytes == 2


def _register(monkeypatch: pytest.MonkeyPatch, spec: CodecSpec) -> None:
    fresh = CodecRegistry()
    fresh.register(spec)
    monkeypatch.setattr(serkit.codecs.registry, "get_codec", fresh.get)  # read when a check runs


def test_a_codec_that_cannot_read_its_own_output_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def bind() -> Binding:
        def refuse(data: bytes) -> Any:
            raise ValueError("no")

        return Binding((Config(lambda obj: b"x", refuse),), ())

    _register(monkeypatch, CodecSpec("write-only", "json", "stdlib", bind))
    result = check_round_trip("write-only", "x", [1])
    assert result.status == ERROR and "cannot decode its own output" in result.detail


def test_a_missing_library_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def bind() -> Binding:
        import serkit_no_such_library  # type: ignore[import-not-found]  # noqa: F401

        raise AssertionError("unreachable")

    _register(monkeypatch, CodecSpec("ghost", "json", "ghost-lib", bind))
    result = check_round_trip("ghost", "x", [1])
    assert result.status == NOT_INSTALLED and "pip install ghost-lib" in result.detail
    assert result.implementation is None


def test_a_decoded_value_that_cannot_be_compared_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Incomparable:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("ambiguous truth value")

        __hash__ = None  # type: ignore[assignment]

    def bind() -> Binding:
        return Binding((Config(lambda obj: b"x", lambda data: Incomparable()),), ())

    _register(monkeypatch, CodecSpec("odd", "json", "stdlib", bind))
    result = check_round_trip("odd", "x", Incomparable())
    assert result.status == ERROR and "cannot compare" in result.detail


# --- documents and known pairs ----------------------------------------------------------


def test_probe_ids_do_not_shadow_fixture_ids() -> None:
    assert not set(PROBES) & set(FIXTURES)
    assert document_kind("small-dict") == "fixture" and document_kind("int-keys") == "probe"
    with pytest.raises(serkit.UnknownFixture, match="unknown fixture or probe 'nope'"):
        document_kind("nope")


def test_default_documents_leave_out_the_slow_fixtures() -> None:
    default = default_documents()
    assert "random-dicts-10000" not in default and "senate-bios" in default
    validation = list(VALIDATION_PROBES)
    assert default[-len(PROBES) - len(validation) :] == probe_names() + validation
    assert "random-dicts-100000" in default_documents(slow=True)
    assert not set(default_documents(probes=False)) & {*PROBES, *validation}
    assert default_documents(fixtures=False) == probe_names() + validation
    assert document_kind("schema-wrong-type") == "validation"


@pytest.mark.parametrize("name", probe_names())
def test_probes_build_fresh_objects_every_codec_can_face(name: str) -> None:
    first, second = load_document(name), load_document(name)
    assert compare(first, second) == ()
    statuses = {r.status for r in check_document(name, serkit.codec_names())}
    assert statuses <= {EXACT, LOSSY, UNSUPPORTED, ERROR, NO_SCHEMA}
    # pickle protocol 2 and above keep everything a probe holds.
    assert next(check_document(name, ["pickle-p5"])).status == EXACT


def test_known_pairs() -> None:
    def status(codec: str, document: str) -> tuple[str, tuple[str, ...]]:
        result = next(check_document(document, [codec]))
        return result.status, tuple(d.kind for d in result.differences)

    assert status("json", "random-dicts-10") == (LOSSY, ("int-key->str",))
    assert status("json", "int-keys") == (LOSSY, ("int-key->str",))
    assert status("yaml", "int-keys") == (EXACT, ())
    assert status("yaml-c", "random-dicts-10") == (EXACT, ())
    assert status("msgpack-ext", "sensor-record") == (EXACT, ())  # the classes come back
    assert status("msgpack-ext", "namedtuple-unknown") == (LOSSY, ("namedtuple->list",))
    assert status("msgpack", "sensor-record") == (LOSSY, ("namedtuple->list",))
    assert status("simplejson", "namedtuple") == (LOSSY, ("namedtuple->dict",))
    assert status("orjson", "nan-infinity") == (LOSSY, ("nan/inf",))
    assert status("msgspec-json", "bytes") == (LOSSY, ("bytes->str",))  # base64
    assert status("orjson", "datetime-utc") == (LOSSY, ("datetime",))
    assert status("orjson", "deep-nesting") == (UNSUPPORTED, ())
    assert status("orjson", "big-int") == (UNSUPPORTED, ())
    assert status("json", "big-int") == (EXACT, ())
    assert status("pickle-p0", "sensor-stream") == (EXACT, ())


# --- every codec is exact over what it supports ------------------------------------------

# What each codec family gives back exactly, declared once. Checked against the libraries
# installed here with 3,000 examples per codec; what falls outside a family (tuples in
# JSON, ints past 64 bits in msgpack, NaN in orjson, …) is what the probes show to be
# lossy or unsupported.
INT64 = st.integers(-(2**63), 2**64 - 1)  # msgpack's range: int64 and uint64 together
ANY_TEXT = st.text(st.characters(exclude_categories=()))  # lone surrogates included
FINITE = st.floats(allow_nan=False, allow_infinity=False)  # -0.0 included
PLAIN = st.none() | st.booleans()


def documents(
    leaves: st.SearchStrategy[Any],
    *,
    keys: st.SearchStrategy[Any],
    tuples: bool = False,
    namedtuples: bool = False,
) -> st.SearchStrategy[Any]:
    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        found = st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)
        if tuples:
            found |= st.lists(inner, max_size=4).map(tuple)
        if namedtuples:
            found |= st.builds(Vec3, inner, inner, inner) | st.builds(Reading, inner, inner)
        return found

    return st.recursive(leaves, containers, max_leaves=12)


PICKLE = documents(
    PLAIN
    | st.integers()
    | st.floats()
    | ANY_TEXT
    | st.binary()
    | st.datetimes(timezones=st.none() | st.just(UTC))
    | st.dates(),
    keys=ANY_TEXT | st.integers(),
    tuples=True,
    namedtuples=True,
)
MARSHAL = documents(
    PLAIN | st.integers() | st.floats() | ANY_TEXT | st.binary(),
    keys=ANY_TEXT | st.integers(),
    tuples=True,
)
MSGPACK = documents(PLAIN | INT64 | st.floats() | st.text() | st.binary(), keys=st.text() | INT64)
JSON = documents(PLAIN | st.integers() | FINITE | st.text(), keys=st.text())
JSON_64_BIT = documents(PLAIN | INT64 | FINITE | st.text(), keys=st.text())  # orjson
CBOR = documents(
    PLAIN
    | st.integers()
    | st.floats()
    | st.text()
    | st.binary()
    | st.datetimes(timezones=st.just(UTC))
    | st.dates(),
    keys=st.text() | st.integers(),
)
YAML = documents(
    PLAIN | st.integers() | st.floats() | st.text() | st.binary() | st.datetimes() | st.dates(),
    keys=st.text() | st.integers(),
)
EXACT_OVER: dict[str, st.SearchStrategy[Any]] = {
    **dict.fromkeys(("pickle-p0", "pickle-p2", "pickle-p4", "pickle-p5"), PICKLE),
    "marshal": MARSHAL,
    **dict.fromkeys(("msgpack", "msgpack-ext", "ormsgpack", "msgspec-msgpack"), MSGPACK),
    **dict.fromkeys(("json", "simplejson", "ujson", "rapidjson", "msgspec-json"), JSON),
    "orjson": JSON_64_BIT,
    "cbor2": CBOR,
    **dict.fromkeys(("yaml", "yaml-c"), YAML),
    # BSON: str keys without NUL, ints within 32 bits (wider ones come back as bson.Int64),
    # any float; a top level that is not a document is wrapped (its fallback config).
    "bson": documents(
        PLAIN | st.integers(-(2**31), 2**31 - 1) | st.floats() | st.text(),
        keys=st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))),
    ),
}


def test_every_codec_declares_what_it_round_trips_exactly() -> None:
    # The schema codecs' domain is their document's schema: tests/test_typed_codecs.py.
    schemaless = [n for n in serkit.codec_names() if not serkit.registry.spec(n).needs_schema]
    assert sorted(EXACT_OVER) == schemaless


@pytest.mark.parametrize("codec", sorted(EXACT_OVER))
@given(data=st.data())
def test_round_trip_is_exact_over_what_the_codec_supports(codec: str, data: st.DataObject) -> None:
    document = data.draw(EXACT_OVER[codec], label="document")
    result = check_round_trip(codec, "hypothesis", document)
    assert result.status == EXACT, result.detail


@pytest.mark.parametrize(
    ("codec", "outside"),
    [
        ("json", (1, 2)),  # a tuple
        ("msgpack", [2**64]),  # past 64 bits
        ("orjson", [math.nan]),
        ("marshal", Vec3(1.0, 2.0, 3.0)),
        ("yaml-c", ["\ud800"]),  # only pure-Python yaml keeps lone surrogates
        ("cbor2", datetime.datetime(2019, 2, 23)),  # naive
    ],
)
def test_just_outside_a_domain_the_round_trip_is_not_exact(codec: str, outside: Any) -> None:
    assert check_round_trip(codec, "x", outside).status in (LOSSY, UNSUPPORTED)
