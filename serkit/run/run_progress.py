"""The state of one `serkit bench`: what it set out to do and what it has done.

Saved after every round (serkit.run.rounds), so that `serkit bench --resume` goes on from
the next one with the same slice, the same rounds and the same environments.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serkit.checkout import BENCH_NOTES, git_commit
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.suite.cases import (
    CODECS_ENV,
    FIXTURES_ENV,
    LEAVE_OUT_ENV,
    ROUNDS_ENV,
    SLOW_ENV,
    WARMUP_ENV,
)


@dataclass
class RunState:
    """What one `serkit bench` set out to do, and what it has done: for `--resume`."""

    commit: str
    quick: bool
    matrix: bool
    pythons: list[str] | None
    rounds: int
    environments: list[str]  # asv names, in the order they run
    selection: dict[str, str]  # SERKIT_BENCH_* as the run began
    extra: list[str]  # passed on to `asv run`
    notes: str  # the folder of the pairs timed once
    budget_s: float | None = None  # the quick run's budget per pair (serkit.suite.budget)
    memory: bool = False  # memory per call measured (a quick run leaves it out unless asked)
    instructions: bool = False  # instructions counted (likewise)
    shard: str | None = None
    # Rounds past `rounds`, at most, for the pairs short of typical processes or of
    # `precision` (serkit.run.round_selection.imprecise_pairs).
    extra_rounds: int = 0
    precision: float = 0.0  # the standard error a pair's plan needs (suite.cases.precision_needed)
    # The planned rounds from this one (0-based) on take only the pairs short of `precision`
    # (serkit.run.precision); 0: every planned round takes every pair.
    least_rounds: int = 0
    done: list[tuple[int, str]] = field(default_factory=list)  # (round, environment)
    # The first round's parts finished in an environment not yet done: (environment, part).
    first_round_parts: list[tuple[str, int]] = field(default_factory=list)
    # asv -b regexes of the first round's parts, when the run chose its benchmarks and pairs
    # (the quick run, serkit.run.quick); [] for the user's -b, else FIRST_ROUND_PARTS.
    parts: list[list[str]] = field(default_factory=list)
    # What the run chose to leave out and why (serkit.run.quick.PairSelection.as_record).
    plan: dict[str, Any] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # environment: why not built
    # Environments that neither measure memory per call nor count instructions
    # (serkit.run.matrix.counted): a matrix run's, where another environment counts them.
    uncounted: list[str] = field(default_factory=list)
    # A matrix run's environments of one library: the codecs they time. Their first round
    # selects those codecs' parameters only (serkit.run.rounds.own_parts).
    own_codecs: dict[str, list[str]] = field(default_factory=dict)

    def is_done(self, round_index: int, env: str) -> bool:
        return (round_index, env) in self.done

    def round_text(self, round_index: int) -> str:
        """`round 3 of 5 planned`, then `round 6 of at most 10 (an extra round)`: numbered on
        from the planned rounds, so that none follows a "round 5 of 5" as if it were new."""
        if round_index < self.rounds:
            planned = " planned" if self.extra_rounds else ""
            return f"round {round_index + 1} of {self.rounds}{planned}"
        most = self.rounds + self.extra_rounds
        if round_index < most:
            return f"round {round_index + 1} of at most {most} (an extra round)"
        return f"the end of its {self.rounds} planned rounds and extra rounds"

    def runs_left(self, start: int, stop: int) -> int:
        """The `asv run`s not yet done in rounds `start` to `stop` (0-based, `stop` not
        included), in every environment that builds."""
        return sum(
            1
            for round_index in range(start, stop)
            for env in self.environments
            if env not in self.failed and not self.is_done(round_index, env)
        )

    def next_round(self) -> int:
        """The first round not finished in every environment that builds (0-based)."""
        for round_index in range(self.rounds + self.extra_rounds):
            for env in self.environments:
                if env not in self.failed and not self.is_done(round_index, env):
                    return round_index
        return self.rounds + self.extra_rounds

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(dataclasses.asdict(self), indent=1))

    @classmethod
    def load(cls, path: Path) -> RunState:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            data["done"] = [(int(r), str(e)) for r, e in data.get("done", [])]
            parts = data.get("first_round_parts", [])
            data["first_round_parts"] = [(str(e), int(i)) for e, i in parts]
            return cls(**data)
        except FileNotFoundError:
            raise SerkitError(
                "nothing to resume: no interrupted `serkit bench` in this checkout"
            ) from None
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise SerkitError(f"{path} is not a serkit run state ({exc}); run afresh") from exc


@dataclass
class RoundTimes:
    """What each `asv run` this `serkit bench` finished took, by round: the time it has
    left, told from the rounds done (serkit.progress.PhaseClock says it)."""

    took: dict[int, list[float]] = field(default_factory=dict)  # round (0-based): seconds

    def add(self, round_index: int, seconds: float) -> None:
        self.took.setdefault(round_index, []).append(seconds)

    def _each(self, rounds: range) -> float | None:
        """The mean `asv run` of these rounds, None before any finished."""
        times = [s for r in rounds for s in self.took.get(r, [])]
        return sum(times) / len(times) if times else None

    def left_s(self, state: RunState, round_index: int) -> float | None:
        """About how long the run has left as an `asv run` of `round_index` begins.

        In the planned rounds: the runs left in them, each as long as a later round's runs
        took (the first round also measures sizes and facts, so it tells only until a later
        one has run). Past them: the extra rounds' runs left at most, each as long as an
        extra round's took, or before one had, a later planned round's (an extra round
        takes fewer pairs): an upper bound. None before any run finished."""
        planned = state.rounds
        later = self._each(range(1, planned))
        if round_index < planned:
            each = later if later is not None else self._each(range(1))
            return None if each is None else each * state.runs_left(round_index, planned)
        most = planned + state.extra_rounds
        each = self._each(range(planned, most))
        each = each if each is not None else later
        return None if each is None else each * state.runs_left(round_index, most)


# The SERKIT_BENCH_* settings a run keeps, so that --resume goes on with the same slice.
SELECTION = (CODECS_ENV, FIXTURES_ENV, SLOW_ENV, WARMUP_ENV, ROUNDS_ENV, LEAVE_OUT_ENV)


def new_state(
    root: Path,
    environments: Sequence[str],
    *,
    quick: bool,
    rounds: int,
    extra: Sequence[str],
    budget_s: float | None = None,
    matrix: bool = False,
    pythons: Sequence[str] | None = None,
    memory: bool = False,
    instructions: bool = False,
    shard: str | None = None,
    extra_rounds: int = 0,
    precision: float = 0.0,
    least_rounds: int = 0,
    parts: Sequence[Sequence[str]] = (),
    plan: Mapping[str, Any] | None = None,
    uncounted: Sequence[str] = (),
    own_codecs: Mapping[str, Sequence[str]] | None = None,
) -> RunState:
    """The state of a run about to begin, with an empty folder for its notes."""
    # An older run's notes serve only its --resume, which a new run replaces.
    shutil.rmtree(root / BENCH_NOTES, ignore_errors=True)
    selection = {k: os.environ[k] for k in SELECTION if os.environ.get(k)}
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return RunState(
        commit=git_commit(root) or "",
        quick=quick,
        matrix=matrix,
        pythons=list(pythons) if pythons else None,
        rounds=rounds,
        environments=list(environments),
        selection=selection,
        extra=list(extra),
        notes=str(root / BENCH_NOTES / f"{stamp}-{os.getpid()}"),
        budget_s=budget_s,
        memory=memory,
        instructions=instructions,
        shard=shard,
        extra_rounds=extra_rounds,
        precision=precision,
        least_rounds=least_rounds,
        uncounted=list(uncounted),
        own_codecs={name: list(codecs) for name, codecs in (own_codecs or {}).items()},
        parts=[list(part) for part in parts],
        plan=dict(plan or {}),
    )
