"""What a host runs beside its CPU: the facts that move timings under a fixed machine name.

A machine name (serkit.run.naming) stands for the hardware, so that a runner kind's
results form one series over weeks. The software under the suite changes within that
series: a CI image update brings a new kernel, libc and Pythons, and a cloud host can
carry a CPU of the same model with other microcode or other flags exposed to the VM.
Each moves timings, so each run records them (`host_identity`, in serkit-host.yaml), a
change between two runs is flagged (`identity_changes`), and `serkit bench
--skip-measured` measures an environment again on a host that changed.

They stay out of the name on purpose: a name that changed with every image would start a
new series every week, and no graph over time would cross an update to show what it did.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

UNREADABLE = "unreadable"
# The facts `host_identity` records; a change in any of them is a host change.
IDENTITY_FIELDS = ("kernel", "os_release", "image", "libc", "cpu_microcode", "cpu_flags")
# The CPU as serkit.results.hosts records it: a run on other hardware is a host change too.
HARDWARE_FIELDS = ("cpu_model", "logical_cpus")
FLAGS_SHOWN = 8  # of the CPU flags that appeared or went, how many a change names


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _cpuinfo_values(text: str, keys: tuple[str, ...]) -> list[str]:
    """Every value /proc/cpuinfo gives for `keys`, one per processor that has one."""
    out = []
    for line in text.splitlines():
        key, _, value = (s.strip() for s in line.partition(":"))
        if key in keys and value:
            out.append(value)
    return out


def microcode(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's microcode revision (x86 Linux); each revision, where the CPUs differ."""
    found = sorted(set(_cpuinfo_values(_read(cpuinfo) or "", ("microcode",))))
    return " ".join(found) if found else UNREADABLE


Runner = Callable[[list[str]], str]


def _sysctl(args: list[str]) -> str:
    try:
        done = subprocess.run(
            ["sysctl", *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout


def cpu_flags(
    cpuinfo: Path = Path("/proc/cpuinfo"), system: str | None = None, run: Runner = _sysctl
) -> str:
    """The CPU's feature flags, sorted, one space between: what the OS lets code use
    (Linux: /proc/cpuinfo's flags, or Features on ARM; macOS: sysctl's hw.optional)."""
    flags: set[str] = set()
    for value in _cpuinfo_values(_read(cpuinfo) or "", ("flags", "Features")):
        flags.update(value.split())
    if not flags and (system or platform.system()) == "Darwin":
        for line in run(["hw.optional"]).splitlines():
            name, _, value = (s.strip() for s in line.partition(":"))
            if value == "1" and name.startswith("hw.optional."):
                flags.add(name.removeprefix("hw.optional."))
    return " ".join(sorted(flags)) if flags else UNREADABLE


def os_release(path: Path = Path("/etc/os-release"), system: str | None = None) -> str:
    """The OS's own name for its release: PRETTY_NAME (Linux), or macOS and its version."""
    if (system or platform.system()) == "Darwin":
        version = platform.mac_ver()[0]
        return f"macOS {version}" if version else UNREADABLE
    for line in (_read(path) or "").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "PRETTY_NAME" and value.strip():
            return value.strip().strip("\"'")
    return UNREADABLE


def image(environ: Mapping[str, str]) -> str | None:
    """The CI image and its version, where the runner says (GitHub: ImageOS, ImageVersion)."""
    parts = [environ.get(key, "").strip() for key in ("ImageOS", "ImageVersion")]
    return " ".join(p for p in parts if p) or None


def libc() -> str:
    """The C library and its version, where Python can tell (glibc, musl); else unreadable."""
    name, version = platform.libc_ver()
    return f"{name} {version}".strip() or UNREADABLE


def host_identity(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """This host's software and CPU facts beyond the hardware, as a run records them."""
    return {
        "kernel": platform.release() or UNREADABLE,
        "os_release": os_release(),
        "image": image(os.environ if environ is None else environ),
        "libc": libc(),
        "cpu_microcode": microcode(),
        "cpu_flags": cpu_flags(),
    }


def _known(value: Any) -> bool:
    return value not in (None, "", UNREADABLE)


def _flags_change(before: str, after: str) -> str:
    gone = sorted(set(before.split()) - set(after.split()))
    came = sorted(set(after.split()) - set(before.split()))
    words = [f"+{f}" for f in came] + [f"-{f}" for f in gone]
    more = f" and {len(words) - FLAGS_SHOWN} more" if len(words) > FLAGS_SHOWN else ""
    return "CPU flags " + " ".join(words[:FLAGS_SHOWN]) + more


def identity_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What changed from one run's host to the next's, in words; [] where nothing did.

    A fact that either run did not record (a run from before it was recorded, or an OS
    that cannot tell) is not compared: no change is claimed that was not seen.
    """
    out = []
    for field in (*HARDWARE_FIELDS, *IDENTITY_FIELDS):
        old, new = before.get(field), after.get(field)
        if not (_known(old) and _known(new)) or old == new:
            continue
        if field == "cpu_flags":
            out.append(_flags_change(str(old), str(new)))
        else:
            out.append(f"{field.replace('_', ' ')} {old} → {new}")
    pythons_before = before.get("pythons") or {}
    pythons_after = after.get("pythons") or {}
    if isinstance(pythons_before, Mapping) and isinstance(pythons_after, Mapping):
        for version in sorted(set(pythons_before) & set(pythons_after)):
            out += _python_change(str(version), pythons_before[version], pythons_after[version])
    return out


def _python_change(version: str, before: Any, after: Any) -> list[str]:
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return []
    out = []
    old, new = before.get("version"), after.get("version")
    if _known(old) and _known(new) and old != new:
        out.append(f"Python {version} {old} → {new}")
    flags_old, flags_new = before.get("build_flags"), after.get("build_flags")
    if flags_old is not None and flags_new is not None and flags_old != flags_new:
        shown = " ".join(flags_new) or "none"
        out.append(f"Python {version} build flags → {shown}")
    return out


def host_id(path: Path = Path("/etc/machine-id")) -> str | None:
    """This installation's machine id, hashed: it tells apart two VMs of one image and one
    hostname, and is not published as it stands (systemd asks that it not be). None where
    the OS keeps none."""
    found = (_read(path) or "").strip()
    return hashlib.sha256(f"serkit host {found}".encode()).hexdigest()[:16] if found else None


def speed_host(run: Mapping[str, Any]) -> str | None:
    """Who a run's canary speaks for: its hostname, machine id and identity (`same_host`),
    and the harness its processes ran around the canary (serkit.suite.canary.
    CANARY_HARNESS), as one key; runs with one key ran on one host, whose samples are judged
    against one fast canary read from all of them (serkit.sample_speed.reference). None where
    the run recorded no identity.

    Stricter than `same_host`, which a CI runner's fresh VM of one image passes: the same
    image on another VM is another host for the canary."""
    if not _known(run.get("kernel")) or not _known(run.get("hostname")):
        return None
    # And its harness: what ran around the canary moves its reading too.
    fields = ("hostname", "host_id", *HARDWARE_FIELDS, *IDENTITY_FIELDS, "canary_harness")
    return json.dumps([run.get(f) for f in fields], default=str)


def same_host(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether two runs ran on the same host, strictly: every fact of the identity and the
    hardware recorded by both, and equal. A run from before identities were recorded is
    the same as none."""
    fields = (*HARDWARE_FIELDS, *IDENTITY_FIELDS)
    if not all(_known(run.get("kernel")) for run in (before, after)):
        return False
    return all(before.get(f) == after.get(f) for f in fields)
