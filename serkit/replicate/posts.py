"""Replicate the posts: each published table beside today's run of the same experiment.

Machines differ, so the tables compare shapes, not absolute times: both sides divided by
one reference codec of the post, the ranking then and now, and a verdict on each claim
the post made. Sizes are deterministic and compared directly.

Timings reuse the asv suite's inputs and timed body: :func:`serkit.suite.cases.prepare` builds
each pair, and a sample repeats ``Case.operation`` in whole bodies of
``Case.inner_loops`` calls until it lasts about :data:`SAMPLE_TARGET_S` (asv's default
sample time), timed by :mod:`timeit` as asv does. Samples interleave round by round
across all of a post's measurements, so load from other jobs falls on every codec alike,
and a comparison between two codecs uses the per-round ratios of their samples.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import socket
import statistics
import sys
import textwrap
import timeit
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Union

from tqdm import tqdm

from serkit import __version__
from serkit.checkout import git_commit, project_root
from serkit.codecs.registry import get_codec
from serkit.errors import SerkitError
from serkit.inputs.fixtures import FIXTURES, get_fixture, load_fixture, source_path
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
    POSTS,
    Post,
    as_disk_kib,
)
from serkit.suite.cases import Case, prepare

SCHEMA = 1
SAMPLE_TARGET_S = 0.010  # asv's default sample_time
DEFAULT_ROUNDS = 21
SLOW_DEFAULT_ROUNDS = 7  # with --slow: one round at 100,000 records takes about 20 s here
MIN_ROUNDS = 3  # fewer gives no quartiles worth the name
# A size further than this from the post's is explained in its row, or flagged.
LARGE_SIZE_DIFFERENCE = 0.05
TERMINAL_COLUMN_WIDTH = 44  # characters; longer cells wrap in --format table
SWEEP = (10, 100, 1_000, 10_000, 100_000)  # post 000's list lengths

# How a claim's then and now read.
CLAIMS_LEGEND = (
    "`a vs b: Nx`: b's time over a's, so above 1 a is faster; now, the median of the "
    "per-round ratios, with their interquartile range in brackets. For sizes, how much "
    "smaller a's output is than b's. A claim holds when the whole IQR clears its threshold "
    "(1, unless the claim names a factor) and fails when the whole IQR falls short; "
    "otherwise the difference is within noise."
)

# Every verdict a claim can get, with what it means: the report shows these.
VERDICTS: Mapping[str, str] = {
    "still holds": "true in the post's figures and, beyond the noise, in today's",
    "no longer holds": "true in the post's figures; today's show otherwise, beyond the noise",
    "within noise": "today's difference is within the measured noise: no winner either way",
    "mixed": "holds at some list lengths or for some codecs and not others (see now)",
    "holds now": "not true in the post's own figures, but true today",
    "never held": "not true in the post's own figures, nor today",
    "not measured": "nothing it needs was measured in this run",
}


class UnknownPost(SerkitError, KeyError):
    """No replicated post has that id."""

    def __str__(self) -> str:
        return str(self.args[0])


class ReplicationFileError(SerkitError):
    """A saved replication document is missing, corrupt, or not one serkit wrote."""


# --- measuring ------------------------------------------------------------------------

Key = tuple[str, str, str]  # (codec, fixture, operation)


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile), inclusive of the extremes."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


@dataclass(frozen=True)
class Timing:
    """One measurement: seconds per call, one sample per round."""

    samples: tuple[float, ...]

    @property
    def quartiles(self) -> tuple[float, float, float]:
        return _quartiles(self.samples)


@dataclass
class Measured:
    """What one post's run produced: timings, payload sizes, and what could not run."""

    timings: dict[Key, Timing] = field(default_factory=dict)
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)  # (codec, fixture) -> B
    failed: dict[tuple[str, str], str] = field(default_factory=dict)  # (codec, fixture) -> why

    def ratios(self, winner: Key, loser: Key) -> list[float] | None:
        """Per round, the loser's time over the winner's: above 1, the winner was faster."""
        a, b = self.timings.get(winner), self.timings.get(loser)
        if a is None or b is None:
            return None
        return [lose / win for win, lose in zip(a.samples, b.samples)]


def _calls_per_sample(case: Case, operation: str) -> int:
    """Whole suite bodies (inner_loops calls each) lasting about SAMPLE_TARGET_S."""
    inner = case.inner_loops(operation)
    body_s = timeit.Timer(case.operation(operation)).timeit(inner)
    return inner * max(1, math.ceil(SAMPLE_TARGET_S / max(body_s, 1e-9)))


def _bar(total: int, desc: str, unit: str) -> Any:
    # On stderr, and only for people: pipes and CI logs get no bar.
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, leave=False)


def measure(keys: Sequence[Key], rounds: int, desc: str = "measuring") -> Measured:
    """Prepare each pair as the asv suite does, then time every key once per round."""
    measured = Measured()
    cases: dict[tuple[str, str], Case] = {}
    shared: dict[str, Any] = {}
    pairs = list(dict.fromkeys((codec, fixture) for codec, fixture, _ in keys))
    with _bar(len(pairs), f"{desc}: preparing", "pair") as bar:
        for codec, fixture in pairs:
            try:
                case = prepare(codec, fixture)
            except SerkitError as exc:  # not installed, or cannot encode it: a row says so
                measured.failed[codec, fixture] = str(exc)
            else:
                # Builds are equal; keeping one per fixture saves ~1 GB at 100,000 records.
                case = replace(case, obj=shared.setdefault(fixture, case.obj))
                cases[codec, fixture] = case
                measured.sizes[codec, fixture] = len(case.payload)
            bar.update()
    runnable = [key for key in keys if key[:2] in cases]
    calls = {key: cases[key[:2]].operation(key[2]) for key in runnable}
    numbers = {key: _calls_per_sample(cases[key[:2]], key[2]) for key in runnable}
    samples: dict[Key, list[float]] = {key: [] for key in runnable}
    with _bar(rounds * len(runnable), desc, "sample") as bar:
        for round_ in range(rounds):
            # Rotated each round, so no codec always runs first (or right after another).
            shift = round_ % max(1, len(runnable))
            for key in runnable[shift:] + runnable[:shift]:
                number = numbers[key]
                samples[key].append(timeit.Timer(calls[key]).timeit(number) / number)
                bar.update()
    measured.timings = {key: Timing(tuple(values)) for key, values in samples.items()}
    return measured


# --- formatting -----------------------------------------------------------------------

Cell = Union[float, int, str, None]


def _num(value: float | None) -> str:
    """Three significant digits, thousands separated; '-' for nothing."""
    if value is None:
        return "-"
    size = abs(value)
    if isinstance(value, int):
        return f"{value:,}"
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _sig2(value: float) -> str:
    """Two significant digits, never in exponent form: 0.066, 1.0, 12, 386."""
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:#.2g}"


def _times(ratio: float) -> str:
    return f"{_sig2(ratio)}x"


def _sites(values: Iterable[int]) -> str:
    return ", ".join(f"{v:,}" for v in values)


def _rank(values: Mapping[str, float], higher_is_better: bool = False) -> dict[str, int]:
    ordered = sorted(values, key=lambda name: values[name], reverse=higher_is_better)
    return {name: place for place, name in enumerate(ordered, start=1)}


@dataclass
class Table:
    """One table of a post, as the JSON document holds it."""

    title: str
    headers: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    text_rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, raw: list[Cell], text: list[str]) -> None:
        self.rows.append(raw)
        self.text_rows.append(text)

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "headers": self.headers,
            "rows": self.rows,
            "text_rows": self.text_rows,
            "notes": self.notes,
        }


# --- the shape of a timing table ------------------------------------------------------


@dataclass(frozen=True)
class TimingSpec:
    """How one published timing table maps onto measurements."""

    title: str
    unit: str  # the post's unit, used for both columns
    operation: str  # "dumps", "loads" or "round_trip"
    scale: float  # seconds per call -> the post's unit
    published: Mapping[str, Mapping[int, float]]  # codec -> site -> value
    fixture_of: Callable[[int], str]
    site_header: str | None = None  # None: the post timed one document
    higher_is_better: bool = False  # a rate: the unit is per second
    unavailable: Mapping[str, float] = field(default_factory=dict)  # post's name -> value


def _measured_value(spec: TimingSpec, seconds: float) -> float:
    return spec.scale / seconds if spec.higher_is_better else seconds * spec.scale


def _timing_table(post: Post, spec: TimingSpec, measured: Measured, left_out: str) -> Table:
    ref = post.reference
    unit = spec.unit
    site_headers = [spec.site_header] if spec.site_header else []
    headers = [
        *site_headers,
        "codec",
        "the post's name",
        f"published ({unit})",
        f"published / {ref}",
        "rank then",
        f"measured ({unit}, median)",
        f"IQR low ({unit})",
        f"IQR high ({unit})",
        f"measured / {ref}",
        "rank now",
    ]
    table = Table(spec.title, headers)
    all_sites = sorted({site for values in spec.published.values() for site in values})
    for site in all_sites:
        fixture = spec.fixture_of(site)
        keys = {codec: (codec, fixture, spec.operation) for codec in spec.published}
        timed = {c: measured.timings[k] for c, k in keys.items() if k in measured.timings}
        medians = {c: t.quartiles[1] for c, t in timed.items()}
        published = {c: v[site] for c, v in spec.published.items() if site in v}
        rank_now = _rank(medians)  # by time, whatever the unit: fastest first
        rank_then = _rank({c: v for c, v in published.items() if c in timed}, spec.higher_is_better)
        site_cells: list[Cell] = [site] if spec.site_header else []
        site_text = [f"{site:,}"] if spec.site_header else []
        for codec in spec.published:
            pub = published.get(codec)
            pub_ref = published.get(ref)
            pub_norm = pub / pub_ref if pub is not None and pub_ref else None
            raw: list[Cell] = [*site_cells, codec, post.labels[codec], pub, pub_norm]
            raw.append(rank_then.get(codec))
            text = [*site_text, codec, post.labels[codec], _num(pub), _num(pub_norm)]
            text.append(str(rank_then.get(codec, "-")))
            timing = timed.get(codec)
            if timing is None:
                why = measured.failed.get((codec, fixture)) or left_out
                raw += [None, None, None, None, None]
                text += [why, "", "", "", ""]
            else:
                q1, median, q3 = timing.quartiles
                low, high = sorted((_measured_value(spec, q1), _measured_value(spec, q3)))
                ratios = measured.ratios(keys[codec], keys[ref])  # ref's time / this one's
                norm = None
                if ratios is not None:
                    faster = statistics.median(ratios)
                    norm = faster if spec.higher_is_better else 1 / faster
                value = _measured_value(spec, median)
                raw += [value, low, high, norm, rank_now[codec]]
                text += [_num(value), _num(low), _num(high), _num(norm), str(rank_now[codec])]
            table.add(raw, text)
        for name, value in spec.unavailable.items():
            why = post.unavailable.get(name, "no serkit codec")
            raw = [*site_cells, None, name, value, value / published[ref], None]
            raw += [None, None, None, None, None]
            text = [*site_text, "-", name, _num(value), _num(value / published[ref]), "-"]
            text += [why, "", "", "", ""]
            table.add(raw, text)
        order = _order(medians, measured, {c: keys[c] for c in timed})
        if order:
            where = f" at {site:,} {spec.site_header}" if spec.site_header else ""
            table.notes.append(f"times now{where}, fastest first: {order}")
    return table


def _order(medians: Mapping[str, float], measured: Measured, keys: Mapping[str, Key]) -> str:
    """`a < b ≈ c`: fastest first, ≈ where the per-round ratios' IQR includes 1."""
    ordered = sorted(medians, key=lambda codec: medians[codec])
    if not ordered:
        return ""
    parts = [ordered[0]]
    for faster, slower in zip(ordered, ordered[1:]):
        ratios = measured.ratios(keys[faster], keys[slower]) or [1.0]
        q1, _, q3 = _quartiles(ratios)
        parts += ["≈" if q1 <= 1 <= q3 else "<", slower]
    return " ".join(parts)


# --- claims ---------------------------------------------------------------------------

Side = tuple[str, str]  # (codec, operation); operation "size" for encoded size


@dataclass(frozen=True)
class Claim:
    """What a post said: each winner beats its loser by at least `factor`.

    For times, beating means taking less time; for sizes, taking fewer bytes. The factor
    is the loser's over the winner's: 1 for "faster", 10 for "an order of magnitude".
    """

    text: str
    pairs: tuple[tuple[Side, Side], ...]
    factor: float = 1.0


# The claim's status at one site, and for all its pairs together.
HOLDS, FAILS, NOISE = "holds", "fails", "noise"


def _side_name(side: Side, claim: Claim) -> str:
    operations = {s[1] for pair in claim.pairs for s in pair}
    return side[0] if len(operations) == 1 else f"{side[0]} {side[1]}"


def _ratio_text(ratio: float, size: bool) -> str:
    return f"{1 - 1 / ratio:.0%} smaller" if size else _times(ratio)


def judge(
    claim: Claim,
    sites: Sequence[int],
    published: Callable[[Side, int], float | None],
    measured: Measured,
    key_of: Callable[[Side, int], Key],
    size_of: Callable[[Side, int], int | None],
    site_label: str = "",
) -> dict[str, Any]:
    """The claim's verdict: then from the post's figures, now from this run's."""
    then_ok = True
    then_parts: list[str] = []
    now_parts: list[str] = []
    site_status: dict[int, str] = {}
    for winner, loser in claim.pairs:
        size = winner[1] == "size"
        name = f"{_side_name(winner, claim)} vs {_side_name(loser, claim)}"
        then_cells, now_cells = [], []
        for site in sites:
            at = f" at {site:,}" if site_label else ""
            pub_w, pub_l = published(winner, site), published(loser, site)
            if pub_w is not None and pub_l is not None:
                ratio = pub_l / pub_w
                then_ok = then_ok and ratio >= claim.factor
                then_cells.append(_ratio_text(ratio, size) + at)
            status, text = _now(claim, winner, loser, site, measured, key_of, size_of, size)
            if status is None:
                continue
            now_cells.append(text + at)
            previous = site_status.get(site, HOLDS)
            site_status[site] = _weakest(previous, status)
        then_parts.append(f"{name}: {', '.join(then_cells)}")
        if now_cells:
            now_parts.append(f"{name}: {', '.join(now_cells)}")
    statuses = set(site_status.values())
    if not statuses:
        verdict = "not measured"
    elif len(statuses) > 1:
        verdict = "mixed"
        labels = ((HOLDS, "holds"), (NOISE, "within noise"), (FAILS, "does not hold"))
        by_status = {
            label: [site for site, s in site_status.items() if s == status]
            for status, label in labels
        }
        summary = "; ".join(
            f"{label} at {_sites(found)} {site_label}".rstrip()
            for label, found in by_status.items()
            if found
        )
        now_parts.insert(0, summary)
    else:
        status = statuses.pop()
        verdict = {
            (True, HOLDS): "still holds",
            (True, FAILS): "no longer holds",
            (False, HOLDS): "holds now",
            (False, FAILS): "never held",
        }.get((then_ok, status), "within noise")
    # A size claim states its share in words; a time claim's factor is spelled out.
    sizes_only = all(winner[1] == "size" for winner, _ in claim.pairs)
    threshold = "" if claim.factor == 1 or sizes_only else f" ({_times(claim.factor)} or more)"
    return {
        "claim": claim.text + threshold,
        "then": "; ".join(then_parts) + ("" if then_ok else " (the post's own figures fall short)"),
        "now": "; ".join(now_parts) if now_parts else "not measured in this run",
        "verdict": verdict,
    }


def _now(
    claim: Claim,
    winner: Side,
    loser: Side,
    site: int,
    measured: Measured,
    key_of: Callable[[Side, int], Key],
    size_of: Callable[[Side, int], int | None],
    size: bool,
) -> tuple[str | None, str]:
    if size:
        bytes_w, bytes_l = size_of(winner, site), size_of(loser, site)
        if bytes_w is None or bytes_l is None:
            return None, ""
        ratio = bytes_l / bytes_w
        return (HOLDS if ratio >= claim.factor else FAILS), _ratio_text(ratio, True)
    ratios = measured.ratios(key_of(winner, site), key_of(loser, site))
    if ratios is None:
        return None, ""
    q1, median, q3 = _quartiles(ratios)
    status = HOLDS if q1 >= claim.factor else FAILS if q3 < claim.factor else NOISE
    return status, f"{_times(median)} [IQR {_sig2(q1)}-{_sig2(q3)}]"


def _weakest(first: str, second: str) -> str:
    """Two statuses at one site: any failure fails, else any noise is noise."""
    statuses = {first, second}
    return FAILS if FAILS in statuses else NOISE if NOISE in statuses else HOLDS


# --- the posts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    rounds: int = DEFAULT_ROUNDS
    slow: bool = False


def _statistic(rounds: int) -> str:
    return (
        f"median of {rounds} interleaved rounds, spread as the interquartile range (IQR); "
        f"each sample repeats the asv suite's timed body for at least "
        f"{SAMPLE_TARGET_S * 1e3:g} ms and is divided by its number of calls"
    )


def _post_header(post: Post) -> dict[str, Any]:
    return {
        "post": post.id,
        "title": post.title,
        "source": ", ".join(f"seeds/{seed}" for seed in post.seeds),
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
    measured = measure(keys, options.rounds, f"post {post.id}")

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
        table = _timing_table(post, spec, measured, left_out)
        table.notes.insert(0, f"published: {published.note}")
        tables.append(table)
    tables.append(_sizes_000(post, measured, sites, left_out))
    if skipped:
        for table in tables:
            table.notes.append(
                f"{_sites(skipped)} records were left out (slow fixtures): add --slow"
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
        judge(claim, sites, published_of, measured, key_of, size_of, "records") for claim in claims
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
            text = [f"{n:,}", codec, post.labels[codec], _num(pub)]
            if size is None or n not in sites:
                why = measured.failed.get((codec, fixture)) or left_out
                raw += [None, None, None, pub_norm, None, why]
                text += ["-", "-", "-", _num(pub_norm), "-", why]
            else:
                kib = as_disk_kib(size)
                difference = (kib - pub) / pub * 100
                norm = size / ref_bytes if ref_bytes else None
                large = abs(difference) > LARGE_SIZE_DIFFERENCE * 100
                why = SIZE_EXPLANATIONS_000.get(codec, "unexplained") if large else ""
                raw += [size, kib, round(difference, 2), pub_norm, norm, why]
                text += [f"{size:,}", f"{kib:,}", f"{difference:+.1f}", _num(pub_norm)]
                text += [_num(norm), why]
            table.add(raw, text)
    table.notes += [
        "the post counted space on disk: every published size is a whole number of "
        "4 KiB blocks, so the measured bytes are counted the same way "
        "(serkit.replicate.published.as_disk_kib)",
        "measured (B) is the payload the asv suite times, as its EncodedSize track and "
        "`serkit sizes` report it",
        "the records' random numbers are serkit's seeded ones, not the post's, so even "
        f"an unchanged format differs by a few percent; beyond {LARGE_SIZE_DIFFERENCE:.0%} "
        "the row explains why",
    ]
    return table


def _single_site(fixture: str) -> Callable[[int], str]:
    return lambda _site: fixture


def _one_document_spec(figures: Any, operation: str, scale: float, **options: Any) -> TimingSpec:
    """A post that timed one document: its one "site" is 0."""
    return TimingSpec(
        figures.title,
        figures.unit,
        operation,
        scale,
        {codec: {0: value} for codec, value in figures.values.items()},
        _single_site(figures.fixture),
        **options,
    )


def _judge_one_document(
    claims: Sequence[Claim],
    published_of: Callable[[Side, int], float | None],
    measured: Measured,
    fixture: str,
) -> list[dict[str, Any]]:
    return [
        judge(
            claim,
            (0,),
            published_of,
            measured,
            lambda side, _site: (side[0], fixture, side[1]),
            lambda side, _site: measured.sizes.get((side[0], fixture)),
        )
        for claim in claims
    ]


def _post_002(options: Options) -> dict[str, Any]:
    post = POST_002
    fixture = POST_002_RATE.fixture
    codecs = list(POST_002_RATE.values)
    keys = [(codec, fixture, "round_trip") for codec in codecs]
    measured = measure(keys, options.rounds, f"post {post.id}")
    rate = _one_document_spec(POST_002_RATE, "round_trip", 1.0, higher_is_better=True)
    speed = _timing_table(post, rate, measured, "")
    speed.notes.insert(0, f"published: {POST_002_RATE.note}; serkit times loads(dumps(record))")
    size = _sizes_single(post, POST_002_SIZE.values, fixture, measured, _explain_002(measured))
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

    judged = _judge_one_document(claims, published_of, measured, fixture)
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


def _sizes_single(
    post: Post,
    published: Mapping[str, float],
    fixture: str,
    measured: Measured,
    explanations: Mapping[str, str],
) -> Table:
    ref = post.reference
    table = Table(
        "size",
        [
            "codec",
            "the post's name",
            "published (B)",
            "measured (B)",
            "difference (%)",
            f"published / {ref}",
            f"measured / {ref}",
            "explanation",
        ],
    )
    ref_bytes = measured.sizes.get((ref, fixture))
    for codec, pub in published.items():
        size = measured.sizes.get((codec, fixture))
        pub_norm = pub / published[ref]
        raw: list[Cell] = [codec, post.labels[codec], pub]
        text = [codec, post.labels[codec], _num(pub)]
        if size is None:
            why = measured.failed.get((codec, fixture), "not measured")
            raw += [None, None, pub_norm, None, why]
            text += ["-", "-", _num(pub_norm), "-", why]
        else:
            difference = (size - pub) / pub * 100
            norm = size / ref_bytes if ref_bytes else None
            large = abs(difference) > LARGE_SIZE_DIFFERENCE * 100
            why = explanations.get(codec, "unexplained") if large else ""
            raw += [size, round(difference, 2), pub_norm, norm, why]
            text += [f"{size:,}", f"{difference:+.1f}", _num(pub_norm), _num(norm), why]
        table.add(raw, text)
    table.notes.append("measured (B) is the payload the asv suite times (its EncodedSize track)")
    return table


def _post_003(options: Options) -> dict[str, Any]:
    post = POST_003
    fixture = POST_003_ENCODE.fixture
    codecs = list(post.labels)
    keys = [(codec, fixture, op) for op in ("dumps", "loads") for codec in codecs]
    measured = measure(keys, options.rounds, f"post {post.id}")
    tables = []
    for published, operation in ((POST_003_ENCODE, "dumps"), (POST_003_DECODE, "loads")):
        spec = _one_document_spec(
            published, operation, 15_000, unavailable=published.unavailable_values
        )
        table = _timing_table(post, spec, measured, "")
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

    judged = _judge_one_document(claims, published_of, measured, fixture)
    return {**_post_header(post), "tables": [t.as_dict() for t in tables], "claims": judged}


def _post_004(options: Options) -> dict[str, Any]:
    post = POST_004
    fixture = POST_004_LOAD.fixture
    codecs = list(POST_004_LOAD.values)
    keys = [(codec, fixture, "loads") for codec in codecs]
    measured = measure(keys, options.rounds, f"post {post.id}")
    spec = _one_document_spec(POST_004_LOAD, "loads", 1e3)
    table = _timing_table(post, spec, measured, "")
    table.notes.insert(0, f"published: {POST_004_LOAD.note}")
    yaml_bytes = measured.sizes.get(("yaml", fixture))
    if yaml_bytes is not None:
        table.notes.append(
            f"the document: {yaml_bytes:,} B as YAML here, rebuilt from the pinned "
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
    judged = _judge_one_document(
        claims, lambda side, _site: POST_004_LOAD.values.get(side[0]), measured, fixture
    )
    post_dict = {**_post_header(post), "tables": [table.as_dict()], "claims": judged}
    post_dict["claims_from"] = "the post states its findings as a table: each claim reads one off"
    return post_dict


RUNNERS: Mapping[str, Callable[[Options], dict[str, Any]]] = {
    "000/001": _post_000,
    "002": _post_002,
    "003": _post_003,
    "004": _post_004,
}
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


# --- the document ---------------------------------------------------------------------


def _git_commit() -> str | None:
    """The suite commit that ran: the checkout here, else the one serkit was loaded from."""
    try:
        root = project_root()
    except SerkitError:
        root = Path(__file__).resolve().parent
    return git_commit(root)


def _codec_facts(codecs: Iterable[str]) -> dict[str, dict[str, str]]:
    facts = {}
    for name in sorted(set(codecs)):
        try:
            codec = get_codec(name)
        except SerkitError:
            continue  # its rows say why
        facts[name] = {
            "library": codec.library,
            "version": codec.version,
            "implementation": codec.implementation,
        }
    return facts


def run(posts: Sequence[str] | None = None, options: Options | None = None) -> dict[str, Any]:
    """Replicate `posts` (default: all) and return the document `--format json` prints."""
    options = options or Options()
    chosen = [resolve_post(p) for p in posts] if posts else list(RUNNERS)
    chosen = list(dict.fromkeys(chosen))
    if options.rounds < MIN_ROUNDS:
        raise SerkitError(f"--rounds must be at least {MIN_ROUNDS}, not {options.rounds}")
    if "004" in chosen:
        source = FIXTURES[POST_004_LOAD.fixture].source
        if source is not None:
            source_path(source)  # a missing source fails now, before minutes of timing
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    started = timeit.default_timer()
    results = [RUNNERS[post](options) for post in chosen]
    wall = timeit.default_timer() - started
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    codecs = _codec_facts(codec for post in chosen for codec in POSTS[post].labels)
    return {
        "schema": SCHEMA,
        "serkit_version": __version__,
        "git_commit": _git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": {
            facts["library"]: facts["version"]
            for facts in codecs.values()
            if facts["library"] != "stdlib"
        },
        "codecs": codecs,
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


# --- saving and reading ---------------------------------------------------------------

_TOP_KEYS: Mapping[str, type | tuple[type, ...]] = {
    "schema": int,
    "serkit_version": str,
    "git_commit": (str, type(None)),
    "date": str,
    "host": str,
    "python": str,
    "libraries": dict,
    "statistic": str,
    "posts": list,
}
_POST_KEYS = {"post": str, "title": str, "source": str, "tables": list, "claims": list}
_TABLE_KEYS = {"title": str, "headers": list, "rows": list, "text_rows": list, "notes": list}
_CLAIM_KEYS = {"claim": str, "then": str, "now": str, "verdict": str}


def save(document: Mapping[str, Any], path: Path) -> Path:
    """Write `document` to `path` (folders created), whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    partial.replace(path)
    return path


def _check(obj: Any, keys: Mapping[str, type | tuple[type, ...]], where: str) -> str | None:
    if not isinstance(obj, dict):
        return f"{where} is not an object"
    for key, kind in keys.items():
        if key not in obj:
            return f"{where} has no {key!r}"
        if not isinstance(obj[key], kind):
            return f"{where}.{key} has the wrong type ({type(obj[key]).__name__})"
    return None


def _problem(document: Any) -> str | None:
    """What makes `document` not a replication document of this schema, or None."""
    problem = _check(document, _TOP_KEYS, "the document")
    if problem:
        return problem
    if document["schema"] != SCHEMA:
        return f"schema {document['schema']!r}, this serkit reads schema {SCHEMA}"
    for i, post in enumerate(document["posts"]):
        problem = _check(post, _POST_KEYS, f"posts[{i}]")
        if problem:
            return problem
        for j, table in enumerate(post["tables"]):
            where = f"posts[{i}].tables[{j}]"
            problem = _check(table, _TABLE_KEYS, where)
            if problem:
                return problem
            width = len(table["headers"])
            for name in ("rows", "text_rows"):
                if any(not isinstance(row, list) or len(row) != width for row in table[name]):
                    return f"{where}.{name} has a row that does not match its {width} headers"
            if len(table["rows"]) != len(table["text_rows"]):
                return f"{where} has not as many text rows as rows"
        for j, claim in enumerate(post["claims"]):
            problem = _check(claim, _CLAIM_KEYS, f"posts[{i}].claims[{j}]")
            if problem:
                return problem
    return None


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a saved replication document; ReplicationFileError if it is not one."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplicationFileError(f"cannot read {where}: {exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplicationFileError(f"{where} is not valid JSON ({exc})") from exc
    problem = _problem(document)
    if problem:
        raise ReplicationFileError(
            f"{where} is not a serkit replication document: {problem} "
            "(write one with `serkit replicate --save FILE`)"
        )
    assert isinstance(document, dict)
    return document


# --- rendering ------------------------------------------------------------------------


def render(document: Mapping[str, Any], markdown: bool = False) -> str:
    """The document as terminal tables, or as GitHub-flavoured Markdown."""
    from tabulate import tabulate

    lines: list[str] = []
    heading = "## " if markdown else "== "
    lines.append(
        f"{'# ' if markdown else ''}The posts, then and now: {document['python']} on "
        f"{document['host']}, {document['date']}"
    )
    load_ = document.get("load") or {}
    facts = [f"measured: {document['statistic']}"]
    if load_.get("before"):
        facts.append(
            f"load average (1 min) {load_['before'][0]:.2f} before, {load_['after'][0]:.2f} "
            f"after, on {load_['cpus']} CPUs"
        )
    libraries = ", ".join(f"{lib} {ver}" for lib, ver in document["libraries"].items())
    facts.append(f"libraries: {libraries}")
    lines += [("- " if markdown else "") + fact for fact in facts]
    for post in document["posts"]:
        title = f"{heading}Post {post['post']}: {post['title']}"
        lines += ["", title if markdown else f"{title} =="]
        lines.append(f"{'- ' if markdown else ''}source: {post['source']} ({post['date']})")
        lines.append(f"{'- ' if markdown else ''}then: {post['setup_then']}")
        for table in post["tables"]:
            lines += ["", f"{'### ' if markdown else ''}{post['post']}: {table['title']}"]
            if markdown:
                lines.append("")
            rows = table["text_rows"]
            if not markdown:  # a terminal wraps long explanations; Markdown keeps one line
                # By hand: tabulate's own maxcolwidths re-parses "1,000" as a number and fails.
                rows = [
                    [textwrap.fill(cell, TERMINAL_COLUMN_WIDTH) for cell in row] for row in rows
                ]
            lines.append(
                tabulate(
                    rows,
                    headers=table["headers"],
                    tablefmt="github" if markdown else "simple",
                    disable_numparse=True,
                )
            )
            if markdown:
                lines.append("")
            lines += [f"{'- ' if markdown else '  '}{note}" for note in table["notes"]]
        lines += ["", f"{'### ' if markdown else ''}{post['post']}: claims"]
        if markdown:
            rows = [[c["claim"], c["then"], c["now"], c["verdict"]] for c in post["claims"]]
            lines += ["", tabulate(rows, ["claim", "then", "now", "verdict"], tablefmt="github")]
        else:
            for claim in post["claims"]:
                lines.append(f"[{claim['verdict']}] {claim['claim']}")
                lines.append(f"    then: {claim['then']}")
                lines.append(f"    now:  {claim['now']}")
    lines += ["", f"claims: {document.get('claims_legend', CLAIMS_LEGEND)}"]
    lines += ["", "verdicts:"] if not markdown else ["", "Verdicts:", ""]
    for verdict, meaning in document.get("verdicts", VERDICTS).items():
        lines.append(f"{'- ' if markdown else '  '}{verdict}: {meaning}")
    return "\n".join(lines) + "\n"
