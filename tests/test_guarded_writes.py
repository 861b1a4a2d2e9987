"""serkit/files.py, the guarded writer, and every command that writes through it: no link
followed, no FIFO opened, no partial or empty file, the old state kept (issue 56)."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from results_factory import serkit_tree as write_tree
from test_try_save import trial

from serkit import files
from serkit.cli import main
from serkit.errors import RefusedTarget, SerkitError
from serkit.inputs.user_fixtures import MANIFEST, add_document
from serkit.report import html as report_html
from serkit.run.machine_profile import PROFILES_FILE, machine_name
from serkit.trial.save import save

TESTS = Path(__file__).resolve().parent


def outside_file(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("not serkit's")
    return secret


def visible_files(root: Path) -> list[Path]:
    """Every file a reader of `root` sees: not the hidden temporaries of a cut write."""
    return [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]


def assert_all_parse(root: Path) -> None:
    import yaml

    for path in visible_files(root):
        assert path.stat().st_size > 0, path
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".yaml":
            yaml.safe_load(path.read_text())


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in visible_files(root)}


class FullDisk:
    """os.fdopen's file, whose write fails half-way with ENOSPC at the `at`-th write."""

    def __init__(self, at: int = 1) -> None:
        self.at, self.count = at, 0
        self.real = os.fdopen

    def __call__(self, fd: int, *args: Any, **kwargs: Any) -> Any:
        stream = self.real(fd, *args, **kwargs)
        self.count += 1
        if self.count < self.at:
            return stream
        write = stream.write

        def half(data: bytes) -> int:
            write(data[: len(data) // 2])
            stream.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        stream.write = half
        return stream


# --- the writer ---------------------------------------------------------------------------


def test_a_link_at_the_target_is_refused_and_its_file_untouched(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    link = tmp_path / "out.json"
    link.symlink_to(secret)
    with pytest.raises(RefusedTarget, match=r"out\.json is a symbolic link"):
        files.atomic_write(link, "{}")
    assert secret.read_text() == "not serkit's" and link.is_symlink()
    dangling = tmp_path / "new.json"
    dangling.symlink_to(tmp_path / "outside" / "created.json")
    with pytest.raises(RefusedTarget):
        files.atomic_write(dangling, "{}")
    assert not (tmp_path / "outside" / "created.json").exists()


def test_a_fifo_at_the_target_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "benchmarks.json"
    os.mkfifo(fifo)
    with pytest.raises(RefusedTarget, match=r"benchmarks\.json is a FIFO"):
        files.atomic_write(fifo, "{}")  # opening it would block forever
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_linked_folder_below_within_is_refused(tmp_path: Path) -> None:
    into = tmp_path / "into"
    into.mkdir()
    (into / "box").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "outside").mkdir()
    with pytest.raises(RefusedTarget, match="box is a symbolic link"):
        files.atomic_write(into / "box" / "machine.json", "{}", within=into)
    with pytest.raises(RefusedTarget):
        files.make_folder(into / "box" / "deeper", within=into)
    assert list((tmp_path / "outside").iterdir()) == []


def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_umasks(tmp_path: Path) -> None:
    shared = tmp_path / "shared.json"
    shared.write_text("{}")
    shared.chmod(0o644)
    old = os.umask(0o077)
    try:
        files.atomic_write(shared, '{"a": 1}')
        files.atomic_write(tmp_path / "new.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o600


def test_a_full_disk_leaves_the_old_file_whole_and_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"old": true}')
    monkeypatch.setattr(files.os, "fdopen", FullDisk())
    with pytest.raises(OSError) as raised:
        files.atomic_write(path, json.dumps({"new": list(range(1000))}))
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(path)
    assert path.read_text() == '{"old": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary left


# --- try --into ---------------------------------------------------------------------------


def test_try_into_refuses_a_link_where_benchmarks_json_goes(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    into = tmp_path / "D"
    into.mkdir()
    (into / "benchmarks.json").symlink_to(secret)
    with pytest.raises(SerkitError, match=r"benchmarks\.json is a symbolic link"):
        save([trial()], into, "monday")
    assert secret.read_text() == "not serkit's"
    (into / "benchmarks.json").unlink()
    (into / "benchmarks.json").symlink_to(tmp_path / "outside" / "created.json")
    with pytest.raises(SerkitError):
        save([trial()], into, "monday")
    assert not (tmp_path / "outside" / "created.json").exists()


@pytest.mark.parametrize("where", ["benchmarks.json", "monday/machine.json"])
def test_try_into_refuses_a_fifo_where_it_writes(tmp_path: Path, where: str) -> None:
    into = tmp_path / "D"
    (into / "monday").mkdir(parents=True)
    os.mkfifo(into / where)
    with pytest.raises(SerkitError, match="is a FIFO"):
        save([trial()], into, "monday")
    assert not list((into / "monday").glob("*-try-*.json"))


@pytest.mark.parametrize("where", ["benchmarks.json", "m/machine.json", "m"])
def test_try_into_refuses_a_fifo_or_link_before_measuring(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
) -> None:
    from serkit.cli import trial as trial_cli

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("measured before the folder was checked")

    monkeypatch.setattr(trial_cli, "try_paths", never)
    into = tmp_path / "D"
    (into / "m").mkdir(parents=True)
    if where == "m":
        (into / "m").rmdir()
        (into / "m").symlink_to(tmp_path, target_is_directory=True)
    else:
        os.mkfifo(into / where)
    document = tmp_path / "doc.json"
    document.write_text("[1]")
    assert main(["try", str(document), "--into", str(into), "--machine", "m"]) == 3
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("serkit: error:") and ("FIFO" in line or "symbolic link" in line)


def test_try_into_a_linked_machine_folder_writes_nothing_outside(tmp_path: Path) -> None:
    into, outside = tmp_path / "D", tmp_path / "outside"
    into.mkdir()
    outside.mkdir()
    (into / "monday").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SerkitError, match="monday is a symbolic link"):
        save([trial()], into, "monday")
    assert list(outside.iterdir()) == []


def test_try_into_on_a_full_disk_leaves_no_empty_results_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    into = tmp_path / "D"
    save([trial()], into, "monday")
    before = snapshot(into)
    monkeypatch.setattr(files.os, "fdopen", FullDisk(at=3))  # the results file, written last
    with pytest.raises(OSError) as raised:
        save([trial(1.1)], into, "monday")
    assert raised.value.errno == errno.ENOSPC and "-try-" in str(raised.value.filename)
    assert snapshot(into) == before
    assert_all_parse(into)
    assert not [p for p in into.rglob("*") if p.name.startswith(".")]


def test_the_default_machine_name_from_asvs_profile_is_checked_as_machine_is(
    tmp_path: Path,
) -> None:
    (tmp_path / PROFILES_FILE).write_text(
        json.dumps({"myhost": {"machine": "../../x"}, "version": 1})
    )
    with pytest.raises(SerkitError, match=r"'\.\./\.\./x' cannot name a machine"):
        machine_name(home=tmp_path, node="myhost", environ={})
    (tmp_path / PROFILES_FILE).write_text(
        json.dumps({"myhost": {"machine": "box-1"}, "version": 1})
    )
    assert machine_name(home=tmp_path, node="myhost", environ={}) == "box-1"


def test_saving_refuses_a_machine_name_that_is_a_path(tmp_path: Path) -> None:
    with pytest.raises(SerkitError, match="cannot name a machine"):
        save([trial()], tmp_path / "D", "../../x")
    assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x").exists()


# --- report ---------------------------------------------------------------------------------


def report(tmp_path: Path, output: Path) -> report_html.Written:
    results = tmp_path / "results"
    if not results.is_dir():
        write_tree(results)
    return report_html.write_report(tmp_path, results, output, asv_runner=None)


def test_report_refuses_a_link_or_fifo_at_its_index(tmp_path: Path) -> None:
    secret = outside_file(tmp_path)
    output = tmp_path / "R"
    output.mkdir()
    (output / "index.html").symlink_to(secret)
    with pytest.raises(RefusedTarget, match=r"index\.html is a symbolic link"):
        report(tmp_path, output)
    assert secret.read_text() == "not serkit's"
    (output / "index.html").unlink()
    os.mkfifo(output / "index.html")
    with pytest.raises(RefusedTarget, match=r"index\.html is a FIFO"):
        report(tmp_path, output)


def test_the_version_index_skips_a_fifo_or_link_as_another_versions_manifest(
    tmp_path: Path,
) -> None:
    secret = outside_file(tmp_path)
    output = tmp_path / "R"
    (output / "planted").mkdir(parents=True)
    os.mkfifo(output / "planted" / "report.json")  # reading it would block forever
    (output / "linked").mkdir()
    (output / "linked" / "report.json").symlink_to(secret)
    written = report(tmp_path, output)
    index = written.index.read_text()
    assert written.folder.name in index and "planted" not in index and "linked" not in index


def test_a_report_that_fails_half_way_leaves_the_previous_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "R"
    first = report(tmp_path, output)
    before = snapshot(output)
    assert (first.folder / "report.json").is_file()
    for at in (1, 2, 5, 12):
        with monkeypatch.context() as patch:
            patch.setattr(files.os, "fdopen", FullDisk(at=at))
            with pytest.raises(OSError) as raised:
                report(tmp_path, output)
        # Named as the file would have been, not by its temporary folder.
        assert str(raised.value.filename).startswith(str(first.folder)), raised.value.filename
        assert snapshot(output) == before, at
        assert sorted(p.name for p in output.iterdir()) == sorted(
            p.name for p in output.iterdir() if not p.name.startswith(".")
        )
    again = report(tmp_path, output)
    assert (again.folder / "report.json").is_file()


def test_report_on_a_full_disk_exits_3_in_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results, output = write_tree(tmp_path / "results"), tmp_path / "R"
    args = ["report", "--results", str(results), "--into", str(output), "--no-asv"]
    assert main(args) == 0
    before = snapshot(output)
    capsys.readouterr()
    monkeypatch.setattr(files.os, "fdopen", FullDisk(at=1))  # plotly.min.js, 4.8 MB
    assert main(args) == 3
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("serkit: error:")]
    full = "plotly.min.js: no space left on the device (ENOSPC)"
    assert len(lines) == 1 and full in lines[0], err
    assert "Traceback" not in err
    assert snapshot(output) == before


# --- fixtures add ---------------------------------------------------------------------------


def test_fixtures_add_keeps_a_shared_manifests_mode(tmp_path: Path) -> None:
    store = tmp_path / "user"
    document = tmp_path / "a.json"
    document.write_text("[1, 2]")
    add_document(document, where=store)
    (store / MANIFEST).chmod(0o644)
    other = tmp_path / "b.json"
    other.write_text("[3]")
    old = os.umask(0o077)
    try:
        add_document(other, where=store)
    finally:
        os.umask(old)
    assert stat.S_IMODE((store / MANIFEST).stat().st_mode) == 0o644


# --- kill -9 at chosen points: a real SIGKILL, at the Nth write, in a process of its own ------

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from serkit import files
    count = [0]
    real_write, real_rename = files._write_temporary, os.rename

    def write(*args, **kwargs):
        name = real_write(*args, **kwargs)  # the temporary, whole, not yet renamed
        count[0] += 1
        if count[0] == {at}:
            os.kill(os.getpid(), signal.SIGKILL)
        return name

    files._write_temporary = write
    {body}
    """
)


def killed_at(at: int, body: str) -> int:
    """Run `body` in a new interpreter, killed by SIGKILL at its `at`-th file write; its
    return code (-9 when the kill came, 0 when it ran out of writes first)."""
    script = KILLER.format(tests=str(TESTS), at=at, body=textwrap.dedent(body))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    return done.returncode


@pytest.mark.slow  # new interpreters, killed at each write
def test_a_report_killed_at_any_write_leaves_the_previous_report_whole(tmp_path: Path) -> None:
    output = tmp_path / "R"
    first = report(tmp_path, output)
    before = snapshot(output)
    body = f"""
    from pathlib import Path
    from serkit.report import html
    html.write_report(Path({str(tmp_path)!r}), Path({str(tmp_path / "results")!r}),
                      Path({str(output)!r}), asv_runner=None)
    """
    total = len(first.pages) + 3  # plotly.min.js, the pages, report.json, the index
    for at in (1, 2, total // 2, total - 1):  # while the new version is built
        assert killed_at(at, body) == -signal.SIGKILL
        assert snapshot(output) == before, at
    # Killed writing the index, after the swap: the new report, whole, and the index before.
    assert killed_at(total, body) == -signal.SIGKILL
    assert snapshot(output)["index.html"] == before["index.html"]
    assert json.loads((first.folder / "report.json").read_text())["stamp"] == first.folder.name
    again = report(tmp_path, output)
    assert_all_parse(output)
    assert not [p for p in output.iterdir() if p.name.startswith(".") and p.is_dir()]
    assert (again.folder / "index.html").is_file()


@pytest.mark.slow  # new interpreters, killed at each write
def test_try_into_killed_at_any_write_leaves_whole_files(tmp_path: Path) -> None:
    into = tmp_path / "D"
    body = f"""
    from pathlib import Path
    from test_try_save import trial
    from serkit.trial.save import save
    save([trial()], Path({str(into)!r}), "monday")
    """
    for at in (1, 2, 3):
        assert killed_at(at, body) == -signal.SIGKILL
        assert_all_parse(into)
    assert killed_at(4, body) == 0  # three writes: the run completes
    assert_all_parse(into)
    from serkit.results.tree import read_tree

    tree = read_tree(into)
    assert not tree.warnings and tree.machines["monday"].measurements


def test_a_timed_processs_note_and_the_runs_ledger_never_write_through_a_link(
    tmp_path: Path,
) -> None:
    """A plain run's canary notes sit in the results tree, a run's ledger in its notes
    folder: both are written in place, many times a second, and neither follows a link or
    blocks on a FIFO planted where it goes; the file a link names is left as it was."""
    from serkit.files import open_in_place
    from serkit.suite import canary
    from serkit.suite.state_watch import Placement

    victim = tmp_path / "victim.txt"
    victim.write_text("kept")
    notes = tmp_path / "notes"
    notes.mkdir()
    planted = notes / canary._note_name()
    planted.symlink_to(victim)
    canary._open_notes.clear()
    with pytest.raises(RefusedTarget, match="symbolic link"):
        canary._rewrite_note(notes, b'{"t": [1.0]}')
    assert victim.read_text() == "kept"

    fifo = tmp_path / "ledger"
    os.mkfifo(fifo)
    with pytest.raises(RefusedTarget, match="FIFO"):
        open_in_place(fifo, os.O_APPEND)
    # A sample moved still counts nowhere rather than stop its process.
    readings = iter([200.0, 100.0, 150.0])  # here, then on vCPU 0 and vCPU 1
    placement = Placement(140.0, (0, 1), fifo, canary=readings.__next__, pin=lambda cpus: None)
    placement.place()
    assert placement.moved == 1 and placement.on == 0

    ledger = tmp_path / "placements"
    for _ in range(3):
        fd = open_in_place(ledger, os.O_APPEND)
        os.write(fd, b">")
        os.close(fd)
    assert ledger.read_bytes() == b">>>"
