from __future__ import annotations

import queue
import subprocess
import sys
from pathlib import Path

import pytest

from serkit.checks.workers import Worker, class_name, one_line


def test_limit_resources_caps_the_address_space() -> None:
    pytest.importorskip("resource")
    script = (
        "import resource\n"
        "from serkit.checks.workers import limit_resources\n"
        "limit_resources(512 << 20)\n"
        "limits = resource.RLIMIT_AS, resource.RLIMIT_CORE\n"
        "print(*(resource.getrlimit(limit)[0] for limit in limits))\n"
        "try:\n"
        "    bytearray(1 << 30)\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == [str(512 << 20), "0", "MemoryError"]


def test_a_worker_is_read_line_by_line_and_named_by_how_it_ended(tmp_path: Path) -> None:
    # The worker runs in `scratch`, which `python -m` puts first on sys.path.
    (tmp_path / "abort_now.py").write_text("import os\nprint('ready', flush=True)\nos.abort()\n")
    (tmp_path / "sleep_now.py").write_text("import time\ntime.sleep(60)\n")
    aborting = Worker("abort_now", [], tmp_path, "abort")
    assert aborting.next_line(30) == "ready"
    assert aborting.next_line(30) is None  # the stream ended: the worker is gone
    assert aborting.end() == "SIGABRT"
    sleeping = Worker("sleep_now", [], tmp_path, "sleep")
    with pytest.raises(queue.Empty):
        sleeping.next_line(0.5)
    assert sleeping.end() == "SIGKILL"  # killed by the parent
    failing = Worker("no_such_module_here", [], tmp_path, "fail")
    assert failing.next_line(30) is None and failing.end() == "exit 1"
    assert "No module named" in failing.stderr_tail()


def test_names_and_lines() -> None:
    assert class_name(ValueError()) == "ValueError"
    assert class_name(subprocess.TimeoutExpired("x", 1)) == "subprocess.TimeoutExpired"
    assert one_line("a\n  b\tc") == "a b c" and len(one_line("x" * 500)) == 200
