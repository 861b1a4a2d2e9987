"""`serkit compare` in one screen: what changed, the summary and the machines' state by
default; every pair with --all; the rules with --explain; a PR comment in Markdown; and a
run compared with itself said in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serkit.cli import main
from serkit.compare import render as render_module
from serkit.compare.comparison import compare
from serkit.compare.render import headline, render
from serkit.compare.verdicts import NOISE_RULE
from serkit.results.tree import read_tree
from serkit.sample_speed import STATE_RULE
from tests.results_factory import TIMES, per_process_tree
from tests.test_compare_gate import JITTER_AGAIN, processes, run

TIMING = "bench_time.Dumps.time_dumps"


def changed_tree(root: Path) -> Path:
    """B against A: (json, small) 20 % slower, (json, large) 20 % faster, the rest A/A."""
    b = processes(1.0, JITTER_AGAIN)
    b[0] = [v * 1.2 for v in b[0]]
    b[1] = [v * 0.8 for v in b[1]]
    return per_process_tree(root, processes(), b)


def rows(out: str) -> list[str]:
    return [line for line in out.splitlines() if TIMING in line]


def test_by_default_compare_shows_what_changed_the_summary_and_the_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = changed_tree(tmp_path)
    code, out, err = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "1 of 4 timings slower, up to x1.20; 1 faster, down to x0.80."
    assert lines[1].startswith("A = a, B = b, commit 12345678: B/A below 1 is B faster")
    changed = rows(out)
    assert len(changed) == 2  # the two A/A pairs are counted, not shown
    # The largest change first: x0.80 is further from 1 than x1.20.
    assert "json, large" in changed[0] and "1.25x faster" in changed[0]
    assert "json, small" in changed[1] and "1.20x slower" in changed[1]
    assert "Not shown, unchanged: 2 same." in out
    assert "Machine state: not recorded (no canary in these results)." in out
    assert "--all shows every pair" in out and "--explain" in out
    assert NOISE_RULE not in out and "IQR of" not in out  # the rules and spreads wait
    assert len(lines) <= 40


def test_all_shows_every_pair_and_explain_the_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = changed_tree(tmp_path)
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root), "--all")
    assert code == 0
    assert len(rows(out)) == len(TIMES) and "IQR of" in out
    assert "geometric mean of B/A" in out and NOISE_RULE not in out
    assert "--explain shows the rules" in out and "--all shows" not in out
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root), "--explain")
    assert code == 0
    assert len(rows(out)) == 2 and NOISE_RULE in out
    # No canary in these results (a `try` tree): the machine-state rules have nothing to say.
    assert STATE_RULE not in out


def test_the_state_rules_are_explained_where_a_canary_recorded_the_state(
    tmp_path: Path,
) -> None:
    result = compare(read_tree(changed_tree(tmp_path)), "a", "b")
    result.canary = True  # as where each sample carries a canary reading
    assert STATE_RULE in render(result, explain=True)
    assert STATE_RULE not in render(result)


def test_the_largest_changes_are_shown_first_and_the_rest_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render_module, "MOST_SHOWN", 1)
    root = changed_tree(tmp_path)
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 0
    (shown,) = rows(out)
    assert "1.25x faster" in shown  # 0.8 is further from 1 than 1.2 is
    assert "... and 1 more changed (--all lists them)" in out


def test_markdown_is_a_pr_comment_headline_then_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = changed_tree(tmp_path)
    argv = ("compare", "a", "b", "--results", str(root), "--format", "markdown")
    code, out, _ = run(capsys, *argv)
    assert code == 0
    lines = out.splitlines()
    words = "1 of 4 timings slower, up to x1.20; 1 faster, down to x0.80"
    assert lines[0] == f"### serkit compare: {words}"
    assert len([line for line in lines if line.startswith(f"| {TIMING}")]) == 2
    counted = [line.split("|")[1:4] for line in lines if line.startswith("| same")]
    assert [[cell.strip() for cell in row] for row in counted] == [["same", "2", "0"]]
    assert len(lines) <= 60
    code, out, _ = run(capsys, *argv, "--all")
    assert len([line for line in out.splitlines() if line.startswith(f"| {TIMING}")]) == 4


def test_the_headline_counts_timings_and_names_the_largest_change(tmp_path: Path) -> None:
    same = per_process_tree(tmp_path / "same", processes(), processes(1.0, JITTER_AGAIN))
    assert headline(compare(read_tree(same), "a", "b")) == "none of 4 timings slower or faster"
    faster = per_process_tree(tmp_path / "faster", processes(), processes(0.7, JITTER_AGAIN))
    assert headline(compare(read_tree(faster), "a", "b")) == "4 of 4 timings faster, down to x0.70"


def test_json_keeps_every_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = changed_tree(tmp_path)
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == "serkit-compare/4" and len(data["pairs"]) == len(TIMES)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_run_compared_with_itself_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    root = changed_tree(tmp_path)
    argv = ("compare", "a", "a", "--results", str(root), "--format", fmt)
    code, out, err = run(capsys, *argv, "--fail-on", "slower:0")
    assert code == 0, err
    assert out.count("\n") == 1 and "compares a run with itself" in out
    assert "noise measurement" not in err  # no verdict was made: no floor to warn of


def test_a_run_compared_with_itself_still_gives_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = changed_tree(tmp_path)
    code, out, err = run(capsys, "compare", "b", "b", "--results", str(root), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert len(data["pairs"]) == len(TIMES) and {p["ratio"] for p in data["pairs"]} == {1.0}
    assert "compares a run with itself" in err


def test_two_machines_unlike_in_name_are_not_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = per_process_tree(tmp_path, processes(), processes())  # equal values, two files
    code, out, _ = run(capsys, "compare", "a", "b", "--results", str(root))
    assert code == 0 and "compares a run with itself" not in out
    assert main(["compare", "a", "b", "--results", str(root), "--format", "json"]) == 0


SAVED = Path(__file__).parent / "data" / "saved_tree"  # three hosts' runs, with canaries


@pytest.mark.parametrize(("a", "b"), [("a", "b"), ("a", "c"), ("b", "c")])
def test_the_saved_trees_comparisons_fit_one_screen(
    a: str, b: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "compare", a, b, "--results", str(SAVED))
    assert code == 0
    lines = out.splitlines()
    assert "timings slower" in lines[0] and len(lines) <= 40
    assert sum(line.startswith("Machine state on ") for line in lines) == 1  # one line
    # In a few words: "slow in 28% of 320 samples"; how the canary corrected, --explain.
    (state,) = [line for line in lines if line.startswith("Machine state on ")]
    assert "slow in 28% of 320 samples" in state and "canary" not in state
    code, out, _ = run(capsys, "compare", a, b, "--results", str(SAVED), "--format", "markdown")
    assert code == 0 and len(out.splitlines()) <= 60
    code, out, _ = run(capsys, "compare", a, b, "--results", str(SAVED), "--explain")
    assert STATE_RULE in out  # these runs' canaries recorded the state
    assert "slow state in 28% of 320 samples, where the canary took x1.8" in out
