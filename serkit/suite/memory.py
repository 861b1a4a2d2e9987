"""Peak memory of one dumps or loads, measured in a fresh interpreter.

asv's own `peakmem_` reports the whole benchmark process, 27-31 MB before any work,
and a process forked from asv's server also carries the server's memory. So the
measurement runs in a new interpreter: it prepares the pair, resets the kernel's
high-water mark, runs the call once and reports how far resident memory rose above
where it stood. Linux only: the reset needs /proc/self/clear_refs.
"""

from __future__ import annotations

import gc
import re
import subprocess
import sys
from pathlib import Path

from serkit.errors import SerkitError

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def supported() -> bool:
    return _STATUS.exists() and _CLEAR_REFS.exists()


def _status_kib(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    if match is None:
        raise SerkitError(f"/proc/self/status has no {field}")
    return int(match.group(1))


def measure_here(codec: str, fixture: str, operation: str) -> int:
    """Bytes of resident memory that one `operation` adds, in this process."""
    from serkit.suite.cases import (
        prepare,  # deferred: the parent process never needs the codecs
    )

    # Decoding is proven only when a decode is what gets measured.
    call = prepare(codec, fixture, decode=operation != "dumps").operation(operation)
    gc.collect()
    _CLEAR_REFS.write_text("5")  # resets VmHWM to the current resident size
    before = _status_kib("VmRSS")
    result = call()
    peak = _status_kib("VmHWM")
    del result
    return max(0, peak - before) * 1024


def peak_rss_increase(codec: str, fixture: str, operation: str, timeout: float = 1800) -> int:
    """Bytes of resident memory one `operation` adds, measured in a fresh interpreter."""
    if not supported():
        raise NotImplementedError("peak memory needs Linux's /proc/self/clear_refs")
    command = [sys.executable, "-m", "serkit.suite.memory", codec, fixture, operation]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode == _CANNOT_RUN:  # not installed, or the codec refuses the fixture
        raise SerkitError(done.stderr.strip())
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"peak-memory run of {codec} on {fixture} failed: {last}")
    return int(done.stdout.strip())


_CANNOT_RUN = 3

if __name__ == "__main__":
    try:
        print(measure_here(*sys.argv[1:4]))
    except SerkitError as exc:
        print(exc, file=sys.stderr)
        sys.exit(_CANNOT_RUN)
