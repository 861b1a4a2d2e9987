"""A post's claims, and each one's verdict: then from the post's figures, now from today's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from serkit import units
from serkit.replicate.measure import Key, Measured
from serkit.stats import quartiles

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
    "mixed": "holds at some list lengths or on some documents, or for some codecs, and not "
    "others (see now)",
    "holds now": "not true in the post's own figures, but true today",
    "never held": "not true in the post's own figures, nor today",
    "not measured": "nothing it needs was measured in this run",
}

Side = tuple[str, str]  # (codec, operation); operation "size" for encoded size


@dataclass(frozen=True)
class Claim:
    """What a post said: each winner beats its loser by at least `factor`.

    For times, beating means taking less time; for sizes, taking fewer bytes. The factor
    is the loser's over the winner's: 1 for "faster", 10 for "an order of magnitude".
    A claim read off a table of ratios can hold each site to its own factor instead, and
    show its ratios to as many significant digits as the table gave.
    """

    text: str
    pairs: tuple[tuple[Side, Side], ...]
    factor: float = 1.0
    site_factors: Mapping[int, float] = field(default_factory=dict)
    digits: int = 2

    def factor_at(self, site: int) -> float:
        return self.site_factors.get(site, self.factor)


# The claim's status at one site, and for all its pairs together.
HOLDS, FAILS, NOISE = "holds", "fails", "noise"


def _side_name(side: Side, claim: Claim) -> str:
    operations = {s[1] for pair in claim.pairs for s in pair}
    return side[0] if len(operations) == 1 else f"{side[0]} {side[1]}"


def _ratio_text(ratio: float, size: bool, digits: int = 2) -> str:
    return f"{units.percent(1 - 1 / ratio)} smaller" if size else units.times(ratio, digits)


def judge_claim(
    claim: Claim,
    sites: Sequence[int],
    published: Callable[[Side, int], float | None],
    measured: Measured,
    key_of: Callable[[Side, int], Key],
    size_of: Callable[[Side, int], int | None],
    site_label: str = "",
    site_name: Callable[[int], str] | None = None,
) -> dict[str, Any]:
    """The claim's verdict: then from the post's figures, now from this run's.

    Sites are counts (`site_label` names their unit: "at 1,000 records") unless `site_name`
    names each one ("on twitter").
    """

    def at(site: int) -> str:
        if site_name is not None:
            return f" on {site_name(site)}"
        return f" at {units.count(site)}" if site_label else ""

    def where(found: list[int]) -> str:
        if site_name is not None:
            return f"on {', '.join(site_name(site) for site in found)}"
        return f"at {units.counts(found)} {site_label}".rstrip()

    then_ok = True
    then_parts: list[str] = []
    now_parts: list[str] = []
    site_status: dict[int, str] = {}
    for winner, loser in claim.pairs:
        size = winner[1] == "size"
        name = f"{_side_name(winner, claim)} vs {_side_name(loser, claim)}"
        then_cells, now_cells = [], []
        for site in sites:
            pub_w, pub_l = published(winner, site), published(loser, site)
            if pub_w is not None and pub_l is not None:
                ratio = pub_l / pub_w
                then_ok = then_ok and ratio >= claim.factor_at(site)
                then_cells.append(_ratio_text(ratio, size, claim.digits) + at(site))
            status, text = _now(claim, winner, loser, site, measured, key_of, size_of, size)
            if status is None:
                continue
            now_cells.append(text + at(site))
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
            f"{label} {where(found)}" for label, found in by_status.items() if found
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
    threshold = (
        ""
        if claim.factor == 1 or sizes_only or claim.site_factors
        else f" ({units.times(claim.factor, 2)} or more)"
    )
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
        return (HOLDS if ratio >= claim.factor_at(site) else FAILS), _ratio_text(ratio, True)
    ratios = measured.ratios(key_of(winner, site), key_of(loser, site))
    if ratios is None:
        return None, ""
    q1, median, q3 = quartiles(ratios)
    factor = claim.factor_at(site)
    status = HOLDS if q1 >= factor else FAILS if q3 < factor else NOISE
    digits = claim.digits
    spread = f"{units.significant(q1, digits)}-{units.significant(q3, digits)}"
    return status, f"{units.times(median, digits)} [IQR {spread}]"


def _weakest(first: str, second: str) -> str:
    """Two statuses at one site: any failure fails, else any noise is noise."""
    statuses = {first, second}
    return FAILS if FAILS in statuses else NOISE if NOISE in statuses else HOLDS


def judge_one_document(
    claims: Sequence[Claim],
    published_of: Callable[[Side, int], float | None],
    measured: Measured,
    fixture: str,
) -> list[dict[str, Any]]:
    """Each claim of a post that timed one document (its one site is 0)."""
    return [
        judge_claim(
            claim,
            (0,),
            published_of,
            measured,
            lambda side, _site: (side[0], fixture, side[1]),
            lambda side, _site: measured.sizes.get((side[0], fixture)),
        )
        for claim in claims
    ]
