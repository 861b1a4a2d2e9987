"""Machine names that stay put on CI runners, whose hostnames are new on every run.

asv files results under the machine's name, by default the hostname. An ephemeral runner
gets a generated hostname (GitHub's `fv-az123-456`, GitLab's `runner-...`, a container's
random hex), so every run would open a new machine folder with no history, and two
runners of one kind would never land together. The rule `serkit bench` follows:

1. A name given to asv (`serkit bench -- --machine NAME`) is used as it is.
2. On a host whose hostname does not look generated, asv's own choice stands: the
   profile in ~/.asv-machine.json, else the hostname.
3. On a host whose hostname looks generated (`GENERATED_HOSTNAMES`, or any hostname on a
   GitHub-hosted runner, RUNNER_ENVIRONMENT=github-hosted), a lone asv profile named by
   hand (neither generated nor derived, `named_by_hand`) is the user's choice and stands;
   otherwise the name is derived from the hardware, afresh on every run:
   `<label>-<os>-<arch>-<cpu model>-<N>cpu-<digest>`.
   - label: SERKIT_MACHINE_LABEL, else GitHub's image (ImageOS: ubuntu24, macos14), else
     the runner's name (RUNNER_NAME) where that is not generated; none otherwise.
   - digest: 8 hex digits of sha256 over the exact facts (CPU model, logical CPUs,
     architecture, OS, label), so different hardware never shares a name, even where
     the readable part, shortened, would read the same.
   - Where the CPU model cannot be read, nothing is derived and the hostname stays:
     never shared by two machines, though new on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass

from serkit.errors import SerkitError
from serkit.results.identity import UNREADABLE

LABEL_ENV = "SERKIT_MACHINE_LABEL"
# A machine's name is its folder in a results tree: one name, never a path ('..', '/').
MACHINE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}")
MACHINE_RULE = "letters, digits, _ . and - (a folder name)"
# Matched against the hostname's first label (before any dot), ignoring case.
GENERATED_HOSTNAMES = (
    re.compile(r"fv-az\d+-\d+"),  # GitHub-hosted Linux and Windows runners (Azure)
    re.compile(r"runnervm[0-9a-z]+"),  # GitHub-hosted runners, newer images
    re.compile(r"mac-\d{6,}"),  # GitHub-hosted macOS runners: Mac-1700000000000.local
    re.compile(r"runner-[0-9a-z-]+"),  # GitLab runners: runner-<token>-project-<n>-...
    re.compile(r"[0-9a-f]{12}|[0-9a-f]{64}"),  # a container's id (Docker, Podman)
    re.compile(r"[a-z0-9-]+-[0-9a-f]{8,10}-[0-9a-z]{5}"),  # a Kubernetes pod
    re.compile(r"ip-\d+-\d+-\d+-\d+"),  # an EC2 instance's default name
    re.compile(r"localhost|buildkitsandbox|\(none\)|"),  # none at all
)
# What derived_name gives: a profile so named was written by serkit, not by a person.
DERIVED_NAME = re.compile(r".+-\d+cpu-[0-9a-f]{8}")
# GitHub-hosted runners are named "GitHub Actions 12": a new number on every job.
GENERATED_RUNNER_NAME = re.compile(r"github actions \d+", re.IGNORECASE)
# Words that say nothing of which CPU it is; the digest keeps the exact model anyway.
CPU_NOISE = re.compile(r"\((?:r|tm)\)|\b(?:cpu|processor|with radeon graphics)\b", re.IGNORECASE)
READABLE_CPU_CHARS = 40


@dataclass(frozen=True)
class Hardware:
    """What a derived machine name stands for."""

    cpu_model: str
    logical_cpus: int
    arch: str  # platform.machine(): x86_64, aarch64 (Linux), arm64 (macOS)
    os: str  # the OS family: linux, macos, windows
    label: str | None  # the kind of runner, where known

    @classmethod
    def here(cls, environ: Mapping[str, str] | None = None) -> Hardware:
        from serkit.results.hosts import cpu_model  # the host module is costly: when asked

        system = platform.system().lower()
        return cls(
            cpu_model=cpu_model(),
            logical_cpus=os.cpu_count() or 0,
            arch=platform.machine().lower() or UNREADABLE,
            os={"darwin": "macos"}.get(system, system) or UNREADABLE,
            label=runner_label(os.environ if environ is None else environ),
        )


def checked_machine(name: str, source: str) -> str:
    """`name`, when it is a folder name (MACHINE_NAME); else SerkitError naming `source`.
    Every machine name serkit files results under passes here: --machine, asv's profile
    in ~/.asv-machine.json, the hostname."""
    if not MACHINE_NAME.fullmatch(name):
        raise SerkitError(
            f"{source} {name!r} cannot name a machine: it must be {MACHINE_RULE}; "
            "give --machine NAME"
        )
    return name


def looks_generated(hostname: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the hostname is one a CI system or container runtime made up for this run."""
    environ = os.environ if environ is None else environ
    if environ.get("RUNNER_ENVIRONMENT") == "github-hosted":
        return True
    first = hostname.strip().split(".")[0].lower()
    return any(pattern.fullmatch(first) for pattern in GENERATED_HOSTNAMES)


def named_by_hand(machine: str) -> bool:
    """Whether a machine name was chosen by a person: neither generated nor derived."""
    return not looks_generated(machine, {}) and not DERIVED_NAME.fullmatch(machine)


def runner_label(environ: Mapping[str, str]) -> str | None:
    """The kind of runner: SERKIT_MACHINE_LABEL, GitHub's ImageOS, or a runner's own name."""
    for key in (LABEL_ENV, "ImageOS"):
        if environ.get(key, "").strip():
            return environ[key].strip()
    name = environ.get("RUNNER_NAME", "").strip()
    if name and not GENERATED_RUNNER_NAME.fullmatch(name) and not looks_generated(name, {}):
        return name
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")


def derived_name(hardware: Hardware) -> str | None:
    """The machine name for this hardware (the module's rule 3); None when the CPU is unknown."""
    if hardware.cpu_model in ("", UNREADABLE):
        return None
    exact = json.dumps(
        [
            hardware.cpu_model,
            hardware.logical_cpus,
            hardware.arch,
            hardware.os,
            hardware.label,
        ]
    )
    digest = hashlib.sha256(exact.encode("utf-8")).hexdigest()[:8]
    cpu = _slug(CPU_NOISE.sub(" ", hardware.cpu_model))[:READABLE_CPU_CHARS].strip("-.")
    parts = [
        _slug(hardware.label or ""),
        _slug(hardware.os),
        _slug(hardware.arch),
        cpu,
        f"{hardware.logical_cpus}cpu",
        digest,
    ]
    return "-".join(part for part in parts if part)
