"""A host's measured noise: what an A/A run on it found (`serkit noise`), kept per machine.

It lives beside asv's files in the machine's results folder, as `serkit-noise.yaml` (not
`.json`: asv reads every .json there as results), so it travels with the results it
qualifies when a results tree is copied or merged.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.errors import RefusedFile
from serkit.files import atomic_write
from serkit.inputs.documents import read_record

NOISE_FILE = "serkit-noise.yaml"
POWER_FILE = "serkit-power.yaml"
# Where a host has no measurement yet: the floor verdicts use, and say they use.
DEFAULT_FLOOR = 0.10
# And the least floor verdicts use where one was measured. `serkit noise` runs its panel
# twice within a minute, and so misses how runs minutes apart drift. On this project's VM,
# two quick runs seven minutes apart called 3.5 % of 546 timings different at the panel's
# 1.6 % (the rule of 2026-11-24); two runs, one at a load of 1.5 and one at 5, 0.7 % of
# 419 pairs at 7 %; quiet, none of 174 at 7 %, where a real +10 % was called in 172 of
# them (at 10 %, in 93: a floor at the change calls half). docs/trust.md has the runs.
LEAST_FLOOR = 0.07
# Between two runs, a pair's medians differ more than its processes' standard errors say:
# each run adds a share of its own. On 7 quick runs of 2026-11-27 whose processes waited out
# the slow state (21 pairings, up to 97 minutes apart, 3,420 pairs), the log ratios over
# the joint standard error had a robust standard deviation of 1.34 (1.51 plain), not 1.
BETWEEN_RUNS_SPREAD = 1.34


@dataclass(frozen=True)
class NoiseRecord:
    """The result of one A/A run of a fixed panel on a host."""

    measured_at: str  # ISO 8601, UTC
    panel: str  # which pairs, e.g. "12 pairs: json, orjson, msgpack x small-dict, ..."
    pairs: int
    processes: int  # per pair and run
    between_process_cv: float  # the median over pairs of the per-process log spread
    floor: float  # relative difference two runs of the same code can show here
    false_verdicts: float  # share of the panel's pairs the new rule called different
    false_verdicts_old_rule: float  # the same, with the overlapping-intervals rule
    load_before: str = ""
    load_after: str = ""

    @property
    def verdict_floor(self) -> float:
        """The floor verdicts use: the measured one, but never under LEAST_FLOOR."""
        return max(self.floor, LEAST_FLOOR)

    def in_words(self) -> str:
        raised = (
            f"; measured {self.floor:.1%} within a minute, raised to {LEAST_FLOOR:.0%} "
            "for runs minutes apart"
            if self.floor < LEAST_FLOOR
            else ""
        )
        return (
            f"differences under {self.verdict_floor:.0%} cannot be told apart here "
            f"(between-process CV {self.between_process_cv:.1%}, {self.measured_at[:10]}{raised})"
        )


@dataclass(frozen=True)
class NoNoise:
    """A machine with no noise measurement: the timing verdicts on it assume `floor`. Said
    in words where it is shown (serkit.compare.in_words.no_noise_text)."""

    machine: str
    floor: float = DEFAULT_FLOOR


# The two ways serkit compares timings: two points of one run, their rounds interleaved
# (library releases, Pythons), and two separate runs (two hosts, two days).
SAME_RUN = "same run"
BETWEEN_RUNS = "between runs"


@dataclass(frozen=True)
class PowerRecord:
    """What `serkit power` found: the share of pairs its verdicts called, by how it
    compared (SAME_RUN, BETWEEN_RUNS) and by the slowdown really injected ("0" is A/A)."""

    measured_at: str  # ISO 8601, UTC
    slice: str  # which pairs
    pairs: int
    processes: int  # planned per pair and run, before extra rounds
    floor: float  # the floor the verdicts between runs used (within a run: none)
    called: dict[str, dict[str, float]]  # mode: {"0": A/A share, "0.05": share called, ...}
    load_before: str = ""
    load_after: str = ""
    plan: str = "quick"  # how each arm sampled: "quick" or "full" (serkit.trust.power.PLANS)
    # Each mode's arms: the machine's state while each sampled (serkit.sample_speed), in words.
    states: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)

    def in_words(self) -> str:
        """E.g. "here, within one run (no floor), a change of 5% is called in 92% of pairs..."."""
        parts = []
        for mode, shares in self.called.items():
            seen = [(float(size), share) for size, share in shares.items() if float(size)]
            said = ", of ".join(f"{size:.0%} in {share:.0%}" for size, share in seen)
            said = (
                f"a change of {said.replace(' in ', ' is called in ', 1)} of pairs" if seen else ""
            )
            false = shares.get("0")
            aa = f"A/A {false:.1%}" if false is not None else ""
            rule = (
                "within one run (no floor)"
                if mode == SAME_RUN
                else f"{mode} (a {self.floor:.0%} floor)"
            )
            parts.append(f"{rule}, {'; '.join(p for p in (said, aa) if p)}")
        states = [words for arms in self.states.values() for words in arms.values()]
        slow, arms = sum(_share_slow(words) > 0 for words in states), len(states)
        state = f"; {slow} of {arms} arms partly in the slow state" if arms else ""
        return (
            f"here, {'; '.join(parts)} ({self.plan} runs of {self.processes} processes a "
            f"pair, {self.pairs} pairs, {self.measured_at[:10]}{state})"
        )


# How an arm's state is worded (serkit.sample_speed.StateShare.in_words): its share slow.
_SLOW_SHARE = re.compile(r"slow state in (\d+(?:\.\d+)?)%")


def _share_slow(words: str) -> float:
    """The share of an arm's samples in the slow state, from its words; 0 where none."""
    found = _SLOW_SHARE.search(words)
    return float(found.group(1)) if found else 0.0


def _write(folder: Path, name: str, record: Any) -> Path:
    """Write a record into a machine's results folder, atomically."""
    path = folder / name
    import yaml  # imported when a record is written: reading the CLI stays light

    atomic_write(path, yaml.safe_dump(dataclasses.asdict(record), sort_keys=False))
    return path


def _read(folder: Path, name: str, kind: Any, what: str, warnings: list[str] | None) -> Any:
    """The machine's record of `kind`, or None; a broken file is a named warning, not an error."""
    path = folder / name
    if not path.is_file():
        return None
    try:
        data: Any = read_record(path, format="yaml", what="a noise record")
        fields = {f.name for f in dataclasses.fields(kind)}
        return kind(**{k: v for k, v in data.items() if k in fields})
    except (RefusedFile, AttributeError, TypeError) as exc:
        if warnings is not None:
            warnings.append(f"skipped {path}: not a serkit {what} record ({exc})")
        return None


def record_noise(folder: Path, record: NoiseRecord) -> Path:
    """Write `record` into a machine's results folder, atomically."""
    return _write(folder, NOISE_FILE, record)


def read_noise(folder: Path, warnings: list[str] | None = None) -> NoiseRecord | None:
    """The machine's noise record, or None; a broken file is a named warning, not an error."""
    found: NoiseRecord | None = _read(folder, NOISE_FILE, NoiseRecord, "noise", warnings)
    return found


def record_power(folder: Path, record: PowerRecord) -> Path:
    return _write(folder, POWER_FILE, record)


def read_power(folder: Path, warnings: list[str] | None = None) -> PowerRecord | None:
    """The machine's power record (`serkit power`), or None."""
    found: PowerRecord | None = _read(folder, POWER_FILE, PowerRecord, "power", warnings)
    return found


POWER_NOT_MEASURED = "what a verdict can see here was not measured (`serkit power`)"
