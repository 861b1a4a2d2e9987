"""The machine's speed state between rounds, and waiting out its slow state.

Extra rounds exist to place a pair more precisely. Taken while the machine is in its slow
state (serkit.state), they add processes that the readers then have to correct, and a
slow stretch lasts up to about 3 minutes here: so before an extra round `serkit bench`
probes the canary in its own process and, while it reads slow, waits, within a stated
budget. What it did is said either way.

The probe's fast reading is kept per host and Python in the checkout's `.asv` folder
(the least probe seen), since a run that begins in the slow state has no fast reading
of its own to compare with.
"""

from __future__ import annotations

import contextlib
import json
import platform
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from serkit.checkout import CANARY_PROBE
from serkit.results.host_file import atomic_write
from serkit.state import SLOW, classify
from serkit.suite.budget import seconds_from_env
from serkit.suite.canary import probe_ns

POLL_S = 3.0
# The most a run waits for the fast state, over all its extra rounds; the environment
# variable sets it (0: never probe, never wait).
WAIT_ENV = "SERKIT_BENCH_STATE_WAIT"
QUICK_WAIT_S = 60.0
FULL_WAIT_S = 180.0


def wait_budget_s(quick: bool) -> float:
    """How long a run may wait for the fast state: WAIT_ENV, else the plan's default."""
    given = seconds_from_env(WAIT_ENV, most=3600, what="from 0 to 3600", zero=True)
    if given is not None:
        return given
    return QUICK_WAIT_S if quick else FULL_WAIT_S


def _key() -> str:
    return f"{socket.gethostname()} {platform.python_implementation()} {sys.version.split()[0]}"


@dataclass
class StateWatch:
    """Probes of the canary in serkit's own process, against the host's least probe."""

    root: Path
    budget_s: float
    probe: Callable[[], float] = probe_ns
    sleep: Callable[[float], None] = time.sleep
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr)
    waited_s: float = 0.0
    _fast: float | None = field(default=None, init=False)

    @property
    def path(self) -> Path:
        return self.root / CANARY_PROBE

    def _known(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (OSError, ValueError, TypeError):
            return {}

    def ratio(self) -> float:
        """The canary now over the host's fast reading (1.0 at the first probe ever)."""
        now = self.probe()
        if self._fast is None:
            self._fast = self._known().get(_key())
        if self._fast is None or now < self._fast:
            self._fast = now
            known = self._known() | {_key(): now}
            # A read-only checkout: the probe still compares within this run.
            with contextlib.suppress(OSError):
                atomic_write(self.path, json.dumps(known, indent=1).encode())
        return now / self._fast

    def slow_now(self) -> float | None:
        """The canary's slowness when the machine is in its slow state now, else None
        (None too with no budget: the run was asked not to probe)."""
        if self.budget_s <= 0:
            return None
        ratio = self.ratio()
        return ratio if classify(ratio, 1.0) == SLOW else None

    def wait_for_fast(self, what: str) -> None:
        """Before `what` (an extra round), wait while the machine is slow, within the budget."""
        slow = self.slow_now()
        if slow is None:
            return
        left = self.budget_s - self.waited_s
        if left <= 0:
            self.say(
                f"serkit: {what} runs in the machine's slow state (canary x{slow:.2f} its fast "
                f"reading): the {self.budget_s:.0f} s this run may wait for the fast state are "
                "spent; its samples are judged by the canary"
            )
            return
        self.say(
            f"serkit: the machine is in its slow state (canary x{slow:.2f} its fast reading, "
            f"which the load average does not show): waiting up to {left:.0f} s for the fast "
            f"state before {what}"
        )
        spent = 0.0
        while slow is not None and spent < left:
            step = min(POLL_S, left - spent)
            self.sleep(step)
            spent += step
            slow = self.slow_now()
        self.waited_s += spent
        if slow is None:
            self.say(f"serkit: fast again after {spent:.0f} s")
        else:
            self.say(
                f"serkit: still slow after {spent:.0f} s (x{slow:.2f}): {what} measures in "
                "the slow state; its samples are judged by the canary"
            )
