"""Probes: small documents that each test one type or one edge the fixtures do not.

Declared once in :data:`PROBES`; ``serkit fidelity`` round-trips them beside the fixtures,
and the hostile run mutates their payloads. A codec that refuses a probe reports it as
*unsupported*, never a crash.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, NamedTuple

from serkit.errors import UnknownFixture
from serkit.inputs.fixtures import Vec3


@dataclass(frozen=True)
class Probe:
    """A small document that tests one thing, and what that thing is."""

    name: str
    build: Callable[[], Any]  # a new object on every call, as for fixtures
    tests: str


class Reading(NamedTuple):
    """A namedtuple class that no codec was told about (msgpack-ext knows only post 002's)."""

    sensor: str
    value: float


# orjson refuses more than 254 nested containers and ormsgpack more than 255; 256 is past both.
DEEP_NESTING_LEVELS = 256
HUGE_STRING_BYTES = 2 << 20  # past every 16-bit length field, and a megabyte class of its own


def _nested_lists(levels: int) -> list[Any]:
    nested: list[Any] = []
    for _ in range(levels - 1):
        nested = [nested]
    return nested


_UTC = datetime.timezone.utc

_PROBES: dict[str, Probe] = {
    p.name: p
    for p in (
        Probe("tuple", lambda: (1, "a", (2.5, None)), "tuples, one nested in another"),
        Probe("namedtuple", lambda: Vec3(1.0, -2.5, 0.125), "post 002's namedtuple class Vec3"),
        Probe(
            "namedtuple-unknown",
            lambda: Reading("temperature", 21.5),
            "a namedtuple class no codec was configured for",
        ),
        Probe("int-keys", lambda: {1: "one", 2: "two", -3: "minus three"}, "int dict keys"),
        Probe(
            "float-precision",
            lambda: [0.1 + 0.2, 1 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308],
            "floats needing all 17 digits, the smallest subnormal, the extremes",
        ),
        Probe(
            "float-repr",
            lambda: [1e16, 1e22, 1.2345678901234568e17, 100.0, 1e-07, 2.0**53 + 2],
            "floats whose shortest text has an exponent or no fraction",
        ),
        Probe(
            "int-64-bit",
            lambda: [2**63 - 1, -(2**63), 2**64 - 1],
            "the edges of the signed and unsigned 64-bit ranges",
        ),
        Probe("big-int", lambda: [2**64, -(2**63) - 1, 10**40], "ints beyond 64 bits"),
        Probe("bytes", lambda: b"\x00\x01\xfe\xff binary", "bytes that are not valid UTF-8"),
        Probe("ascii-bytes", lambda: b"plain ascii", "bytes that happen to be valid text"),
        Probe("nan-infinity", lambda: [math.nan, math.inf, -math.inf], "NaN, +Infinity, -Infinity"),
        Probe("negative-zero", lambda: [-0.0], "-0.0, which equals 0.0 in Python"),
        Probe("non-ascii", lambda: ["Luján", "日本語", "🎉"], "Latin-1, CJK and astral characters"),
        Probe(
            "control-chars",
            lambda: ["tab\t nul\x00 bell\x07 del\x7f", "\r\n"],
            "ASCII control characters, NUL included",
        ),
        Probe(
            "lone-surrogates",
            lambda: ["\ud800", "x\udcffy"],
            "lone surrogates, as surrogateescape makes of undecodable bytes",
        ),
        Probe(
            "key-order",
            lambda: {"zebra": 1, "apple": 2, "mango": 3},
            "dict keys inserted out of sorted order",
        ),
        Probe(
            "datetime-utc",
            lambda: datetime.datetime(2019, 2, 23, 12, 30, 15, 123456, tzinfo=_UTC),
            "an aware datetime, UTC, with microseconds",
        ),
        Probe(
            "datetime-naive",
            lambda: datetime.datetime(2019, 2, 23, 12, 30, 15, 123456),
            "a naive datetime, with microseconds",
        ),
        Probe("date", lambda: datetime.date(2019, 2, 23), "a date"),
        Probe(
            "int-float-bool",
            lambda: [1, 1.0, True, 0, 0.0, False],
            "values equal in Python but of different types",
        ),
        Probe(
            "empty-containers",
            lambda: {"list": [], "dict": {}, "str": "", "nested": [[], {}]},
            "empty list, dict and str",
        ),
        Probe(
            "deep-nesting",
            lambda: _nested_lists(DEEP_NESTING_LEVELS),
            f"{DEEP_NESTING_LEVELS} nested lists",
        ),
        Probe(
            "huge-string",
            lambda: "0123456789abcdef" * (HUGE_STRING_BYTES // 16),
            f"one {HUGE_STRING_BYTES >> 20} MiB ASCII string",
        ),
    )
}
PROBES: Mapping[str, Probe] = MappingProxyType(_PROBES)


def probe_names() -> list[str]:
    """Every probe id, in registry order."""
    return list(_PROBES)


def get_probe(name: str) -> Probe:
    try:
        return _PROBES[name]
    except KeyError:
        known = ", ".join(_PROBES)
        raise UnknownFixture(f"unknown probe {name!r}; known probes: {known}") from None


def load_probe(name: str) -> Any:
    """Build probe `name`: a new object on every call."""
    return get_probe(name).build()


# --- validation probes: documents that parse but break the schema of SCHEMA_BASE ------


def schema_base() -> list[dict[str, Any]]:
    """Two records of one type: the document whose derived schema the validation probes break."""
    return [
        {"id": 1, "name": "ada", "score": 9.5, "tags": ["admin"]},
        {"id": 2, "name": "bob", "score": 7.25, "tags": []},
    ]


def _ids_as_text() -> list[dict[str, Any]]:
    return [{**record, "id": str(record["id"])} for record in schema_base()]


def _without_name() -> list[dict[str, Any]]:
    return [{k: v for k, v in record.items() if k != "name"} for record in schema_base()]


def _with_extra() -> list[dict[str, Any]]:
    return [{**record, "extra": True} for record in schema_base()]


# Each breaks the schema in every record alike, so that it has a schema of its own, which
# its bytes are written with: a peer whose types differ, or a hand-written message.
VALIDATION_PROBES: Mapping[str, Probe] = MappingProxyType(
    {
        p.name: p
        for p in (
            Probe("schema-wrong-type", _ids_as_text, "a string where the schema has an int"),
            Probe("schema-missing-field", _without_name, "a required field left out"),
            Probe("schema-extra-field", _with_extra, "a field the schema does not have"),
        )
    }
)
