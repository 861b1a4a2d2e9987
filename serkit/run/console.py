"""What `serkit bench` shows while asv runs: a progress bar per `asv run`, asv's own words in a log.

asv prints every benchmark's whole parameter grid after each run of it, `n/a` wherever the
run selected none of the grid: the main command printed 7,776 lines, 5,984 of them such
rows. So asv's output goes to a log file under .asv/logs/, named once on the console; `-v`
shows it live as well. Its own progress lines say how many benchmarks a run holds
("Running 8 total benchmarks ...") and which one finished ("[12.50%] ··· name  ok"):
they move the bar (serkit.progress), whose ETA is then per round.
"""

from __future__ import annotations

import re
import sys
import time
from collections import deque
from pathlib import Path
from typing import IO, Any

from serkit.checkout import BENCH_LOGS
from serkit.progress import progress

# asv's line before it runs anything: how many benchmarks this `asv run` holds.
_TOTAL = re.compile(r"Running (\d+) total benchmarks")
# asv's line after each benchmark: its name (no spaces) and how it ended.
_FINISHED = re.compile(r"^\[\s*[\d.]+%\] ·+ (\S+)\s+(ok|failed|skipped|n/a)\s*$")
TAIL_LINES = 25  # of asv's output, shown when an `asv run` fails without -v


def new_log_path(root: Path) -> Path:
    """A fresh log file's path for one `serkit bench`, by the time it began."""
    return root / BENCH_LOGS / f"bench-{time.strftime('%Y%m%d-%H%M%S')}.log"


def finished_benchmark(line: str) -> str | None:
    """The benchmark an asv output line says has finished, if it says so."""
    found = _FINISHED.match(line)
    return found.group(1) if found else None


def total_benchmarks(line: str) -> int | None:
    """How many benchmarks an `asv run` holds, from its announcing line."""
    found = _TOTAL.search(line)
    return int(found.group(1)) if found else None


class AsvConsole:
    """asv's output for one `serkit bench`: appended to `log`, echoed when `verbose`, and
    read for a progress bar per `asv run` (none when verbose: the lines are the progress)."""

    def __init__(self, log: Path, *, verbose: bool = False, stream: IO[str] | None = None):
        self.log = log
        self.verbose = verbose
        self.stream = stream
        self._file: IO[str] | None = None
        self._bar: Any = None
        self._desc = ""
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.failed: dict[str, None] = {}  # the benchmarks asv said failed, in order

    def _out(self) -> IO[str]:
        return self.stream or sys.stderr

    def start(self, desc: str) -> None:
        """A new `asv run` begins: its bar appears once asv says how many benchmarks it has."""
        self.close_bar()
        self._desc = desc
        self._tail.clear()
        if self._file is None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.log.open("a", encoding="utf-8")
        self._file.write(f"=== serkit: {desc}\n")
        self._file.flush()
        if not self.verbose:  # until asv counts its benchmarks: its set-up, time ticking
            self._bar = progress(
                desc=f"{desc}: asv setting up,", unit="benchmark", bar_format="{desc} {elapsed}"
            )

    def line(self, text: str) -> None:
        """One line of asv's output."""
        if self._file is not None:
            self._file.write(text + "\n")
            self._file.flush()
        self._tail.append(text)
        found = _FINISHED.match(text)
        if found is not None and found.group(2) == "failed":
            self.failed[found.group(1)] = None
        if self.verbose:
            print(text, file=self._out(), flush=True)
            return
        total = total_benchmarks(text)
        if total is not None:
            self.close_bar()
            self._bar = progress(desc=self._desc, unit="benchmark", total=total)
            return
        name = found.group(1) if found else None
        if name is None and self._bar is not None and self._bar.total is None:
            self._bar.refresh()  # the set-up's time, moved on by each of its lines
        if name is not None and self._bar is not None:
            self._bar.set_postfix_str(name.split(".", 1)[-1], refresh=False)
            self._bar.update(1)

    def tail(self) -> list[str]:
        """The last lines of the current `asv run`'s output."""
        return list(self._tail)

    def close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def close(self) -> None:
        self.close_bar()
        if self._file is not None:
            self._file.close()
            self._file = None
