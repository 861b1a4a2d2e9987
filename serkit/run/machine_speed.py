"""The machine's speed state between rounds, and what a run may wait for its fast state.

Extra rounds exist to place a pair more precisely. Taken while the machine is in its slow
state (serkit.sample_speed), they add processes that the readers then have to correct, and a
slow stretch lasts up to about 3 minutes here: so before an extra round `serkit bench`
probes the canary in its own process and, while it reads slow, waits; each timed process
does the same before it samples (serkit.suite.state_watch). Both spend one budget, and
what they did is said either way.
"""

from __future__ import annotations

from pathlib import Path

from serkit.checkout import CANARY_PROBE
from serkit.progress import PHASES
from serkit.suite.state_watch import (
    LEDGER_ENV,
    PROBE_FILE_ENV,
    WAIT_ENV,
    StateWatch,
    wait_from_env,
)

# A quick run's processes waited 234-511 s in all, through stretches slow for minutes
# (docs/trust.md, "Waiting for the fast state"); a full run lasts hours.
QUICK_WAIT_S = 600.0
FULL_WAIT_S = 3600.0
# The ledger of a run's waiting, in its notes folder.
LEDGER = "state-wait"


def wait_budget_s(quick: bool) -> float:
    """How long a run may wait for the fast state: WAIT_ENV, else the plan's default."""
    given = wait_from_env()
    if given is not None:
        return given
    return QUICK_WAIT_S if quick else FULL_WAIT_S


def run_watch(root: Path, notes: Path, budget_s: float) -> StateWatch:
    """The run's own watch (before extra rounds), sharing its ledger with its processes."""
    notes.mkdir(parents=True, exist_ok=True)
    return StateWatch(root / CANARY_PROBE, budget_s, ledger=notes / LEDGER, say=_phase_line)


def _phase_line(line: str) -> None:
    """The watch's line as the run's other phase lines, with the time since it began."""
    PHASES.say(line[len(PREFIX) :] if line.startswith(PREFIX) else line)


PREFIX = "serkit: "  # what the watch's lines open with, and PHASES adds


def process_environment(watch: StateWatch) -> dict[str, str]:
    """What a run's timed processes need to wait within its budget (nothing without one)."""
    if watch.budget_s <= 0 or watch.ledger is None:
        return {}
    return {
        WAIT_ENV: f"{watch.budget_s:g}",
        PROBE_FILE_ENV: str(watch.path),
        LEDGER_ENV: str(watch.ledger),
    }
