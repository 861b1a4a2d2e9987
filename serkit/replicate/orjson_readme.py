"""Post 005: the latency table in orjson's README (2024-07-02) beside today's run of it.

The README gives each library's dumps and loads time on four corpora as a multiple of
orjson's. serkit times the same five libraries on its fixtures of the same corpora, with
the machinery every post uses (:func:`.measure.measure_timings`), so both sides are ratios
over orjson. The claims are read off the table: orjson fastest everywhere, each library at
least its published multiple of orjson's time, and the others' order on each document.
"""

from __future__ import annotations

from typing import Any

from serkit import units
from serkit.codecs.registry import get_codec
from serkit.errors import SerkitError
from serkit.replicate.claims import Claim, Side, judge_claim
from serkit.replicate.measure import Key, Measured, measure_timings
from serkit.replicate.published import (
    POST_005,
    POST_005_DOCUMENTS,
    POST_005_DUMPS,
    POST_005_LOADS,
    PublishedRatios,
)
from serkit.replicate.tables import Table, TimingSpec, timing_table

FIXTURES = tuple(POST_005_DOCUMENTS)  # a claim's or a table's site i is FIXTURES[i]
SITES = tuple(range(len(FIXTURES)))
PUBLISHED = {"dumps": POST_005_DUMPS, "loads": POST_005_LOADS}
REFERENCE = POST_005.reference
OTHERS = tuple(codec for codec in POST_005.labels if codec != REFERENCE)

BYTES_NOTE = (
    "bytes out, bytes in: orjson's benchmark encoded the str that ujson, rapidjson, "
    "simplejson and json return to UTF-8 bytes, and serkit's codecs do the same "
    "(serkit.codecs.builtin), so each dumps turns the document into bytes as orjson's does, "
    "and each loads starts from bytes"
)
STATISTIC_NOTE = (
    "published / orjson: the ratio of two medians, each library benchmarked on its own; "
    "measured / orjson: the median of the per-round ratios of interleaved samples "
    "(serkit.stats.median_paired_ratio)"
)
LOADS_INPUT_NOTE = (
    "what loads decodes differs: orjson's benchmark gave every library the same bytes, the "
    "corpus file as published (indented, except github.json); serkit's loads decodes each "
    "codec's own dumps output, unindented, where ujson, rapidjson, simplejson and json "
    "escape non-ASCII characters by default and json and simplejson put a space after "
    "',' and ':'"
)


def _site_name(site: int) -> str:
    return FIXTURES[site]


def keys() -> list[Key]:
    """Every (codec, fixture, operation) the post times: 5 codecs x 4 documents x 2."""
    return [
        (codec, fixture, operation)
        for fixture in FIXTURES
        for operation in PUBLISHED
        for codec in POST_005.labels
    ]


def versions_note() -> str:
    """The libraries then (the README's) and now (this run's), and where."""
    now = []
    for codec in POST_005.labels:
        try:
            found = get_codec(codec)
        except SerkitError:
            now.append(f"{codec} not installed")
            continue
        stdlib = found.library == "stdlib"
        now.append(
            f"{codec} (Python {found.version})" if stdlib else f"{found.library} {found.version}"
        )
    return (
        f"then: {', '.join(POST_005.labels.values())}, on a machine the README does not "
        f"describe; now: {', '.join(now)}, on this machine (see the run's host and load)"
    )


def _payloads_note(measured: Measured) -> str | None:
    """How far the codecs' payloads differ on each document (what their loads decode)."""
    parts = []
    for fixture in FIXTURES:
        sizes = [size for (_, at), size in measured.sizes.items() if at == fixture]
        if sizes:
            parts.append(f"{fixture} {units.count(min(sizes))}-{units.count(max(sizes))} B")
    return f"payloads here, smallest to largest codec: {'; '.join(parts)}" if parts else None


def tables(measured: Measured, left_out: str = "") -> list[Table]:
    """The dumps and loads tables: published / orjson beside measured / orjson."""
    result = []
    for operation, published in PUBLISHED.items():
        spec = TimingSpec(
            f"{operation} time relative to orjson's",
            "ms",
            operation,
            1e3,
            {
                codec: {site: by_fixture[FIXTURES[site]] for site in SITES}
                for codec, by_fixture in published.values.items()
            },
            _site_name,
            site_header="document",
            site_names=dict(enumerate(FIXTURES)),
            relative_only=True,
        )
        table = timing_table(POST_005, spec, measured, left_out)
        table.notes[:0] = [f"published: {published.note}", STATISTIC_NOTE, BYTES_NOTE]
        if operation == "loads":
            table.notes.insert(3, LOADS_INPUT_NOTE)
            payloads = _payloads_note(measured)
            if payloads:
                table.notes.insert(4, payloads)
        table.notes.append(versions_note())
        result.append(table)
    return result


def _ranking(published: PublishedRatios, fixture: str) -> Claim:
    """The published order of the libraries other than orjson on one document.

    Libraries with equal published ratios (to the README's one decimal) share a place and
    are not compared with each other; each place must beat the next.
    """
    values = {codec: published.values[codec][fixture] for codec in OTHERS}
    places: list[list[str]] = []
    for codec in sorted(values, key=lambda c: values[c]):
        if places and values[places[-1][0]] == values[codec]:
            places[-1].append(codec)
        else:
            places.append([codec])
    pairs = tuple(
        ((winner, published.operation), (loser, published.operation))
        for faster, slower in zip(places, places[1:])
        for winner in faster
        for loser in slower
    )
    order = " < ".join(" = ".join(place) for place in places)
    return Claim(f"the others' {published.operation} on {fixture}, fastest first: {order}", pairs)


def claims() -> list[tuple[Claim, tuple[int, ...]]]:
    """Each claim read off the README's table, with the documents (sites) it covers."""
    found: list[tuple[Claim, tuple[int, ...]]] = []
    for operation, published in PUBLISHED.items():
        fastest = tuple(((REFERENCE, operation), (codec, operation)) for codec in OTHERS)
        # digits=3: the README's ratios have three significant digits (15.6).
        fastest_claim = Claim(f"orjson {operation} fastest of the five", fastest, digits=3)
        found.append((fastest_claim, SITES))
        for codec in OTHERS:
            multiple = Claim(
                f"{codec} {operation} at least its published multiple of orjson's time",
                (((REFERENCE, operation), (codec, operation)),),
                site_factors={site: published.values[codec][FIXTURES[site]] for site in SITES},
                digits=3,
            )
            found.append((multiple, SITES))
    for published in PUBLISHED.values():
        for site, fixture in enumerate(FIXTURES):
            found.append((_ranking(published, fixture), (site,)))
    return found


def published_of(side: Side, site: int) -> float | None:
    codec, operation = side
    return PUBLISHED[operation].values.get(codec, {}).get(FIXTURES[site])


def judge(measured: Measured) -> list[dict[str, Any]]:
    """Every claim's verdict: then from the README's ratios, now from `measured`."""
    return [
        judge_claim(
            claim,
            sites,
            published_of,
            measured,
            lambda side, site: (side[0], FIXTURES[site], side[1]),
            lambda _side, _site: None,
            # A ranking covers one document, and its text names it.
            site_name=_site_name if len(sites) > 1 else None,
        )
        for claim, sites in claims()
    ]


def replicate(rounds: int, desc: str = "post 005") -> dict[str, Any]:
    """The post's tables and judged claims, from a run of `rounds` interleaved rounds."""
    measured = measure_timings(keys(), rounds, desc)
    return {
        "tables": [table.as_dict() for table in tables(measured)],
        "claims": judge(measured),
        "claims_from": "the README states its findings as a table: each claim reads one off",
    }
