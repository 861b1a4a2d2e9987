"""`serkit compare` for CI: shown values that agree with their ratio and lie inside their own
spread, and `--fail-on slower[:PCT]` with its exit statuses, on synthetic results trees."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from serkit.cli import main
from serkit.compare.gate import DEFAULT_PERCENT, parse_fail_on
from tests.results_factory import TIMES, per_process_tree

# Ten processes a pair, spread about 2 % in a fixed pattern (no random draw: deterministic).
JITTER = (0.0, 0.004, -0.006, 0.011, -0.002, 0.007, -0.009, 0.003, 0.015, -0.004)
# The same spread, in another order and shifted by a hair: an A/A pair of two runs.
JITTER_AGAIN = (0.005, -0.003, 0.012, -0.007, 0.001, 0.009, -0.005, 0.002, -0.008, 0.006)


def processes(
    factor: float = 1.0, jitter: Sequence[float] = JITTER, slow: int = 0
) -> list[list[float]]:
    """Every parameter set's per-process values; `slow` of them 1.6x (a neighbour's)."""
    out = []
    for time in TIMES:
        values = [time * factor * (1 + j) for j in jitter]
        for i in range(slow):
            values[i] *= 1.6
        out.append(values)
    return out


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def compare_json(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, Any]:
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(root), "--format", "json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_shown_values_are_the_medians_the_ratio_divides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three of A's ten processes slowed by a neighbour: asv's median of every sample moves,
    # the typical processes the verdict judges do not.
    root = per_process_tree(tmp_path, processes(slow=3), processes(1.05, JITTER_AGAIN))
    data = compare_json(capsys, root)
    assert data["pairs"]
    for pair in data["pairs"]:
        a, b = pair["a_spread"], pair["b_spread"]
        assert len(a["judged"]) == 7 and len(b["judged"]) == 10  # the stragglers left out
        assert pair["ratio"] == pytest.approx(pair["b"] / pair["a"], rel=1e-12)
        assert a["asv_value"] != pair["a"]  # asv's median counted the slowed processes
        for side, spread in ((pair["a"], a), (pair["b"], b)):
            assert min(spread["judged"]) <= side <= max(spread["judged"])


def test_the_table_agrees_with_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = per_process_tree(tmp_path, processes(slow=3), processes(1.05, JITTER_AGAIN))
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(root), "--all")
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("bench_time.Dumps.time_dumps")]
    assert len(rows) == len(TIMES)
    number = r"([\d.]+) (ns|µs|ms|s)\b"
    scale = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
    for row in rows:
        found = re.findall(number, row)
        # A, A's quartiles, B, B's quartiles: each value within its own spread.
        a, a_low, a_high, b, b_low, b_high = (float(v) * scale[u] for v, u in found[:6])
        assert a_low <= a <= a_high and b_low <= b <= b_high, row
        assert "IQR of 7 typical of 10 processes" in row
        ratio = float(re.findall(r"processes(?:, \d modes)?\)\s+([\d.]+)\s", row)[-1])
        # The ratio is the shown values' (to the 3 significant figures they are shown to,
        # each within 0.25 % of the value it rounds).
        assert ratio == pytest.approx(b / a, rel=0.006), row


def test_fail_on_slower_fails_an_injected_20_percent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = per_process_tree(tmp_path, processes(), processes(1.20, JITTER_AGAIN))
    code, _, err = run(
        capsys, "compare", "a", "b", "--results", str(root), "--fail-on", "slower:10"
    )
    assert code == 1, err
    assert "--fail-on slower:10: FAILED: 4 of 4 timing(s)" in err
    assert err.count("B/A 1.2") == 4
    # The same slowdown under a higher bar passes: the percentage is the check's own.
    code, _, err = run(
        capsys, "compare", "a", "b", "--results", str(root), "--fail-on", "slower:25"
    )
    assert code == 0, err
    assert "--fail-on slower:25: passed" in err


def test_fail_on_passes_an_a_a_pair_and_a_faster_b(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    aa = per_process_tree(tmp_path / "aa", processes(), processes(1.0, JITTER_AGAIN))
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(aa), "--fail-on", "slower:10")
    assert code == 0, err
    assert "passed: none of 4 timing(s)" in err
    faster = per_process_tree(tmp_path / "faster", processes(), processes(0.7, JITTER_AGAIN))
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(faster), "--fail-on", "slower")
    assert code == 0, err


def test_without_fail_on_a_slower_timing_still_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = per_process_tree(tmp_path, processes(), processes(1.20, JITTER_AGAIN))
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 0, err
    assert "slower" in out and "--fail-on" not in err


@pytest.mark.parametrize("bad", ["faster", "slower:", "slower:ten", "slower:-5", "slower:nan"])
def test_a_bad_fail_on_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    root = per_process_tree(tmp_path, processes(), processes())
    with pytest.raises(SystemExit) as exited:
        main(["compare", "a", "b", "--results", str(root), "--fail-on", bad])
    assert exited.value.code == 2
    assert "--fail-on" in capsys.readouterr().err


def test_an_error_exits_3_apart_from_a_failed_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "compare", "a", "b", "--results", str(tmp_path / "none"))
    assert code == 3
    assert "serkit: error: no asv results in" in err


def test_parse_fail_on() -> None:
    assert parse_fail_on("slower").percent == DEFAULT_PERCENT
    assert parse_fail_on("slower:12.5").percent == 12.5
    assert parse_fail_on("slower:7%").percent == 7
    assert parse_fail_on("slower:0").text == "slower:0"
