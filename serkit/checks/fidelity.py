"""Fidelity: what a codec gives back, compared with what it was given.

This module is the one place that decides the status of a (codec, document) pair;
``serkit sizes`` and ``serkit fidelity`` both read it. A round trip that is not exact is
described by typed differences from a small fixed vocabulary (:data:`DIFFERENCE_KINDS`),
each counted and located by the path of its first occurrence in the original document,
e.g. ``[3]['dict'][17]``.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Optional

from serkit.errors import CodecNotInstalled, EncodeError, NoSchema, SerkitError, UnknownFixture
from serkit.inputs.probes import PROBES, VALIDATION_PROBES, load_probe

if TYPE_CHECKING:
    from serkit.codecs.registry import Codec, RoundTrip

# Statuses of one (codec, document) pair.
EXACT = "exact"  # decodes to an object of identical types and values
LOSSY = "lossy"  # decodes, but to something else (str keys, lists for tuples, …)
UNSUPPORTED = "unsupported"  # the codec refuses to encode the document
ERROR = "error"  # it cannot decode its own output, or anything else went wrong
NOT_INSTALLED = "not installed"
NO_SCHEMA = "no schema"  # a schema codec, and no record type fits the document (or its library)
# A validation probe's outcomes (serkit.checks.validation): bytes that break the schema.
REJECTED = "rejected"
PASSED_THROUGH = "passed through"
ACCEPTED_CHANGED = "accepted, changed"
STATUSES: Mapping[str, str] = MappingProxyType(
    {
        EXACT: "decodes to the same types and values, dict key order included",
        LOSSY: "decodes, but to something else: the differences follow",
        UNSUPPORTED: "the codec refuses to encode the document",
        ERROR: "the codec cannot decode its own output, or something else failed",
        NOT_INSTALLED: "the codec's library is missing",
        NO_SCHEMA: "a schema codec, and no schema fits the document (or the library cannot "
        "express it): the reason follows",
        REJECTED: "validation probe: loads refused the bytes that break the schema",
        PASSED_THROUGH: "validation probe: loads gave back the broken document as it was",
        ACCEPTED_CHANGED: "validation probe: loads accepted it, and gave back something else",
    }
)
# A lossy round trip whose only difference is dict key order: its own class (fidelity_class),
# between exact and lossy, since code that reads keys by name loses nothing. Not a status:
# the pair is LOSSY, and every reader of statuses keeps its meaning.
KEY_ORDER = "key-order"
KEY_ORDER_ONLY = "key order only"
# Schema codecs give back typed objects: fidelity compares them once converted back.
TYPED_COMPARISON = "compared as plain data, converted back from the codec's typed objects"

# What a lossy round trip changed. A fixed vocabulary, in the order reports list it.
DIFFERENCE_KINDS: Mapping[str, str] = MappingProxyType(
    {
        "tuple->list": "a tuple came back as a list",
        "namedtuple->tuple": "a namedtuple came back as a plain tuple",
        "namedtuple->list": "a namedtuple came back as a list",
        "namedtuple->dict": "a namedtuple came back as a dict of its fields",
        "int-key->str": "an int dict key came back as str",
        "float-changed": "a finite float came back with another value or type",
        "big-int": "an int beyond 64 bits came back changed",
        "bytes->str": "bytes came back as str (decoded text or base64)",
        "nan/inf": "NaN or an infinity came back as something else (often None)",
        "negative-zero": "-0.0 came back as 0.0 or 0",
        "non-ascii": "a string with non-ASCII characters came back changed",
        "key-order": "a dict's keys came back in another order",
        "datetime": "a date, time or datetime came back as str, or changed",
        "type-changed": "any other value came back as another type",
        "value-changed": "any other value changed, or items were lost or added",
    }
)

# The kinds of document a pair can be about.
FIXTURE, PROBE, VALIDATION = "fixture", "probe", "validation"


@dataclass(frozen=True)
class Difference:
    """One kind of difference in a round trip: how often, and where it first occurs."""

    kind: str
    count: int
    # A path into the original document, as Python subscripts; "" is the document itself.
    example_path: str


@dataclass(frozen=True)
class FidelityResult:
    """The status of one (codec, document) pair, with what makes it so."""

    codec: str
    fixture: str  # a fixture or probe id
    status: str
    differences: tuple[Difference, ...] = ()
    bytes: int | None = None  # the encoded size, when the codec encoded the document
    options: str = ""  # the fallback options used, "" for the codec's base call
    detail: str = ""
    implementation: str | None = None  # None when the codec could not be bound
    version: str | None = None
    schema_sha256: str | None = None  # a schema codec's: the schema it was bound to
    compared: str = ""  # how the decoded value was compared, when not as it came back

    @property
    def key_order_only(self) -> bool:
        """Lossy, and only in dict key order."""
        return key_order_only(self.status, self.differences)

    @property
    def fidelity_class(self) -> str | None:
        """EXACT, KEY_ORDER_ONLY or LOSSY; None for a pair that did not round-trip."""
        if self.status == EXACT:
            return EXACT
        if self.status == LOSSY:
            return KEY_ORDER_ONLY if self.key_order_only else LOSSY
        return None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def key_order_only(status: str, differences: Iterable[Difference]) -> bool:
    """Whether a round trip's status and differences say: lossy in dict key order alone."""
    return status == LOSSY and {d.kind for d in differences} == {KEY_ORDER}


# --- documents: fixtures and probes share one namespace ---------------------------------


def document_kind(name: str) -> str:
    """FIXTURE, PROBE or VALIDATION; UnknownFixture, naming the lists, for anything else."""
    from serkit.inputs.fixtures import FIXTURES

    if name in FIXTURES:
        return FIXTURE
    if name in PROBES:
        return PROBE
    if name in VALIDATION_PROBES:
        return VALIDATION
    raise UnknownFixture(
        f"unknown fixture or probe {name!r}; known fixtures: {', '.join(FIXTURES)}; "
        f"known probes: {', '.join([*PROBES, *VALIDATION_PROBES])}"
    )


def load_document(name: str) -> Any:
    """Build fixture or probe `name`: a new object on every call."""
    from serkit.inputs.fixtures import load_fixture

    kind = document_kind(name)
    if kind == VALIDATION:
        return VALIDATION_PROBES[name].build()
    return load_fixture(name) if kind == FIXTURE else load_probe(name)


def default_documents(
    *, fixtures: bool = True, slow: bool = False, probes: bool = True
) -> list[str]:
    """Every fixture (the slow ones only if `slow`), then every probe and validation probe:
    each kind if asked."""
    from serkit.inputs.fixtures import default_fixture_names

    chosen = default_fixture_names(slow=slow) if fixtures else []
    return chosen + ([*PROBES, *VALIDATION_PROBES] if probes else [])


# --- one round trip, checked ------------------------------------------------------------


def check_round_trip(codec_name: str, fixture: str, obj: Any) -> FidelityResult:
    """Round-trip `obj` (document `fixture`) through a codec and decide the pair's status."""
    from serkit.codecs.registry import get_codec

    try:
        # A schema codec round-trips the document's typed objects, under its schema.
        codec, given = get_codec(codec_name).for_document(fixture, obj)
        trip = codec.round_trip(given)
    except SerkitError as exc:
        return failed(codec_name, fixture, exc)
    return judge_round_trip(codec, fixture, obj, trip)


def failed(codec_name: str, fixture: str, exc: SerkitError) -> FidelityResult:
    """The status of a pair whose codec could not be bound, or whose round trip raised."""
    from serkit.codecs.registry import get_codec

    if isinstance(exc, CodecNotInstalled):
        return FidelityResult(codec_name, fixture, NOT_INSTALLED, detail=str(exc))
    try:
        codec = get_codec(codec_name)
    except SerkitError:  # a plugin that fails to bind
        return FidelityResult(codec_name, fixture, ERROR, detail=str(exc))
    facts: dict[str, Any] = {"implementation": codec.implementation, "version": codec.version}
    if isinstance(exc, NoSchema):
        return FidelityResult(codec_name, fixture, NO_SCHEMA, detail=str(exc), **facts)
    status = UNSUPPORTED if isinstance(exc, EncodeError) else ERROR  # DecodeError: ERROR
    return FidelityResult(codec_name, fixture, status, detail=str(exc), **facts)


def judge_round_trip(codec: Codec, fixture: str, obj: Any, trip: RoundTrip) -> FidelityResult:
    """The status of a round trip already made, e.g. by a caller that also times it.

    `obj` is the plain document; a schema codec's `trip` holds its typed objects, which are
    converted back to plain data (Codec.to_plain) to be compared, and the result says so.
    """
    facts: dict[str, Any] = {
        "implementation": codec.implementation,
        "version": codec.version,
        "bytes": len(trip.payload),
        "options": trip.config.options,
    }
    if codec.schema is not None:
        facts.update(schema_sha256=codec.schema.sha256, compared=TYPED_COMPARISON)
    try:
        differences = compare(obj, codec.to_plain(trip.decoded))
    except Exception as exc:  # a decoded type whose == raises, or nesting past the stack
        detail = f"cannot compare what {codec.name} gave back: {type(exc).__name__}: {exc}"
        return FidelityResult(codec.name, fixture, ERROR, detail=detail[:200], **facts)
    if not differences:
        return FidelityResult(codec.name, fixture, EXACT, **facts)
    return FidelityResult(
        codec.name, fixture, LOSSY, differences, detail=describe(differences), **facts
    )


def check_document(fixture: str, codecs: Iterable[str]) -> Iterator[FidelityResult]:
    """Build fixture or probe `fixture` once and check its round trip with every codec (a
    validation probe's outcomes are serkit.checks.validation's)."""
    obj = load_document(fixture)
    for name in codecs:
        yield check_round_trip(name, fixture, obj)


def describe(differences: Iterable[Difference]) -> str:
    """One line: each kind, its count and where it first occurs."""
    return "; ".join(
        f"{d.kind}: {d.count:,}, first at {d.example_path or 'the top level'}" for d in differences
    )


# --- the comparison ---------------------------------------------------------------------

# A path is built only where the walk descends: (parent path, key), None at the top.
_Path = Optional[tuple[Any, Any]]
_PLAIN = frozenset({str, int, bool, bytes, type(None)})  # equal by == when types match
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1
_MISSING = object()  # a namedtuple field absent from the dict it came back as


class _Tally:
    """Per kind: how many times, and the path of the first."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.first: dict[str, _Path] = {}

    def add(self, kind: str, path: _Path) -> None:
        if kind in self.counts:
            self.counts[kind] += 1
        else:
            self.counts[kind] = 1
            self.first[kind] = path


def compare(original: Any, decoded: Any) -> tuple[Difference, ...]:
    """Every way `decoded` differs from `original`, typed; () when it is an exact copy.

    Exact means the same types (namedtuple classes included) and values, float bits
    included (-0.0 is not 0.0, any NaN matches any NaN), and dict keys in the same order.
    """
    tally = _Tally()
    _walk(original, decoded, None, tally)
    return tuple(
        Difference(kind, tally.counts[kind], format_path(tally.first[kind]))
        for kind in DIFFERENCE_KINDS
        if kind in tally.counts
    )


def format_path(path: _Path) -> str:
    """`[3]['dict'][17]`: subscripts that reach the spot from the original document."""
    keys = []
    while path is not None:
        path, key = path
        keys.append(f"[{key!r}]")
    return "".join(reversed(keys))


def _same_float(a: float, b: float) -> bool:
    if a == b:
        return a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)
    return a != a and b != b  # both NaN


def _walk(a: Any, b: Any, path: _Path, tally: _Tally) -> None:
    kind = type(a)
    if kind is type(b):
        if kind is list or isinstance(a, (list, tuple)):  # the same namedtuple class too
            _walk_items(a, b, path, tally)
        elif isinstance(a, dict):
            _walk_dict(a, b, path, tally)
        elif kind is float:
            if not _same_float(a, b):
                tally.add(_float_kind(a), path)
        elif kind in _PLAIN:
            if a != b:
                tally.add(_changed_value_kind(a), path)
        elif isinstance(a, (datetime.date, datetime.time)):
            if a != b or _utcoffset(a) != _utcoffset(b):  # one instant in two zones differs
                tally.add("datetime", path)
        elif a != b:
            tally.add("value-changed", path)
        return
    tally.add(_changed_type_kind(a, b), path)
    # Walk on into containers whose items still line up, to count what changed inside.
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        _walk_items(a, b, path, tally)
    elif isinstance(a, tuple) and isinstance(b, dict) and hasattr(kind, "_fields"):
        _walk_items(a, [b.get(field, _MISSING) for field in kind._fields], path, tally)
    elif isinstance(a, dict) and isinstance(b, dict):
        _walk_dict(a, b, path, tally)


def _walk_items(a: Any, b: Any, path: _Path, tally: _Tally) -> None:
    if len(a) != len(b):
        tally.add("value-changed", path)  # items lost or added
    for index, (x, y) in enumerate(zip(a, b)):
        # Inline checks for equal leaves: they are most of any document, and a call each
        # would make random-dicts-1000 several times slower to compare.
        kind = type(x)
        if kind is type(y):
            if kind is float:
                if x == y and x != 0.0:
                    continue
            elif kind in _PLAIN and x == y:
                continue
        _walk(x, y, (path, index), tally)


def _walk_dict(a: Any, b: Any, path: _Path, tally: _Tally) -> None:
    if len(a) == len(b) and list(map(type, a)) == list(map(type, b)) and list(a) == list(b):
        # The same keys in the same order: compare the values pairwise.
        for key, x, y in zip(a, a.values(), b.values()):
            kind = type(x)
            if kind is type(y):
                if kind is float:
                    if x == y and x != 0.0:
                        continue
                elif kind in _PLAIN and x == y:
                    continue
            _walk(x, y, (path, key), tally)
        return
    _walk_dict_keys(a, b, path, tally)


def _walk_dict_keys(a: Any, b: Any, path: _Path, tally: _Tally) -> None:
    """Match each original key to a decoded key, as it was or as a codec converts it."""
    decoded_keys = list(b)
    position = {(type(key), key): i for i, key in enumerate(decoded_keys)}
    taken: set[int] = set()
    matched: dict[Any, int] = {}  # original key -> its decoded key's position
    converted = []
    for key in a:
        found = position.get((type(key), key))
        if found is None or found in taken:
            converted.append(key)
        else:
            taken.add(found)
            matched[key] = found
    for key in converted:
        for kind, spelling in _key_spellings(key):
            found = position.get((type(spelling), spelling))
            if found is not None and found not in taken:
                taken.add(found)
                matched[key] = found
                tally.add(kind, (path, key))
                break
        else:
            tally.add("value-changed", (path, key))  # the entry was lost
    if len(taken) < len(decoded_keys):
        tally.add("value-changed", path)  # entries were added
    order = [matched[key] for key in a if key in matched]
    if any(earlier > later for earlier, later in zip(order, order[1:])):
        tally.add(KEY_ORDER, path)
    for key in a:
        if key in matched:
            _walk(a[key], b[decoded_keys[matched[key]]], (path, key), tally)


def _key_spellings(key: Any) -> list[tuple[str, Any]]:
    """What a non-str key may have become in a codec that allows only str keys."""
    if type(key) is int:
        return [("int-key->str", str(key))]
    if isinstance(key, bytes):
        return [("bytes->str", key.decode("utf-8", "replace"))]
    # JSON's spelling ("true", "null", "NaN"), then Python's two.
    try:
        spellings = [json.dumps(key)]
    except (TypeError, ValueError):
        spellings = []
    spellings += [str(key), repr(key)]
    return [("type-changed", spelling) for spelling in dict.fromkeys(spellings)]


def _utcoffset(moment: datetime.date | datetime.time) -> datetime.timedelta | None:
    if isinstance(moment, (datetime.datetime, datetime.time)):
        return moment.utcoffset()
    return None  # a date has no zone


def _float_kind(a: float) -> str:
    if math.isnan(a) or math.isinf(a):
        return "nan/inf"
    if a == 0.0:
        return "negative-zero"
    return "float-changed"


def _changed_value_kind(a: Any) -> str:
    if type(a) is int and not _INT64_MIN <= a <= _UINT64_MAX:
        return "big-int"
    if type(a) is str and not a.isascii():
        return "non-ascii"
    return "value-changed"


def _changed_type_kind(a: Any, b: Any) -> str:
    kind = type(a)
    if b is _MISSING:
        return "value-changed"
    if isinstance(a, tuple) and hasattr(kind, "_fields"):
        if type(b) is list:
            return "namedtuple->list"
        if type(b) is tuple:
            return "namedtuple->tuple"
        if isinstance(b, dict):
            return "namedtuple->dict"
    elif kind is tuple and type(b) is list:
        return "tuple->list"
    elif isinstance(a, (bytes, bytearray)) and isinstance(b, str):
        return "bytes->str"
    elif kind is float:
        if math.copysign(1.0, a) < 0 and a == 0.0:
            return "negative-zero"
        return _float_kind(a)
    elif kind is int and not _INT64_MIN <= a <= _UINT64_MAX:
        return "big-int"
    elif kind is str and not a.isascii():
        return "non-ascii"
    elif isinstance(a, (datetime.date, datetime.time)):
        return "datetime"
    return "type-changed"
