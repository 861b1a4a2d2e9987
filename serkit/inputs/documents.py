"""A user's own document, read from a file: JSON, YAML, msgpack, or (if allowed) pickle.

The format comes from the file's extension; a file with another extension is sniffed:
a pickle's protocol header, then JSON, msgpack and YAML in turn. Bad input ends in one
:class:`~serkit.errors.DocumentError` line, and a file over the size limit is refused
from its size alone, before a byte of it is read.

Every reader bounds what the document expands to (:mod:`serkit.inputs.limits`): a YAML
stream is composed, and its aliases counted, before any object is built; JSON, msgpack
and pickle are counted as soon as they are parsed. Loading a pickle runs code named by
the file, so a pickle is read only when the person allows it (``--allow-pickle`` on the
command line, ``allow_pickle=True`` from Python), never because a file says so.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

from serkit.errors import DocumentError, DocumentLimitError, RefusedFile, RefusedFileLimit
from serkit.inputs.guarded_read import inside, read_bytes
from serkit.inputs.limits import (
    JSON_COST,
    NO_DUPLICATE,
    RECORD_BYTES_ENV,
    RECORD_DEPTH,
    YAML_COST,
    Contents,
    Grant,
    LimitExceeded,
    Limits,
    Shape,
    current_grant,
    json_nodes,
    measure_tree,
    over_limit,
    python_contents,
    record_max_bytes,
    record_nodes,
)
from serkit.text import diagnostic
from serkit.units import bytes_binary, count

FORMATS = ("json", "yaml", "msgpack", "pickle")
EXTENSIONS: Mapping[str, str] = MappingProxyType(
    {
        ".json": "json",
        ".yaml": "yaml",
        ".yml": "yaml",
        ".msgpack": "msgpack",
        ".mpk": "msgpack",
        ".msgp": "msgpack",
        ".pickle": "pickle",
        ".pkl": "pickle",
        ".pck": "pickle",
    }
)
# The extension a document of each format is stored under (serkit.inputs.user_fixtures).
CANONICAL_EXTENSION: Mapping[str, str] = MappingProxyType(
    {"json": ".json", "yaml": ".yaml", "msgpack": ".msgpack", "pickle": ".pickle"}
)

PICKLE_HAZARD = (
    "loading a pickle runs code named by the file: pass --allow-pickle "
    "(allow_pickle=True) only for a file you trust"
)


@dataclass(frozen=True)
class Document:
    """A document read from a file, and how serkit read it."""

    path: Path
    format: str  # one of FORMATS
    obj: Any
    bytes: int  # the file's size
    recognised_by: str  # "extension", "content" (sniffed) or "caller" (format given)
    shape: Shape | None = None  # the tree it stands for: nodes, depth, aliases
    warnings: tuple[str, ...] = ()  # what reading it noticed, one line each
    # YAML 1.1 plain keys read as a bool (`on:` is True): (the key's text, the bool), first
    # text of each bool, so a note about a key [True] can name the key the file wrote.
    bool_keys: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class _Parsed:
    obj: Any
    shape: Shape
    warnings: tuple[str, ...] = ()
    bool_keys: tuple[tuple[str, bool], ...] = ()


# --- readers ---------------------------------------------------------------------------


class _RepeatedKeys:
    """An object_pairs_hook that builds each dict as the parser would, noting repeated keys."""

    def __init__(self) -> None:
        # id(dict) -> (the dict, kept alive so no later dict reuses its id; a repeated key)
        self.found: dict[int, tuple[dict[Any, Any], Any]] = {}

    def __call__(self, pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        built = dict(pairs)  # the last value wins, at the first key's place, as without a hook
        if len(built) < len(pairs):
            self.found[id(built)] = (built, _first_repeated(key for key, _ in pairs))
        return built


def _first_repeated(keys: Iterable[Any]) -> Any:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None


def _repeated_warning(shape: Shape, what: str) -> tuple[str, ...]:
    if not shape.duplicates:
        return ()
    where = shape.duplicate_path or "the top level"
    more = f"; {shape.duplicates:,} {what}s repeat a key" if shape.duplicates > 1 else ""
    return (
        f"key {shape.duplicate_key!r} appears more than once in the {what} at {where}, "
        f"and only its last value is measured{more}",
    )


def _json(data: bytes, limits: Limits) -> _Parsed:
    if data.lstrip()[:1] in (b"{", b"["):  # a lone scalar is one node, however long
        json_nodes(data, limits)
    repeated = _RepeatedKeys()
    # bytes: UTF-8, -16 or -32, as RFC 8259 allows
    obj = json.loads(data, object_pairs_hook=repeated)
    shape = measure_tree(obj, python_contents(repeated.found), limits, shared=False)
    return _Parsed(obj, shape, _repeated_warning(shape, "object"))


_YAML_MERGE = "tag:yaml.org,2002:merge"
_YAML_NULL = "tag:yaml.org,2002:null"


def _yaml_contents(node: Any) -> Contents | None:
    """measure_tree's view of a composed YAML node: aliases are the same node again."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        items = [(i, x) for i, x in enumerate(node.value) if not isinstance(x, yaml.ScalarNode)]
        return len(node.value) - len(items), items, NO_DUPLICATE
    if not isinstance(node, yaml.MappingNode):
        return None
    leaves, repeated = 0, NO_DUPLICATE
    inner: list[tuple[Any, Any]] = []
    seen: set[tuple[str, str]] = set()
    for key, value in node.value:
        scalar_key = isinstance(key, yaml.ScalarNode)
        label = key.value if scalar_key else "?"
        for part in (key, value):
            if isinstance(part, yaml.ScalarNode):
                leaves += 1
            else:
                inner.append((label, part))
        if scalar_key and key.tag != _YAML_MERGE:  # `<<` merges: it may repeat
            if (key.tag, key.value) in seen and repeated is NO_DUPLICATE:
                repeated = key.value
            seen.add((key.tag, key.value))
    return leaves, inner, repeated


def _empty_yaml_document(node: Any) -> bool:
    """A document with nothing in it, as a stream ending in `---` has."""
    import yaml

    return isinstance(node, yaml.ScalarNode) and node.tag == _YAML_NULL and node.value == ""


_YAML_BOOL = "tag:yaml.org,2002:bool"


def _yaml_bool_keys(roots: list[Any]) -> tuple[tuple[str, bool], ...]:
    """The first key text the file wrote for True and for False, where it wrote a key that
    YAML 1.1 reads as a bool. Walks each node once (aliases share nodes); already measured."""
    import yaml

    found: dict[bool, str] = {}
    seen: set[int] = set()
    stack = list(roots)
    while stack and len(found) < 2:
        node = stack.pop()
        if id(node) in seen or isinstance(node, yaml.ScalarNode):
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
            continue
        for key, value in reversed(node.value):
            if isinstance(key, yaml.ScalarNode) and key.tag == _YAML_BOOL:
                truth = key.value.lower() in ("yes", "true", "on", "y")
                found[truth] = key.value  # reversed: the first in the file is written last
            stack.extend((key, value))
    return tuple((text, truth) for truth, text in sorted(found.items(), reverse=True))


def _yaml_events(data: bytes, limits: Limits) -> None:
    """Count the stream's nodes and levels from its parser's events, each event dropped
    once counted: LimitExceeded before a node is composed, in memory that does not grow
    with the file (composing takes about 300 bytes a node). An alias is one node here:
    what it expands to, and how many there are, are measured once composed."""
    import yaml

    parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(data)
    nodes = depth = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                continue
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limits.depth:
                    raise LimitExceeded(over_limit("depth", limits))
            elif not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                continue  # the stream's and each document's start and end
            nodes += 1
            if nodes > limits.nodes:
                raise LimitExceeded(over_limit("nodes", limits))
    finally:
        parser.dispose()


def _yaml(data: bytes, limits: Limits, composed: int | None = None) -> _Parsed:
    """`composed`: the most nodes composed (aliases not expanded), if fewer than the tree's."""
    import yaml

    # Safe loading only: YAML tags must not build arbitrary objects. The stream's nodes
    # are counted from its events first (_yaml_events); it is then composed, each alias
    # the very node it names, and measured before any object is built (a `<<` merge
    # counts what it merges each time, so it may count high).
    _yaml_events(data, limits if composed is None else replace(limits, nodes=composed))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(data)
    try:
        documents = []
        while loader.check_node():
            documents.append(loader.get_node())
        if len(documents) > 1:
            documents = [d for d in documents if not _empty_yaml_document(d)]
        if not documents:
            return _Parsed(None, Shape(nodes=1, depth=0, aliases=0))
        stream = len(documents) > 1
        root = yaml.SequenceNode("tag:yaml.org,2002:seq", documents) if stream else documents[0]
        shape = measure_tree(root, _yaml_contents, limits)
        bool_keys = _yaml_bool_keys(documents)
        built = [loader.construct_document(d) for d in documents]
    finally:
        loader.dispose()
    warnings = _repeated_warning(shape, "mapping")
    if stream:
        warnings += (f"{len(built)} YAML documents, measured as a list",)
    return _Parsed(built if stream else built[0], shape, warnings, bool_keys)


def _msgpack(data: bytes, limits: Limits) -> _Parsed:
    try:
        import msgpack
    except ImportError:
        raise DocumentError("reading msgpack needs msgpack (pip install msgpack)") from None
    repeated = _RepeatedKeys()
    # Int map keys are common in msgpack written by other languages: keep them.
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=False, object_pairs_hook=repeated)
    except msgpack.StackError:
        raise RecursionError("msgpack's own stack is full") from None
    shape = measure_tree(obj, python_contents(repeated.found), limits, shared=False)
    return _Parsed(obj, shape, _repeated_warning(shape, "map"))


def _pickle(data: bytes, limits: Limits) -> _Parsed:
    obj = pickle.loads(data)
    return _Parsed(obj, measure_tree(obj, python_contents(), limits))  # its memo shares


READERS: Mapping[str, Callable[[bytes, Limits], _Parsed]] = MappingProxyType(
    {"json": _json, "yaml": _yaml, "msgpack": _msgpack, "pickle": _pickle}
)


def _brief(exc: BaseException, limit: int = 100) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def looks_like_pickle(data: bytes) -> bool:
    """Protocol 2 and later start with PROTO (0x80) and a protocol number, and end with STOP."""
    return len(data) >= 3 and data[0] == 0x80 and 2 <= data[1] <= 5 and data.endswith(b".")


def _decode(path: Path, data: bytes, fmt: str, grant: Grant) -> _Parsed:
    if fmt == "pickle" and not grant.allow_pickle:
        raise DocumentError(f"{path} is a pickle; {PICKLE_HAZARD}")
    try:
        return READERS[fmt](data, grant.limits)
    except DocumentError:
        raise
    except LimitExceeded as exc:
        raise DocumentLimitError(f"{path}: {exc}") from None
    except RecursionError:  # the parser's own stack, before serkit could count the levels
        raise DocumentLimitError(
            f"{path} nests too deep for the {fmt} reader to parse; serkit "
            f"measures documents up to {grant.limits.depth:,} levels deep"
        ) from None
    except Exception as exc:  # each library raises its own classes
        raise DocumentError(f"{path} is not valid {fmt}: {_brief(exc)}") from exc


def _sniff(path: Path, data: bytes, grant: Grant) -> tuple[str, _Parsed]:
    """The first reader that reads the whole file; YAML only when it gives a mapping or list.

    A reader that parses the file but finds it over a limit ends the search: the file is
    in that format, and refused.
    """
    if looks_like_pickle(data):
        return "pickle", _decode(path, data, "pickle", grant)
    failures = []
    for fmt in ("json", "msgpack", "yaml"):
        try:
            parsed = _decode(path, data, fmt, grant)
        except DocumentLimitError:
            raise
        except DocumentError as exc:
            failures.append(f"{fmt}: {_brief(exc.__cause__ or exc, 60)}")
            continue
        # Almost any text is one YAML scalar: only a structure is evidence of YAML.
        if fmt == "yaml" and not isinstance(parsed.obj, (dict, list)):
            failures.append(f"yaml: the text is one {type(parsed.obj).__name__}, not a document")
            continue
        return fmt, parsed
    raise DocumentError(
        f"{path}: no reader can read it (tried {'; '.join(failures)}); "
        f"known extensions: {', '.join(EXTENSIONS)}"
    )


def decode(
    path: Path,
    data: bytes,
    *,
    allow_pickle: bool | None = None,
    format: str | None = None,
    limits: Limits | None = None,
) -> Document:
    """Read `data`, the bytes of `path`: see read_document.

    What reading noticed (a repeated key, a YAML stream of several documents) is printed,
    one `serkit: warning:` line each, and kept in Document.warnings.
    """
    if format is not None and format not in FORMATS:
        raise DocumentError(f"unknown document format {format!r}; known: {', '.join(FORMATS)}")
    granted = current_grant()
    grant = Grant(
        limits if limits is not None else granted.limits,
        granted.allow_pickle if allow_pickle is None else allow_pickle,
    )
    by_extension = EXTENSIONS.get(path.suffix.lower())
    if format is not None:
        fmt, parsed, how = format, _decode(path, data, format, grant), "caller"
    elif by_extension is not None:
        fmt, parsed, how = by_extension, _decode(path, data, by_extension, grant), "extension"
    else:
        (fmt, parsed), how = _sniff(path, data, grant), "content"
    warnings = tuple(f"{path}: {warning}" for warning in parsed.warnings)
    for warning in warnings:
        print(f"serkit: warning: {diagnostic(warning)}", file=sys.stderr)
    return Document(path, fmt, parsed.obj, len(data), how, parsed.shape, warnings, parsed.bool_keys)


def read_document(
    path: str | os.PathLike[str],
    *,
    allow_pickle: bool | None = None,
    max_bytes: int | None = None,
    format: str | None = None,
    limits: Limits | None = None,
) -> Document:
    """Read one document; DocumentError, in one line, for anything that stops it.

    `format` forces a reader; otherwise the extension decides, and an unknown extension
    is sniffed. `allow_pickle` and the limits default to what the person granted
    (:func:`serkit.inputs.limits.current_grant`: the command line's flags, else the
    SERKIT_MAX_DOCUMENT_* variables, else the defaults, and no pickle); `max_bytes`
    overrides the byte limit alone.
    """
    where = Path(path)
    chosen = limits if limits is not None else current_grant().limits
    data = read_bytes(where, chosen.bytes if max_bytes is None else max_bytes)
    return decode(where, data, allow_pickle=allow_pickle, format=format, limits=chosen)


# --- records: serkit's own kinds of file, from wherever they came ----------------------


def read_record(
    path: Path,
    *,
    root: Path | None = None,
    format: str = "json",
    max_bytes: int | None = None,
    depth: int = RECORD_DEPTH,
    what: str = "a record",
    follow_links: bool = True,
    data: bytes | None = None,
) -> Any:
    """A record's data (JSON or YAML), through the guarded path: inside `root` when given,
    a regular file, at most `max_bytes` (default: record_max_bytes(), which
    $SERKIT_MAX_RECORD_BYTES raises), nesting at most `depth` levels, aliases counted.

    RefusedFile, one line naming the file and the rule, for anything else; never a
    RecursionError or a MemoryError from a file someone else wrote. `data`: the bytes
    of `path` already read (through read_bytes), parsed without reading `path` again.
    """
    if root is not None:
        path = inside(root, path)
    cap = record_max_bytes() if max_bytes is None else max_bytes
    allow = f"to allow more, set {RECORD_BYTES_ENV}=256MiB"
    if data is None:
        data = read_bytes(path, cap, what=what, how_to_allow=allow, follow_links=follow_links)
    # The tree it stands for (YAML aliases expanded); and what may be built, by memory.
    limits = Limits(bytes=cap, nodes=cap, depth=depth, aliases=1000)
    cost = YAML_COST if format == "yaml" else JSON_COST
    built = record_nodes(len(data), cap, cost)
    try:
        if format == "yaml":
            return _yaml(data, limits, built).obj
        json_nodes(data, replace(limits, nodes=built))  # from the bytes, before parsing
        obj = json.loads(data)
        measure_tree(obj, python_contents(), limits, shared=False)
        return obj
    except (RecursionError, LimitExceeded) as exc:
        detail = str(exc).split(" (the limit", 1)[0] if isinstance(exc, LimitExceeded) else ""
        rule = f"{detail or f'nests deeper than {depth} levels'}: past the cap for {what}"
        if f"than {count(built)} nodes" in detail:  # what the cap on nodes stands for
            memory = bytes_binary(built * cost.node_bytes + 2 * len(data))
            rule += f": they would take over {memory} in memory"
        raise RefusedFileLimit(f"{path}: {rule}", rule) from None
    except Exception as exc:  # each parser raises its own classes
        if "maximum nesting depth" in str(exc):  # libyaml's own cap, 1,000 levels
            rule = f"nests deeper than {depth} levels: past the cap for {what}"
            raise RefusedFileLimit(f"{path}: {rule}", rule) from None
        rule = f"not valid {format.upper()}, truncated or corrupted ({_brief(exc, 200)})"
        raise RefusedFile(f"{path}: {rule}", rule) from None
