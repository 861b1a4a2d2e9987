from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from serkit import codec_names, get_codec, load_fixture
from serkit.checkout import replication_path, results_dir
from serkit.checks.sizes import measure_fixture
from serkit.cli import build_parser, main
from serkit.replicate.claims import VERDICTS, Claim, judge_claim
from serkit.replicate.document import SCHEMA, ReplicationFileError, load, save
from serkit.replicate.measure import Measured, Timing, sample_interleaved
from serkit.replicate.posts import Options, UnknownPost, resolve_post, run
from serkit.replicate.published import (
    POST_000_DUMPS,
    POST_000_LOADS,
    POST_000_SIZES,
    POST_002_RATE,
    POST_002_SIZE,
    POST_003_DECODE,
    POST_003_ENCODE,
    POST_004_LOAD,
    POSTS,
    PublishedFigures,
    PublishedTable,
    as_disk_kib,
)
from serkit.replicate.render import render

# Its module fixture times posts 000 and 002 (seconds): built once on one xdist worker.
pytestmark = pytest.mark.xdist_group("replicate")

TABLES: list[PublishedTable | PublishedFigures] = [
    POST_000_SIZES,
    POST_000_DUMPS,
    POST_000_LOADS,
    POST_002_SIZE,
    POST_002_RATE,
    POST_003_ENCODE,
    POST_003_DECODE,
    POST_004_LOAD,
]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """Posts 000/001 and 002 at the fewest rounds: a few seconds, every kind of table."""
    return run(["000", "002"], Options(rounds=3))


def _post(document: dict[str, Any], post: str) -> dict[str, Any]:
    (found,) = [p for p in document["posts"] if p["post"] == post]
    return found


def _table(post: dict[str, Any], title: str) -> dict[str, Any]:
    (found,) = [t for t in post["tables"] if t["title"] == title]
    return found


def _column(table: dict[str, Any], header: str) -> int:
    return int(table["headers"].index(header))


# --- the published figures ----------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES, ids=lambda t: f"{t.post} {t.title}")
def test_every_published_figure_names_its_post_units_and_codecs(
    table: PublishedTable | PublishedFigures,
) -> None:
    post = POSTS[table.post]
    assert post.seeds[0].startswith(table.post[:3])  # the seed file it was copied from
    assert table.unit and table.title
    for codec in table.values:
        assert codec in codec_names()
        assert codec in post.labels  # the post's own name for it
    assert post.reference in table.values
    if isinstance(table, PublishedFigures):
        assert set(table.unavailable_values) <= set(post.unavailable)
        assert all(value > 0 for value in table.values.values())
    else:
        assert all(
            sorted(rows) == [10, 100, 1_000, 10_000, 100_000] for rows in table.values.values()
        )


def test_post_000_and_001_are_one_post() -> None:
    assert resolve_post("000") == resolve_post("001") == resolve_post("000/001") == "000/001"
    with pytest.raises(UnknownPost, match="known posts: 000/001, 002, 003, 004, 005, 006"):
        resolve_post("007")


# --- the document -------------------------------------------------------------------------


def test_document_has_the_documented_keys(document: dict[str, Any]) -> None:
    assert document["schema"] == SCHEMA
    for key in ("serkit_version", "date", "host", "python", "statistic"):
        assert isinstance(document[key], str) and document[key]
    assert document["git_commit"] is None or len(document["git_commit"]) == 40
    assert document["libraries"]["msgpack"] == get_codec("msgpack").version
    assert "stdlib" not in document["libraries"]
    assert "median of 3" in document["statistic"]
    assert [p["post"] for p in document["posts"]] == ["000/001", "002"]


def test_every_table_lines_up_with_its_headers(document: dict[str, Any]) -> None:
    for post in document["posts"]:
        assert post["source"].startswith("seeds/")
        for table in post["tables"]:
            width = len(table["headers"])
            assert table["rows"] and len(table["rows"]) == len(table["text_rows"])
            assert all(len(row) == width for row in table["rows"] + table["text_rows"])
            assert all(isinstance(cell, str) for row in table["text_rows"] for cell in row)
            assert all(
                cell is None or isinstance(cell, (int, float, str))
                for row in table["rows"]
                for cell in row
            )


def test_timing_tables_show_then_now_normalized_and_ranks(document: dict[str, Any]) -> None:
    dumps = _table(_post(document, "000/001"), "dumps time")
    assert {
        "published (ms)",
        "measured (ms, median)",
        "published / json",
        "measured / json",
    } <= set(dumps["headers"])
    assert {"rank then", "rank now", "IQR low (ms)", "IQR high (ms)"} <= set(dumps["headers"])
    records, codec = _column(dumps, "records"), _column(dumps, "codec")
    median, low, high = (
        _column(dumps, h) for h in ("measured (ms, median)", "IQR low (ms)", "IQR high (ms)")
    )
    measured = [row for row in dumps["rows"] if row[median] is not None]
    assert {row[records] for row in measured} == {10, 100, 1_000}  # the slow ones are opt-in
    for row in measured:
        assert row[low] <= row[median] <= row[high]
        if row[codec] == "json":
            assert row[_column(dumps, "measured / json")] == pytest.approx(1.0)
            assert row[_column(dumps, "published / json")] == pytest.approx(1.0)
        published = POST_000_DUMPS.values[row[codec]][row[records]]
        assert row[_column(dumps, "published (ms)")] == published
    ranks = sorted(row[_column(dumps, "rank now")] for row in measured if row[records] == 10)
    assert ranks == [1, 2, 3, 4]
    slow = [row for row in dumps["text_rows"] if row[records] == "100,000"]
    assert all("--slow" in row[median] for row in slow)
    assert any("left out" in note for note in dumps["notes"])


@pytest.mark.slow
def test_post_000_size_rows_equal_the_suites_sizes(document: dict[str, Any]) -> None:
    sizes = _table(_post(document, "000/001"), "size of the serialized message")
    col = {h: i for i, h in enumerate(sizes["headers"])}
    measured_rows = [row for row in sizes["rows"] if row[col["measured (B)"]] is not None]
    assert len(measured_rows) == 12  # 4 codecs x 10, 100 and 1,000 records
    for n in (10, 100, 1_000):
        expected = {
            r.codec: r.bytes for r in measure_fixture(f"random-dicts-{n}", POST_000_SIZES.values)
        }
        for row in (r for r in measured_rows if r[col["records"]] == n):
            codec = row[col["codec"]]
            assert row[col["measured (B)"]] == expected[codec]
            assert row[col["measured (KiB on disk)"]] == as_disk_kib(expected[codec])
            difference = row[col["difference (%)"]]
            if codec == "ujson":  # its float format changed: explained, not hidden
                assert difference > 10 and "double_precision" in row[col["explanation"]]
            else:  # unchanged formats land within a few percent of the post
                assert abs(difference) < 4 and row[col["explanation"]] == ""


def test_post_002_sizes_are_exact_and_pickle_is_explained(document: dict[str, Any]) -> None:
    size = _table(_post(document, "002"), "size of one sensor record")
    col = {h: i for i, h in enumerate(size["headers"])}
    rows = {row[col["codec"]]: row for row in size["rows"]}
    record = load_fixture("sensor-record")
    assert rows["msgpack-ext"][col["measured (B)"]] == 64 == POST_002_SIZE.values["msgpack-ext"]
    assert rows["msgpack-ext"][col["difference (%)"]] == 0
    pickled = len(get_codec("pickle-p2").dumps(record))
    assert rows["pickle-p2"][col["measured (B)"]] == pickled
    shared = record._replace(angular_vel=record.linear_accel, magnetic_field=record.linear_accel)
    explanation = rows["pickle-p2"][col["explanation"]]
    assert f"pickles to {len(get_codec('pickle-p2').dumps(shared))} B" in explanation
    assert "module" in explanation


def test_every_claim_gets_a_known_verdict(document: dict[str, Any]) -> None:
    for post in document["posts"]:
        assert post["claims"]
        for claim in post["claims"]:
            assert claim["verdict"] in VERDICTS
            assert claim["then"] and claim["now"]
    sizes = [c for c in _post(document, "000/001")["claims"] if "smaller" in c["claim"]]
    assert [c["verdict"] for c in sizes] == ["still holds"]  # deterministic: no timing in it


def test_saved_document_loads_back(document: dict[str, Any], tmp_path: Path) -> None:
    path = save(document, tmp_path / "sub" / "replication.json")
    assert load(path) == json.loads(json.dumps(document))


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "not valid JSON"),
        ('[{"benchmark": "x"}]', "not an object"),
        ('{"version": 2, "results": {}}', "has no 'schema'"),
    ],
)
def test_load_refuses_what_is_not_a_replication_document(
    tmp_path: Path, content: str, match: str
) -> None:
    path = tmp_path / "file.json"
    path.write_text(content)
    with pytest.raises(ReplicationFileError, match=match):
        load(path)


def test_load_refuses_another_schema_and_ragged_tables(
    document: dict[str, Any], tmp_path: Path
) -> None:
    newer = json.loads(json.dumps(document))
    newer["schema"] = SCHEMA + 1
    with pytest.raises(ReplicationFileError, match="schema"):
        load(save(newer, tmp_path / "newer.json"))
    ragged = json.loads(json.dumps(document))
    ragged["posts"][0]["tables"][0]["rows"][0].pop()
    with pytest.raises(ReplicationFileError, match="does not match"):
        load(save(ragged, tmp_path / "ragged.json"))
    with pytest.raises(ReplicationFileError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_markdown_and_table_renderings(document: dict[str, Any]) -> None:
    markdown = render(document, markdown=True)
    assert "## Post 002: Serialization: MsgPack vs Pickle" in markdown
    assert "| codec " in markdown and "still holds" in markdown
    table = render(document)
    assert "== Post 000/001" in table and "[still holds]" in table


# --- judging claims, on synthetic samples ---------------------------------------------------


def _measured(fast: list[float], slow: list[float]) -> Measured:
    return Measured(
        timings={
            ("a", "doc", "dumps"): Timing(tuple(fast)),
            ("b", "doc", "dumps"): Timing(tuple(slow)),
        }
    )


def _verdict(published: dict[str, float], measured: Measured, factor: float = 1.0) -> str:
    claim = Claim("a dumps faster than b", ((("a", "dumps"), ("b", "dumps")),), factor)
    result = judge_claim(
        claim,
        (0,),
        lambda side, _site: published[side[0]],
        measured,
        lambda side, _site: (side[0], "doc", side[1]),
        lambda side, _site: None,
    )
    return str(result["verdict"])


def test_a_difference_inside_the_noise_is_no_win() -> None:
    then = {"a": 1.0, "b": 2.0}
    assert _verdict(then, _measured([1, 1, 1, 1, 1], [2, 2, 2, 2, 2])) == "still holds"
    assert _verdict(then, _measured([2, 2, 2, 2, 2], [1, 1, 1, 1, 1])) == "no longer holds"
    # b is slower at the median but not across the interquartile range of the rounds.
    mixed_rounds = _measured([1, 1, 1, 1, 1], [0.9, 0.95, 1.05, 1.1, 1.2])
    assert _verdict(then, mixed_rounds) == "within noise"
    assert _verdict({"a": 2.0, "b": 1.0}, _measured([1] * 5, [2] * 5)) == "holds now"
    assert _verdict(then, _measured([1] * 5, [2] * 5), factor=10) == "never held"
    assert _verdict(then, Measured()) == "not measured"


# --- the command line -----------------------------------------------------------------------


def test_unknown_post_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replicate", "007", "--no-save"])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err.startswith("serkit: error: unknown post '007'") and err.count("\n") == 1


def test_too_few_rounds_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replicate", "002", "--rounds", "2", "--no-save"]) == 2
    assert "at least 3" in capsys.readouterr().err


def test_json_output_is_saved_where_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "out.json"
    code = main(["replicate", "002", "--rounds", "3", "--format", "json", "--save", str(target)])
    out, err = capsys.readouterr()
    assert code == 0
    assert json.loads(out) == load(target)
    assert f"saved the replication document to {target}" in err


def test_a_full_run_saves_into_the_checkout_by_default() -> None:
    from serkit.checkout import project_root
    from serkit.cli.replicate import replication_target as _replication_target

    parser = build_parser()
    assert _replication_target(parser.parse_args(["replicate"])) == replication_path(
        results_dir(project_root())
    )
    assert _replication_target(parser.parse_args(["replicate", "002"])) is None
    assert _replication_target(parser.parse_args(["replicate", "--no-save"])) is None


def test_samples_interleave_round_by_round_rotated() -> None:
    order: list[str] = []
    calls = {(name, "dumps"): (lambda name=name: order.append(name)) for name in "abc"}
    counts = {("a", "dumps"): 3, ("b", "dumps"): 3, ("c", "dumps"): 1}
    samples = sample_interleaved(calls, dict.fromkeys(calls, 1), counts, "test")
    assert order == ["a", "b", "c", "b", "a", "a", "b"]
    assert {k: len(v) for k, v in samples.items()} == counts
    order.clear()
    sample_interleaved(calls, dict.fromkeys(calls, 1), counts, "test", deadline=0.0)
    assert order == []  # past the deadline, no round starts
