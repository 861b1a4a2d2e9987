"""The quick run's time budget per timed pair: a call too long for it is timed once.

A timed pair takes one sample in each of `rounds` processes, and each process first
prepares the pair, which makes the call cold (serkit.suite.cases). For most pairs that
costs milliseconds; pure-Python YAML on random-dicts-1000 makes a 14 s call, and five
processes of it took minutes. So when BUDGET_ENV is set (the quick run's first round), a
process whose preparation shows that `rounds` processes of the pair would cost more than
the budget, at serkit's reference speed, times the pair right away, once: the call
preparation made is its warm-up. A first call is cold, and the samples are not: where the
cold call alone puts a pair over, but one up to COLD_CALL times faster would not, one
more call is made and the faster of the two judges.
It notes the pair in NOTES_ENV, and `serkit bench` leaves it out of the later rounds
(serkit.run.rounds), so the results keep that one sample (asv's `stats_repeat` is 1)
and every view says *single sample*, never a spread.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from serkit.errors import SerkitError
from serkit.files import atomic_write

BUDGET_ENV = "SERKIT_BENCH_BUDGET"  # seconds one timed pair may cost; unset: no budget
NOTES_ENV = "SERKIT_BENCH_NOTES"  # where a process notes the pairs it timed only once


def seconds_from_env(
    name: str,
    *,
    most: float,
    what: str,
    zero: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> float | None:
    """The environment variable `name` in seconds, above 0 (or from 0, with `zero`) up to
    `most`; None when unset. `what` ends the error: "give seconds <what>"."""
    value = environ.get(name, "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (seconds >= 0 if zero else seconds > 0) or seconds > most:
        raise SerkitError(f"{name}={value!r}: give seconds {what}")
    return seconds


def budget_from_env(environ: Mapping[str, str] = os.environ) -> float | None:
    """SERKIT_BENCH_BUDGET in seconds, or None when unset (every pair in every process)."""
    return seconds_from_env(BUDGET_ENV, most=3600, what="per pair, above 0", environ=environ)


# How much slower a pair's first call can read than its later ones: `orjson-dataclass`
# loads of twitter read 9.1-13.5 ms first in five fresh processes in the fast state (the
# canary at 1.03-1.07x its reference; 16.8 ms in a sixth, slow at 1.85x) and 6.7-7.3 ms
# in a run's fast processes (2026-11-28); its first call put it over the quick run's 2 s
# budget in one run of four.
COLD_CALL = 2.0


def pair_cost_s(prepare_s: float, call_s: float, rounds: int, samples: int = 1) -> float:
    """The least that timing a pair in `rounds` processes costs: each one prepares the pair,
    then makes the call at least once more for each of its `samples`."""
    return rounds * (prepare_s + samples * call_s)


@dataclass(frozen=True)
class SingleSample:
    """A pair timed once: its benchmark class (`module.Class`) and its parameters."""

    benchmark: str
    params: tuple[str, ...]
    prepare_s: float  # both at serkit's reference speed (timed_once)
    call_s: float


def note_single(folder: Path, single: SingleSample) -> None:
    """Note, for `serkit bench`, that this pair was timed once and must not be timed again."""
    key = f"{single.benchmark} {' '.join(single.params)}"
    path = folder / (hashlib.sha1(key.encode()).hexdigest()[:16] + ".json")
    atomic_write(path, json.dumps(single.__dict__ | {"params": list(single.params)}), sync=False)


def read_singles(folder: Path) -> Iterator[SingleSample]:
    """Every pair noted in `folder`; an unreadable note is left out (the pair is re-timed)."""
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            params: Sequence[str] = data["params"]
            yield SingleSample(
                str(data["benchmark"]),
                tuple(str(p) for p in params),
                float(data["prepare_s"]),
                float(data["call_s"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue


def timed_once(
    benchmark: str,
    params: tuple[str, ...],
    prepare_s: float,
    call_s: float,
    rounds: int,
    samples: int = 1,
    scale: Callable[[], float] | None = None,
    warm_call: Callable[[], float] | None = None,
) -> bool:
    """Whether the pair goes over the run's budget; if so, noted (see the module docstring).

    `scale`, asked only under a budget, turns the seconds measured into seconds at
    serkit's reference speed (serkit.suite.canary.reference_scale), as the run's plan is
    made: in the machine's own seconds, the slow state put json dumps of random-dicts-100
    over the budget in one run and not the next, so that one of two runs of a commit timed
    it once and the other in 7 processes. `warm_call` makes the call once more and returns
    its seconds, asked only where `call_s`, a cold first call, decides it (COLD_CALL)."""
    budget = budget_from_env()
    if budget is None:
        return False
    factor = scale() if scale is not None else 1.0
    prepare_s, call_s = prepare_s * factor, call_s * factor
    if pair_cost_s(prepare_s, call_s, rounds, samples) <= budget:
        return False
    if (
        warm_call is not None
        and pair_cost_s(prepare_s, call_s / COLD_CALL, rounds, samples) <= budget
    ):
        # In the same state as the first call: a state lasts seconds, the call milliseconds.
        call_s = min(call_s, warm_call() * factor)
        if pair_cost_s(prepare_s, call_s, rounds, samples) <= budget:
            return False
    folder = os.environ.get(NOTES_ENV, "").strip()
    if folder:
        note_single(Path(folder), SingleSample(benchmark, params, prepare_s, call_s))
    return True
