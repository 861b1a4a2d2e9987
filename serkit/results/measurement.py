"""What a results tree holds, once read: values, with the environment and benchmark behind
each, and how each value's processes were judged (serkit.results.judging).

serkit.results.tree reads them from the files asv wrote; every reader above it (compare,
the report, precision and cost) takes them as they are, and judges nothing again.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.sample_speed import ProcessValue

Interval = tuple[float, float]


def version_order(version: str) -> tuple[int, ...]:
    """A Python version as numbers, so that 3.9 sorts before 3.10, and a free-threaded
    build (3.14t) right after its version's default one."""
    threaded = version.endswith("t")
    numbers = tuple(int(part) if part.isdigit() else 0 for part in version.rstrip("t").split("."))
    return (*numbers, 1) if threaded else numbers


@dataclass(frozen=True)
class Environment:
    """What an environment ran, with nothing of the host in it: the key for matching."""

    python: str
    requirements: tuple[tuple[str, str], ...]
    env_vars: tuple[tuple[str, str], ...] = ()
    other: tuple[tuple[str, str], ...] = ()  # further params asv recorded, if any

    @property
    def label(self) -> str:
        # An `existing` environment records its interpreter's path, not a version.
        parts = [
            f"python at {self.python}"
            if any(sep in self.python for sep in "/\\")
            else f"py{self.python}"
        ]
        parts += [f"{name} {version or '(unpinned)'}" for name, version in self.requirements]
        parts += [f"{name}={value}" for name, value in (*self.env_vars, *self.other)]
        return ", ".join(parts)

    @property
    def versions_recorded(self) -> bool:
        """Whether asv recorded an exact version of every library (an `existing`
        environment records none, and an empty requirement means "the latest")."""
        return bool(self.requirements) and all(v[:1].isalnum() for _, v in self.requirements)

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "requirements": dict(self.requirements),
            "env_vars": dict(self.env_vars),
            **({"other": dict(self.other)} if self.other else {}),
        }


@dataclass(frozen=True)
class Benchmark:
    """What benchmarks.json says of one benchmark, or what its name implies."""

    name: str
    kind: str  # asv's type: time, track, memory (mem_/peakmem_), or unknown
    unit: str
    param_names: tuple[str, ...] = ()
    repeat: Any = None  # asv's samples per process (an int, a (min, max, time) tuple, 0)

    @property
    def samples_per_process(self) -> int | None:
        """How many consecutive samples each process recorded, where that is fixed (serkit's
        timed benchmarks declare `repeat` as a whole number); None where it is not."""
        fixed = isinstance(self.repeat, int) and not isinstance(self.repeat, bool)
        return self.repeat if self.kind == "time" and fixed and self.repeat >= 1 else None

    @property
    def one_sample_per_process(self) -> bool:
        """Whether the samples can be told apart by process (serkit's timed benchmarks)."""
        return self.samples_per_process is not None

    def per_process(self, samples: Sequence[float]) -> tuple[float, ...]:
        """One value per process: the least of that process's samples; () where unknown.

        asv appends each round's `repeat` samples to the last round's (--append-samples),
        so a process's samples stand together. A pair timed once (serkit.suite.budget)
        has a single sample: one process. The least, because another tenant's work only
        ever slows a call down: the least of a process's samples is its least disturbed.
        """
        size = self.samples_per_process
        if size is None or not samples:
            return ()
        return tuple(min(samples[i : i + size]) for i in range(0, len(samples), size))


@dataclass(frozen=True)
class Measurement:
    """One value asv recorded: a benchmark, at one parameter set, commit and environment."""

    machine: str
    commit: str
    date: int
    env: Environment
    benchmark: str
    params: tuple[str, ...]  # asv's repr() strings, in the benchmark's param order
    value: float | None  # None: skipped or failed
    ci_99: Interval | None
    iqr: Interval | None
    code_version: str | None  # asv's hash of the benchmark's code
    file: Path
    samples: tuple[float, ...] = ()  # every sample asv kept (`asv run --record-samples`)
    # When the run that measured it took its file's last values, in milliseconds since the
    # epoch: the latest of asv's `started_at` in the file (0: asv recorded none). One
    # results file is one run (serkit.results.history), so this dates the run.
    run_at: int = 0
    # Each sample's canary reading in ns (serkit.results.canary), None where it has none;
    # and the fast state's reading on this machine and Python, from every sample the tree
    # holds of them (serkit.sample_speed.reference), set once the machine is read.
    canary: tuple[float | None, ...] = ()
    canary_reference: float | None = None
    # Each sample's memory canary reading in ns (serkit.suite.canary), None where it has
    # none; () in results made before it.
    memory_canary: tuple[float | None, ...] = ()
    # The samples each process took in the run that wrote the file, from its notes
    # (serkit.results.canary.samples_per_process); None without notes, when the tree's
    # benchmarks.json is all there is to go by.
    samples_per_process: int | None = None
    # The host its run recorded (serkit.results.identity.speed_host), None where unknown:
    # the runs of one host are judged against one fast canary.
    host: str | None = None
    # How this pair slowed against the canary in its own run (serkit.sample_speed.
    # slow_ratio_in_run): its corrected values were divided by it. None where none was
    # corrected.
    slow_ratio: float | None = None
    # What the processes of its file's run waited for the machine's fast state before
    # sampling, in seconds (serkit.results.asv_runs.AsvRun.waited_s): the whole run's.
    run_waited_s: float = 0.0
    # What the value's codec ran with, as its run recorded (serkit.results.asv_file.
    # CODECS_KEY): its library, then what its calls need beside it; None where the file
    # does not say (results written before it was kept, or a value of no codec).
    ran_with: tuple[str, ...] | None = None
    # Each process's value, how it was taken and what it counts for in a verdict, judged
    # once when the tree was read (serkit.results.judging); () where asv kept no samples
    # of a process, or benchmarks.json does not say how they stand by process.
    processes: tuple[ProcessValue, ...] = ()

    @property
    def process_values(self) -> tuple[float, ...]:
        """Each process's value, as judged (`processes`)."""
        return tuple(p.value for p in self.processes)

    @property
    def judged_value(self) -> float | None:
        """The value serkit shows: the median of its processes, as judged (`processes`);
        asv's own value where none were (a track, or a run that kept no samples)."""
        values = self.process_values
        return statistics.median(values) if values else self.value

    @property
    def weights(self) -> tuple[float, ...]:
        """What each process counts for in a verdict (serkit.sample_speed.judging_weight)."""
        return tuple(p.weight for p in self.processes)


def sampled_apart(a: Measurement, b: Measurement) -> bool:
    """Whether the runs behind `a` and `b` took different samples a process, where both
    files say (Measurement.samples_per_process): their values are not alike."""
    sizes = (a.samples_per_process, b.samples_per_process)
    return None not in sizes and sizes[0] != sizes[1]
