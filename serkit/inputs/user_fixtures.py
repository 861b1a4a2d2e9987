"""The user's own documents as fixtures: a folder in the checkout, each document pinned by hash.

The folder is ``fixtures/user/`` in the serkit checkout (or ``$SERKIT_USER_FIXTURES``).
Its ``fixtures.json`` declares each document::

    {"fixtures": {"orders": {"file": "orders@3f2ab496.json",
                             "sha256": "3f2ab4963e6c2d02…",
                             "file_sha256": "(the file's bytes)…",
                             "description": "one day of orders"}}}

``sha256`` is the document's content hash (:func:`serkit.inputs.hashing.content_hash`,
the same hash as every built-in fixture's), and the fixture's id carries its first eight
hex digits: ``orders@3f2ab496``. A document that changes is therefore a new fixture with a
new id, never new results under an old one, and a file whose content no longer matches its
declaration is refused, naming both hashes (:class:`~serkit.errors.FixtureChanged`).
``file_sha256`` pins the file's bytes, which are checked before any parser sees them: a
file swapped into the folder is refused unread.

``schema_sha256`` pins the document's schema beside its content (the hash of the record
type the schema codecs build from, :mod:`serkit.schemas`), or says ``"no schema"``; a
later serkit or inference library that reads it otherwise is then named, not used. Given
a JSON Schema of yours (``serkit fixtures add --schema``), the folder keeps a copy,
``schema_file``, its bytes pinned by ``schema_file_sha256`` as the document's are; else
the schema is derived from the document.

Nothing in the folder grants trust: a pickle is loaded only when the person running the
command allows it (``--allow-pickle``; the suite: ``SERKIT_BENCH_ALLOW_PICKLE=1``), and the
document's limits are theirs to raise (:mod:`serkit.inputs.limits`). An ``allow_pickle``
key, which older versions wrote, is refused with a line saying so.

:func:`add_document` copies a document into the folder and declares it, so the entry
cannot drift from the copy. The folder is found from the current directory's checkout;
inside asv, whose benchmarks run in a temporary folder, from ``ASV_CONF_DIR``, which asv
sets to the checkout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from serkit.checkout import project_root
from serkit.errors import DocumentError, FixtureChanged, RefusedFile, RefusedFileLimit, SerkitError
from serkit.files import atomic_write
from serkit.inputs.documents import (
    CANONICAL_EXTENSION,
    FORMATS,
    Document,
    decode,
    read_record,
)
from serkit.inputs.guarded_read import inside, read_bytes
from serkit.inputs.hashing import content_hash
from serkit.inputs.limits import RECORD_DEPTH, LimitExceeded, Limits, measure_tree, python_contents
from serkit.text import diagnostic
from serkit.units import bytes_binary

FOLDER_ENV = "SERKIT_USER_FIXTURES"
FOLDER = Path("fixtures") / "user"  # in the checkout
MANIFEST = "fixtures.json"
USER_ORIGIN = "your data"  # a declared document's `origin` in the fixture registry
ID_HASH_DIGITS = 8
# What a declaration may say; `allow_pickle` is refused by name, see _declaration.
KEYS = frozenset({"file", "sha256", "file_sha256", "description", "format", "slow"})
SCHEMA_KEYS = frozenset({"schema_sha256", "schema_file", "schema_file_sha256"})
NO_SCHEMA_PIN = "no schema"  # a schema_sha256 that says no record type fits the document
SCHEMA_SUFFIX = ".schema.json"
SCHEMA_MAX_BYTES = 2**20  # a JSON Schema is small; this one is read before it is trusted
# Sizes as file bytes: a document this large is slow (left out unless --slow) or large
# (its peak memory is measured), as random-dicts-10000 and -1000 are as JSON.
SLOW_BYTES = 10 * 10**6
LARGE_BYTES = 10**6

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Declaration:
    """One entry of fixtures.json, checked for shape (its file is checked when built)."""

    name: str
    file: Path  # absolute
    sha256: str  # the content hash: the parsed document's
    file_sha256: str | None = None  # the file's bytes; None in a declaration older than it
    description: str = ""
    format: str | None = None  # None: from the extension, else sniffed
    declared_slow: bool | None = None  # None: from the file's size
    # The schema's pin: a sha256, NO_SCHEMA_PIN, or None (declared before serkit pinned it).
    schema_sha256: str | None = None
    schema_file: Path | None = None  # absolute: a JSON Schema of yours; None: derived
    schema_file_sha256: str | None = None

    @property
    def id(self) -> str:
        return fixture_id(self.name, self.sha256)

    @property
    def size(self) -> int:
        """The file's size in bytes; 0 when it is missing (building it then says so)."""
        try:
            return self.file.stat().st_size
        except OSError:
            return 0

    @property
    def about(self) -> str:
        return f"{self.description or self.file.name} ({bytes_binary(self.size)})"

    @property
    def slow(self) -> bool:
        return self.declared_slow if self.declared_slow is not None else self.size >= SLOW_BYTES

    @property
    def large(self) -> bool:
        return self.size >= LARGE_BYTES

    def build(self) -> Any:
        """The document, read from its file and checked against both hashes."""
        return read_declared(self).obj

    def read_schema(self) -> Any:
        """Your JSON Schema for it, as JSON data, its file's bytes checked before parsing."""
        if self.schema_file is None or self.schema_file_sha256 is None:
            raise SerkitError(f"{self.id} declares no schema file")
        data = read_bytes(self.schema_file, SCHEMA_MAX_BYTES, follow_links=False)
        actual = hashlib.sha256(data).hexdigest()
        if actual != self.schema_file_sha256:
            raise FixtureChanged(
                f"{self.schema_file} has changed: its file sha256 is {actual[:12]}…, declared "
                f"{self.schema_file_sha256[:12]}… for {self.id}, so it was not read; if you "
                f"trust it, declare it again: {_readd(self)} --schema {self.schema_file}"
            )
        return parse_schema_file(self.schema_file, data)


def parse_schema_file(path: Path, data: bytes) -> Any:
    """A JSON Schema file's JSON; DocumentError when it is not JSON, or nests past the
    depth cap on a record (the schema readers walk it recursively)."""
    try:
        schema = json.loads(data.decode("utf-8"))
        measure_tree(schema, python_contents(), Limits(depth=RECORD_DEPTH), shared=False)
    except (RecursionError, LimitExceeded):
        rule = f"nests deeper than {RECORD_DEPTH} levels: past the cap for a JSON Schema"
        raise RefusedFileLimit(f"{path}: {rule}", rule) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise DocumentError(f"{path}: not a JSON Schema (not JSON: {exc})"[:300]) from None
    return schema


def fixture_id(name: str, sha256: str) -> str:
    """`orders@3f2ab496`: the name, bound to the content hash it was declared with."""
    return f"{name}@{sha256[:ID_HASH_DIGITS]}"


def folder(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The user fixtures folder: $SERKIT_USER_FIXTURES, else the checkout's; None outside one."""
    configured = environ.get(FOLDER_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    starts: list[Path | None] = [None]
    if environ.get("ASV_CONF_DIR"):  # inside asv: the benchmark's cwd is a temporary folder
        starts.append(Path(environ["ASV_CONF_DIR"]))
    for start in starts:
        with contextlib.suppress(SerkitError):
            return project_root(start) / FOLDER
    return None


# --- reading the declarations -----------------------------------------------------------


def _declaration(name: str, entry: Any, base: Path) -> Declaration:
    if not _NAME.fullmatch(name):
        raise SerkitError(
            f"{name!r} is not a fixture name: up to 40 letters, digits, '.', '_' or '-'"
        )
    if not isinstance(entry, dict):
        raise SerkitError(f"{name}: expected an object with file and sha256")
    if "allow_pickle" in entry:
        raise SerkitError(
            f"{name}: allow_pickle is refused: a file cannot allow itself to be unpickled; "
            "remove the key, and pass --allow-pickle to the command that reads the fixture "
            "(SERKIT_BENCH_ALLOW_PICKLE=1 for the suite)"
        )
    unknown = set(entry) - KEYS - SCHEMA_KEYS
    if unknown:
        raise SerkitError(f"{name}: unknown keys {', '.join(sorted(unknown))}")
    file, sha256 = entry.get("file"), entry.get("sha256")
    if not isinstance(file, str) or not file:
        raise SerkitError(f"{name}: no file")
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise SerkitError(
            f"{name}: sha256 must be the document's 64-hex-digit content hash "
            "(`serkit fixtures add` computes it)"
        )
    file_sha256 = entry.get("file_sha256")
    if file_sha256 is not None and not (
        isinstance(file_sha256, str) and _SHA256.fullmatch(file_sha256)
    ):
        raise SerkitError(
            f"{name}: file_sha256 must be the sha256 of the file's bytes, 64 hex digits "
            "(`serkit fixtures add` computes it)"
        )
    fmt = entry.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise SerkitError(f"{name}: format must be one of {', '.join(FORMATS)}")
    if not isinstance(entry.get("slow", False), bool):
        raise SerkitError(f"{name}: slow must be true or false")
    schema_sha256, schema_file, schema_file_sha256 = _schema_entry(name, entry)
    return Declaration(
        name=name,
        file=_inside(name, base, file),
        sha256=sha256,
        file_sha256=file_sha256,
        description=str(entry.get("description", "")),
        format=fmt,
        declared_slow=entry.get("slow"),
        schema_sha256=schema_sha256,
        schema_file=_inside(name, base, schema_file) if schema_file else None,
        schema_file_sha256=schema_file_sha256,
    )


def _inside(name: str, base: Path, file: str) -> Path:
    """A file the declaration names, resolved; refused unless it is inside the folder."""
    try:
        return inside(base, file)
    except RefusedFile as exc:
        raise SerkitError(f"{name}: {exc}") from None


def _schema_entry(name: str, entry: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(schema_sha256, schema_file, schema_file_sha256), checked for shape."""
    pin = entry.get("schema_sha256")
    file, file_pin = entry.get("schema_file"), entry.get("schema_file_sha256")
    if (
        pin is not None
        and pin != NO_SCHEMA_PIN
        and not (isinstance(pin, str) and _SHA256.fullmatch(pin))
    ):
        raise SerkitError(
            f'{name}: schema_sha256 must be the schema\'s 64-hex-digit sha256 or "{NO_SCHEMA_PIN}" '
            "(`serkit fixtures add` computes it)"
        )
    if file is None and file_pin is None:
        return pin, None, None
    if not (isinstance(file, str) and file and isinstance(file_pin, str)):
        raise SerkitError(f"{name}: schema_file and schema_file_sha256 go together")
    if not _SHA256.fullmatch(file_pin) or pin is None or pin == NO_SCHEMA_PIN:
        raise SerkitError(
            f"{name}: a schema_file needs its bytes' sha256 (schema_file_sha256) and the "
            "schema's (schema_sha256), 64 hex digits each (`serkit fixtures add --schema`)"
        )
    return pin, file, file_pin


def _read_manifest(where: Path) -> dict[str, Any]:
    path = where / MANIFEST
    if not os.path.lexists(path):
        return {"fixtures": {}}
    try:
        document = read_record(path, what="a fixtures.json")
    except RefusedFile as exc:
        raise SerkitError(f"{path} cannot be read: {exc.rule}") from None
    if not isinstance(document, dict) or not isinstance(document.get("fixtures"), dict):
        raise SerkitError(f'{path}: expected {{"fixtures": {{name: {{file, sha256}}, …}}}}')
    return document


def declarations(where: Path | None = None) -> list[Declaration]:
    """Every entry of the folder's fixtures.json, in file order; SerkitError if one is malformed."""
    where = where if where is not None else folder()
    if where is None:
        return []
    manifest = _read_manifest(where)
    try:
        return [_declaration(n, e, where) for n, e in manifest["fixtures"].items()]
    except SerkitError as exc:
        raise SerkitError(f"{where / MANIFEST}: {exc}") from None


# --- building one --------------------------------------------------------------------


def _readd(declaration: Declaration) -> str:
    return f"`serkit fixtures add {declaration.file} --name {declaration.name} --replace`"


def read_declared(declaration: Declaration) -> Document:
    """Read the declared file, its bytes checked before they are parsed, then its content.

    FixtureChanged when either hash differs; a pickle loads only under a grant that
    allows it (serkit.inputs.limits.current_grant), never because the declaration says so.
    """
    if declaration.file_sha256 is None:
        raise FixtureChanged(
            f"{declaration.id} pins no file_sha256 (declared by an older serkit), so its "
            f"bytes cannot be checked before they are parsed; pin them by adding it again: "
            f"`serkit fixtures add {declaration.file} --name {declaration.name}`"
        )
    data = read_bytes(declaration.file, follow_links=False)  # read once: hashed, then parsed
    actual = hashlib.sha256(data).hexdigest()
    if actual != declaration.file_sha256:
        raise FixtureChanged(
            f"{declaration.file} has changed: its file sha256 is {actual[:12]}…, declared "
            f"{declaration.file_sha256[:12]}… for {declaration.id}, so it was not read; "
            f"if you trust the new file, make it a new fixture: {_readd(declaration)}"
        )
    document = decode(declaration.file, data, format=declaration.format)
    content = pin(document)
    if content != declaration.sha256:
        raise FixtureChanged(
            f"{declaration.file} has changed: its content sha256 is {content[:12]}…, "
            f"declared {declaration.sha256[:12]}… as {declaration.id}; to keep the new "
            f"content, make it a new fixture: {_readd(declaration)}"
        )
    return document


def pin(document: Document) -> str:
    """The document's content hash; DocumentError when it holds a type the hash cannot pin."""
    try:
        return content_hash(document.obj)
    except TypeError as exc:  # content_hash walks plain data only; measured: no cycles
        raise DocumentError(
            f"{document.path}: {exc}; a fixture may hold only None, bool, int, float, str, "
            "bytes, dates, datetimes, list, tuple, dict and named tuples"
        ) from None


def declared_fixtures() -> list[Declaration]:
    """The registry's hook: the folder's declarations, or none, with a warning, if malformed.

    The registry is built on import, where an error would stop every command and asv's
    discovery of the whole suite; `serkit fixtures verify` reports the problem as an error.
    """
    try:
        return declarations()
    except SerkitError as exc:
        print(f"serkit: warning: your fixtures are left out: {diagnostic(exc)}", file=sys.stderr)
        return []


# --- adding one -------------------------------------------------------------------------


def default_name(path: Path) -> str:
    """A fixture name from a file name: `My Orders (v2).json` -> `My-Orders-v2`."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-._")[:40]
    return stem or "document"


# (the document, your JSON Schema or None) -> the schema's pin: serkit.schemas.pinned's
# schema_pin, which this layer cannot import (schemas sit above inputs).
SchemaPin = Callable[[Any, Any], Optional[str]]


def _schema_text(pin: str | None, file_sha256: str | None) -> str:
    if pin is None:
        return "no schema pinned"
    kind = "yours" if file_sha256 else "derived"
    return "no schema" if pin == NO_SCHEMA_PIN else f"schema sha256 {pin[:12]}… ({kind})"


def add_document(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    description: str = "",
    allow_pickle: bool | None = None,
    replace: bool = False,
    where: Path | None = None,
    schema: str | os.PathLike[str] | None = None,
    pin_schema: SchemaPin | None = None,
) -> Declaration:
    """Copy a document into the user fixtures folder and declare it there, pinned by hash.

    Its schema is pinned beside it by `pin_schema`: derived from the document, or `schema`,
    a JSON Schema file of yours, which is copied too and its bytes pinned. Without
    `pin_schema`, no schema is pinned. The copies are written first and the manifest last,
    each by an atomic rename, so a failure at any step leaves the folder as it was.
    Re-adding the same content and schema under the same name changes nothing (but pins
    what a declaration made by an older serkit left unpinned); other content, or another
    schema, under a declared name needs `replace`.
    """
    source = Path(path)
    data = read_bytes(source)  # read once: the bytes hashed are the bytes kept
    document = decode(source, data, allow_pickle=allow_pickle)
    sha256, file_sha256 = pin(document), hashlib.sha256(data).hexdigest()
    schema_path = Path(schema) if schema is not None else None
    schema_data = read_bytes(schema_path, SCHEMA_MAX_BYTES) if schema_path else None
    if pin_schema is None:
        if schema_path is not None:
            raise SerkitError("a schema file was given, and nothing to read it with")
        schema_pin = None
    else:
        supplied = None
        if schema_path is not None and schema_data is not None:
            supplied = parse_schema_file(schema_path, schema_data)
        schema_pin = pin_schema(document.obj, supplied)
    schema_file_sha256 = hashlib.sha256(schema_data).hexdigest() if schema_data else None
    chosen = name or default_name(source)
    if not _NAME.fullmatch(chosen):
        raise DocumentError(
            f"{chosen!r} is not a fixture name: up to 40 letters, digits, '.', '_' or '-'"
        )
    target_dir = where if where is not None else folder()
    if target_dir is None:
        raise DocumentError(
            f"no serkit checkout here to keep {source} in: run this in one, or set {FOLDER_ENV}"
        )
    manifest = _read_manifest(target_dir)
    existing = declarations(target_dir)
    previous = next((d for d in existing if d.name == chosen), None)
    same = previous is not None and previous.sha256 == sha256
    schema_now = (schema_pin, schema_file_sha256)
    if previous is not None and same and previous.file_sha256:
        schema_then = (previous.schema_sha256, previous.schema_file_sha256)
        # The same schema; or none to pin here (no inference library), so nothing to compare.
        if schema_then == schema_now or schema_now == (None, None):
            return previous  # its copy stays, even one in another format
        # A declaration older than schema pins is pinned now; a pinned schema changes only
        # when asked, as its schema codecs' results would then mean something else.
        if schema_then != (None, None) and not replace:
            raise DocumentError(
                f"{chosen} is declared as {previous.id} with {_schema_text(*schema_then)}; "
                f"this one has {_schema_text(*schema_now)}: another schema changes what its "
                "schema codecs time, so replace it (--replace; results keep the schema hash "
                "they ran under)"
            )
    if previous is not None and not same and not replace:
        raise DocumentError(
            f"{chosen} is already declared as {previous.id}; this document's content sha256 "
            f"is {sha256[:12]}…: a changed document is a new fixture, so give it another "
            f"name, or replace {previous.id} (its results keep that id)"
        )
    stored = f"{fixture_id(chosen, sha256)}{CANONICAL_EXTENSION[document.format]}"
    target_dir.mkdir(parents=True, exist_ok=True)
    entry: dict[str, Any] = {"file": stored, "sha256": sha256, "file_sha256": file_sha256}
    if description:
        entry["description"] = description
    if schema_pin is not None:
        entry["schema_sha256"] = schema_pin
    copies: dict[Path, bytes] = {target_dir / stored: data}
    if schema_data is not None and schema_file_sha256 is not None:
        # Named by its own hash too, so another schema never overwrites a declared one.
        kept = f"{fixture_id(chosen, sha256)}.{schema_file_sha256[:ID_HASH_DIGITS]}{SCHEMA_SUFFIX}"
        entry.update(schema_file=kept, schema_file_sha256=schema_file_sha256)
        copies[target_dir / kept] = schema_data
    manifest["fixtures"][chosen] = entry
    created = [copy for copy in copies if not copy.exists()]
    try:
        for copy, content in copies.items():
            atomic_write(copy, content)
        text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        atomic_write(target_dir / MANIFEST, text.encode("utf-8"))
    except BaseException:
        for copy in created:
            with contextlib.suppress(OSError):
                copy.unlink()
        raise
    if previous is not None:
        others = [d for d in existing if d.name != chosen]
        for old in (previous.file, previous.schema_file):
            if old is None or old in copies or any(old in (d.file, d.schema_file) for d in others):
                continue
            if written_by_serkit(previous, old, target_dir):
                with contextlib.suppress(OSError):
                    old.unlink()  # no entry refers to it any more
    return _declaration(chosen, entry, target_dir)


def written_by_serkit(declaration: Declaration, file: Path, where: Path) -> bool:
    """Whether serkit may delete `file`, a copy `declaration` names: only one it wrote
    itself, a regular file (not a link) directly in the folder `where`, under the name
    add_document gives the declaration's copies. Anything else, even if a hand-edited
    fixtures.json names it, is left alone."""
    own = fixture_id(declaration.name, declaration.sha256)
    named = file.name.startswith(f"{own}.") and (
        file.name in (f"{own}{ext}" for ext in CANONICAL_EXTENSION.values())
        or file.name.endswith(SCHEMA_SUFFIX)
    )
    lexical = where.resolve() / file.name
    return (
        named and file.parent == where.resolve() and lexical.is_file() and not lexical.is_symlink()
    )
