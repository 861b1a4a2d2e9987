"""Names from elsewhere (a machine's folder, a file's name) reach the terminal and Markdown
only through serkit's one escaper (serkit.text): an escape sequence is shown, not obeyed;
markup is text; a newline cannot begin a forged line of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from results_factory import SUITE, two_hosts, write_benchmarks

from serkit.cli import main
from serkit.run import runner

# An OSC title, a colour, markup, and a newline that would begin a line of its own.
HOSTILE = "b\x1b]0;pwned\x07\x1b[31m<img src=x onerror=alert(1)>\nserkit: error: forged"
FORGED = "serkit: error: forged"


def _hostile_machine(root: Path) -> Path:
    """Two hosts; b's folder, profile and results renamed to HOSTILE, as asv files them."""
    two_hosts(root)
    (root / "b").rename(root / HOSTILE)
    for path in (root / HOSTILE).glob("*.json"):
        data = json.loads(path.read_text())
        if "params" in data:
            data["params"]["machine"] = HOSTILE
        else:
            data["machine"] = HOSTILE
        path.write_text(json.dumps(data))
    return root


def _obeyed(text: str, markdown: bool = False) -> list[str]:
    """What of HOSTILE a terminal (or a Markdown page) would act on."""
    found = [c for c in ("\x1b", "\x07", *(["<img"] if markdown else [])) if c in text]
    return found + [line for line in text.splitlines() if line.startswith(FORGED)]


def test_one_line_of_a_diagnostic_keeps_a_newline_from_beginning_another() -> None:
    from serkit.text import diagnostic

    assert diagnostic("a\nserkit: error: b\x1b[2J") == "a\\nserkit: error: b\\x1b[2J"


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_hosts_shows_a_hostile_folder_name_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    root = _hostile_machine(tmp_path / "results")
    assert main(["hosts", "--results", str(root), "--format", fmt]) == 0
    out, err = capsys.readouterr()
    assert not _obeyed(out, fmt == "markdown") and not _obeyed(err)
    assert "pwned" in out  # shown, as text


def test_merge_shows_a_hostile_folder_name_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def discover(root: Path, folder: Path) -> Path:
        write_benchmarks(folder, SUITE)
        return folder / "benchmarks.json"

    monkeypatch.setattr(runner, "discover_benchmarks", discover)
    source = _hostile_machine(tmp_path / "results")
    main(["results", "merge", "--into", str(tmp_path / "store"), str(source)])
    out, err = capsys.readouterr()
    assert not _obeyed(out) and not _obeyed(err)
    assert "pwned" in err


def test_a_newline_in_a_file_name_cannot_forge_an_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tmp_path / f"x\n{FORGED}.json"
    assert main(["try", str(name)]) == 3
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no such file" in err and not _obeyed(err)
