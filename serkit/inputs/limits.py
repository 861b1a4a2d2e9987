"""What a document may be: the limits on every reader of a user's file, in one place.

A document is refused when its file is over :attr:`Limits.bytes`, or when what it parses
to expands past :attr:`Limits.nodes` nodes, nests deeper than :attr:`Limits.depth`
containers, or shares more than :attr:`Limits.aliases` containers. Only the person at
the command line raises a limit: with a flag (``--max-nodes``), or with an environment
variable they set (``SERKIT_MAX_DOCUMENT_NODES``); never the document, nor a file that
declares it. Likewise a pickle is loaded only when they pass ``--allow-pickle``.

YAML aliases and pickle's memo let a few hundred bytes name one container many times
over: the parsed object is then a graph whose tree, the thing every codec walks, is
exponentially larger. :func:`measure_tree` counts that tree without walking it, from
each shared container's size computed once.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from serkit.errors import BadLimit, DocumentError
from serkit.units import count

# Parsed, a document takes several times its file size in memory, and every codec's
# output is kept beside it: 256 MiB of JSON already needs gigabytes.
DEFAULT_MAX_BYTES = 256 * 2**20
# One node per 8 bytes of the largest file allowed: canada.json, the densest standard
# corpus, holds one per 13.5 bytes. A node is a container, a scalar, or a dict key.
DEFAULT_MAX_NODES = DEFAULT_MAX_BYTES // 8
# Every codec measures 250 levels (orjson and ormsgpack stop at 255); from about 490,
# Python's recursion limit stops the fidelity check, and so every codec.
DEFAULT_MAX_DEPTH = 256
# A YAML file uses a handful of anchors (a workflow's defaults); a pickle shares an
# object wherever its program did. Every extra reference is counted in the nodes too.
DEFAULT_MAX_ALIASES = 100_000

# A record serkit reads from wherever it came (asv's results files, machine.json and
# benchmarks.json; serkit-host.yaml; a fixtures folder's fixtures.json and JSON Schemas)
# is read under its own caps, not a document's: a results file of the whole matrix is
# about 1 MB, so 64 MiB is far above any honest one, and reading it costs under a second.
DEFAULT_MAX_RECORD_BYTES = 64 * 2**20
RECORD_BYTES_ENV = "SERKIT_MAX_RECORD_BYTES"
# asv's files nest 4 levels, a host file 4, a JSON Schema a few per level of its data:
# 64 is far above any honest record, and far below where a reader's own recursion fails.
RECORD_DEPTH = 64
# The bytes a file caps are not the memory its parse takes: `{"x":[{},{},…]}` makes a
# dict of 64 bytes from every 3 bytes, and 60 MiB of it took 3.7 GB. So a record is also
# refused, before it is parsed, when its nodes (counted from its bytes or its parser's
# events) would take more than a multiple of its size in memory: at least 32 MiB (any
# small file), at most four times its size cap (256 MiB by default).
RECORD_MEMORY_FLOOR = 32 * 2**20


@dataclass(frozen=True)
class NodeCost:
    """What a record's format costs in memory: per node, at most (CPython, 64 bits,
    measured), and as a multiple of the file's size that honest records stay under."""

    node_bytes: int
    ratio: int


# JSON: a value or key, with its slot in its container, up to 80 bytes; an asv results
# file takes 5 times its size. YAML: a node as composed, with its two marks, and then
# built, up to 380 bytes; a host file of 200 runs takes 16 times its size, and 30 where
# its runs list the pairs they left out.
JSON_COST = NodeCost(node_bytes=96, ratio=10)
YAML_COST = NodeCost(node_bytes=400, ratio=40)


def record_nodes(size: int, cap: int, cost: NodeCost) -> int:
    """The most nodes a record of `size` bytes (under a cap of `cap`) may parse into.

    Its memory budget, less twice its size (the bytes, and the text they decode to),
    divided by what a node costs."""
    most = max(4 * cap, RECORD_MEMORY_FLOOR)
    memory = min(max(cost.ratio * size, RECORD_MEMORY_FLOOR), most)
    return max(memory - 2 * size, 0) // cost.node_bytes


def record_max_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The size cap on a record: $SERKIT_MAX_RECORD_BYTES if set, else 64 MiB."""
    value = environ.get(RECORD_BYTES_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_RECORD_BYTES
    try:
        return parse_size(value)
    except DocumentError as exc:
        raise BadLimit(f"{RECORD_BYTES_ENV}: {exc}") from None


@dataclass(frozen=True)
class Limits:
    """The most a document may be: file bytes, nodes of its tree, nesting depth, aliases."""

    bytes: int = DEFAULT_MAX_BYTES
    nodes: int = DEFAULT_MAX_NODES
    depth: int = DEFAULT_MAX_DEPTH
    aliases: int = DEFAULT_MAX_ALIASES


# Who can raise each limit: the flag on the command that reads, or its variable.
ENV: Mapping[str, str] = MappingProxyType(
    {
        "bytes": "SERKIT_MAX_DOCUMENT_BYTES",
        "nodes": "SERKIT_MAX_DOCUMENT_NODES",
        "depth": "SERKIT_MAX_DOCUMENT_DEPTH",
        "aliases": "SERKIT_MAX_DOCUMENT_ALIASES",
    }
)
FLAGS: Mapping[str, str] = MappingProxyType({name: f"--max-{name}" for name in ENV})
MAX_BYTES_ENV = ENV["bytes"]

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}


# The largest size or count a limit takes: 1 PiB, far past any machine's memory. A
# larger one (99999999999999999999999GiB) is a slip, and would overflow a read's length.
MOST = 2**50
# Digits past which a count is not worth converting (Python refuses 4,300).
_MOST_DIGITS = len(str(MOST))


def parse_size(text: str) -> int:
    """`"2GiB"`, `"512 MB"`, `"1000000"` -> bytes; BadLimit for anything else, or over 1 PiB."""
    match = re.fullmatch(r"\s*(\d+)(?:\.(\d+))?\s*([a-zA-Z]*)\s*", text, re.ASCII)
    unit = match.group(3).lower() if match else ""
    if match is None or unit not in _UNITS:
        units = "kB, MB, GB, KiB, MiB or GiB"
        raise BadLimit(f"{_shown(text)} is not a size: give bytes, or a number with {units}")
    whole, fraction = match.group(1).lstrip("0") or "0", (match.group(2) or "0")[:20]
    if len(whole) > _MOST_DIGITS or (size := Fraction(f"{whole}.{fraction}") * _UNITS[unit]) > MOST:
        most = f"1 PiB ({count(MOST)} bytes)"
        raise BadLimit(f"{_shown(text)} is over the largest size serkit takes, {most}")
    return int(size)  # exact: no float, so no overflow and no rounding


def parse_count(text: str) -> int:
    """`"1000000"`, `"1_000_000"` -> 1000000; BadLimit for anything but a count of 1 to 2**50."""
    cleaned = text.strip().replace("_", "").replace(",", "")
    if not cleaned.isascii() or not cleaned.isdigit() or not cleaned.strip("0"):
        raise BadLimit(f"{_shown(text)} is not a count: give a whole number of at least 1")
    if len(cleaned.lstrip("0")) > _MOST_DIGITS or int(cleaned) > MOST:
        raise BadLimit(f"{_shown(text)} is over the largest count serkit takes, {count(MOST)}")
    return int(cleaned)


def _shown(text: str) -> str:
    """A value the person gave, quoted, and cut short: a 5,000-digit one fills no screen."""
    return repr(text) if len(text) <= 40 else f"{text[:30]!r}… ({len(text):,} characters)"


def limits_from_env(environ: Mapping[str, str] = os.environ) -> Limits:
    """Each SERKIT_MAX_DOCUMENT_* that is set, else the default."""
    chosen: dict[str, int] = {}
    for name, variable in ENV.items():
        value = environ.get(variable, "").strip()
        if not value:
            continue
        try:
            chosen[name] = parse_size(value) if name == "bytes" else parse_count(value)
        except DocumentError as exc:
            raise BadLimit(f"{variable}: {exc}") from None
    return Limits(**chosen)


def how_to_raise(name: str, example: str) -> str:
    """How the person raises limit `name`: the one sentence every refusal ends with."""
    return f"to allow more, pass {FLAGS[name]} {example} or set {ENV[name]}={example}"


_REFUSALS = {
    "nodes": "expands to more than {} nodes",
    "depth": "nests deeper than {} levels",
    "aliases": "holds more than {} shared references",
}


def over_limit(name: str, limits: Limits) -> str:
    """`expands to more than 1,000 nodes (the limit; to allow more, pass …)`."""
    limit = getattr(limits, name)
    return f"{_REFUSALS[name].format(count(limit))} (the limit; {how_to_raise(name, 'N')})"


# --- the grant: what the person at the command line allows this process ------------------


@dataclass(frozen=True)
class Grant:
    """What the person allowed: the limits, and whether a pickle (which runs code) may load."""

    limits: Limits
    allow_pickle: bool = False


_GRANT: ContextVar[Grant | None] = ContextVar("serkit_document_grant", default=None)


def current_grant() -> Grant:
    """What the command being run was given; outside one, the environment's limits, no pickle."""
    return _GRANT.get() or Grant(limits_from_env())


@contextlib.contextmanager
def granting(grant: Grant) -> Iterator[Grant]:
    """Run the block under `grant`: documents built inside it (fixtures too) read it."""
    token = _GRANT.set(grant)
    try:
        yield grant
    finally:
        _GRANT.reset(token)


def limits_with(overrides: Mapping[str, int | None]) -> Limits:
    """The environment's limits, with each override (a command-line flag) that was given."""
    given = {name: value for name, value in overrides.items() if value is not None}
    return replace(limits_from_env(), **given)


# --- the tree a parsed document stands for -------------------------------------------------

# What a container holds, for measure_tree: how many leaves (scalars and keys), the
# containers inside it with the key or index that reaches each, and a duplicated key
# (NO_DUPLICATE when there is none).
Contents = tuple[int, Iterable[tuple[Any, Any]], Any]
NO_DUPLICATE = object()


@dataclass(frozen=True)
class Shape:
    """The tree a document stands for, as every codec walks it."""

    nodes: int
    depth: int  # containers on the longest path; 0 for a lone scalar
    aliases: int  # references to a container already counted
    duplicate_path: str | None = None  # where the first mapping with a repeated key is
    duplicate_key: Any = None
    duplicates: int = 0  # mappings with a repeated key


class LimitExceeded(Exception):
    """The document crosses a limit; the message lacks only the file's name."""


def format_path(keys: list[Any]) -> str:
    """`['jobs'][0]`: subscripts that reach the spot from the document."""
    return "".join(f"[{key!r}]" for key in keys)


def measure_tree(
    root: Any,
    contents: Callable[[Any], Contents | None],
    limits: Limits,
    *,
    shared: bool = True,
) -> Shape:
    """Count the tree `root` stands for, refusing it (LimitExceeded) once it crosses `limits`.

    `contents(x)` describes a container, or returns None for a leaf. With `shared`, the
    same container may be reached more than once (YAML aliases, pickle's memo): its size
    is computed once and added at every reference, so the cost follows the graph, not the
    tree, and a container that holds itself is refused. Without it (JSON and msgpack make
    a new object for every value), nothing is remembered.
    """
    top = contents(root)
    if top is None:
        return Shape(nodes=1, depth=0, aliases=0)
    finished: dict[int, tuple[int, int]] = {}  # a shared container's (nodes, height)
    open_ids: set[int] = set()  # the containers on the current path
    # One frame per open container: [id, key, children, nodes so far, tallest child].
    stack: list[list[Any]] = []
    keys: list[Any] = []
    nodes = aliases = duplicates = depth = 0
    first_duplicate: tuple[str, Any] | None = None

    def enter(node_id: int, key: Any, described: Contents) -> None:
        nonlocal nodes, duplicates, first_duplicate
        leaves, inner, duplicate = described
        if len(stack) >= limits.depth:
            raise LimitExceeded(over_limit("depth", limits))
        nodes += 1 + leaves
        if nodes > limits.nodes:
            raise LimitExceeded(over_limit("nodes", limits))
        if duplicate is not NO_DUPLICATE:
            duplicates += 1
            if first_duplicate is None:
                first_duplicate = (format_path([*keys[1:], key] if stack else []), duplicate)
        stack.append([node_id, key, iter(inner), 1 + leaves, 0])
        keys.append(key)
        if shared:
            open_ids.add(node_id)

    enter(id(root), None, top)
    while stack:
        frame = stack[-1]
        for key, child in frame[2]:
            child_id = id(child)
            known = finished.get(child_id) if shared else None
            if known is not None:
                size, height = known
                aliases += 1
                if aliases > limits.aliases:
                    raise LimitExceeded(over_limit("aliases", limits))
                if len(stack) + height > limits.depth:
                    raise LimitExceeded(over_limit("depth", limits))
                nodes += size
                if nodes > limits.nodes:
                    raise LimitExceeded(over_limit("nodes", limits))
                frame[3] += size
                frame[4] = max(frame[4], height)
                continue
            if shared and child_id in open_ids:
                raise LimitExceeded(
                    f"refers to itself at {format_path([*keys[1:], key])} (through a YAML "
                    "alias or a pickle's memo): it has no finite tree for a codec to walk"
                )
            described = contents(child)
            if described is not None:
                enter(child_id, key, described)
                break
            nodes += 1  # a leaf after all
            frame[3] += 1
        else:
            node_id, _, _, size, tallest = stack.pop()
            keys.pop()
            height = tallest + 1
            if shared:
                open_ids.discard(node_id)
                finished[node_id] = (size, height)
            if stack:
                stack[-1][3] += size
                stack[-1][4] = max(stack[-1][4], height)
            else:
                depth = height
    path, key = first_duplicate if first_duplicate is not None else (None, None)
    return Shape(nodes, depth, aliases, path, key, duplicates)


# A JSON string, escapes and all: what json_nodes leaves out of its count.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def json_nodes(data: bytes, limits: Limits) -> int:
    """At most how many nodes the JSON text `data` parses to, counted from its bytes before
    any object is built; LimitExceeded past `limits.nodes`.

    Every value but the first follows a `,` or opens a container (its first item), and
    every key precedes a `:`. Counting those bytes is C-fast; where the count crosses the
    limit, it is made again without the strings' contents, which may hold any of them."""

    def counted(text: bytes) -> int:
        return 1 + sum(text.count(mark) for mark in (b",", b":", b"{", b"["))

    nodes = counted(data)
    if nodes > limits.nodes:
        nodes = counted(_JSON_STRING.sub(b'""', data))
        if nodes > limits.nodes:
            raise LimitExceeded(over_limit("nodes", limits))
    return nodes


_CONTAINERS = (list, tuple, dict, set, frozenset)


def python_contents(
    duplicated: Mapping[int, tuple[Any, Any]] | None = None,
) -> Callable[[Any], Contents | None]:
    """`contents` for parsed Python data.

    `duplicated` maps id(dict) to (that dict, a key it repeated), as the parser saw them.
    """
    repeated = duplicated or {}

    # Each container's children are counted, then walked lazily: a list of (key, child)
    # pairs made up front would double the memory a list of twenty million dicts takes.
    def contents(obj: Any) -> Contents | None:
        if isinstance(obj, dict):
            inner = sum(1 for v in obj.values() if isinstance(v, _CONTAINERS))
            marked = repeated.get(id(obj))
            duplicate = marked[1] if marked is not None else NO_DUPLICATE
            pairs = ((k, v) for k, v in obj.items() if isinstance(v, _CONTAINERS))
            return 2 * len(obj) - inner, pairs, duplicate
        if isinstance(obj, (list, tuple, set, frozenset)):
            inner = sum(1 for x in obj if isinstance(x, _CONTAINERS))
            keyed = enumerate(obj) if isinstance(obj, (list, tuple)) else ((None, x) for x in obj)
            pairs = ((i, x) for i, x in keyed if isinstance(x, _CONTAINERS))
            return len(obj) - inner, pairs, NO_DUPLICATE
        return None

    return contents
