"""Deriving a schema from a document: GenSON infers its JSON Schema, serkit reads a record type.

GenSON (a maintained JSON Schema generator) walks the document once and merges what it
sees: every dict of one place in the tree into one object schema, whose `required` lists
the keys all of them had; every list's items into one schema; int and float into
"number". serkit teaches it the Python types a fixture holds beyond JSON's (namedtuples as
objects of their fields, tuples as arrays, dates and datetimes as formatted strings), then
reads the result as a :class:`~serkit.schemas.types.Schema`:

- an object whose keys are all field names (identifiers not starting with `_`) is a
  record; any other object (ids, numbers, `{}`) is a map of its merged values, unless
  those values differ in kind and its string keys are few (MOST_NAMED_FIELDS): then it is
  a record whose field names are its keys (`$ref`, `bom-ref`), which a codec needing
  identifiers renames or refuses;
- a place that was sometimes null is nullable; a key some dicts lacked is optional;
- a place that held two kinds of value besides null (a str here, an int there) fits no
  record type: :class:`~serkit.errors.NoSchema`, with the place and the kinds.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from serkit.errors import NoSchema
from serkit.schemas.types import Field, ListOf, MapOf, Nullable, Record, Scalar, Schema, Type

INFERENCE_LIBRARY = "genson"
NOT_INSTALLED = "not installed"  # inference_version() without it
_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# A dict with more keys than this whose values differ in kind is refused, not read as a
# record: so many fixed keys are data (ids, names), and a type per key would fit no other.
MOST_NAMED_FIELDS = 64
_SCALARS = {"boolean": "bool", "integer": "int", "number": "float", "string": "str"}
_FORMATS = {"date": "date", "date-time": "datetime"}


def _builder_class() -> Any:
    """GenSON's SchemaBuilder, taught namedtuples, tuples, dates and datetimes."""
    from genson import SchemaBuilder  # deferred: genson is an optional extra
    from genson.schema.strategies import List, Object, String

    class NamedTupleObject(Object):  # type: ignore[misc]
        @staticmethod
        def match_object(obj: Any) -> bool:
            return isinstance(obj, tuple) and hasattr(type(obj), "_fields")

        def add_object(self, obj: Any) -> None:
            super().add_object(obj._asdict())

    class Sequence(List):  # type: ignore[misc]
        @staticmethod
        def match_object(obj: Any) -> bool:
            return isinstance(obj, list) or (
                isinstance(obj, tuple) and not hasattr(type(obj), "_fields")
            )

    class Date(String):  # type: ignore[misc]
        FORMAT = "date"

        @classmethod
        def match_object(cls, obj: Any) -> bool:
            return type(obj) is datetime.date

        @classmethod
        def match_schema(cls, schema: Mapping[str, Any]) -> bool:
            return schema.get("type") == "string" and schema.get("format") == cls.FORMAT

        def to_schema(self) -> dict[str, Any]:
            return {**super().to_schema(), "format": self.FORMAT}

    class DateTime(Date):
        FORMAT = "date-time"

        @classmethod
        def match_object(cls, obj: Any) -> bool:
            return type(obj) is datetime.datetime

    class Text(String):  # type: ignore[misc]
        # GenSON's own string takes in any string schema when merging, a date's too, and
        # keeps the date's format: a map of "" and a date then read as a map of dates.
        @classmethod
        def match_schema(cls, schema: Mapping[str, Any]) -> bool:
            return bool(super().match_schema(schema)) and "format" not in schema

    class Builder(SchemaBuilder):  # type: ignore[misc]
        EXTRA_STRATEGIES = (NamedTupleObject, Sequence, Date, DateTime, Text)

    return Builder


def inference_version() -> str:
    """GenSON's installed release: a new one may derive other schemas (their hashes say so)."""
    from importlib import metadata

    try:
        return metadata.version(INFERENCE_LIBRARY)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def json_schema(obj: Any) -> dict[str, Any]:
    """GenSON's JSON Schema of `obj`; NoSchema for a value it has no type for (bytes, sets)."""
    try:
        builder = _builder_class()(schema_uri=None)
    except ImportError:
        raise NoSchema(
            f"schemas are derived with {INFERENCE_LIBRARY}, which is not installed "
            f"(pip install {INFERENCE_LIBRARY})"
        ) from None
    from genson.schema.node import SchemaGenerationError

    try:
        builder.add_object(obj)
    except SchemaGenerationError as exc:
        found = str(exc).rpartition(": ")[2][:60]
        raise NoSchema(f"a value JSON Schema has no type for: {found}") from None
    except RecursionError:
        raise NoSchema("nested too deep to derive a schema") from None
    try:
        return dict(builder.to_schema())
    except TypeError:  # GenSON sorts each object's required keys: an int beside a str
        raise NoSchema("a dict has keys of several types (int and str)") from None


def _merged(schemas: list[Any]) -> dict[str, Any]:
    """One schema for the values of a map, merged from each key's (see `_explicit`)."""
    builder = _builder_class()(schema_uri=None)
    for schema in schemas:
        builder.add_schema(_explicit(schema))
    return dict(builder.to_schema())


def _explicit(schema: Any) -> Any:
    """`schema` with every object's `required` written out, `[]` where none was.

    GenSON leaves `required` out of an object schema whose keys were all optional (an
    empty dict, or dicts with no key in common), and when it merges schemas it intersects
    only the `required` lists it is given: a value without one would leave the other
    values' keys required, and the derived types would then refuse that value.
    """
    if isinstance(schema, list):
        return [_explicit(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _explicit(value) for key, value in schema.items()}
    kinds = schema.get("type")
    is_object = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
    if is_object and "required" not in out:
        out["required"] = []
    if "properties" in schema:  # names, not schemas: never read a key as a keyword
        out["properties"] = {k: _explicit(v) for k, v in schema["properties"].items()}
    return out


def _camel(text: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", text)
    name = "".join(word[:1].upper() + word[1:] for word in words)
    return name if not name or name[:1].isalpha() else f"R{name}"  # "": the caller names it


class SchemaReader:
    """What reading a JSON Schema into a type tree needs, derived or supplied: record names
    made unique, and the notes on what the reading guessed or could not hold."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.notes: list[str] = []

    def name(self, wanted: str) -> str:
        base, count = _camel(wanted) or "Record", 1
        found = base
        while found in self.names:
            count += 1
            found = f"{base}{count}"
        self.names.add(found)
        return found


class _Reader(SchemaReader):
    """Reads GenSON's schema of a document into a type tree."""

    def read(self, schema: Mapping[str, Any], path: str, label: str, element: bool = False) -> Type:
        options = _options(schema)
        nullable = any(option.get("type") == "null" for option in options)
        others = [option for option in options if option.get("type") != "null"]
        if not others:
            self.notes.append(f"{path or 'the document'}: only ever null, typed null")
            # A list's item or a map's value that was null is a null in a container, which
            # a codec must be able to hold as such (proto3 cannot); an always empty list
            # or dict, which held nothing, stays Scalar("null").
            return Nullable(Scalar("null")) if element else Scalar("null")
        if len(others) > 1:
            kinds = ", ".join(
                sorted({str(option.get("format") or option.get("type")) for option in others})
            )
            raise NoSchema(f"{path or 'the document'} holds values of several types ({kinds})")
        found = self._read_one(others[0], path, label)
        return Nullable(found) if nullable else found

    def _read_one(self, schema: Mapping[str, Any], path: str, label: str) -> Type:
        kind = schema.get("type")
        if kind == "array":
            items = schema.get("items")
            if items is None:
                self.notes.append(
                    f"{path or 'the document'}: a list always empty, items typed null"
                )
                return ListOf(Scalar("null"))
            return ListOf(self.read(items, f"{path}[]", f"{label} item", element=True))
        if kind == "object":
            return self._object(schema, path, label)
        if kind == "string" and "format" in schema:
            return Scalar(_FORMATS[schema["format"]])
        if kind in _SCALARS:
            return Scalar(_SCALARS[kind])
        raise NoSchema(f"{path or 'the document'} has a type serkit cannot read ({kind!r})")

    def _object(self, schema: Mapping[str, Any], path: str, label: str) -> Type:
        properties: Mapping[Any, Any] = schema.get("properties", {})
        if properties and all(_is_field_name(key) for key in properties):
            return self._record(schema, path, label)
        key_types = {type(key) for key in properties}
        if len(key_types) > 1 or not key_types <= {str, int}:
            raise NoSchema(f"{path or 'the document'} has dict keys of several types")
        key = "int" if key_types == {int} else "str"
        if not properties:
            self.notes.append(f"{path or 'the document'}: a dict always empty, values typed null")
            return MapOf(key, Scalar("null"))
        value = _merged(list(properties.values()))
        names, notes = set(self.names), list(self.notes)
        try:
            return MapOf(key, self.read(value, f"{path}[*]", f"{label} value", element=True))
        except NoSchema:
            if key != "str" or len(properties) > MOST_NAMED_FIELDS:
                raise
        # Values of several kinds under string keys that are not all identifiers ("$ref",
        # "bom-ref", "Content-Type"): a record whose field names are those keys. A codec
        # that needs identifiers keeps them under other names, or refuses with the name.
        self.names, self.notes = names, notes  # the map reading's guesses are not the record's
        return self._record(schema, path, label)

    def _record(self, schema: Mapping[str, Any], path: str, label: str) -> Record:
        properties: Mapping[str, Any] = schema["properties"]
        required = set(schema.get("required", ()))
        name = self.name(label)
        fields = tuple(
            Field(key, self.read(sub, f"{path}[{key!r}]", key), key in required)
            for key, sub in properties.items()
        )
        return Record(name, fields)


def _options(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives GenSON merged into one place: anyOf, or a list of types."""
    if "anyOf" in schema:
        return [option for sub in schema["anyOf"] for option in _options(sub)]
    kind = schema.get("type")
    if isinstance(kind, list):
        rest = {k: v for k, v in schema.items() if k != "type"}
        return [{**rest, "type": one} for one in kind]
    return [schema]


def _is_field_name(key: Any) -> bool:
    # Keywords (`class`) are field names too: a codec whose classes cannot have one says so.
    return isinstance(key, str) and _FIELD_NAME.fullmatch(key) is not None


def derive(obj: Any) -> Schema:
    """The record type of `obj`, derived by GenSON; NoSchema with the reason when none fits."""
    reader = _Reader()
    root = reader.read(json_schema(obj), "", "document")
    return Schema(root, tuple(reader.notes))
