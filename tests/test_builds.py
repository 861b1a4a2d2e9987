"""The record of environments that could not be built, kept beside a machine's results."""

from __future__ import annotations

from pathlib import Path

from serkit.results.builds import (
    BUILDS_FILE,
    clear_failure,
    machine_builds,
    note_failure,
    read_builds,
)


def test_a_failure_is_noted_replaced_and_cleared(tmp_path: Path) -> None:
    path = tmp_path / BUILDS_FILE
    note_failure(path, "env-a", "py3.11 msgpack 9.9.9", "nothing installable", "x" * 9000)
    note_failure(path, "env-b", "py3.12 baseline", "a network failure")
    note_failure(path, "env-a", "py3.11 msgpack 9.9.9", "the disk is full")
    failures = read_builds(path)
    assert failures["env-a"].cause == "the disk is full" and len(failures) == 2
    assert [f.in_words() for f in machine_builds(tmp_path)] == [
        "py3.11 msgpack 9.9.9 was not built: the disk is full",
        "py3.12 baseline was not built: a network failure",
    ]
    note_failure(path, "env-a", "l", "c", "y" * 9000)
    assert len(read_builds(path)["env-a"].output) == 4000  # the end of it, not all
    clear_failure(path, "env-a")
    clear_failure(path, "env-b")
    assert not path.exists()


def test_a_broken_record_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / BUILDS_FILE).write_text("- not: [a, mapping")
    warnings: list[str] = []
    assert machine_builds(tmp_path, warnings) == []
    assert "not a serkit build record" in warnings[0]
