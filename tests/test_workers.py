from __future__ import annotations

import os
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serkit.checks.workers import Worker, class_name, one_line, run_forked
from serkit.errors import EncodeError


@pytest.mark.slow
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


# --- run_forked: work in a child that shares the document --------------------------------


def test_a_forked_childs_value_and_what_it_raised_come_back() -> None:
    document = {"rows": list(range(1000))}  # shared with the child, never sent to it
    assert run_forked(lambda: sum(document["rows"]), 60).value == 499500
    raised = run_forked(lambda: int("x"), 60).raised
    assert isinstance(raised, ValueError) and "invalid literal" in str(raised)
    assert isinstance(run_forked(_encode_error, 60).raised, EncodeError)


def _encode_error() -> None:
    raise EncodeError("json cannot encode bytes")


def test_a_forked_child_past_its_time_is_stopped_in_python_or_in_c(
    capfd: pytest.CaptureFixture[str],
) -> None:
    start = time.monotonic()
    assert run_forked(_spin, 0.3).timed_out
    assert run_forked(lambda: time.sleep(60), 0.3).timed_out  # no signal reaches C code
    assert time.monotonic() - start < 30
    assert run_forked(lambda: 1, 0).timed_out  # no time at all: nothing starts
    out, err = capfd.readouterr()
    assert not out and not err


def _spin() -> None:
    while True:
        pass


def test_a_forked_child_that_dies_says_how_in_words_and_prints_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert run_forked(os.abort, 60).died == "SIGABRT"
    assert run_forked(lambda: os._exit(3), 60).died == "exit 3"
    out, err = capfd.readouterr()
    assert not out and not err  # faulthandler's dump, a library's last words: not shown


def test_what_cannot_travel_back_comes_back_as_its_class_and_words() -> None:
    raised = run_forked(_unpicklable_error, 60).raised
    assert isinstance(raised, RuntimeError) and "Local: no pickle" in str(raised)


def _unpicklable_error() -> None:
    class Local(Exception):
        pass

    raise Local("no pickle")


class NeedsTwo(Exception):
    """Pickles, but its rebuilding calls __init__ with one argument: it cannot come back."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} {second}")


def _unrebuildable_error() -> None:
    raise NeedsTwo("no", "rebuild")


def test_what_pickles_but_cannot_be_rebuilt_comes_back_as_its_class_and_words() -> None:
    raised = run_forked(_unrebuildable_error, 60).raised
    assert isinstance(raised, RuntimeError) and "NeedsTwo: no rebuild" in str(raised)
