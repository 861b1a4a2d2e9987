"""A document's schema: a fixture's checked against the hash it is pinned to, any other derived.

A fixture's schema is derived from it, or, for one of your documents declared with a
schema of yours (`serkit fixtures add --schema`), read from that JSON Schema. Either way
its hash must be the pinned one. Deriving takes milliseconds for most fixtures (0.1 s for
random-dicts-1000), so each is derived once per process and kept; asv's forkserver
derives the selected ones before it forks (serkit.suite.cases.preload).
"""

from __future__ import annotations

from typing import Any

from serkit.errors import NoSchema, SchemaChanged
from serkit.inputs.fixtures import FIXTURES, NO_SCHEMA_PIN, load_fixture
from serkit.schemas.derive import NOT_INSTALLED, derive, inference_version
from serkit.schemas.supplied import check_fits, from_json_schema
from serkit.schemas.types import Schema

# A NoSchema is kept too: a document that fits no schema is not derived again.
_DERIVED: dict[str, Schema | NoSchema] = {}


def _derived(name: str, obj: Any) -> Schema:
    if name not in _DERIVED:
        try:
            _DERIVED[name] = derive(obj)
        except NoSchema as exc:
            _DERIVED[name] = exc
    found = _DERIVED[name]
    if isinstance(found, NoSchema):
        raise NoSchema(str(found))
    return found


def _supplied(name: str) -> Schema:
    """Fixture `name`'s own JSON Schema, read, checked against its pin (never derived)."""
    fixture = FIXTURES[name]
    if name not in _DERIVED:
        assert fixture.supplied_schema is not None
        _DERIVED[name] = from_json_schema(fixture.supplied_schema())
    found = _DERIVED[name]
    assert isinstance(found, Schema)  # from_json_schema raises rather than keep a NoSchema
    if found.sha256 != fixture.schema_sha256:
        pinned = str(fixture.schema_sha256)[:12]
        raise SchemaChanged(
            f"{name}'s schema (yours) reads as sha256 {found.sha256[:12]}…, pinned {pinned}…: "
            "serkit reads JSON Schema differently now; check it and add the fixture again"
        )
    return found


def fixture_schema(name: str, obj: Any | None = None) -> Schema:
    """Fixture `name`'s schema, checked against its pin: derived, or the user's own.

    NoSchema when none fits (and the pin says so); SchemaChanged when the schema's hash is
    not the pinned one, which a new release of the inference library can cause.
    """
    if FIXTURES[name].supplied_schema is not None:
        return _supplied(name)
    pin = FIXTURES[name].schema_sha256
    document = load_fixture(name) if obj is None and name not in _DERIVED else obj
    try:
        schema = _derived(name, document)
    except NoSchema as exc:
        if pin is None or pin == NO_SCHEMA_PIN:
            raise
        raise SchemaChanged(
            f"{name} derives no schema now ({exc}), but is pinned to {pin[:12]}…"
        ) from None
    if pin is not None and schema.sha256 != pin:
        pinned = "no schema" if pin == NO_SCHEMA_PIN else f"{pin[:12]}…"
        raise SchemaChanged(
            f"{name}'s derived schema has sha256 {schema.sha256[:12]}…, pinned {pinned} "
            f"(genson {inference_version()}): the inference changed; check it and update the pin"
        )
    return schema


def schema_pin(obj: Any, supplied: Any | None = None) -> str | None:
    """What `serkit fixtures add` pins beside a document's content hash: its schema's sha256.

    `supplied` is the user's JSON Schema, read and checked to fit `obj` (NoSchema, naming
    the place, when it cannot be read or does not fit); without one, the schema derived
    from `obj`, NO_SCHEMA_PIN when no record type fits it, and None when the inference
    library is not installed (then nothing is pinned and the schema is derived on use).
    """
    if supplied is not None:
        schema = from_json_schema(supplied)
        check_fits(schema, obj)
        return schema.sha256
    if inference_version() == NOT_INSTALLED:
        return None
    try:
        return derive(obj).sha256
    except NoSchema:
        return NO_SCHEMA_PIN


def schema_for(document: str, obj: Any) -> Schema:
    """The schema of `obj`: fixture `document`'s pinned one, else derived from `obj` itself."""
    if document in FIXTURES:
        return fixture_schema(document, obj)
    return derive(obj)
