"""Progress for people, on stderr: the one progress bar (pipes and CI logs get none), and the
phase lines of a long command, each with the time since it began."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import IO, Any, TypeVar

T = TypeVar("T")


def progress(
    items: Iterable[T] | None = None,
    *,
    desc: str,
    unit: str,
    total: int | None = None,
    leave: bool = False,
    bar_format: str | None = None,
) -> Any:
    """A tqdm bar over `items` (or a manual one of `total` steps) that hides itself off a
    tty; `bar_format` as tqdm's (e.g. "{desc} {elapsed}" for a wait with nothing to count)."""
    from tqdm import tqdm  # 20 ms to import: paid by the commands that show a bar

    return tqdm(
        items,
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=None,
        leave=leave,
        bar_format=bar_format,
    )


def clock_text(seconds: float) -> str:
    """`0:42`, `12:05`, `1:02:05`: a duration as a clock shows it (tqdm's and hyperfine's way)."""
    hours, rest = divmod(round(max(seconds, 0.0)), 3600)
    minutes, whole = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{whole:02d}" if hours else f"{minutes}:{whole:02d}"


class PhaseClock:
    """A long command's phase lines on stderr, each ending in the time since it began, and,
    where the caller can tell it, the time left: on a terminal only, since a log keeps what
    happened, not a guess. `clock` and `tty` are for tests."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        stream: IO[str] | None = None,
        tty: bool | None = None,
    ) -> None:
        self._clock = clock
        self._stream = stream
        self._tty = tty
        self.began = clock()

    def restart(self) -> None:
        """The command begins now."""
        self.began = self._clock()

    def _out(self) -> IO[str]:
        return self._stream or sys.stderr  # read when said: a test may have replaced it

    def on_terminal(self) -> bool:
        if self._tty is not None:
            return self._tty
        isatty = getattr(self._out(), "isatty", None)
        return bool(isatty is not None and isatty())

    def words(self, text: str, left_s: float | None = None, *, at_most: bool = False) -> str:
        """`serkit: round 2 of 5 [0:42 elapsed, about 1:30 left]`; `at_most`: `up to 1:30 left`."""
        times = f"{clock_text(self._clock() - self.began)} elapsed"
        if left_s is not None and self.on_terminal():
            times += f", {'up to' if at_most else 'about'} {clock_text(left_s)} left"
        return f"serkit: {text} [{times}]"

    def say(self, text: str, left_s: float | None = None, *, at_most: bool = False) -> None:
        print(self.words(text, left_s, at_most=at_most), file=self._out(), flush=True)


# `serkit bench`'s phase lines, from the command line and the rounds alike; restarted when
# the command begins.
PHASES = PhaseClock()
