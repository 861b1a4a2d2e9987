"""asv's machine profile: the name `serkit bench` files results under, made without a prompt.

asv asks for a machine's details the first time it runs on a host; serkit writes the
profile itself (`ensure_machine`) under the name serkit.run.naming's rule chooses
(`machine_name`), so that a run on a CI runner never stops to ask.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.run.naming import (
    Hardware,
    checked_machine,
    derived_name,
    looks_generated,
    named_by_hand,
)

PROFILES_FILE = ".asv-machine.json"


def asv_home(env: Mapping[str, str] | None) -> Path:
    """The home folder asv keeps its machine profiles in, for the environment asv runs with."""
    return Path((env or os.environ).get("HOME") or Path.home())


def ensure_machine(root: Path, env: dict[str, str] | None = None, name: str | None = None) -> None:
    """Create asv's machine profile (CPU, OS, RAM) once, without asv's interactive prompt:
    under the hostname, or under `name` (which `asv machine --yes --machine` would record
    without the CPU, OS and RAM)."""
    from asv.machine import Machine, MachineCollection  # deferred: asv is only needed to run

    path = asv_home(env) / PROFILES_FILE
    # asv's own default is the hostname; a profile file holding only machines named with
    # --machine (by `serkit bench`) lacks it, and asv would then stop to ask.
    name = name or Machine.get_unique_machine_name()
    if name in _profiles(path):
        return
    info = {**Machine.get_defaults(), "machine": name}
    MachineCollection.save(name, info, _path=str(path))


def given_machine(extra: Sequence[str]) -> str | None:
    """The machine that asv arguments name with `--machine` or `-m`, if any."""
    for i, arg in enumerate(extra):
        if arg.startswith("--machine="):
            return arg.split("=", 1)[1]
        if arg in ("--machine", "-m") and i + 1 < len(extra):
            return extra[i + 1]
    return None


def _profiles(path: Path) -> dict[str, dict[str, Any]]:
    try:
        profiles = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(profiles, dict):
        return {}
    return {k: v for k, v in profiles.items() if k != "version" and isinstance(v, dict)}


def machine_name(
    extra: Sequence[str] = (),
    home: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    node: str | None = None,
    hardware: Hardware | None = None,
) -> str:
    """The machine name `serkit bench` files results under, by serkit.run.naming's rule:
    `--machine`; else, on a host named by hand, asv's choice (the host's profile in
    ~/.asv-machine.json, the only profile, or the hostname); else a lone profile named by
    hand, or the name derived from the hardware."""
    given = given_machine(extra)
    if given is not None:
        return checked_machine(given, "--machine")
    node = platform.node() if node is None else node
    path = (home or Path.home()) / PROFILES_FILE
    entries = _profiles(path)
    lone = next(iter(entries.values())) if len(entries) == 1 else None
    profile = f"the machine name in {path}"
    if looks_generated(node, environ):
        if lone and named_by_hand(str(lone.get("machine", ""))):
            return checked_machine(str(lone["machine"]), profile)
        derived = derived_name(hardware or Hardware.here(environ))
        if derived is not None:
            return checked_machine(derived, "the name derived from the hardware")
    chosen = entries.get(node) or lone
    if chosen:
        return checked_machine(str(chosen.get("machine", node)), profile)
    return checked_machine(node, "the hostname")
