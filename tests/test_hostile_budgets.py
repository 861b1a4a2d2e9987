"""Budgets that bound memory and time, not only bytes; limits read as sizes.

A record from elsewhere (a results file, a host file, fixtures.json, replication.json,
conformance.json, benchmarks.json) is refused, in one line, before it is parsed into more
memory than a small multiple of its size; a limit the person sets that no machine could
use is a usage error (exit 2), never a traceback.
"""

from __future__ import annotations

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
