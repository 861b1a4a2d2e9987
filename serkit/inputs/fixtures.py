"""Fixture documents, rebuilt deterministically from the posts serkit grew from.

Every fixture is the same Python object on every machine, run and Python version.
:func:`fixture_hash` proves it: a sha256 over a type-tagged walk of the object,
pinned per fixture in :data:`FIXTURES` and checked by ``serkit fixtures verify``.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

from serkit.errors import SerkitError, UnknownFixture
from serkit.files import atomic_write
from serkit.inputs.file_tree import FILE_TREE_NODES, file_tree
from serkit.inputs.hashing import content_hash as content_hash  # also imported from here
from serkit.inputs.records import ImuSample as ImuSample  # also imported from here
from serkit.inputs.records import Vec3 as Vec3
from serkit.inputs.sources import (
    CANADA_SOURCE,
    CITM_CATALOG_SOURCE,
    GITHUB_SOURCE,
    SENATE_SOURCE,
    TWITTER_SOURCE,
    Source,
    source_bytes,
)

# Read from here by serkit.cli until it imports them from serkit.inputs.sources.
from serkit.inputs.sources import MIRROR_ENV as MIRROR_ENV
from serkit.inputs.sources import SOURCES as SOURCES
from serkit.inputs.sources import data_dir as data_dir
from serkit.inputs.sources import fetch_source as fetch_source
from serkit.inputs.sources import source_path as source_path
from serkit.inputs.user_fixtures import NO_SCHEMA_PIN as NO_SCHEMA_PIN  # also from here
from serkit.inputs.user_fixtures import USER_ORIGIN, Declaration, declared_fixtures

# --- the documents ---------------------------------------------------------------------

# Post 000's record string, spacing included: it sets the records' encoded sizes.
LOREM = (
    "\n            Lorem ipsum dolor sit amet, consectetur adipiscing\n"
    "            elit. Mauris adipiscing adipiscing placerat.\n"
    "            Vestibulum augue augue,\n"
    "            pellentesque quis sollicitudin id, adipiscing.\n            "
)
RANDOM_DICTS_SEED = 2015  # the year of post 000; any fixed seed would do


def random_dicts(count: int, seed: int = RANDOM_DICTS_SEED) -> list[dict[str, Any]]:
    """Post 000's random record, `count` times, from one seeded stream (so sizes nest)."""
    rng = random.Random(seed)
    records = []
    for _ in range(count):
        floats = {i: i * rng.random() for i in range(100)}
        records.append(
            {
                "string": LOREM,
                "list": list(range(100)),
                "dict": floats,
                "int": rng.randint(-(10**10), 10**10),
                "float": rng.randint(-(10**10), 10**10) * rng.random(),
            }
        )
    return records


def small_dict() -> dict[str, Any]:
    """Post 003's single mixed dict (its string keeps the post's trailing spaces)."""
    return {
        "words": (
            "\n        Lorem ipsum dolor sit amet, consectetur adipiscing \n"
            "        elit. Mauris adipiscing adipiscing placerat. \n"
            "        Vestibulum augue augue, \n"
            "        pellentesque quis sollicitudin id, adipiscing.\n        "
        ),
        "list": list(range(100)),
        "dict": {str(i): "a" for i in range(100)},
        "int": 100,
        "float": 100.123456,
    }


SENSOR_TIMESTAMP = 1550880000.0  # 2019-02-23T00:00:00Z, the post's date, fixed
SENSOR_RATE_HZ = 20  # the rate post 002 sizes its bandwidth for


def sensor_record(timestamp: float = SENSOR_TIMESTAMP) -> ImuSample:
    """Post 002's record: the same vector on all three sensors, as the post sent it."""
    reading = (-1, 1000, 0.123456)
    return ImuSample(Vec3(*reading), Vec3(*reading), Vec3(*reading), timestamp)


def sensor_stream(count: int = 1000) -> list[ImuSample]:
    """`count` records of post 002, one every 1/20 s."""
    return [sensor_record(SENSOR_TIMESTAMP + i / SENSOR_RATE_HZ) for i in range(count)]


SENATE_BIOS_MAX_YAML_BYTES = 48_000  # post 004: "a fairly small (48KB) document"


def senate_bios(mirror: str | None = None) -> list[dict[str, Any]]:
    """Post 004's document: the alphabetically first senators, as many as fit in 48 KB of YAML.

    Senators are members whose latest term is of type "sen", ordered by (last, first)
    name; the size is measured with the `yaml` codec's own call.
    """
    import yaml

    data = source_bytes(SENATE_SOURCE, mirror=mirror)  # checked, then parsed: read once
    members = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    senators = sorted(
        (m for m in members if m["terms"][-1]["type"] == "sen"),
        key=lambda m: (m["name"]["last"], m["name"]["first"]),
    )
    chosen: list[dict[str, Any]] = []
    total = 0
    for senator in senators:
        # A block-style YAML list is the concatenation of its items' one-item lists.
        total += len(yaml.dump([senator], Dumper=yaml.SafeDumper, sort_keys=False).encode())
        if total > SENATE_BIOS_MAX_YAML_BYTES:
            break
        chosen.append(senator)
    return chosen


# --- the fixture registry --------------------------------------------------------------


@dataclass(frozen=True)
class Fixture:
    """A named document, how to build it, and the content hash it must have."""

    name: str
    build: Callable[[], Any]
    sha256: str  # pinned fixture_hash(); a change means results change meaning
    origin: str  # the post it comes from
    description: str
    slow: bool = False  # too large for a default run; opt in with --slow
    # One post's document, not the grid's: a default run leaves it out, --slow or not;
    # a run that names it times it (SERKIT_BENCH_FIXTURES, --fixture).
    named_only: bool = False
    source: Source | None = None  # a fetched file it is derived from
    large: bool = False  # megabytes encoded: its peak memory is worth measuring
    # The sha256 of the schema derived from it (serkit.schemas), beside its own: a change
    # of the inference shows as a mismatch, never as results that silently change meaning.
    # NO_SCHEMA_PIN: no record type fits it; None: not pinned (derived on each use).
    schema_sha256: str | None = None
    # One of your documents with a schema of yours: the JSON Schema, read from its file,
    # whose bytes are checked against their pin first. None: the schema is derived.
    supplied_schema: Callable[[], Any] | None = None
    # For a document slow to derive from its source: the sha256 of its compact JSON bytes
    # (`built_bytes`). A copy of them kept in the data dir, checked against this pin before
    # it is parsed, stands in for the build (serkit.inputs.fixtures.load_fixture).
    built_sha256: str | None = None


# Every list length has the one record type: the schema does not grow with the data.
RANDOM_DICTS_SCHEMA = "63f0d0bd2464951ae17a1a5eaf113710bd62ea4533b69e58398b22d67f0d58f5"


def _random_dicts_fixture(count: int, sha256: str) -> Fixture:
    return Fixture(
        name=f"random-dicts-{count}",
        build=lambda: random_dicts(count),
        sha256=sha256,
        origin="post 000/001",
        description=f"{count:,} random records (Lorem string, 100 ints, 100 int→float, int, float)",
        slow=count >= 10_000,  # 30 MB and more as JSON; pure-Python YAML takes minutes
        large=count >= 1_000,  # 3 MB and more as JSON
        schema_sha256=RANDOM_DICTS_SCHEMA,
    )


def json_document(source: Source) -> Any:
    """A standard JSON corpus, parsed once by the standard library: the one reference parse."""
    return json.loads(source_bytes(source))


def _corpus_fixture(
    name: str,
    source: Source,
    sha256: str,
    schema_sha256: str,
    description: str,
    *,
    slow: bool = False,
) -> Fixture:
    return Fixture(
        name=name,
        build=lambda: json_document(source),
        sha256=sha256,
        origin=f"corpus: {source.filename}",
        description=description,
        slow=slow,
        source=source,
        large=slow,  # the two slow ones are the two over a megabyte
        schema_sha256=schema_sha256,
    )


# What each corpus adds to a quick run, estimated from every codec's dumps and loads on
# it (docs/cost.md): twitter about 5 % and github 1 %, so they join the default grid;
# citm-catalog about 15 % and canada 60 %, nearly all of it pure-Python yaml (2 s and
# 11 s per loads), so they are opt-in like the large random-dicts.
_FIXTURES: dict[str, Fixture] = {
    f.name: f
    for f in (
        _random_dicts_fixture(
            10, "068fbb6ee71547948e6cfcfcca033f93cb4a3a6a49060240b3ebf6a97429c865"
        ),
        _random_dicts_fixture(
            100, "b1726b9676f6ddf95f5de52dc753ec5a813aed84dc5de8b553d7935634f7aaaa"
        ),
        _random_dicts_fixture(
            1_000, "3f2ab4963e6c2d020906c52d8f19510403f458b35bbcc9ed3d0e2be02819f108"
        ),
        _random_dicts_fixture(
            10_000, "90c8fb95a5da1320a81e4618d0b11714e7f959597ce4a79238ec004d5783800c"
        ),
        _random_dicts_fixture(
            100_000, "fbd128b7c98a042890713b7f840589b9630379da3b78b96744c2c108b75ef9cd"
        ),
        Fixture(
            "small-dict",
            small_dict,
            "08c819669c90b86695e02f4028713e0c0d42d631bfbebf306816ed4b6650aa3d",
            "post 003",
            "one mixed dict: string, 100 ints, 100 str→str, int, float",
            schema_sha256="2f95f36501650ab3ba941b6fe60401ccddfea188cf63fa2a0a60cbb837f31d5d",
        ),
        Fixture(
            "sensor-record",
            sensor_record,
            "4bc2180eb2fbc95a83a560bb393b4420aacd1efabc7f0ea455675e4a0a449e7d",
            "post 002",
            "one IMU record: namedtuples of three vectors and a fixed timestamp",
            schema_sha256="e506dba9676f840588210b067b0330c8fbc0d57ae6d2c0474f42b81cac147942",
        ),
        Fixture(
            "sensor-stream",
            sensor_stream,
            "0580f7446950f35f527f3eb97aa12289b345c8c5b7cc4b87085ad195c041d2e7",
            "post 002",
            "1,000 IMU records at 20 Hz",
            schema_sha256="aaad32e21929a758d454495f259e44e3501b299705bbcd71b71eb03d28231cfd",
        ),
        Fixture(
            "senate-bios",
            senate_bios,
            "523fe6ab7515e893875e0ae263a6bdaab4861b89b14a844bb04400348b2d5798",
            "post 004",
            "the first senators by (last, first) name, ~48 KB as YAML",
            source=SENATE_SOURCE,
            schema_sha256="1efac3760b612c2745fa9568c8adb29571b605d5c337c6b4e294ac8d82474e9b",
            built_sha256="72280d62df62c983e0d21afc5ddf83dcc157a0193c4a5b90250434982ad7dfdc",
        ),
        Fixture(
            "file-tree",
            file_tree,
            "5e8b76b82365292d30d2935d95811e4fd8043657a6926d31517fc3ef3a981326",
            "post 006",
            f"{FILE_TREE_NODES:,} files and directories in one tree, with UTC timestamps",
            named_only=True,
            schema_sha256="0f8d3e77c70921508fdbe9391a51f3e1a49d8fccb5696d39c72924c9aeae612c",
        ),
        _corpus_fixture(
            "twitter",
            TWITTER_SOURCE,
            "6926b35bc1f73fedfad05e0a101c6941c898d1f199e06188bdcc424f6b0aeb90",
            "1aedbbd642309197cf5db38532952c38052355a8e4f641623dc327a67703ed87",
            "tweets from the Twitter search API: Unicode text, nested objects, big ids",
        ),
        _corpus_fixture(
            "citm-catalog",
            CITM_CATALOG_SOURCE,
            "74a775a1807fc0c7d97d3cf0df232ecfb9c640fedcc5860900fc6a4f244f94a0",
            "f4ab9e36aaea38869dd51cf49fabe66425087214ce484010681f6fb9d1932596",
            "a ticketing catalogue: int-heavy objects with many repeated keys",
            slow=True,
        ),
        _corpus_fixture(
            "canada",
            CANADA_SOURCE,
            "8fb65ca7a1ece8849069cb92d9e3d74364f4f29d32b9d6ba945f0428f38d5a01",
            "c5e090f54286cb280b1df0e59c9a966f49fb2fd03c2741861befb94f49cca775",
            "Canada's border as GeoJSON: arrays of float coordinate pairs",
            slow=True,
        ),
        _corpus_fixture(
            "github",
            GITHUB_SOURCE,
            "532e8c2df5e37439d407c11984fea1b19efe3280892f735f4d859a4918aa8343",
            "5ba287ed446c0c735a29546bc958c0d1efc317596ba43a848f96c2173b792218",
            "GitHub API responses (orjson's benchmark document): strings, URLs, nulls",
        ),
    )
}
FIXTURES: Mapping[str, Fixture] = MappingProxyType(_FIXTURES)


def fixture_names() -> list[str]:
    """Every fixture id, in registry order (the random-dicts sweep ascending)."""
    return list(_FIXTURES)


def get_fixture(name: str) -> Fixture:
    try:
        return _FIXTURES[name]
    except KeyError:
        raise UnknownFixture(
            f"unknown fixture {name!r}; known fixtures: {', '.join(_FIXTURES)}"
        ) from None


def default_fixture_names(*, slow: bool = False) -> list[str]:
    """The fixtures a run that names none covers: all but the slow ones (unless `slow`)
    and those one post times, which only a run that names them covers."""
    return [f.name for f in _FIXTURES.values() if (slow or not f.slow) and not f.named_only]


def check_fixtures(names: Iterable[str]) -> list[str]:
    """The ids in order, repeats dropped; UnknownFixture for a typo, before any work starts."""
    chosen = list(dict.fromkeys(names))
    for name in chosen:
        get_fixture(name)
    return chosen


# Documents derived from a fetched source, built once per process and verified source
# file: parsing the Senate source takes about 0.3 s, a deep copy of the document 10 ms.
_BUILT_FROM_SOURCE: dict[tuple[str, Path], Any] = {}
# Where a document slow to derive keeps its built copy, under the data dir.
BUILT_FOLDER = "built"


def built_bytes(document: Any) -> bytes:
    """A document as the compact JSON its built copy holds (Fixture.built_sha256)."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _fresh_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A dict whose keys are objects of its own, as the YAML build's are: json shares one
    object among equal keys, which pickle and marshal would encode as shared (the Senate
    document pickled in 33,407 bytes so, 45,587 built)."""
    return {key.encode().decode(): value for key, value in pairs}


def _built_copy(fixture: Fixture) -> Path:
    assert fixture.built_sha256 is not None
    return data_dir() / BUILT_FOLDER / f"{fixture.name}-{fixture.built_sha256[:16]}.json"


def _build(fixture: Fixture) -> Any:
    """`fixture`'s document: from its built copy where that holds the pinned bytes, else
    built from its source, and the copy written for the next process.

    Every asv run's forkserver builds the selected documents before it forks the
    benchmark processes (benchmarks/__init__.py), and serkit's own process builds them
    for its plan: the Senate document from 1 MB of YAML, about 0.3-0.8 s here, where its
    45 KB copy parses in under a millisecond. The copy is
    checked against the pin on its raw bytes before any parser sees them; a copy that
    fails is ignored and written anew."""
    if fixture.built_sha256 is None:
        return fixture.build()
    path = _built_copy(fixture)
    with contextlib.suppress(OSError):
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == fixture.built_sha256:
            return json.loads(data, object_pairs_hook=_fresh_keys)
    document = fixture.build()
    data = built_bytes(document)
    if hashlib.sha256(data).hexdigest() == fixture.built_sha256:
        with contextlib.suppress(OSError):  # a read-only data dir only costs the next build
            atomic_write(path, data)
    return document


def load_fixture(name: str) -> Any:
    """Build fixture `name`. A new object on every call, so callers may not share state."""
    fixture = get_fixture(name)
    if fixture.source is None:
        return fixture.build()
    key = (name, source_path(fixture.source))  # still refuses a missing or changed source
    if key not in _BUILT_FROM_SOURCE:
        _BUILT_FROM_SOURCE[key] = _build(fixture)
    # deepcopy keeps the document's own shared references, so every codec's bytes are the
    # same as from a fresh build (pickle and marshal encode sharing).
    return copy.deepcopy(_BUILT_FROM_SOURCE[key])


def adopt_built(name: str, document: Any) -> None:
    """Take `document`, built by another process from the same source, as `name`'s build.

    For processes where building is slow: under valgrind the Senate document takes about
    15 s of CPU to build, and unpickling it a fraction of that.
    """
    fixture = get_fixture(name)
    if fixture.source is None:
        raise SerkitError(f"{name} is not built from a source; build it with load_fixture")
    _BUILT_FROM_SOURCE[(name, source_path(fixture.source))] = document


# --- the content hash (serkit.inputs.hashing) ------------------------------------------


def fixture_hash(name: str) -> str:
    """The content hash of fixture `name` as built here and now."""
    return content_hash(load_fixture(name))


# --- the user's own documents (serkit.inputs.user_fixtures) ----------------------------


def _user_fixture(declared: Declaration) -> Fixture:
    return Fixture(
        name=declared.id,
        build=declared.build,  # reads the file and checks its content hash, every time
        sha256=declared.sha256,
        origin=USER_ORIGIN,
        description=declared.about,
        slow=declared.slow,
        large=declared.large,
        schema_sha256=declared.schema_sha256,
        supplied_schema=declared.read_schema if declared.schema_file is not None else None,
    )


# After the built-ins; a malformed fixtures.json leaves them out with a warning (not an
# error, which would stop every command and asv's discovery of the whole suite).
for _declared in declared_fixtures():
    _FIXTURES.setdefault(_declared.id, _user_fixture(_declared))
