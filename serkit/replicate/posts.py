"""Replicate the posts: each published table beside today's run of the same experiment.

Machines differ, so the tables compare shapes, not absolute times: both sides divided by
one reference codec of the post, the ranking then and now, and a verdict on each claim
the post made. Sizes are deterministic and compared directly. This module holds the four
seed posts and :func:`run`; post 005, orjson's README, is :mod:`.orjson_readme`, and post
006, msgspec's validation benchmark, :mod:`.msgspec_validation`. The parts
are :mod:`.measure` (timing as the asv suite does), :mod:`.tables`, :mod:`.claims`,
:mod:`.document` (the saved JSON) and :mod:`.render`.
"""

from __future__ import annotations

import os
import timeit
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from serkit import units
from serkit.codecs.registry import get_codec
from serkit.errors import SerkitError
from serkit.inputs.fixtures import FIXTURES, get_fixture, load_fixture
from serkit.inputs.sources import source_path
from serkit.replicate import msgspec_validation, orjson_readme
from serkit.replicate.claims import (
    CLAIMS_LEGEND,
    VERDICTS,
    Claim,
    Side,
    judge_claim,
    judge_one_document,
)
from serkit.replicate.document import provenance
from serkit.replicate.document import save as save  # re-exported: the CLI imports it from here
from serkit.replicate.measure import SAMPLE_TARGET_S, Key, Measured, measure_timings
from serkit.replicate.published import (
    POST_000,
    POST_000_DUMPS,
    POST_000_LOADS,
    POST_000_SIZES,
    POST_002,
    POST_002_RATE,
    POST_002_SIZE,
    POST_003,
    POST_003_DECODE,
    POST_003_ENCODE,
    POST_004,
    POST_004_LOAD,
    POST_005,
    POST_005_DOCUMENTS,
    POST_006,
    POSTS,
    Post,
    as_disk_kib,
)
from serkit.replicate.render import render as render  # re-exported: the CLI imports it from here
from serkit.replicate.tables import (
    LARGE_SIZE_DIFFERENCE,
    Cell,
    Table,
    TimingSpec,
    one_document_spec,
    sizes_single,
    timing_table,
)
from serkit.results.hosts import load_average

DEFAULT_ROUNDS = 21
SLOW_DEFAULT_ROUNDS = 7  # with --slow: one round at 100,000 records takes about 20 s here
MIN_ROUNDS = 3  # fewer gives no quartiles worth the name
SWEEP = (10, 100, 1_000, 10_000, 100_000)  # post 000's list lengths


class UnknownPost(SerkitError, KeyError):
    """No replicated post has that id."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Options:
    rounds: int = DEFAULT_ROUNDS
    slow: bool = False


def _statistic(rounds: int) -> str:
    return (
        f"median of {rounds} interleaved rounds, spread as the interquartile range (IQR); "
        f"each sample repeats the asv suite's timed body for at least "
        f"{units.seconds(SAMPLE_TARGET_S)} and is divided by its number of calls"
    )


def _post_header(post: Post) -> dict[str, Any]:
    return {
        "post": post.id,
        "title": post.title,
        "source": post.source or ", ".join(f"seeds/{seed}" for seed in post.seeds),
        "date": post.date,
        "setup_then": post.setup,
        "reference": post.reference,
    }


def _post_000(options: Options) -> dict[str, Any]:
    post = POST_000
    sites = tuple(n for n in SWEEP if options.slow or not get_fixture(f"random-dicts-{n}").slow)
    skipped = [n for n in SWEEP if n not in sites]
    left_out = "not run: add --slow"
    codecs = list(POST_000_DUMPS.values)
    keys = [
        (codec, f"random-dicts-{n}", operation)
        for n in sites
        for operation in ("dumps", "loads")
        for codec in codecs
    ]
    measured = measure_timings(keys, options.rounds, f"post {post.id}")

    def fixture_of(n: int) -> str:
        return f"random-dicts-{n}"

    tables = []
    for published, operation in ((POST_000_DUMPS, "dumps"), (POST_000_LOADS, "loads")):
        spec = TimingSpec(
            f"{operation} time",
            "ms",
            operation,
            1e3,
            published.values,
            fixture_of,
            site_header="records",
        )
        table = timing_table(post, spec, measured, left_out)
        table.notes.insert(0, f"published: {published.note}")
        tables.append(table)
    tables.append(_sizes_000(post, measured, sites, left_out))
    if skipped:
        for table in tables:
            table.notes.append(
                f"{units.counts(skipped)} records were left out (slow fixtures): add --slow"
            )

    def published_of(side: Side, n: int) -> float | None:
        codec, operation = side
        source = {"dumps": POST_000_DUMPS, "loads": POST_000_LOADS, "size": POST_000_SIZES}
        return source[operation].values[codec].get(n)

    def key_of(side: Side, n: int) -> Key:
        return (side[0], f"random-dicts-{n}", side[1])

    def size_of(side: Side, n: int) -> int | None:
        found = measured.sizes.get((side[0], f"random-dicts-{n}"))
        return as_disk_kib(found) if found is not None else None  # as the post counted

    others = ("pickle-p0", "json", "ujson")
    claims = []
    for operation in ("dumps", "loads"):
        fastest = tuple((("msgpack", operation), (c, operation)) for c in others)
        claims += [
            Claim(f"msgpack {operation} fastest of the four", fastest),
            Claim(
                f"msgpack {operation} an order of magnitude faster than cPickle and json",
                fastest[:2],
                10,
            ),
            Claim(f"msgpack {operation} at least twice as fast as ujson", fastest[2:], 2),
        ]
    claims += [
        Claim(
            "cPickle and json load faster than they dump",
            tuple(((c, "loads"), (c, "dumps")) for c in ("pickle-p0", "json")),
        ),
        Claim(
            "msgpack and ujson dump faster than they load",
            tuple(((c, "dumps"), (c, "loads")) for c in ("msgpack", "ujson")),
        ),
        Claim(
            "msgpack's output is at least 40% smaller than each other codec's",
            tuple((("msgpack", "size"), (c, "size")) for c in others),
            1 / 0.6,
        ),
    ]
    judged = [
        judge_claim(claim, sites, published_of, measured, key_of, size_of, "records")
        for claim in claims
    ]
    return {**_post_header(post), "tables": [t.as_dict() for t in tables], "claims": judged}


# Why a size differs from the post's by more than LARGE_SIZE_DIFFERENCE, where known.
SIZE_EXPLANATIONS_000 = {
    "ujson": "ujson 1.33 wrote floats with at most 10 decimals (its double_precision option); "
    "since 2.0 (2020) ujson writes each float's shortest exact repr, up to 17 digits, "
    "and each record holds 101 floats",
}


def _sizes_000(post: Post, measured: Measured, sites: Sequence[int], left_out: str) -> Table:
    ref = post.reference
    table = Table(
        "size of the serialized message",
        [
            "records",
            "codec",
            "the post's name",
            "published (KiB on disk)",
            "measured (B)",
            "measured (KiB on disk)",
            "difference (%)",
            f"published / {ref}",
            f"measured / {ref}",
            "explanation",
        ],
    )
    values = POST_000_SIZES.values
    for n in SWEEP:
        fixture = f"random-dicts-{n}"
        ref_bytes = measured.sizes.get((ref, fixture))
        for codec, published_by_n in values.items():
            pub = published_by_n[n]
            pub_norm = pub / values[ref][n]
            size = measured.sizes.get((codec, fixture))
            raw: list[Cell] = [n, codec, post.labels[codec], pub]
            text = [units.count(n), codec, post.labels[codec], units.number(pub)]
            if size is None or n not in sites:
                why = measured.failed.get((codec, fixture)) or left_out
                raw += [None, None, None, pub_norm, None, why]
                text += ["-", "-", "-", units.number(pub_norm), "-", why]
            else:
                kib = as_disk_kib(size)
                difference = (kib - pub) / pub * 100
                norm = size / ref_bytes if ref_bytes else None
                large = abs(difference) > LARGE_SIZE_DIFFERENCE * 100
                why = SIZE_EXPLANATIONS_000.get(codec, "unexplained") if large else ""
                raw += [size, kib, round(difference, 2), pub_norm, norm, why]
                text += [units.count(size), units.count(kib), units.signed(difference)]
                text += [units.number(pub_norm)]
                text += [units.number(norm), why]
            table.add(raw, text)
    table.notes += [
        "the post counted space on disk: every published size is a whole number of "
        "4 KiB blocks, so the measured bytes are counted the same way "
        "(serkit.replicate.published.as_disk_kib)",
        "measured (B) is the payload the asv suite times, as its EncodedSize track and "
        "`serkit sizes` report it",
        "the records' random numbers are serkit's seeded ones, not the post's, so even "
        "an unchanged format differs by a few percent; beyond "
        f"{units.percent(LARGE_SIZE_DIFFERENCE)} the row explains why",
    ]
    return table


def _post_002(options: Options) -> dict[str, Any]:
    post = POST_002
    fixture = POST_002_RATE.fixture
    codecs = list(POST_002_RATE.values)
    keys = [(codec, fixture, "round_trip") for codec in codecs]
    measured = measure_timings(keys, options.rounds, f"post {post.id}")
    rate = one_document_spec(POST_002_RATE, "round_trip", 1.0, higher_is_better=True)
    speed = timing_table(post, rate, measured, "")
    speed.notes.insert(0, f"published: {POST_002_RATE.note}; serkit times loads(dumps(record))")
    size = sizes_single(post, POST_002_SIZE.values, fixture, measured, _explain_002(measured))
    size.title = POST_002_SIZE.title
    claims = [
        Claim(
            "pickle round-trips the record faster than msgpack with ExtType",
            ((("pickle-p2", "round_trip"), ("msgpack-ext", "round_trip")),),
        ),
        Claim(
            "msgpack with ExtType packs the record smaller than pickle",
            ((("msgpack-ext", "size"), ("pickle-p2", "size")),),
        ),
    ]

    def published_of(side: Side, _site: int) -> float | None:
        if side[1] == "size":
            return POST_002_SIZE.values.get(side[0])
        value = POST_002_RATE.values.get(side[0])
        return 1 / value if value else None  # a rate, as time per message

    judged = judge_one_document(claims, published_of, measured, fixture)
    return {**_post_header(post), "tables": [size.as_dict(), speed.as_dict()], "claims": judged}


def _explain_002(measured: Measured) -> dict[str, str]:
    """Why serkit's pickle of the record is larger than the post's 83 bytes."""
    pickled = measured.sizes.get(("pickle-p2", "sensor-record"))
    if pickled is None:
        return {}
    record = load_fixture("sensor-record")
    # The post built one vector and passed that same object three times.
    one_vector = record._replace(
        angular_vel=record.linear_accel, magnetic_field=record.linear_accel
    )
    shared = len(get_codec("pickle-p2").dumps(one_vector))
    default = len(get_codec("pickle-p4").dumps(record))
    return {
        "pickle-p2": (
            f"the post passed one vector object three times, and pickle writes a repeated "
            f"object once, then refers back to it: serkit's record holds three equal vectors "
            f"({pickled - shared} B more; with one shared vector it pickles to {shared} B). "
            f"The other {shared - POST_002_SIZE.values['pickle-p2']:.0f} B are the classes' "
            "module and names: serkit.inputs.fixtures ImuSample and Vec3 against the post's "
            "__main__ imu_st and vec_t. (Today's default protocol, 4, gives "
            f"{default} B.)"
        )
    }


def _post_003(options: Options) -> dict[str, Any]:
    post = POST_003
    fixture = POST_003_ENCODE.fixture
    codecs = list(post.labels)
    keys = [(codec, fixture, op) for op in ("dumps", "loads") for codec in codecs]
    measured = measure_timings(keys, options.rounds, f"post {post.id}")
    tables = []
    for published, operation in ((POST_003_ENCODE, "dumps"), (POST_003_DECODE, "loads")):
        spec = one_document_spec(
            published, operation, 15_000, unavailable=published.unavailable_values
        )
        table = timing_table(post, spec, measured, "")
        table.notes.insert(0, f"published: {published.note}")
        table.notes.append(
            "measured: seconds per call times 15,000; ranks count only codecs timed then and now"
        )
        tables.append(table)
    others = [c for c in codecs if c != "msgpack"]
    claims = [
        Claim(
            "ujson encodes faster than binary cPickle and msgpack",
            tuple((("ujson", "dumps"), (c, "dumps")) for c in ("pickle-p2", "msgpack")),
        ),
        Claim(
            "msgpack decodes fastest (of the libraries timed today)",
            tuple((("msgpack", "loads"), (c, "loads")) for c in others),
        ),
        Claim(
            "binary cPickle decodes faster than ujson",
            ((("pickle-p2", "loads"), ("ujson", "loads")),),
        ),
        Claim(
            "binary cPickle is faster than ascii cPickle, encoding and decoding",
            tuple((("pickle-p2", op), ("pickle-p0", op)) for op in ("dumps", "loads")),
        ),
    ]

    def published_of(side: Side, _site: int) -> float | None:
        table = POST_003_ENCODE if side[1] == "dumps" else POST_003_DECODE
        return table.values.get(side[0])

    judged = judge_one_document(claims, published_of, measured, fixture)
    return {**_post_header(post), "tables": [t.as_dict() for t in tables], "claims": judged}


def _post_004(options: Options) -> dict[str, Any]:
    post = POST_004
    fixture = POST_004_LOAD.fixture
    codecs = list(POST_004_LOAD.values)
    keys = [(codec, fixture, "loads") for codec in codecs]
    measured = measure_timings(keys, options.rounds, f"post {post.id}")
    spec = one_document_spec(POST_004_LOAD, "loads", 1e3)
    table = timing_table(post, spec, measured, "")
    table.notes.insert(0, f"published: {POST_004_LOAD.note}")
    yaml_bytes = measured.sizes.get(("yaml", fixture))
    if yaml_bytes is not None:
        table.notes.append(
            f"the document: {units.bytes_exact(yaml_bytes)} as YAML here, rebuilt from the pinned "
            "congress-legislators file (the post's senators of 2016 are not recorded)"
        )
    table.notes.append(
        "yaml times PyYAML's SafeLoader and yaml-c its CSafeLoader; in 2016 yaml.load "
        "defaulted to the full Loader (also pure Python)"
    )
    table.notes.append("cPickle's default protocol was 0, timed as pickle-p0")
    others = [c for c in codecs if c != "msgpack"]
    claims = [
        Claim("msgpack loads fastest", tuple((("msgpack", "loads"), (c, "loads")) for c in others)),
        Claim("ujson loads faster than json", ((("ujson", "loads"), ("json", "loads")),)),
        Claim(
            "PyYAML's C loader is faster than its pure-Python loader",
            ((("yaml-c", "loads"), ("yaml", "loads")),),
        ),
        Claim(
            "YAML loads slowest, even with the C loader",
            tuple(
                ((c, "loads"), ("yaml-c", "loads")) for c in codecs if c not in ("yaml", "yaml-c")
            ),
        ),
        Claim("cPickle loads slower than json", ((("json", "loads"), ("pickle-p0", "loads")),)),
    ]
    judged = judge_one_document(
        claims, lambda side, _site: POST_004_LOAD.values.get(side[0]), measured, fixture
    )
    post_dict = {**_post_header(post), "tables": [table.as_dict()], "claims": judged}
    post_dict["claims_from"] = "the post states its findings as a table: each claim reads one off"
    return post_dict


def _post_005(options: Options) -> dict[str, Any]:
    return {**_post_header(POST_005), **orjson_readme.replicate(options.rounds)}


def _post_006(options: Options) -> dict[str, Any]:
    return {**_post_header(POST_006), **msgspec_validation.replicate(options.rounds)}


RUNNERS: Mapping[str, Callable[[Options], dict[str, Any]]] = {
    "000/001": _post_000,
    "002": _post_002,
    "003": _post_003,
    "004": _post_004,
    "005": _post_005,
    "006": _post_006,
}
# The fixtures built from a fetched source, per post: checked before any timing starts.
SOURCED_FIXTURES = {"004": (POST_004_LOAD.fixture,), "005": tuple(POST_005_DOCUMENTS)}
ALIASES = {"000": "000/001", "001": "000/001"}


def post_ids() -> list[str]:
    return list(RUNNERS)


def resolve_post(name: str) -> str:
    """A post's id from what a user typed: "000", "001" and "000/001" are one post."""
    found = ALIASES.get(name.strip(), name.strip())
    if found not in RUNNERS:
        raise UnknownPost(
            f"unknown post {name!r}; known posts: {', '.join(RUNNERS)} (000 and 001 are one post)"
        )
    return found


def run(posts: Sequence[str] | None = None, options: Options | None = None) -> dict[str, Any]:
    """Replicate `posts` (default: all) and return the document `--format json` prints."""
    options = options or Options()
    chosen = [resolve_post(p) for p in posts] if posts else list(RUNNERS)
    chosen = list(dict.fromkeys(chosen))
    if options.rounds < MIN_ROUNDS:
        raise SerkitError(f"--rounds must be at least {MIN_ROUNDS}, not {options.rounds}")
    for post in chosen:
        for fixture in SOURCED_FIXTURES.get(post, ()):
            source = FIXTURES[fixture].source
            if source is not None:
                source_path(source)  # a missing source fails now, before minutes of timing
    load_before = load_average()
    started = timeit.default_timer()
    results = [RUNNERS[post](options) for post in chosen]
    wall = timeit.default_timer() - started
    load_after = load_average()
    codecs = (codec for post in chosen for codec in POSTS[post].labels)
    return {
        **provenance(codecs),
        "statistic": _statistic(options.rounds),
        "rounds": options.rounds,
        "slow": options.slow,
        "wall_s": round(wall, 1),
        "load": {
            "cpus": os.cpu_count(),
            "before": list(load_before) if load_before else None,
            "after": list(load_after) if load_after else None,
        },
        "verdicts": dict(VERDICTS),
        "claims_legend": CLAIMS_LEGEND,
        "posts": results,
    }
