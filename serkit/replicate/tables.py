"""A post's tables: the published figures beside today's, both over the post's reference codec."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from serkit import units
from serkit.replicate.measure import Key, Measured
from serkit.replicate.published import Post
from serkit.stats import median_paired_ratio, quartiles

# A size further than this from the post's is explained in its row, or flagged.
LARGE_SIZE_DIFFERENCE = 0.05

Cell = Union[float, int, str, None]


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
    # A site's name where it is not a count (a document), shown in place of the number.
    site_names: Mapping[int, str] = field(default_factory=dict)
    # The post published only values over its reference: no column of its own unit.
    relative_only: bool = False

    def site_cell(self, site: int) -> Cell:
        return self.site_names.get(site, site)

    def site_text(self, site: int) -> str:
        return self.site_names.get(site) or units.count(site)

    def where(self, site: int) -> str:
        """ " at 1,000 records" or " on twitter", for a note about one site."""
        if site in self.site_names:
            return f" on {self.site_names[site]}"
        return f" at {units.count(site)} {self.site_header}" if self.site_header else ""


def measured_value(spec: TimingSpec, seconds: float) -> float:
    return spec.scale / seconds if spec.higher_is_better else seconds * spec.scale


def timing_table(post: Post, spec: TimingSpec, measured: Measured, left_out: str) -> Table:
    ref = post.reference
    unit = spec.unit
    site_headers = [spec.site_header] if spec.site_header else []
    headers = [
        *site_headers,
        "codec",
        "the post's name",
        *([] if spec.relative_only else [f"published ({unit})"]),
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
        site_cells: list[Cell] = [spec.site_cell(site)] if spec.site_header else []
        site_text = [spec.site_text(site)] if spec.site_header else []
        for codec in spec.published:
            pub = published.get(codec)
            pub_ref = published.get(ref)
            pub_norm = pub / pub_ref if pub is not None and pub_ref else None
            raw: list[Cell] = [*site_cells, codec, post.labels[codec]]
            text = [*site_text, codec, post.labels[codec]]
            if not spec.relative_only:
                raw.append(pub)
                text.append(units.number(pub))
            raw += [pub_norm, rank_then.get(codec)]
            text += [units.number(pub_norm), str(rank_then.get(codec, "-"))]
            timing = timed.get(codec)
            if timing is None:
                why = measured.failed.get((codec, fixture)) or left_out
                raw += [None, None, None, None, None]
                text += [why, "", "", "", ""]
            else:
                q1, median, q3 = timing.quartiles
                low, high = sorted((measured_value(spec, q1), measured_value(spec, q3)))
                reference = timed.get(ref)
                norm = None
                if reference is not None:  # how many times faster than the reference
                    faster = median_paired_ratio(reference.samples, timing.samples)
                    norm = faster if spec.higher_is_better else 1 / faster
                value = measured_value(spec, median)
                raw += [value, low, high, norm, rank_now[codec]]
                text += [
                    units.number(value),
                    units.number(low),
                    units.number(high),
                    units.number(norm),
                    str(rank_now[codec]),
                ]
            table.add(raw, text)
        for name, value in spec.unavailable.items():
            why = post.unavailable.get(name, "no serkit codec")
            raw = [*site_cells, None, name, *([] if spec.relative_only else [value])]
            raw += [value / published[ref], None, None, None, None, None, None]
            text = [*site_text, "-", name, *([] if spec.relative_only else [units.number(value)])]
            text += [units.number(value / published[ref]), "-", why, "", "", "", ""]
            table.add(raw, text)
        fastest_first = speed_order(medians, measured, {c: keys[c] for c in timed})
        if fastest_first:
            table.notes.append(f"times now{spec.where(site)}, fastest first: {fastest_first}")
    return table


def speed_order(medians: Mapping[str, float], measured: Measured, keys: Mapping[str, Key]) -> str:
    """`a < b ≈ c`: fastest first, ≈ where the per-round ratios' IQR includes 1."""
    ordered = sorted(medians, key=lambda codec: medians[codec])
    if not ordered:
        return ""
    parts = [ordered[0]]
    for faster, slower in zip(ordered, ordered[1:]):
        ratios = measured.ratios(keys[faster], keys[slower]) or [1.0]
        q1, _, q3 = quartiles(ratios)
        parts += ["≈" if q1 <= 1 <= q3 else "<", slower]
    return " ".join(parts)


def single_site(fixture: str) -> Callable[[int], str]:
    return lambda _site: fixture


def one_document_spec(figures: Any, operation: str, scale: float, **options: Any) -> TimingSpec:
    """A post that timed one document: its one "site" is 0."""
    return TimingSpec(
        figures.title,
        figures.unit,
        operation,
        scale,
        {codec: {0: value} for codec, value in figures.values.items()},
        single_site(figures.fixture),
        **options,
    )


def sizes_single(
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
        text = [codec, post.labels[codec], units.number(pub)]
        if size is None:
            why = measured.failed.get((codec, fixture), "not measured")
            raw += [None, None, pub_norm, None, why]
            text += ["-", "-", units.number(pub_norm), "-", why]
        else:
            difference = (size - pub) / pub * 100
            norm = size / ref_bytes if ref_bytes else None
            large = abs(difference) > LARGE_SIZE_DIFFERENCE * 100
            why = explanations.get(codec, "unexplained") if large else ""
            raw += [size, round(difference, 2), pub_norm, norm, why]
            text += [
                units.count(size),
                units.signed(difference),
                units.number(pub_norm),
                units.number(norm),
                why,
            ]
        table.add(raw, text)
    table.notes.append("measured (B) is the payload the asv suite times (its EncodedSize track)")
    return table
