"""Sizes and fidelity, measured once per codec release, Python and document, then reused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from serkit.checks.sizes import measure_fixture
from serkit.suite import facts
from serkit.suite.cases import COMPRESSORS, LEAVE_OUT_ENV, Selection
from serkit.suite.facts import FACTS_DIR_ENV, PairFacts, facts_key, gather, selected_pairs


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(FACTS_DIR_ENV, str(tmp_path / "facts"))
    return tmp_path / "facts"


def test_a_pair_is_measured_once_and_then_read_back(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = gather([("json", "random-dicts-10"), ("orjson", "small-dict")])
    (result,) = measure_fixture("random-dicts-10", ["json"])
    assert first["json", "random-dicts-10"].encoded_bytes == result.bytes
    assert first["json", "random-dicts-10"].exact == 0  # int keys come back as str
    assert first["orjson", "small-dict"].exact == 1
    assert set(first["orjson", "small-dict"].compressed_bytes) == set(COMPRESSORS)
    assert len(list(store.glob("*/*.json"))) == 2

    def must_not_measure(codec: str, fixture: str) -> PairFacts:
        raise AssertionError(f"{codec} x {fixture} was measured again")

    monkeypatch.setattr(facts, "measure_pair", must_not_measure)
    assert gather([("json", "random-dicts-10"), ("orjson", "small-dict")]) == first


def test_the_key_changes_with_the_document_and_the_release(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert facts_key("json", "a" * 64) != facts_key("json", "b" * 64)
    assert facts_key("json", "a" * 64) != facts_key("orjson", "a" * 64)
    bound = facts.get_codec("orjson")
    newer = dataclasses.replace(bound, version=bound.version + ".post1")
    before = facts_key("orjson", "a" * 64)
    monkeypatch.setattr(facts, "get_codec", lambda name: newer)
    assert facts_key("orjson", "a" * 64) != before  # a new release is measured again


def test_the_key_changes_with_the_schema_and_the_compressors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user's schema replaced on the same document, or another libzstd, is measured again."""
    key = facts_key("pydantic-json", "a" * 64, "c" * 64)
    assert facts_key("pydantic-json", "a" * 64, "d" * 64) != key
    monkeypatch.setattr(facts, "compressor_versions", lambda: {"zstd-3": "zstandard 0.0"})
    assert facts_key("pydantic-json", "a" * 64, "c" * 64) != key


def test_a_schema_codecs_key_holds_its_fixtures_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    from serkit.schemas.pinned import fixture_schema

    seen: list[str | None] = []
    monkeypatch.setattr(
        facts, "facts_key", lambda codec, doc, schema=None, measure=None: seen.append(schema)
    )
    monkeypatch.setattr(facts, "_read", lambda path: facts.PairFacts(exact=1))
    gather([("json", "small-dict"), ("pydantic-json", "small-dict")])
    assert seen == [None, fixture_schema("small-dict").sha256]


def test_an_unreadable_fact_is_measured_again_and_off_keeps_nothing(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gather([("json", "small-dict")])
    (path,) = store.glob("*/*.json")
    path.write_text("{not json")
    assert gather([("json", "small-dict")])["json", "small-dict"].exact == 1
    assert path.read_text().startswith("{")  # written over, whole
    monkeypatch.setenv(FACTS_DIR_ENV, "off")
    path.unlink()
    gather([("json", "small-dict")])
    assert not list(store.glob("*/*.json"))


def test_a_pair_that_cannot_be_encoded_says_why_and_is_kept_as_such(store: Path) -> None:
    found = gather([("yaml", "sensor-record")])["yaml", "sensor-record"]  # namedtuples
    assert found.encoded_bytes is None and found.exact is None
    assert found.not_encoded and found.not_judged.startswith("unsupported")


def test_the_selection_decides_the_pairs_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = Selection(codecs=("json", "yaml"), fixtures=("small-dict", "twitter"))
    assert selected_pairs(chosen) == [
        ("json", "small-dict"),
        ("json", "twitter"),
        ("yaml", "small-dict"),
        ("yaml", "twitter"),
    ]
    monkeypatch.setenv(LEAVE_OUT_ENV, "yaml@twitter")
    left = dataclasses.replace(chosen, left_out=Selection.from_env().left_out)
    assert ("yaml", "twitter") not in selected_pairs(left)
