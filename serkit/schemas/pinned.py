"""A document's schema: a fixture's checked against the hash it is pinned to, any other derived.

Deriving takes milliseconds for most fixtures (0.1 s for random-dicts-1000), so each is
derived once per process and kept; asv's forkserver derives the selected ones before it
forks (serkit.suite.cases.preload).
"""

from __future__ import annotations

from typing import Any

from serkit.errors import NoSchema, SchemaChanged
from serkit.inputs.fixtures import FIXTURES, NO_SCHEMA_PIN, load_fixture
from serkit.schemas.derive import derive, inference_version
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


def fixture_schema(name: str, obj: Any | None = None) -> Schema:
    """Fixture `name`'s derived schema, checked against its pin.

    NoSchema when none fits (and the pin says so); SchemaChanged when the derived schema's
    hash is not the pinned one, which a new release of the inference library can cause.
    """
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


def schema_for(document: str, obj: Any) -> Schema:
    """The schema of `obj`: fixture `document`'s pinned one, else derived from `obj` itself."""
    if document in FIXTURES:
        return fixture_schema(document, obj)
    return derive(obj)
