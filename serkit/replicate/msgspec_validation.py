"""Post 006: msgspec's "JSON Serialization & Validation" benchmark beside today's run of it.

msgspec's benchmarks page (2023-12-08) times four validation libraries on one JSON message
of 1,000 files and directories: encoding the typed objects, and decoding the message into
them with validation. serkit times its four schema codecs of the same libraries on its
``file-tree`` fixture, a document of the same shape, with the machinery every post uses
(:func:`.measure.measure_timings`). The claims are the page's: msgspec fastest at both,
its lead in encode plus decode over each library (the page: ~6x, ~10x, ~12x), each
operation's order, and its memory (not measured here: replicate times calls).
"""

from __future__ import annotations

from typing import Any

from serkit import units
from serkit.codecs.registry import get_codec
from serkit.errors import SerkitError
from serkit.replicate.claims import Claim, Side, judge_one_document
from serkit.replicate.measure import Key, Measured, measure_timings
from serkit.replicate.published import (
    POST_006,
    POST_006_DECODE,
    POST_006_ENCODE,
    POST_006_MEMORY,
    PublishedFigures,
)
from serkit.replicate.tables import Table, one_document_spec, timing_table
from serkit.schemas.pinned import fixture_schema

FIXTURE = POST_006_ENCODE.fixture
REFERENCE = POST_006.reference
OTHERS = tuple(codec for codec in POST_006.labels if codec != REFERENCE)
OPERATIONS = ("dumps", "loads", "round_trip")
# The page's own words for msgspec's lead in encode plus decode, beside the chart's ratio.
PAGE_SAYS = {"mashumaro-orjson": "~6x", "cattrs-orjson": "~10x", "pydantic-json": "~12x"}

# Encode plus decode, as the page's "total" bars add them.
POST_006_TOTAL = PublishedFigures(
    post="006",
    title="encode and decode time",
    unit="ms",
    note="the chart's total: encode plus decode",
    fixture=FIXTURE,
    values={
        codec: POST_006_ENCODE.values[codec] + POST_006_DECODE.values[codec]
        for codec in POST_006.labels
    },
    unavailable_values={
        name: POST_006_ENCODE.unavailable_values[name] + POST_006_DECODE.unavailable_values[name]
        for name in POST_006_ENCODE.unavailable_values
    },
)
PUBLISHED = {"dumps": POST_006_ENCODE, "loads": POST_006_DECODE, "round_trip": POST_006_TOTAL}

DOCUMENT_NOTE = (
    "the document: serkit's file-tree fixture, 1,000 files and directories from its own "
    "seeded generator in the shape msgspec's generator describes (msgspec's message was "
    "another of that shape); its content and its schema are pinned by sha256"
)
STATISTIC_NOTE = (
    "then: timeit autorange's best run over its calls, each library in a process of its "
    "own; now: the median of interleaved rounds, and each ratio the median of the per-round "
    "ratios (serkit.stats.median_paired_ratio)"
)
OMITTED_NOTE = (
    "absent fields: then every library left out the fields at their defaults; now msgspec "
    "and pydantic leave out the absent ones (UNSET, exclude_unset), while mashumaro and "
    "cattrs, over dataclasses that have every field, write them as null, so their payloads "
    "are larger (the sizes table)"
)
CLASSES_NOTE = (
    "mashumaro then: a DataClassORJSONMixin; now: its ORJSONEncoder and ORJSONDecoder over "
    "dataclasses. cattrs then: attrs classes and its orjson converter; now: that converter "
    "over dataclasses. msgspec: Structs; pydantic: models (TypeAdapter's dump_json and "
    "validate_json)"
)


def schema_note() -> str:
    """Then the page's hand-written classes; now the schema serkit pins for the document."""
    try:
        schema = fixture_schema(FIXTURE)
    except SerkitError as exc:
        now = f"now: no schema ({exc})"
    else:
        now = (
            f"now: the schema serkit derives from the document (sha256 {schema.sha256[:12]}…), "
            f"the same for all four libraries: File and Directory merged into one record per "
            f"depth of the tree ({len(schema.records())} records), each one's own fields "
            "optional; type and permissions plain strings; timestamps datetimes"
        )
    return (
        "the schema: then classes written for each library, File | Directory a tagged union, "
        f"recursive, permissions an enum, timestamps datetimes; {now}"
    )


def versions_note() -> str:
    """The libraries then (the page's) and now (this run's)."""
    now = []
    for codec in POST_006.labels:
        try:
            found = get_codec(codec)
        except SerkitError:
            now.append(f"{codec} not installed")
        else:
            now.append(f"{found.library} {found.version}")
    return (
        f"then: {', '.join(POST_006.labels.values())}, on CPython 3.11; now: "
        f"{', '.join(now)}, on this machine (see the run's host and load)"
    )


def keys() -> list[Key]:
    """Every (codec, fixture, operation) the post times: 4 codecs x 3 operations."""
    return [(codec, FIXTURE, operation) for operation in OPERATIONS for codec in POST_006.labels]


def tables(measured: Measured) -> list[Table]:
    """Encode, decode, and both: published beside measured, each over msgspec's; then sizes."""
    result = []
    for operation, published in PUBLISHED.items():
        spec = one_document_spec(
            published, operation, 1e3, unavailable=published.unavailable_values
        )
        table = timing_table(POST_006, spec, measured, "")
        table.notes[:0] = [f"published: {published.note}", STATISTIC_NOTE]
        table.notes += [DOCUMENT_NOTE, schema_note(), CLASSES_NOTE, versions_note()]
        result.append(table)
    sizes = _sizes(measured)
    if sizes is not None:
        result.append(sizes)
    return result


def _sizes(measured: Measured) -> Table | None:
    """Each library's payload here: the page published none, so measured only."""
    sizes = {c: measured.sizes.get((c, FIXTURE)) for c in POST_006.labels}
    reference = sizes[REFERENCE]
    if not any(sizes.values()):
        return None
    table = Table(
        "size of the encoded message (measured only: the page gives none)",
        ["codec", "the post's name", "measured (B)", f"measured / {REFERENCE}"],
    )
    for codec, size in sizes.items():
        norm = size / reference if size is not None and reference else None
        why = measured.failed.get((codec, FIXTURE), "not measured")
        table.add(
            [codec, POST_006.labels[codec], size, norm],
            [codec, POST_006.labels[codec], units.count(size) if size else why, units.number(norm)],
        )
    table.notes += ["measured (B) is the payload the asv suite times", OMITTED_NOTE]
    return table


def claims() -> list[Claim]:
    """The page's claims, read off its charts and its text."""
    found = [
        Claim(
            "msgspec encodes fastest of the four",
            tuple(((REFERENCE, "dumps"), (codec, "dumps")) for codec in OTHERS),
        ),
        Claim(
            "msgspec decodes and validates fastest of the four",
            tuple(((REFERENCE, "loads"), (codec, "loads")) for codec in OTHERS),
        ),
    ]
    total = POST_006_TOTAL.values
    for codec in OTHERS:
        factor = total[codec] / total[REFERENCE]
        found.append(
            Claim(
                f"msgspec encodes and decodes at least {factor:.3g}x as fast as "
                f"{POST_006.labels[codec].split(' ')[0]} (the page: {PAGE_SAYS[codec]})",
                (((REFERENCE, "round_trip"), (codec, "round_trip")),),
                site_factors={0: factor},
                digits=3,
            )
        )
    for operation, what in (("dumps", "encode"), ("loads", "decode")):
        values = PUBLISHED[operation].values
        ordered = sorted(values, key=lambda codec: values[codec])
        pairs = tuple(
            ((faster, operation), (slower, operation))
            for faster, slower in zip(ordered, ordered[1:])
        )
        found.append(Claim(f"{what}, fastest first: {' < '.join(ordered)}", pairs))
    found.append(
        Claim(
            "msgspec uses a fraction of the memory of the others",
            tuple(((REFERENCE, "memory"), (codec, "memory")) for codec in OTHERS),
        )
    )
    return found


def published_of(side: Side, _site: int) -> float | None:
    codec, operation = side
    figures = POST_006_MEMORY if operation == "memory" else PUBLISHED[operation]
    return figures.values.get(codec)


def judge(measured: Measured) -> list[dict[str, Any]]:
    """Every claim's verdict: then from the page's figures, now from `measured`."""
    return judge_one_document(claims(), published_of, measured, FIXTURE)


def replicate(rounds: int, desc: str = "post 006") -> dict[str, Any]:
    """The post's tables and judged claims, from a run of `rounds` interleaved rounds."""
    measured = measure_timings(keys(), rounds, desc)
    return {
        "tables": [table.as_dict() for table in tables(measured)],
        "claims": judge(measured),
        "claims_from": "the page's charts, each claim read off them, and its text's multiples; "
        "its memory claim is not measured here (replicate times calls; serkit bench measures "
        "memory per call)",
    }
