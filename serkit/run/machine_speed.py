"""What a run gives its timed processes to place each sample on the faster vCPU.

A run never waits for the machine's fast state: each vCPU flips between its two speeds on
its own, so its timed processes place each sample on the vCPU that reads faster now
(serkit.suite.state_watch.Placement), and the readers judge the slow samples that remain
(serkit.sample_speed). The run probes the canary once as it starts, so that its processes
find the host's fast probe, and counts the samples they moved in a ledger.
"""

from __future__ import annotations

from pathlib import Path

from serkit.checkout import CANARY_PROBE
from serkit.suite.state_watch import LEDGER_ENV, PROBE_FILE_ENV, HostProbe

# The ledger of a run's placements, in its notes folder.
LEDGER = "placements"


def run_probe(root: Path) -> HostProbe:
    """The host's fast probe, taken now: kept where this probe is under it."""
    probe = HostProbe(root / CANARY_PROBE)
    probe.ratio()
    return probe


def process_environment(probe: HostProbe, notes: Path) -> dict[str, str]:
    """What a run's timed processes need to place their samples, and count the moves."""
    notes.mkdir(parents=True, exist_ok=True)
    return {PROBE_FILE_ENV: str(probe.path), LEDGER_ENV: str(notes / LEDGER)}
