from __future__ import annotations

import json
import pickle
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

import serkit.trial.budget as budget
import serkit.trial.measure as measure
import serkit.trial.prepare as prepare
from serkit import Binding, CodecSpec, Config
from serkit.checks.fidelity import (
    EXACT,
    LOSSY,
    NO_SCHEMA,
    NOT_INSTALLED,
    UNSUPPORTED,
    Difference,
    FidelityResult,
)
from serkit.cli import main
from serkit.codecs.registry import get_codec, registry
from serkit.errors import DocumentError, UnknownCodec
from serkit.inputs.documents import read_document
from serkit.suite.cases import COMPRESSORS
from serkit.trial.budget import plan_samples
from serkit.trial.measure import try_document, try_paths
from serkit.trial.render import implementation_text, render, timing_text
from serkit.trial.sampling import SAMPLES_PER_PROCESS
from serkit.trial.timings import Timing
from serkit.trial.trials import CodecTrial, DocumentTrial

DOC: dict[str, Any] = {"users": [{"id": i, "name": f"user {i}", "score": i / 7} for i in range(50)]}
FAST = dict(budget_s=5.0, max_processes=5, min_sampling_s=0.2)  # preparing a tiny document fits


def _document(tmp_path: Path, obj: Any = DOC, name: str = "doc.json") -> Any:
    path = tmp_path / name
    path.write_text(json.dumps(obj) if name.endswith(".json") else yaml.safe_dump(obj))
    return read_document(path)


@pytest.fixture
def extra_codecs() -> Iterator[None]:
    """Two codecs beside the built-ins: one slow, one whose library is missing."""

    def slow_bind() -> Binding:
        def dumps(obj: Any) -> bytes:
            time.sleep(0.11)
            return json.dumps(obj).encode()

        def loads(data: bytes) -> Any:
            time.sleep(0.11)
            return json.loads(data)

        return Binding((Config(dumps, loads),), ())

    def missing_bind() -> Binding:
        raise ImportError("No module named 'ghost'")

    specs = [
        CodecSpec("slow-json", "json", "stdlib", slow_bind, pure_python=True),
        CodecSpec("ghost", "json", "ghost-lib", missing_bind),
    ]
    registry.names()  # built-ins first
    for spec in specs:
        registry.register(spec)
    yield
    for spec in specs:
        registry._specs.pop(spec.name, None)
        registry._codecs.pop(spec.name, None)


def test_every_codec_is_measured_sized_and_judged(tmp_path: Path) -> None:
    codecs = ["json", "orjson", "msgpack", "pickle-p5", "yaml-c"]
    # Enough budget for a sample of each, even on a loaded machine.
    result = try_document(_document(tmp_path), codecs, budget_s=3.0, max_processes=5)
    assert [c.codec for c in result.codecs] != [] and {c.codec for c in result.codecs} == set(
        codecs
    )
    for row in result.codecs:
        codec = get_codec(row.codec)
        payload = codec.dumps(DOC)
        assert row.status == EXACT, row.fidelity.detail
        assert row.fidelity.bytes == len(payload)
        assert row.compressed == {name: len(pack(payload)) for name, pack in COMPRESSORS.items()}
        assert row.fidelity.implementation == codec.implementation
        assert (row.format, row.library) == (codec.format, codec.library)
        for timing in (row.dumps, row.loads):
            assert timing is not None and not timing.first_call_only
            # Each process's samples, judged by the canary around each one.
            assert 1 <= len(timing.processes) <= 5 and timing.calls_per_sample >= 1
            assert (
                len(timing.samples)
                == len(timing.canary)
                == SAMPLES_PER_PROCESS * len(timing.processes)
            )
            q1, median, q3 = timing.quartiles
            assert 0 < q1 <= median <= q3 < 1
    medians = [c.round_trip_s for c in result.codecs]
    assert medians == sorted(medians)  # type: ignore[type-var]
    assert result.content_sha256 is not None and result.format == "json"


def test_lossy_pairs_say_why(tmp_path: Path) -> None:
    document = _document(tmp_path, {1: ("a", "b")}, "ints.yaml")  # YAML keeps int keys
    assert document.obj == {1: ["a", "b"]}
    rows = {c.codec: c for c in try_document(document, ["json", "pickle-p5"], **FAST).codecs}
    assert rows["pickle-p5"].status == EXACT
    assert rows["json"].status == LOSSY
    assert rows["json"].fidelity.detail == "int-key->str: 1, first at [1]"


def test_codecs_that_cannot_run_come_last_and_say_why(tmp_path: Path, extra_codecs: None) -> None:
    document = _document(tmp_path, {"when": b"\x00\x01"}, "bytes.yaml")  # JSON refuses bytes
    rows = try_document(document, ["ghost", "json", "pickle-p5"], **FAST).codecs
    assert [(c.codec, c.status) for c in rows] == [
        ("pickle-p5", EXACT),
        ("json", UNSUPPORTED),
        ("ghost", NOT_INSTALLED),
    ]
    assert rows[1].dumps is None and "json cannot encode dict" in rows[1].fidelity.detail
    assert "pip install ghost-lib" in rows[2].fidelity.detail


def test_a_call_too_slow_for_its_share_is_reported_from_its_first_call(
    tmp_path: Path, extra_codecs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What starting a worker costs is measured on the machine as it is: it alone outgrows
    # the 0.05 s share, and would leave orjson unsampled too. The share is the test's.
    monkeypatch.setattr(measure, "starting_s", lambda: 0.0)
    result = try_document(
        _document(tmp_path), ["slow-json", "orjson"], budget_s=30.0, key_cap_s=0.05
    )  # time enough to prepare both; a share too small for one slow-json call
    rows = {c.codec: c for c in result.codecs}
    slow = rows["slow-json"]
    assert slow.dumps is not None and slow.dumps.first_call_only
    assert len(slow.dumps.samples) == 1 and slow.dumps.samples[0] >= 0.11
    assert slow.pure_python_by_design
    fast = rows["orjson"].dumps
    assert fast is not None and not fast.first_call_only
    assert [c.codec for c in result.codecs] == ["orjson", "slow-json"]


def test_samples_are_planned_within_the_budget_cheapest_first() -> None:
    costs = {("a", "dumps"): 0.01, ("b", "dumps"): 0.02, ("c", "dumps"): 5.0}
    counts = plan_samples(costs, budget_s=1.0, max_rounds=15)
    assert counts[("a", "dumps")] == 15 and counts[("b", "dumps")] == 15
    assert counts[("c", "dumps")] == 0  # 0.55 s left cannot pay for one 5 s sample
    assert sum(n * costs[k] for k, n in counts.items()) <= 1.0
    generous = plan_samples(costs, budget_s=100.0, max_rounds=15)
    assert generous[("c", "dumps")] == 15
    capped = plan_samples(costs, budget_s=100.0, max_rounds=15, key_cap_s=11.0)
    assert capped == {("a", "dumps"): 15, ("b", "dumps"): 15, ("c", "dumps"): 2}
    assert plan_samples({}, 1.0, 15) == {}


@pytest.mark.slow
def test_a_one_megabyte_document_is_budgeted_by_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"id": i, "name": f"user {i}", "tags": ["a"], "score": i / 7} for i in range(15_000)]
    document = _document(tmp_path, {"rows": rows})
    assert document.bytes > 10**6
    plans: list[tuple[dict[Any, float], float, dict[Any, int]]] = []

    def recorded(costs: dict[Any, float], budget_s: float, *caps: Any) -> dict[Any, int]:
        counts = plan_samples(costs, budget_s, *caps)
        # A copy: sampling goes on to set each codec's cost to what its processes took,
        # which on a busy machine is more than the plan was made with.
        plans.append((dict(costs), budget_s, counts))
        return counts

    monkeypatch.setattr(budget, "plan_samples", recorded)
    result = try_document(
        document, ["orjson", "json"], budget_s=1.0, max_processes=50, min_sampling_s=0.5
    )
    ((costs, budget_s, counts),) = plans
    # The first pass gets its share of what preparing left of the document's 1 s budget,
    # never under sampling's own share: how much preparing took is the machine's business.
    share = budget.FIRST_PASS_SHARE
    assert 1.0 * (1 - prepare.PREPARE_SHARE) * share <= budget_s <= 1.0 * share
    assert sum(counts[codec] * costs[codec] for codec in costs) <= budget_s
    for codec in result.codecs:
        if codec.codec not in costs:  # a busy machine: over its share of the 1 s budget
            assert "budget: not measured" in (codec.fidelity.detail or ""), codec.codec
            continue
        for timing in (codec.dumps, codec.loads):
            assert timing is not None
            assert timing.first_call_only or 1 <= len(timing.processes) <= 50


def test_documents_are_all_read_before_any_is_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good.json"
    good.write_text("[1, 2]")

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("measured before every document was read")

    monkeypatch.setattr(measure, "try_document", never)
    with pytest.raises(DocumentError, match=r"missing\.json: no such file"):
        try_paths([str(good), str(tmp_path / "missing.json")])
    with pytest.raises(UnknownCodec, match="unknown codec 'nope'"):
        try_paths([str(good)], ["nope"])


def test_the_result_is_json(tmp_path: Path) -> None:
    (result,) = try_paths([str(_document(tmp_path).path)], ["json"], budget_s=0.3, max_processes=3)
    data = json.loads(json.dumps(result.as_dict()))
    row = data["codecs"][0]
    assert data["format"] == "json" and data["bytes"] > 0
    assert row["codec"] == "json" and row["status"] == EXACT
    assert set(row["dumps"]) == {
        "median_s",
        "q1_s",
        "q3_s",
        "samples",
        "calls_per_sample",
        "first_call_only",
        "processes",
        "samples_per_process",
        "processes_by_state",
    }
    assert set(row["compressed_bytes"]) == set(COMPRESSORS)


# --- rendering and the command line ---------------------------------------------------


def test_timings_read_with_units_and_spread() -> None:
    assert timing_text(Timing((1e-3, 1.1e-3, 1.2e-3, 1.3e-3, 1.4e-3))) == "1.20 ms ±8 %"
    assert timing_text(Timing((2.5,), first_call_only=True)) == "2.50 s (1st call)"
    assert timing_text(Timing((3e-6,))) == "3.00 µs (1 sample)"
    assert timing_text(None) == "-"


def test_a_pure_python_fallback_is_called_out(tmp_path: Path, extra_codecs: None) -> None:
    result = try_document(_document(tmp_path), ["slow-json", "json"], **FAST)
    rows = {c.codec: c for c in result.codecs}
    assert implementation_text(rows["json"]) == "C"
    assert implementation_text(rows["slow-json"]) == "Python"  # pure Python by design
    fallback = replace(rows["json"], pure_python_by_design=False)
    fallback = replace(fallback, fidelity=replace(fallback.fidelity, implementation="python"))
    assert implementation_text(fallback) == "Python (no C!)"


def test_serkit_try_prints_a_table_with_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _document(tmp_path).path
    assert main(["try", str(path), "--codec", "json,pickle-p5", "--budget", "5"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}: json, ") and " codecs in " in lines[0]
    # The verdict opens the document, then its table.
    assert lines[2].startswith("  fastest exact, by round trip (dumps + loads): ")
    headers = ["codec", "impl", "dumps", "loads", "size", "gzip-6", "zstd-3", "fidelity"]
    at = next(i for i, line in enumerate(lines) if line.split() == headers)
    # pickle's row says, in its fidelity cell, that its loads is unsafe; json's does not.
    shown = lines[at + 2 : at + 4]
    assert [("unsafe on untrusted bytes; exact" in line) for line in shown] == [
        line.startswith("pickle-p5") for line in shown
    ]
    # A timing too scattered to read as a value (as a loaded machine may leave one) is
    # wrapped in words; its value, unit and spread are inside them.
    plain = [line.replace("too scattered (", "").replace(" %)", " %") for line in shown]
    rows = [line.replace("unsafe on untrusted bytes; ", "").split() for line in plain]
    assert {row[0] for row in rows} == {"json", "pickle-p5"}
    for row in rows:
        assert row[3] in {"ns", "µs", "ms", "s"} and row[4].startswith("±") and row[5] == "%"
        units = {row[-6], row[-4], row[-2]}
        assert {unit.rstrip("*") for unit in units} <= {"B", "KiB"} and row[-1] == "exact"
    for column in (-6, -4, -2):  # the smallest size in each column is marked
        assert any(row[column].endswith("*") for row in rows)
    assert "*: the smallest of the exact codecs in its column" in out
    assert out.count("Ranked by the round trip (dumps + loads) the table shows") == 1
    assert "(1 process), (1 sample): one value only" in out
    assert "UNSAFE on untrusted input" in out and "pickle-p5: runs code" in out


def test_serkit_try_writes_json_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_document(tmp_path).path)
    assert main(["try", path, "--codec", "json", "--budget", "3", "--format", "json"]) == 0
    (document,) = json.loads(capsys.readouterr().out)
    assert document["path"] == path and document["codecs"][0]["codec"] == "json"
    assert main(["try", path, "--codec", "json", "--budget", "3", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"**{path}: json, ") and "| codec " in out and "|---" in out
    assert "; 1 codec in " in out  # not "1 codecs"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "missing.json: no such file"),
        (["doc.pkl"], "doc.pkl is a pickle; loading a pickle runs code"),
        (["doc.json", "--codec", "nope"], "unknown codec 'nope'"),
    ],
)
def test_serkit_try_mistakes_are_one_error_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.json").write_text("[1]")
    (tmp_path / "doc.pkl").write_bytes(pickle.dumps([1], protocol=5))
    assert main(["try", *args]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("serkit: error: ") and message in captured.err
    assert captured.err.count("\n") == 1
    monkeypatch.chdir(tmp_path)
    assert main(["try", "doc.pkl", "--allow-pickle", "--codec", "json", "--budget", "0.3"]) == 0


# --- the ranked verdict, on trials whose answer is known (no measuring) ------------------

SHAPE = (0.99, 0.995, 1.0, 1.0, 1.005, 1.01)


def _trial(
    codec: str,
    seconds: float | None,
    status: str = EXACT,
    size: int | None = 100,
    differences: tuple[Difference, ...] = (),
    detail: str = "",
) -> CodecTrial:
    fidelity = FidelityResult(codec, "doc.json", status, differences, bytes=size, detail=detail)
    timing = Timing(tuple(seconds * f for f in SHAPE), 100) if seconds else None
    compressed = {name: size for name in COMPRESSORS} if size else {}
    return CodecTrial(codec, "json", "lib", fidelity, False, timing, timing, compressed)


def _known(no_schema: str = "") -> DocumentTrial:
    order = (Difference("key-order", 3, "['a']"),)
    lost = (Difference("value-changed", 14, "['b']"),)
    codecs = (
        _trial("protobuf", 1e-6, LOSSY, 40, lost, "value-changed: 14, first at ['b']"),
        _trial("msgspec-struct-json", 2e-6, LOSSY, 80, order, "key-order: 3, first at ['a']"),
        _trial("orjson", 4e-6, EXACT, 120),
        _trial("json", 12e-6, EXACT, 130),
        *(
            _trial(name, None, NO_SCHEMA, None, detail=no_schema)
            for name in ("fastavro", "pydantic-json")
            if no_schema
        ),
    )
    return DocumentTrial("doc.json", "json", 1000, None, codecs, 1.0, 5.0, 15, 2.0, None, no_schema)


def test_only_an_exact_codec_is_ranked_first_and_lossy_ones_are_ranked_apart() -> None:
    out = render([_known()])
    lines = out.splitlines()
    flat = " ".join(out.split())  # the verdict's lines wrap
    assert lines[2].startswith("  fastest exact, by round trip (dumps + loads): orjson (8.00 µs)")
    assert "orjson (8.00 µs); 3.00x ± 0.02 faster than json. Faster, but ranked apart" in flat
    # Each codec ranked apart says why, a lossy one what it lost.
    assert (
        "ranked apart: msgspec-struct-json (lossy in dict key order only), "
        "protobuf (lossy: value-changed)"
    ) in flat
    assert "lossy in dict key order only: msgspec-struct-json (4.00 µs)" in flat
    assert "lossy: protobuf (value-changed; 2.00 µs)" in flat
    table = lines[lines.index(next(line for line in lines if line.startswith("codec"))) + 2 :]
    assert [row.split()[0] for row in table[:4]] == [
        "orjson",
        "json",
        "msgspec-struct-json",
        "protobuf",
    ]
    # The smallest size is protobuf's, but it lost values: the star goes to orjson.
    stars = [row.split()[0] for row in table[:4] if "*" in row]
    assert stars == ["orjson"]
    assert "key order only: key-order: 3" in out


def test_every_verdict_line_and_row_naming_an_unsafe_codec_says_so() -> None:
    # pickle-p5 and marshal, the fastest, are ranked apart: each line naming them says why.
    lost = (Difference("namedtuple->tuple", 2, "[0]"),)
    document = replace(
        _known(),
        codecs=(
            *_known().codecs,
            _trial("pickle-p5", 0.5e-6, EXACT, 90),
            _trial("marshal", 0.4e-6, LOSSY, 90, lost, "namedtuple->tuple: 2, first at [0]"),
        ),
    )
    out = render([document])
    flat = " ".join(out.split())
    assert (
        "pickle-p5 (exact, unsafe on untrusted bytes), marshal (lossy: namedtuple->tuple, "
        "unsafe on untrusted bytes)"
    ) in flat
    named = [line for line in out.splitlines() if "pickle" in line or "marshal" in line]
    assert len(named) >= 5  # the verdict, two classes' lines, two table rows
    for line in named:
        assert "unsafe on untrusted bytes" in line, line
    # pickle-p5's 90 B are the smallest exact bytes, but the star goes to a safe codec.
    rows = {line.split()[0]: line for line in out.splitlines() if line[:1].isalpha()}
    assert "*" not in rows["pickle-p5"] and "120 B*" in rows["orjson"]
    safe = render([document], safe_only=True)
    assert "not ranked: pickle-p5 and marshal (unsafe on untrusted bytes; left out" in " ".join(
        safe.split()
    )


def test_the_verdict_quotes_the_medians_the_table_shows() -> None:
    from serkit.trial.render import ranking

    document = _known()
    trials = {t.codec: t for t in document.codecs}
    for tier in ranking(document).tiers:
        for group in tier.groups:
            shown = trials[group.codecs[0]]
            assert shown.dumps is not None and shown.loads is not None
            assert group.median == shown.dumps.median + shown.loads.median


def test_rank_by_size_and_exact_only() -> None:
    out = render([_known()], measure="size", exact_only=True)
    flat = " ".join(out.split())
    assert "smallest exact, by encoded size: orjson (120 B); 1.08x smaller than json" in flat
    assert "not ranked: protobuf (lossy: left out by exact-only)" in flat


def test_a_refused_schema_is_said_once_not_per_codec() -> None:
    why = "['meta'][*] holds values of several types (integer, string)"
    out = render([_known(no_schema=why)])
    flat = " ".join(out.split())
    assert flat.count(why) == 1
    assert "Schema codecs not run (2: fastavro, pydantic-json): no schema could be derived" in flat
    assert out.count("no schema: not run (see above)") == 2


def test_serkit_try_json_holds_the_ranking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_document(tmp_path).path)
    args = ["try", path, "--codec", "json,orjson", "--budget", "3", "--format", "json"]
    assert main([*args, "--rank-by", "dumps", "--exact-only"]) == 0
    (document,) = json.loads(capsys.readouterr().out)
    ranking = document["ranking"]
    assert ranking["measure"] == "dumps" and ranking["exact_only"] is True
    assert ranking["verdict"].startswith("fastest exact, by dumps: ")
    ranked = [c for tier in ranking["tiers"] for g in tier["groups"] for c in g["codecs"]]
    assert sorted(ranked) == ["json", "orjson"]
