"""`serkit try --budget` bounds the whole command, and one codec's failure is one line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

import serkit.trial.prepare as preparing
from serkit.checks.fidelity import ERROR, EXACT, LOSSY
from serkit.cli import main
from serkit.inputs.documents import read_document
from serkit.trial.measure import try_document

HANG_GUARD_S = 30.0  # far above any budget here: catches a hang, not a slow machine


def _big_json(tmp_path: Path) -> Path:
    """About 5 MiB of JSON: pure-Python YAML needs far more than 3 s for it."""
    rows = [
        {"id": i, "name": f"item {i}", "tags": ["a", "b"], "score": i / 7, "ok": i % 2 == 0}
        for i in range(50_000)
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(rows))
    return path


@pytest.mark.slow
def test_a_large_document_finishes_within_its_budget_and_skips_in_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _big_json(tmp_path)
    budget_s = 3.0
    start = time.monotonic()
    status = main(["try", str(path), "--budget", str(budget_s), "--format", "json"])
    elapsed = time.monotonic() - start
    captured = capsys.readouterr()
    assert elapsed < budget_s + HANG_GUARD_S
    assert "Traceback" not in captured.out + captured.err
    (document,) = json.loads(captured.out) if status == 0 else [None]
    if document is None:  # a machine so loaded that nothing fit: one error line, exit 1
        assert status == 3 and captured.err.count("serkit: error:") == 1
        return
    rows = {row["codec"]: row for row in document["codecs"]}
    assert "not measured" in rows["yaml"]["why"] and rows["yaml"]["dumps"] is None
    for row in rows.values():
        if row["dumps"] is None and row["status"] == ERROR:
            assert row["why"].count("\n") == 0 and row["why"].endswith("not measured")


@pytest.mark.slow
def test_skipped_codecs_read_as_one_line_each_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _big_json(tmp_path)
    main(["try", str(path), "--codec", "yaml,json", "--budget", "3"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    words = " ".join(captured.out.split())  # the cell wraps where its numbers put it
    assert "yaml " in captured.out and "budget: not measured" in words


def test_a_codec_that_runs_out_of_memory_or_stack_is_one_line_and_the_rest_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = preparing.prepare_object
    failures: dict[str, BaseException] = {
        "json": MemoryError(),
        "orjson": RecursionError("maximum recursion depth exceeded"),
        "ujson": ValueError("a plugin's own bug"),
    }

    def prepare(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in failures:
            raise failures[name]
        return real(name, *args, **kwargs)

    monkeypatch.setattr(preparing, "prepare_object", prepare)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"a": [1, 2, 3]}))
    result = try_document(read_document(path), ["json", "orjson", "ujson", "pickle-p5"])
    rows = {c.codec: c for c in result.codecs}
    assert rows["pickle-p5"].status == EXACT and rows["pickle-p5"].dumps is not None
    assert rows["json"].fidelity.detail == "ran out of memory: not measured"
    assert rows["orjson"].fidelity.detail == "nested too deep for it (RecursionError): not measured"
    assert rows["ujson"].fidelity.detail == "crashed (ValueError: a plugin's own bug): not measured"
    assert result.codecs[0].codec == "pickle-p5"  # measured rows first


def test_a_codec_stuck_in_c_or_killing_its_process_is_one_line_and_the_rest_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    real = preparing.prepare_object

    def prepare(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "json":
            time.sleep(HANG_GUARD_S)  # a call that stays in C code: no signal could stop it
        if name == "ujson":
            os.abort()  # as a library's own abort would: the process is gone
        return real(name, *args, **kwargs)

    monkeypatch.setattr(preparing, "prepare_object", prepare)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"a": [1, 2, 3]}))
    start = time.monotonic()
    # orjson first (small documents are prepared in the order asked), with seconds to spare.
    result = try_document(read_document(path), ["orjson", "json", "ujson"], budget_s=6.0)
    assert time.monotonic() - start < HANG_GUARD_S
    rows = {c.codec: c for c in result.codecs}
    assert rows["orjson"].status == EXACT, rows["orjson"].fidelity.detail
    assert rows["orjson"].dumps is not None
    assert "share of the 6.00 s budget: not measured" in rows["json"].fidelity.detail
    assert rows["ujson"].fidelity.detail == "crashed (its process ended by SIGABRT): not measured"
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


def test_a_yaml_key_read_as_a_bool_is_named_in_the_lossy_note(tmp_path: Path) -> None:
    path = tmp_path / "workflow.yaml"
    path.write_text("on:\n  push: {branches: [main]}\nname: ci\n")
    document = read_document(path)
    assert document.bool_keys == (("on", True),)
    (row,) = try_document(document, ["json"], budget_s=5.0).codecs
    assert row.status == LOSSY and row.fidelity.detail is not None
    assert row.fidelity.detail.endswith("; key `on` read as True (YAML 1.1)")


@pytest.mark.parametrize("budget", ["0", "-1", "nan", "inf", "1e300", "soon"])
def test_a_budget_no_timer_can_keep_is_one_usage_line(
    budget: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["try", "doc.json", "--budget", budget])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err
    assert "argument --budget: must be" in err
