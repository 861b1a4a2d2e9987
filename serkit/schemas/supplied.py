"""A schema the user supplies as JSON Schema, read into serkit's record type, and a document
checked against it.

serkit reads the part of JSON Schema its record types can say, and refuses the rest by
name and place rather than guess at it:

- `type`: one type, or one type and "null" (a nullable value); `anyOf` of the same;
- an object with `properties` is a record: `required` names the fields every instance has,
  the others are optional; its `title`, if any, names the record. An object with only
  `additionalProperties` (a schema) is a map from strings to that schema's values;
- an array's `items` is one schema; a string's `format` "date" or "date-time" is a date;
- annotations (`title`, `description`, `$schema`, ...) are read past. Checks on values
  that no record type holds (`minimum`, `enum`, `pattern`, ...) are noted in the schema's
  notes as not checked by the schema codecs; structure it cannot hold (`$ref`, `oneOf`,
  `allOf`, tuple `items`, `patternProperties`) is refused.

The document must fit the schema (:func:`check_fits`) before it is pinned: a schema
codec would otherwise fail on it, or silently drop what the schema lacks.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from serkit.errors import NoSchema
from serkit.schemas.derive import SchemaReader
from serkit.schemas.types import (
    SUPPLIED,
    Field,
    ListOf,
    MapOf,
    Nullable,
    Record,
    Scalar,
    Schema,
    Type,
)

_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_SCALARS = {"boolean": "bool", "integer": "int", "number": "float", "string": "str", "null": "null"}
_FORMATS = {"date": "date", "date-time": "datetime"}
# Read past: they describe, they do not constrain.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
    | {"deprecated", "readOnly", "writeOnly", "$defs", "definitions"}
)
# Constraints on values no record type holds: noted as not checked by the schema codecs.
_VALUE_CHECKS = frozenset(
    {"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    | {"multipleOf", "minLength", "maxLength", "pattern", "minItems", "maxItems"}
    | {"uniqueItems", "minProperties", "maxProperties", "contentEncoding", "contentMediaType"}
)
_STRUCTURE = frozenset({"type", "properties", "required", "items", "anyOf", "format"})
_STRUCTURE |= frozenset({"additionalProperties"})


def _place(path: str) -> str:
    return path or "the top level"


class _Reader(SchemaReader):
    """Reads a user's JSON Schema into a type tree, refusing what it cannot hold."""

    def read(self, schema: Any, path: str, label: str) -> Type:
        if not isinstance(schema, Mapping):
            raise NoSchema(f"{_place(path)}: a schema must be a JSON object, not {schema!r:.40}")
        unknown = sorted(set(schema) - _STRUCTURE - _ANNOTATIONS - _VALUE_CHECKS)
        if unknown:
            raise NoSchema(
                f"{_place(path)}: serkit's record types cannot say {', '.join(unknown)} "
                "(it reads type, properties, required, items, anyOf, additionalProperties "
                "and format)"
            )
        checks = sorted(set(schema) & _VALUE_CHECKS)
        if checks:
            self.notes.append(f"{_place(path)}: {', '.join(checks)} not checked by the codecs")
        options = self._options(schema, path)
        nullable = any(option.get("type") == "null" for option in options)
        others = [option for option in options if option.get("type") != "null"]
        if not others:
            return Scalar("null")
        if len(others) > 1:
            kinds = ", ".join(sorted(str(option.get("type")) for option in others))
            raise NoSchema(f"{_place(path)} may be one of several types ({kinds})")
        found = self._one(others[0], path, schema.get("title") or label)
        return Nullable(found) if nullable else found

    def _options(self, schema: Mapping[str, Any], path: str) -> list[Mapping[str, Any]]:
        if "anyOf" in schema:
            rest = {k: v for k, v in schema.items() if k != "anyOf"}
            if not isinstance(schema["anyOf"], list) or not schema["anyOf"]:
                raise NoSchema(f"{_place(path)}: anyOf must be a list of schemas")
            return [{**rest, **option} for option in schema["anyOf"] if isinstance(option, dict)]
        kind = schema.get("type")
        if isinstance(kind, list):
            return [{**schema, "type": one} for one in kind]
        if kind is None:
            raise NoSchema(f"{_place(path)}: no type (serkit needs one at every place)")
        return [schema]

    def _one(self, schema: Mapping[str, Any], path: str, label: str) -> Type:
        kind = schema.get("type")
        if kind == "array":
            items = schema.get("items")
            if not isinstance(items, Mapping):
                raise NoSchema(f"{_place(path)}: an array needs one schema for its items")
            return ListOf(self.read(items, f"{path}[]", f"{label} item"))
        if kind == "object":
            return self._object(schema, path, label)
        if kind == "string" and "format" in schema:
            if schema["format"] not in _FORMATS:
                self.notes.append(f"{_place(path)}: format {schema['format']!r} read as a string")
                return Scalar("str")
            return Scalar(_FORMATS[schema["format"]])
        if kind in _SCALARS:
            return Scalar(_SCALARS[kind])
        raise NoSchema(f"{_place(path)}: unknown type {kind!r}")

    def _object(self, schema: Mapping[str, Any], path: str, label: str) -> Type:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties", True)
        if properties is None:
            if not isinstance(extra, Mapping):
                raise NoSchema(
                    f"{_place(path)}: an object needs properties (a record) or an "
                    "additionalProperties schema (a map)"
                )
            return MapOf("str", self.read(extra, f"{path}[*]", f"{label} value"))
        if not isinstance(properties, Mapping) or isinstance(extra, Mapping):
            raise NoSchema(f"{_place(path)}: a record's properties must be an object, and alone")
        required = schema.get("required", [])
        if not isinstance(required, list) or set(required) - set(properties):
            raise NoSchema(f"{_place(path)}: required must list some of its properties")
        for key in properties:
            if not _FIELD_NAME.fullmatch(key):
                raise NoSchema(f"{_place(path)}: {key!r} cannot be a field name (an identifier)")
        name = self.name(label)
        fields = tuple(
            Field(key, self.read(sub, f"{path}[{key!r}]", key), key in required)
            for key, sub in properties.items()
        )
        return Record(name, fields)


def from_json_schema(document: Any) -> Schema:
    """The user's JSON Schema as a record type; NoSchema naming the place it cannot read."""
    reader = _Reader()
    root = reader.read(document, "", "document")
    return Schema(root, tuple(reader.notes), SUPPLIED)


# --- the document against the schema ------------------------------------------------------

_PYTHON: dict[str, tuple[type, ...]] = {
    "bool": (bool,),
    "int": (int,),
    "float": (float, int),  # JSON has one number: an int fits a float
    "str": (str,),
    "date": (datetime.date,),
    "datetime": (datetime.datetime,),
}


def _kind(value: Any) -> str:
    return type(value).__name__


def _fits(node: Type, value: Any, path: str) -> None:
    if isinstance(node, Nullable):
        if value is not None:
            _fits(node.inner, value, path)
        return
    if isinstance(node, Scalar):
        if node.kind == "null":
            ok = value is None
        else:
            ok = isinstance(value, _PYTHON[node.kind]) and not (
                isinstance(value, bool) and node.kind != "bool"
            )
            if node.kind == "date":  # a datetime is a date to isinstance, not to a schema
                ok = ok and not isinstance(value, datetime.datetime)
        if not ok:
            # JSON has no date type: its dates are text, which a `format` does not change.
            text = node.kind in ("date", "datetime") and isinstance(value, str)
            hint = " (a JSON document holds dates as text: leave out format)" if text else ""
            raise NoSchema(
                f"{_place(path)}: the schema says {node.kind}, the document has "
                f"{_kind(value)}{hint}"
            )
        return
    if isinstance(node, ListOf):
        if not isinstance(value, (list, tuple)) or hasattr(type(value), "_fields"):
            raise NoSchema(
                f"{_place(path)}: the schema says a list, the document has {_kind(value)}"
            )
        for i, item in enumerate(value):
            _fits(node.item, item, f"{path}[{i}]")
        return
    if isinstance(node, MapOf):
        if not isinstance(value, dict):
            raise NoSchema(
                f"{_place(path)}: the schema says a map, the document has {_kind(value)}"
            )
        for key, item in value.items():
            if not isinstance(key, str):
                raise NoSchema(
                    f"{_place(path)}: a map's keys are strings, the document has {key!r}"
                )
            _fits(node.value, item, f"{path}[{key!r}]")
        return
    fields = value._asdict() if hasattr(type(value), "_fields") else value
    if not isinstance(fields, dict):
        raise NoSchema(f"{_place(path)}: the schema says a record, the document has {_kind(value)}")
    names = {field.name for field in node.fields}
    extra = [key for key in fields if key not in names]
    if extra:
        raise NoSchema(f"{_place(path)}: {extra[0]!r} is not a field of {node.name}")
    for field in node.fields:
        if field.name in fields:
            _fits(field.type, fields[field.name], f"{path}[{field.name!r}]")
        elif field.required:
            raise NoSchema(f"{_place(path)}: required field {field.name!r} is missing")


def check_fits(schema: Schema, obj: Any) -> None:
    """NoSchema, naming the first place and why, unless every value of `obj` fits `schema`."""
    try:
        _fits(schema.root, obj, "")
    except NoSchema as exc:
        raise NoSchema(f"the document does not fit the schema: {exc}") from None
    except RecursionError:
        raise NoSchema("the document is nested too deep to check against the schema") from None
