"""Sizes and fidelity: measured once per codec release, Python and document, then reused.

An encoded size, a compressed size and whether a round trip gives back what went in
cannot change while the codec's release and the call serkit makes of it, the Python and
the document's content stay the same. So the asv suite measures them for the whole
selection in one process (asv's `setup_cache`, shared by every facts class: `FactsBenchmark`)
instead of preparing each pair in a process of its own, and keeps each pair's facts under
a key of exactly those things (`facts_key`), in FACTS_DIR_ENV or the user's cache. A new
release, another Python or a changed document is a new key, measured afresh; the values
still land in every run's asv results, as tracks.

Each pair is written to the store as soon as it is measured, so a crash in the one
process (a codec that kills the interpreter on some document) keeps the pairs before it;
the crash itself fails that run's facts, which asv reports.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from asv_runner.benchmarks.mark import SkipNotImplemented

from serkit.checks.fidelity import EXACT, LOSSY, check_round_trip
from serkit.codecs.registry import codec_names, get_codec, registry
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.inputs.fixtures import fixture_names
from serkit.inputs.hashing import content_hash
from serkit.schemas.pinned import fixture_schema
from serkit.suite.case_benchmark import CaseBenchmark
from serkit.suite.cases import COMPRESSORS, SLOW_TIMEOUT_S, Selection, compressor_versions
from serkit.suite.preparation import load_granted, prepare_object

FACTS_DIR_ENV = "SERKIT_FACTS_DIR"  # where the facts are kept; "off" measures every time
# Part of every key: a change to what is measured or how makes every stored fact stale.
FACTS_FORMAT = 2  # 2: key_order_only


@dataclass(frozen=True)
class PairFacts:
    """One pair's deterministic facts; a None value says why in `not_measured`."""

    encoded_bytes: int | None = None
    compressed_bytes: dict[str, int] = field(default_factory=dict)
    exact: int | None = None  # 1: exact round trip, 0: lossy
    key_order_only: int | None = None  # of a lossy one, 1: only dict key order was lost
    not_encoded: str = ""  # why there is no size
    not_judged: str = ""  # why there is no fidelity verdict ("unsupported: ...", "error: ...")


def facts_dir() -> Path | None:
    """The store: FACTS_DIR_ENV, else the user cache's serkit/facts; None when turned off."""
    configured = os.environ.get(FACTS_DIR_ENV, "").strip()
    if configured.lower() == "off":
        return None
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("serkit")) / "facts"


def facts_key(
    codec: str,
    fixture_sha256: str,
    schema_sha256: str | None = None,
    measure: Mapping[str, Any] | None = None,
) -> str:
    """What a pair's facts depend on, hashed: the codec's release, implementation and calls,
    this Python's build, the compressors' releases, the document's content hash and, for a
    schema codec, its schema's. Another measure kept in the same store (instruction
    counts) names itself and how it measures in `measure`: its keys never meet the facts'."""
    bound = get_codec(codec)
    described = {
        "format": FACTS_FORMAT,
        "codec": codec,
        "library": bound.library,
        "version": bound.version,
        "implementation": bound.implementation,
        "calls": [bound.summary, *(config.options for config in bound.configs)],
        "python": [platform.python_implementation(), sys.version],
        "document": fixture_sha256,
        "schema": schema_sha256,
        "compressors": compressor_versions(),
    }
    if measure is not None:
        described["measure"] = dict(measure)
    text = json.dumps(described, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def measure_pair(codec: str, fixture: str) -> PairFacts:
    """The pair's sizes (as the timed benchmarks encode it) and its round trip's verdict."""
    try:
        case = prepare_object(codec, fixture, load_granted(fixture), decode=False)
    except SerkitError as exc:
        sizes: dict[str, Any] = {"not_encoded": str(exc)}
    else:
        compressed = {name: len(compress(case.payload)) for name, compress in COMPRESSORS.items()}
        sizes = {"encoded_bytes": len(case.payload), "compressed_bytes": compressed}
    checked = check_round_trip(codec, fixture, load_granted(fixture))
    if checked.status in (EXACT, LOSSY):
        exact = checked.status == EXACT
        only_order = None if exact else int(checked.key_order_only)
        return PairFacts(**sizes, exact=int(exact), key_order_only=only_order)
    return PairFacts(**sizes, not_judged=f"{checked.status}: {checked.detail}")


def stored_path(key: str) -> Path | None:
    """Where the value under `key` is kept; None when the store is turned off."""
    store = facts_dir()
    return store / key[:2] / f"{key}.json" if store else None


def read_stored(path: Path) -> Any | None:
    """The JSON kept at `path`; None when missing or unreadable (measured again, written over)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_stored(path: Path, data: Any) -> None:
    """Keep `data` at `path`, whole or not at all (a concurrent reader never sees half)."""
    atomic_write(path, json.dumps(data), sync=False)  # in a timed run: whole, not durable


def document_sha256(fixture: str, hashes: dict[str, str] | None = None) -> str:
    """The content hash of the document a pair runs on (`hashes` remembers it by fixture)."""
    hashes = {} if hashes is None else hashes
    if fixture not in hashes:
        hashes[fixture] = content_hash(load_granted(fixture))
    return hashes[fixture]


def pair_key(
    codec: str,
    fixture: str,
    measure: Mapping[str, Any] | None = None,
    hashes: dict[str, str] | None = None,
) -> str:
    """`facts_key` of a pair of the grid; SerkitError when the codec or document is missing."""
    document = document_sha256(fixture, hashes)
    return facts_key(codec, document, schema_sha256(codec, fixture), measure)


def _read(path: Path) -> PairFacts | None:
    data = read_stored(path)
    try:
        return PairFacts(**data) if isinstance(data, dict) else None
    except TypeError:
        return None  # missing or unreadable: measured again, and written over


def _write(path: Path, facts: PairFacts) -> None:
    write_stored(path, asdict(facts))


def schema_sha256(codec: str, fixture: str) -> str | None:
    """The schema a schema codec runs under on `fixture` (a user's replaced, or a derivation
    changed, is measured again); None for the others."""
    if not registry.spec(codec).needs_schema:
        return None
    try:
        return fixture_schema(fixture).sha256
    except SerkitError as exc:  # the measurement says why; a schema found later is a new key
        return f"none: {type(exc).__name__}"


def gather(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], PairFacts]:
    """Every pair's facts: from the store where its key is there, else measured and stored."""
    hashes: dict[str, str] = {}
    out: dict[tuple[str, str], PairFacts] = {}
    for codec, fixture in pairs:
        try:
            key = pair_key(codec, fixture, hashes=hashes)
        except SerkitError as exc:  # not installed, or the document cannot be built
            out[codec, fixture] = PairFacts(not_encoded=str(exc), not_judged=str(exc))
            continue
        path = stored_path(key)
        found = _read(path) if path else None
        if found is None:
            found = measure_pair(codec, fixture)
            if path:
                _write(path, found)
        out[codec, fixture] = found
    return out


def selected_pairs(selection: Selection) -> list[tuple[str, str]]:
    """The pairs a run's selection takes (as `Selection.excludes` decides)."""
    return [
        (codec, fixture)
        for codec in codec_names()
        for fixture in fixture_names()
        if selection.excludes(codec, fixture) is None
    ]


class FactsBenchmark(CaseBenchmark):
    """Base of the facts and size tracks: one `setup_cache` (one key for asv: defined here
    once) gathers every selected pair's facts; each track reads its pair's."""

    inputs = "nothing"  # the facts were measured by setup_cache

    def setup_cache(self) -> Mapping[tuple[str, str], PairFacts]:
        return gather(selected_pairs(Selection.from_env()))

    setup_cache.timeout = SLOW_TIMEOUT_S  # type: ignore[attr-defined]  # asv reads it

    @staticmethod
    def pair(facts: Mapping[tuple[str, str], PairFacts], codec: str, fixture: str) -> PairFacts:
        found = facts.get((codec, fixture))
        if found is None:  # selected by -b, but not by the selection setup_cache saw
            raise SkipNotImplemented(f"{codec} x {fixture} is not in this run's selection")
        return found
