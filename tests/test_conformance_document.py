from __future__ import annotations

import json
from pathlib import Path

import pytest

from serkit.checks.conformance import (
    ACCEPTED,
    CRASHED,
    RAN,
    REJECTED,
    CodecConformance,
    FileOutcome,
)
from serkit.checks.conformance_document import (
    KIND,
    SCHEMA,
    ConformanceFileError,
    document,
    load,
    save,
)
from serkit.inputs.jsontestsuite import ACCEPT, EITHER, REJECT


def _results() -> dict[str, CodecConformance]:
    files = [
        FileOutcome("y_array_empty.json", ACCEPT, ACCEPTED, "list"),
        FileOutcome("n_number_NaN.json", REJECT, CRASHED, "SIGSEGV"),
        FileOutcome("i_number_huge_exp.json", EITHER, REJECTED, "ValueError"),
    ]
    return {"json": CodecConformance("json", RAN, "3.11.7", "c", files, 0.5)}


def test_a_saved_run_reads_back_the_same(tmp_path: Path) -> None:
    path = save(
        document(_results(), timeout=2.0, memory=1 << 29, wall_s=1.234), tmp_path / "c.json"
    )
    doc, results = load(path)
    assert doc["kind"] == KIND and doc["schema"] == SCHEMA
    assert doc["limits"] == {"timeout_s": 2.0, "memory_bytes": 1 << 29} and doc["wall_s"] == 1.23
    assert doc["suite"]["files"] == 3 and doc["suite"]["commit"].startswith("1ef36fa")
    assert results == _results()
    assert doc["codecs"][0]["counts"][REJECT][CRASHED] == 1
    assert not list(tmp_path.glob("*.partial"))  # written whole


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"kind": "serkit conformance"', "cannot read"),
        ('{"schema": 1}', "not a serkit conformance document"),
        ('{"kind": "serkit conformance", "schema": 2}', "schema 2"),
        ('{"kind": "serkit conformance", "schema": 1, "codecs": [{"codec": "x"}]}', "malformed"),
    ],
)
def test_a_bad_document_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ConformanceFileError, match=message):
        load(path)


def test_an_outcome_serkit_never_writes_is_refused(tmp_path: Path) -> None:
    doc = document(_results())
    doc["codecs"][0]["files"][0]["outcome"] = "maybe"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConformanceFileError, match="malformed"):
        load(path)
