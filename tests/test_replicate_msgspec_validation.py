from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from serkit import codec_names, get_codec
from serkit.inputs.fixtures import content_hash, get_fixture, load_fixture
from serkit.replicate import msgspec_validation
from serkit.replicate.claims import VERDICTS
from serkit.replicate.document import load, save
from serkit.replicate.measure import Key, Measured, Timing, measure_timings
from serkit.replicate.posts import Options, resolve_post, run
from serkit.replicate.published import (
    MSGSPEC_BENCHMARKS_COMMIT,
    POST_006,
    POST_006_DECODE,
    POST_006_ENCODE,
    POST_006_MEMORY,
    POSTS,
)
from serkit.replicate.render import render
from serkit.schemas.derive import derive
from serkit.suite.cases import Selection

# The page's chart data (results_valid), seconds per call and MiB, typed again from the
# page itself so that a slip in published.py shows up here.
PAGE_DATA = {
    "msgspec-struct-json": (0.00016727479400015, 0.0004222057979986857, 0.640625),
    "mashumaro-orjson": (0.000797896412001137, 0.0026786830099990765, 7.1171875),
    "cattrs-orjson": (0.002065396289999626, 0.0033923348699954657, 3.25390625),
    "pydantic-json": (0.0034702956599994648, 0.0038069566000012854, 16.26171875),
    "pydantic v1": (0.01961492505001843, 0.02528851079996457, 10.03125),
}


# --- the declaration ------------------------------------------------------------------------


def test_every_published_figure_is_the_pages_to_six_digits() -> None:
    for codec, (encode_s, decode_s, memory) in PAGE_DATA.items():
        declared = (
            (POST_006_ENCODE, encode_s * 1e3),
            (POST_006_DECODE, decode_s * 1e3),
            (POST_006_MEMORY, memory),
        )
        for figures, expected in declared:
            values = {**figures.values, **figures.unavailable_values}
            assert values[codec] == pytest.approx(expected, rel=5e-6), (figures.title, codec)
    assert POST_006_MEMORY.values["mashumaro-orjson"] == 7.1171875  # exact as published


def test_the_post_names_its_source_and_uses_serkits_ids() -> None:
    assert POSTS["006"] is POST_006 and resolve_post("006") == "006"
    assert "msgspec's documentation" in POST_006.source
    assert MSGSPEC_BENCHMARKS_COMMIT[:12] in POST_006.source and POST_006.date == "2023-12-08"
    for version in ("3.11", "0.18.5", "3.11", "23.2.3", "2.5.2", "1.10.13"):
        assert version in POST_006.setup
    assert set(POST_006.labels) <= set(codec_names())
    assert all(get_codec(codec).needs_schema for codec in POST_006.labels)
    assert POST_006.reference == "msgspec-struct-json"
    assert "pydantic v1" in POST_006.unavailable


def test_the_document_is_one_posts_pinned_and_left_out_of_a_default_run() -> None:
    fixture = get_fixture("file-tree")
    assert fixture.named_only and fixture.origin == "post 006"
    tree = load_fixture("file-tree")
    assert content_hash(tree) == fixture.sha256
    assert derive(tree).sha256 == fixture.schema_sha256

    def nodes(node: dict[str, Any]) -> int:
        return 1 + sum(nodes(child) for child in node.get("contents", []))

    assert nodes(tree) == 1_000 and tree["type"] == "directory"
    assert "one post's document" in (Selection().excludes("orjson", "file-tree") or "")
    assert Selection(fixtures=("file-tree",)).excludes("orjson", "file-tree") is None


def test_keys_cover_every_cell_once() -> None:
    keys = msgspec_validation.keys()
    assert len(keys) == len(set(keys)) == 4 * 3
    assert {fixture for _, fixture, _ in keys} == {"file-tree"}


# --- claims and tables on synthetic timings, with known answers -----------------------------


def _measured(scale: dict[Key, float] | None = None, rounds: int = 5) -> Measured:
    """Every cell at its published time times `scale`, the same in every round."""
    timings: dict[Key, Timing] = {}
    cells = msgspec_validation.keys()
    for codec, fixture, operation in cells:
        published_s = msgspec_validation.PUBLISHED[operation].values[codec] / 1e3
        value = published_s * (scale or {}).get((codec, fixture, operation), 1.0)
        timings[codec, fixture, operation] = Timing((value,) * rounds)
    sizes = {(codec, "file-tree"): 1000 + i for i, codec in enumerate(POST_006.labels)}
    return Measured(timings=timings, sizes=sizes)


def _verdicts(measured: Measured) -> dict[str, str]:
    return {c["claim"]: c["verdict"] for c in msgspec_validation.judge(measured)}


def test_unchanged_figures_keep_every_claim_and_memory_is_not_measured() -> None:
    verdicts = _verdicts(_measured())
    assert len(verdicts) == 2 + 3 + 2 + 1  # fastest x 2, multiples x 3, orders x 2, memory
    memory = "msgspec uses a fraction of the memory of the others"
    assert verdicts.pop(memory) == "not measured"
    assert set(verdicts.values()) == {"still holds"}
    multiple = next(c for c in msgspec_validation.judge(_measured()) if "~6x" in c["claim"])
    assert multiple["claim"].startswith("msgspec encodes and decodes at least 5.9x as fast as")
    assert "5.90x" in multiple["then"]


def test_a_faster_pydantic_breaks_its_multiple_and_the_decode_order_only() -> None:
    # pydantic's decode twice as fast as published: 1.90 ms, ahead of cattrs' 3.39 ms.
    verdicts = _verdicts(_measured({("pydantic-json", "file-tree", "loads"): 0.5}))
    assert verdicts["decode, fastest first: " + " < ".join(POST_006.labels)] == "no longer holds"
    pydantic = next(c for c in verdicts if "(the page: ~12x)" in c)
    assert verdicts[pydantic] == "still holds"  # round_trip is timed on its own: unchanged
    assert verdicts["msgspec decodes and validates fastest of the four"] == "still holds"
    both = {("pydantic-json", "file-tree", op): 0.5 for op in ("loads", "round_trip")}
    assert _verdicts(_measured(both))[pydantic] == "no longer holds"


def test_tables_put_published_and_measured_beside_each_other() -> None:
    encode, decode, total, sizes = msgspec_validation.tables(
        _measured({("cattrs-orjson", "file-tree", "dumps"): 2})
    )
    assert [t.title for t in (encode, decode, total)] == [
        "encode time",
        "decode and validate time",
        "encode and decode time",
    ]
    for table in (encode, decode, total):
        assert all(len(row) == len(table.headers) for row in table.rows + table.text_rows)
        assert any(note.startswith("the schema: then classes written") for note in table.notes)
        assert any(note.startswith("then: msgspec 0.18.5") for note in table.notes)
    col = {h: i for i, h in enumerate(encode.headers)}
    rows = {r[col["the post's name"]]: r for r in encode.rows}
    assert rows["cattrs 23.2.3"][col["published (ms)"]] == pytest.approx(2.06540)
    assert rows["cattrs 23.2.3"][col["measured (ms, median)"]] == pytest.approx(2 * 2.06540)
    assert rows["pydantic v1"][col["codec"]] is None  # published, not replicable
    sized = {r[0]: r for r in sizes.rows}
    assert sized["mashumaro-orjson"][2] == 1001 and sized["msgspec-struct-json"][3] == 1.0
    assert not any(h.startswith("published") for h in sizes.headers)


def test_nothing_measured_is_not_measured() -> None:
    assert set(_verdicts(Measured()).values()) == {"not measured"}


def test_schema_codecs_keep_their_own_typed_objects_when_timed_together() -> None:
    keys = [(codec, "small-dict", "dumps") for codec in ("msgspec-struct-json", "mashumaro-orjson")]
    measured = measure_timings(keys, rounds=1, desc="test")
    assert set(measured.timings) == set(keys) and not measured.failed


# --- the document ---------------------------------------------------------------------------


@pytest.fixture
def document(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`serkit replicate 006` with synthetic timings in place of a measurement."""
    monkeypatch.setattr(msgspec_validation, "measure_timings", lambda *_args: _measured())
    return run(["006"], Options(rounds=3))


def test_the_document_validates_and_renders(document: dict[str, Any], tmp_path: Path) -> None:
    (found,) = document["posts"]
    assert found["post"] == "006" and found["reference"] == "msgspec-struct-json"
    assert found["source"] == POST_006.source and found["date"] == "2023-12-08"
    assert all(c["verdict"] in VERDICTS for c in found["claims"])
    assert load(save(document, tmp_path / "replication.json")) == json.loads(json.dumps(document))
    markdown = render(document, markdown=True)
    assert "## Post 006: msgspec's benchmarks: JSON serialization & validation" in markdown
    assert "[still holds] msgspec encodes fastest of the four" in render(document)
