"""A codec's timed processes judged into one Timing an operation, as a results tree's are.

Every process is judged by serkit.results.judging: its value from its samples taken in the
machine's fast state, else corrected from its slow ones, and weighed in the verdict by the
state it was timed in. This VM's two vCPUs each flip between a fast state and one about
1.7x slower, on a scale of 0.1-60 s: in one process, every codec's samples fell in both
states and each run named another winner.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from serkit.results.judging import judge
from serkit.results.measurement import Benchmark, Environment, Measurement
from serkit.sample_speed import (
    CORRECTED,
    FROM_FAST,
    RAW,
    ProcessValue,
    StateShare,
    reading,
    reference,
    state_share,
)
from serkit.stats import quartiles
from serkit.trial.sampling import OPERATIONS, SAMPLES_PER_PROCESS, Key, Process


@dataclass(frozen=True)
class Timing:
    """One call on the document: every sample its processes took, process after process,
    with the canary's readings around each, and each process as judged."""

    samples: tuple[float, ...]  # seconds per call
    calls_per_sample: int = 1
    # No process fit its share of the budget: the only figure is the first, cold call
    # that preparing the pair made.
    first_call_only: bool = False
    canary: tuple[tuple[float, float], ...] = ()  # ns before and after each sample
    per_process: int = 0  # samples each process took; 0: not taken by processes
    processes: tuple[ProcessValue, ...] = ()  # judged as a results tree's (`judged`)

    @property
    def values(self) -> tuple[float, ...]:
        """What the verdict ranks and the table shows: each process's value as judged;
        each sample where no process was judged."""
        return tuple(p.value for p in self.processes) or self.samples

    @property
    def weights(self) -> tuple[float, ...]:
        """What each of `values` counts for in the verdict test; () where not judged."""
        return tuple(p.weight for p in self.processes)

    @property
    def quartiles(self) -> tuple[float, float, float]:
        return quartiles(self.values)

    @property
    def median(self) -> float:
        return self.quartiles[1]


def timing_dict(timing: Timing | None) -> dict[str, Any] | None:
    """A timing for JSON: its quartiles in seconds, and how it was sampled and judged."""
    if timing is None:
        return None
    q1, median, q3 = timing.quartiles
    return {
        "median_s": median,
        "q1_s": q1,
        "q3_s": q3,
        "samples": len(timing.samples),
        "calls_per_sample": timing.calls_per_sample,
        "first_call_only": timing.first_call_only,
        "processes": len(timing.processes),
        "samples_per_process": timing.per_process,
        # How each process's value was taken (serkit.sample_speed): from fast samples,
        # corrected from slow ones, or raw where no state was known.
        "processes_by_state": {
            how: sum(p.how == how for p in timing.processes) for how in (FROM_FAST, CORRECTED, RAW)
        },
    }


def timings_of(processes: Sequence[Process], numbers: Mapping[str, int]) -> dict[str, Timing]:
    """Each operation's Timing from its processes, not yet judged."""
    return {
        operation: Timing(
            tuple(sample for process in processes for sample, _, _ in process[operation]),
            numbers[operation],
            canary=tuple((b, a) for process in processes for _, b, a in process[operation]),
            per_process=SAMPLES_PER_PROCESS,
        )
        for operation in OPERATIONS
    }


def judged(timings: Mapping[Key, Timing], run: str) -> dict[Key, Timing]:
    """`timings` (one run's) with each process judged as `serkit compare` judges a results
    tree's (serkit.results.judging): against the fast canary reading of every sample of
    the run, which `serkit try --into` writes as one results file."""
    benchmarks = {
        operation: Benchmark(operation, "time", "seconds", repeat=SAMPLES_PER_PROCESS)
        for operation in OPERATIONS
    }
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    keys = [key for key, timing in timings.items() if timing.canary]
    measurements = [
        Measurement(
            machine="serkit-try",
            commit="",
            date=0,
            env=Environment(python, ()),
            benchmark=operation,
            params=(codec,),
            value=None,
            ci_99=None,
            iqr=None,
            code_version=None,
            file=Path(run),
            samples=timings[codec, operation].samples,
            canary=tuple(reading(b, a) for b, a in timings[codec, operation].canary),
            samples_per_process=timings[codec, operation].per_process,
        )
        for codec, operation in keys
    ]
    found = judge(measurements, benchmarks)
    out = dict(timings)
    for key, m in zip(keys, found):
        out[key] = replace(timings[key], processes=m.processes)
    return out


def run_state(timings: Iterable[Timing]) -> StateShare | None:
    """How much of a run's samples the machine spent in its slow state, judged against the
    run's own fast canary reading, as its results file would be; None: no samples."""
    readings = [reading(b, a) for timing in timings for b, a in timing.canary]
    return state_share(readings, reference(readings)) if readings else None
