"""Does the asv suite's timing agree with a plain `timeit` of the same call?

Each round runs the real suite through `asv run` (in this interpreter, with the grid
narrowed to one pair and results kept in a temporary folder), then `timeit` on the
same call in this process. Rounds interleave, so machine noise hits both alike; the
verdict is the median of the rounds' ratios.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from .bench import asv, ensure_machine, scratch_config
from .errors import SerkitError
from .suite import CODECS_ENV, FIXTURES_ENV, prepare

BENCHMARKS = {
    "dumps": "bench_time.Dumps.time_dumps",
    "loads": "bench_time.Loads.time_loads",
    "round_trip": "bench_time.RoundTrip.time_round_trip",
}
TOLERANCE = 0.10


@dataclass(frozen=True)
class Agreement:
    codec: str
    fixture: str
    operation: str
    asv_s: list[float]  # asv's median, one per round
    timeit_s: list[float]  # timeit's median of 7 repeats, one per round

    @property
    def ratios(self) -> list[float]:
        return [a / t for a, t in zip(self.asv_s, self.timeit_s)]

    @property
    def ratio(self) -> float:
        # The median of per-round ratios: each round's pair ran back to back, so a
        # machine that speeds up or slows down between rounds moves both alike.
        return statistics.median(self.ratios)

    @property
    def within(self) -> bool:
        return abs(self.ratio - 1) <= TOLERANCE


def _git_head(root: Path) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SerkitError(f"{root} is not a git checkout: asv needs one")
    return done.stdout.strip()


def _asv_median(results: Path, benchmark: str) -> float:
    """The one non-skipped value of `benchmark` in the newest results file."""
    files = sorted(
        (p for p in results.glob("*/*.json") if p.name != "machine.json"),
        key=lambda p: p.stat().st_mtime,
    )
    if not files:
        raise SerkitError("asv wrote no results; see its output above")
    data = json.loads(files[-1].read_text())  # Python's json reads asv's NaN tokens
    row = dict(zip(data["result_columns"], data["results"].get(benchmark, [])))
    values = [v for v in row.get("result") or [] if v is not None and v == v]
    if len(values) != 1:
        raise SerkitError(f"expected one timing of {benchmark}, asv recorded {len(values)}")
    return float(values[0])


def _timeit_median(call: Callable[[], object]) -> float:
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return statistics.median(t / number for t in timer.repeat(repeat=7, number=number))


def measure(
    root: Path, codec: str, fixture: str, operation: str = "dumps", rounds: int = 5
) -> Agreement:
    benchmark = BENCHMARKS[operation]
    # Prepared once, before asv runs: a pair that cannot run fails now, with serkit's message.
    call = prepare(codec, fixture).operation(operation)
    env = {**os.environ, CODECS_ENV: codec, FIXTURES_ENV: fixture}
    asv_s: list[float] = []
    timeit_s: list[float] = []
    with tempfile.TemporaryDirectory(prefix="serkit-agreement-") as folder:
        scratch = Path(folder)
        config = scratch_config(root, scratch)
        ensure_machine(root, env)
        commit = _git_head(root)
        for _ in _rounds(rounds):
            args = ["run", "--config", str(config), "-E", f"existing:{sys.executable}"]
            args += ["--set-commit-hash", commit, "-b", "^" + re.escape(benchmark)]
            if asv(root, args, env, quiet=True) not in (0, 2):
                raise SerkitError("asv run failed; see its output above")
            asv_s.append(_asv_median(scratch / "results", benchmark))
            timeit_s.append(_timeit_median(call))
    return Agreement(codec, fixture, operation, asv_s, timeit_s)


def _rounds(count: int) -> Iterator[int]:
    yield from tqdm(range(count), desc="rounds", unit="round", file=sys.stderr, disable=None)
