"""Stopping asv and everything it started: a real process tree, a real signal."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from serkit.run.process import Interrupted, run_in_session, session_members

pytestmark = pytest.mark.slow  # real process groups and signals

ROOT = Path(__file__).resolve().parents[1]

# What asv does: a child in a process group of its own (its benchmark server), here one
# that ignores SIGINT, as a benchmark deep in a C call may; then wait for it.
ASV_LIKE = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"],
        preexec_fn=lambda: os.setpgid(0, 0),
    )
    print(child.pid, flush=True)
    child.wait()
    """
)

# serkit's side: run ASV_LIKE in a session and report how it ended.
SERKIT_LIKE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from serkit.run.process import Interrupted, run_in_session
    # With "pipe", asv's output is read line by line, as `serkit bench` reads it.
    output = (lambda line: print(line, flush=True)) if sys.argv[2:] == ["pipe"] else None
    try:
        run_in_session([sys.executable, "-c", sys.argv[1]], cwd=Path("."), output=output)
    except Interrupted as exc:
        print(f"stopped {exc.exit_status}", flush=True)
        sys.exit(exc.exit_status)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads sessions from /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("how", ["terminal", "pipe"])
def test_a_signal_stops_asv_and_the_process_group_it_made(signum: int, how: str) -> None:
    serkit = subprocess.Popen(
        [sys.executable, "-c", SERKIT_LIKE, ASV_LIKE, how],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert serkit.stdout is not None
    grandchild = int(serkit.stdout.readline())  # asv's child is running
    assert _alive(grandchild)
    serkit.send_signal(signum)
    status = serkit.wait(timeout=10)
    assert status == 128 + signum
    # Piped, asv's own last words (its traceback at the signal) come first.
    assert serkit.stdout.read().strip().splitlines()[-1] == f"stopped {128 + signum}"
    # No bound on how long the stop took: it waits at most GRACE_S before it kills the
    # session, and the rest is the machine's speed (2.96 s once at a load of 10). The
    # wait's timeout above catches a stop that never comes.
    assert not _alive(grandchild)  # in its own group, ignoring SIGINT: killed all the same


def test_a_normal_exit_returns_the_status_and_leaves_nothing_behind(tmp_path: Path) -> None:
    script = "import sys; sys.exit(3)"
    assert run_in_session([sys.executable, "-c", script], cwd=tmp_path) == 3


def test_output_reads_every_line_of_stdout_and_stderr(tmp_path: Path) -> None:
    lines: list[str] = []
    script = "import sys; print('one'); print('two', file=sys.stderr); print('three')"
    code = run_in_session([sys.executable, "-c", script], cwd=tmp_path, output=lines.append)
    assert code == 0
    assert sorted(lines) == ["one", "three", "two"]  # stderr is unbuffered: order may differ
    assert lines.index("one") < lines.index("three")


def test_session_members_lists_a_session_by_its_leader() -> None:
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert session_members(sleeper.pid) == [sleeper.pid]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert session_members(sleeper.pid) == []


def test_interrupted_reports_as_a_shell_does() -> None:
    assert Interrupted(signal.SIGINT).exit_status == 130
    assert Interrupted(signal.SIGTERM, "kept 3 rounds").exit_status == 143
    assert str(Interrupted(signal.SIGTERM, "kept 3 rounds")) == "kept 3 rounds"
