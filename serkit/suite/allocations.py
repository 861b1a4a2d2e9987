"""What one call allocates, seen at the allocator: its peak in bytes and its allocations.

memray (Bloomberg) intercepts malloc, calloc, realloc, mmap and their frees in every
loaded library, so a C extension's own buffers count (libyaml's, ujson's, rapidjson's),
and with `trace_python_allocators` it sees every call into Python's object allocator
too, not only pymalloc's arenas. tracemalloc sees the latter only: it misses what a
C library gets from malloc directly.

What is counted: the allocations whose Python stack passes through `_measured_call`,
that is, made during the call (the tracker's own start and stop are left out). The
peak is the most bytes of those that were live at once; a free of memory that was live
before the call is ignored, so the peak is never below what the call itself holds.

One correction, made exactly. memray follows the Python stack through a profile hook,
and since Python 3.11 a profile hook makes the interpreter allocate a frame object for
every Python function called, which an unprofiled call does not. A run of the call under
a plain profile hook counts and sizes them: their number is taken off the allocation
count, and the frame objects of the frames on the stack at each point off the live bytes
(checked on a call that makes one bytes object through a dozen Python frames: one
allocation, and a peak of that object's size). Left: at the instant a frame object is
made its function is not yet on memray's stack, so a call whose own peak is under one
frame object (150-250 bytes) can read that much instead. Measure C callables directly
(functools.partial, not a lambda) and a compiled codec runs no Python frame at all.
"""

from __future__ import annotations

import gc
import platform
import sys
import tempfile
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from serkit.errors import SerkitError

# The platforms where memray intercepts native allocations.
PLATFORMS = ("Linux", "Darwin")
# Generators and coroutines keep one frame object across resumptions.
_RESUMABLE = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
# Since 3.11 frames are objects only when something asks for one (a profile hook does).
_PROFILER_MAKES_FRAMES = sys.version_info >= (3, 11)


class TrackerUnavailable(SerkitError):
    """memray cannot measure in this interpreter (not installed, or not this platform)."""


@dataclass(frozen=True)
class CallMemory:
    """What one call allocated."""

    peak_bytes: int  # most bytes allocated by the call and live at once
    allocations: int  # allocator calls that returned memory (malloc, realloc, ...)
    profiler_frames: int  # frame objects the profile hook forced, taken off `allocations`


def unavailable() -> str | None:
    """Why memray cannot measure here, or None when it can."""
    if platform.system() not in PLATFORMS:
        return f"memray tracks native allocations on Linux and macOS only, not {platform.system()}"
    if find_spec("memray") is None:
        return "memray is not installed (pip install 'serkit[memory]')"
    return None


def _measured_call(call: Callable[[], object]) -> object:
    """The one frame every counted allocation passes through."""
    return call()


_MEASURED = (_measured_call.__code__.co_name, _measured_call.__code__.co_filename)


def _tracked(call: Callable[[], object], capture: Path) -> None:
    import memray

    with memray.Tracker(capture, trace_python_allocators=True):
        # Dropped inside: what the tracker allocates on stopping then never tops the peak.
        _measured_call(call)


@dataclass
class ProfilerFrames:
    """The frame objects a profile hook makes the interpreter allocate during one call."""

    count: int = 0
    # Bytes of one frame object, by (function, file) as memray names a stack's frames.
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)


def profiler_frames(call: Callable[[], object]) -> ProfilerFrames:
    """Count and size the frame objects a profile hook forces during `call`.

    It also warms the call up for the tracker: reading each code object's `co_code`
    caches the copy that memray's hook would otherwise allocate on first sight.
    """
    frames = ProfilerFrames()
    seen: dict[int, types.FrameType] = {}  # resumable frames, held so ids stay unique

    def count(frame: types.FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        code.co_code  # noqa: B018 (cached on the code object)
        if code.co_flags & _RESUMABLE:
            if id(frame) in seen:
                return
            seen[id(frame)] = frame
        frames.count += 1
        frames.sizes[code.co_name, code.co_filename] = sys.getsizeof(frame)

    sys.setprofile(count)
    try:
        _measured_call(call)
    finally:
        sys.setprofile(None)
    seen.clear()
    frames.count -= 1  # _measured_call's own frame is made before the call starts
    return frames


def measure_call(call: Callable[[], object]) -> CallMemory:
    """Track one call of `call` with memray, in this process, and read what it allocated.

    Call it warm: the first call of a codec fills caches (interned keys, lazy imports)
    that the benchmarks' calls never pay again.
    """
    reason = unavailable()
    if reason is not None:
        raise TrackerUnavailable(reason)
    frames = profiler_frames(call)
    if not _PROFILER_MAKES_FRAMES:
        frames = ProfilerFrames()
    with tempfile.TemporaryDirectory(prefix="serkit-memray-") as folder:
        capture = Path(folder) / "call.bin"
        gc.collect()
        _tracked(call, capture)
        peak, allocations = _read(capture, frames.sizes)
    return CallMemory(peak, max(0, allocations - frames.count), frames.count)


def _read(capture: Path, frame_sizes: dict[tuple[str, str], int]) -> tuple[int, int]:
    """The peak of live bytes and the number of allocations made inside `_measured_call`.

    The peak leaves out the frame objects of the call's frames on the stack at each
    point, made by the tracker's profile hook (`frame_sizes`; empty before Python 3.11).
    """
    import memray

    frees = {
        memray.AllocatorType.FREE,
        memray.AllocatorType.PYMALLOC_FREE,
        memray.AllocatorType.MUNMAP,
    }
    # Stack id -> the profiler's frame bytes on it, or None when it is not the call's.
    frame_bytes: dict[int, int | None] = {}
    live: dict[int, int] = {}  # address -> bytes, of the call's allocations
    current = peak = allocations = 0
    # The loop runs once per record, millions of times for a large fixture: names are local.
    forget, remember, known = live.pop, live.__setitem__, frame_bytes.get
    with memray.FileReader(capture) as reader:
        for record in reader.get_allocation_records():
            if record.allocator in frees:  # frees carry no stack: match them by address
                current -= forget(record.address, 0)
                continue
            stack = record.stack_id
            if stack not in frame_bytes:
                frame_bytes[stack] = _frame_bytes(record.stack_trace(), frame_sizes)
            on_stack = known(stack)
            if on_stack is None:
                continue
            size = record.size
            allocations += 1
            current += size - forget(record.address, 0)
            remember(record.address, size)
            if current - on_stack > peak:
                peak = current - on_stack
    return peak, allocations


def _frame_bytes(
    stack: list[tuple[str, str, int]], frame_sizes: dict[tuple[str, str], int]
) -> int | None:
    """Bytes of profiler-made frame objects live on `stack`; None if it is not the call's."""
    names = [frame[:2] for frame in stack]  # innermost first
    if _MEASURED not in names:
        return None
    inside = names[: names.index(_MEASURED)]
    return sum(frame_sizes.get(name, 0) for name in inside)
