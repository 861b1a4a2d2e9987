"""Budgets that bound memory and time, not only bytes; limits read as sizes.

A record from elsewhere (a results file, a host file, fixtures.json, replication.json,
conformance.json, benchmarks.json) is refused, in one line, before it is parsed into more
memory than a small multiple of its size; a limit the person sets that no machine could
use is a usage error (exit 2), never a traceback.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from serkit.cli import main

HUGE_SIZE = "99999999999999999999999GiB"
HUGE_COUNT = "9" * 5000


def _one_line_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], what: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and what in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SERKIT_MAX_DOCUMENT_BYTES", HUGE_SIZE),
        ("SERKIT_MAX_RECORD_BYTES", HUGE_SIZE),
        ("SERKIT_MAX_DOCUMENT_NODES", HUGE_COUNT),
        ("SERKIT_MAX_DOCUMENT_DEPTH", "lots"),
    ],
)
def test_an_absurd_limit_in_a_variable_is_a_usage_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
) -> None:
    monkeypatch.setenv(variable, value)
    _one_line_usage_error(capsys, ["hosts", "--results", str(tmp_path)], variable)


@pytest.mark.parametrize(
    ("flag", "value"), [("--max-bytes", HUGE_SIZE), ("--max-nodes", HUGE_COUNT)]
)
def test_an_absurd_limit_in_a_flag_is_a_usage_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flag: str,
    value: str,
) -> None:
    with pytest.raises(SystemExit) as stopped:  # argparse's own usage error
        main(["try", str(tmp_path / "doc.json"), flag, value])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "over the largest" in err and "Traceback" not in err
    assert max(len(line) for line in err.splitlines()) < 300  # 5,000 digits not echoed


def test_sizes_and_counts_are_read_exactly_up_to_a_pebibyte() -> None:
    from serkit.errors import BadLimit
    from serkit.inputs.limits import MOST, parse_count, parse_size

    assert parse_size("1048576GiB") == MOST == parse_count(str(MOST))
    assert parse_size("0.1 kB") == 100  # exactly, not 100.00000000000001
    for size in (HUGE_SIZE, "1048577GiB", HUGE_COUNT, "١٢"):
        with pytest.raises(BadLimit):
            parse_size(size)
    for number in (HUGE_COUNT, str(MOST + 1), "0", "١٢"):
        with pytest.raises(BadLimit):
            parse_count(number)


# --- memory: a record is refused before it is parsed into far more than its size ---------

MiB = 2**20


def _peak(read: Callable[[], object]) -> tuple[object, int]:
    """What `read` returned (or raised), and the most memory it held at once, in bytes."""
    tracemalloc.start()
    try:
        try:
            result: object = read()
        except Exception as exc:  # the refusal is the result
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _empty_dicts(path: Path, size: int) -> Path:
    """`{"x":[{},{},…]}`: a dict of 64 bytes parsed from every 3 bytes of the file."""
    path.write_bytes(b'{"x":[' + b"{}," * (size // 3) + b"{}]}")
    return path


def test_a_dense_json_record_is_refused_from_its_bytes_before_it_is_parsed(
    tmp_path: Path,
) -> None:
    from serkit.errors import RefusedFileLimit
    from serkit.inputs.documents import read_record

    path = _empty_dicts(tmp_path / "12345678-env.json", 4 * MiB)
    refused, peak = _peak(lambda: read_record(path, max_bytes=8 * MiB))
    assert isinstance(refused, RefusedFileLimit), refused
    assert "nodes" in refused.rule and "in memory" in refused.rule
    assert peak < 8 * MiB + 2 * path.stat().st_size  # the read's buffer, and no more


def test_a_dense_yaml_host_file_is_refused_from_its_events_before_it_is_composed(
    tmp_path: Path,
) -> None:
    from serkit.results.host_file import HOST_FILE, read_runs

    text = b"serkit_host_format: 2\nmachine: box\nruns: [" + b"a, " * (MiB // 6) + b"a]\n"
    (tmp_path / HOST_FILE).write_bytes(text)
    warnings: list[str] = []
    runs, peak = _peak(lambda: read_runs(tmp_path, warnings))
    assert runs is None and "in memory" in warnings[0]
    assert peak < 64 * MiB + 2 * len(text)  # the read's buffer (the 64 MiB cap), and no more


def test_an_honest_host_file_of_200_runs_is_read_whole(tmp_path: Path) -> None:
    from serkit.results.host_file import HOST_FILE, MAX_RUNS, read_runs, write_runs

    # A full run's plan lists each pair it left out: 40 in each of 200 runs.
    pairs = [
        {"codec": f"codec{i % 30}", "fixture": f"fixture-{i // 30}", "predicted_dumps_s": 0.0123}
        for i in range(40)
    ]
    runs = [
        {"recorded_at": f"2026-10-{1 + i % 28:02d}T03:17:{i % 60:02d}+00:00", "hostname": f"h{i}",
         "plan": {"kind": "full", "pairs_left_out": [dict(p) for p in pairs]}}
        for i in range(MAX_RUNS)
    ]  # fmt: skip
    write_runs(tmp_path / HOST_FILE, "box", runs)
    warnings: list[str] = []
    assert len(read_runs(tmp_path, warnings) or []) == MAX_RUNS and not warnings


def test_a_yaml_document_past_its_node_limit_is_refused_before_it_is_composed(
    tmp_path: Path,
) -> None:
    from serkit.errors import DocumentLimitError
    from serkit.inputs.documents import read_document
    from serkit.inputs.limits import Limits

    path = tmp_path / "flow.yaml"
    path.write_bytes(b"[" + b"a, " * (MiB // 3) + b"a]")
    limits = Limits(bytes=2 * MiB, nodes=1000)
    refused, peak = _peak(lambda: read_document(path, limits=limits))
    assert isinstance(refused, DocumentLimitError) and "1,000 nodes" in str(refused)
    assert peak < 2 * MiB + 2 * path.stat().st_size  # composed whole, it took 140 times its size


@pytest.mark.parametrize("kind", ["replication", "conformance"])
def test_a_deep_or_huge_saved_document_is_one_line(tmp_path: Path, kind: str) -> None:
    from serkit.checks import conformance_document
    from serkit.replicate import document

    load = {"replication": document.load, "conformance": conformance_document.load}[kind]
    error = {
        "replication": document.ReplicationFileError,
        "conformance": conformance_document.ConformanceFileError,
    }[kind]
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(error, match="nests deeper than 64 levels"):
        load(deep)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as stream:  # sparse: 500 MB that take no disk, and are never read
        stream.truncate(500 * 10**6)
    refused, peak = _peak(lambda: load(huge))
    assert isinstance(refused, error) and "over the 64.0 MiB limit" in str(refused)
    assert peak < MiB


def test_try_into_a_folder_with_a_deep_benchmarks_json_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text('{"a": 1}')
    into = tmp_path / "into"
    into.mkdir()
    (into / "benchmarks.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["try", str(doc), "--into", str(into)]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "nests deeper than 64 levels" in err


def test_a_json_document_past_its_node_limit_is_refused_before_it_is_parsed(
    tmp_path: Path,
) -> None:
    from serkit.errors import DocumentLimitError
    from serkit.inputs.documents import read_document
    from serkit.inputs.limits import Limits

    path = tmp_path / "zeros.json"
    path.write_bytes(b"[" + b"0," * MiB + b"0]")
    limits = Limits(bytes=4 * MiB, nodes=1000)
    refused, peak = _peak(lambda: read_document(path, limits=limits))
    assert isinstance(refused, DocumentLimitError) and "1,000 nodes" in str(refused)
    assert peak < 4 * MiB + 2 * path.stat().st_size  # parsed, a million ints took 10 MiB more
    # Commas inside strings are no nodes: counted again without them, it is read.
    quoted = tmp_path / "quoted.json"
    quoted.write_text('["' + "," * 5000 + '", {"a": ":"}]')
    assert read_document(quoted, limits=limits).shape.nodes == 5
