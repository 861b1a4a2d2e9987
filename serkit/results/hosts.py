"""What a person needs to judge a comparison of hosts, beyond what asv records.

asv's machine profile holds the CPU name, core count, architecture, OS and RAM (or only
the name, for `asv machine --yes --machine NAME`). It does not hold the frequency
governor, the turbo (boost) state or how each Python was built, and each of these moves
timings by tens of percent. `record_host` writes them beside asv's profile, as
`results/<machine>/serkit-host.yaml`, so they travel with the results. (Not a .json
name: asv reads every .json file in a machine's folder as a results file, and warns.)

The file holds one entry per run (format 2): the shards of a CI matrix land under one
machine name, and each shard's host is recorded, so that `serkit hosts` can flag a
machine name whose runs saw different CPUs. Format 1 held one host and is read as one run.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from serkit.results.host_file import (
    HOST_FILE,
    cpus_seen,
    merge_runs,
    read_runs,
    write_runs,
)
from serkit.results.identity import UNREADABLE as UNREADABLE  # read by naming and doctor
from serkit.results.identity import host_id, host_identity, identity_changes
from serkit.results.noise import (
    NoiseRecord,
    read_noise,
    read_power,
)
from serkit.results.tree import (
    ASV_MACHINE_FIELDS,
    ResultsTree,
    measured_state,
    read_tree,
    version_order,
)

CPU_ROOT = Path("/sys/devices/system/cpu")
# Configure flags that change how fast the same Python code runs.
SPEED_FLAGS = (
    "--enable-optimizations",  # PGO
    "--with-lto",
    "--enable-shared",
    "--with-pydebug",
    "--disable-gil",
    "--enable-experimental-jit",
)
# Run in each interpreter, so it must need nothing but the standard library of 3.9+.
PYTHON_BUILD_SCRIPT = """
import json, platform, sys, sysconfig
print(json.dumps({
    "implementation": platform.python_implementation(),
    "version": platform.python_version(),
    "sys_version": sys.version,
    "config_args": sysconfig.get_config_var("CONFIG_ARGS"),
}))
"""
ASV_FIELDS = ("cpu", "num_cpu", "arch", "os", "ram")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


# ARM CPUs by (implementer, part) as /proc/cpuinfo gives them: Linux on arm64 names no model.
ARM_PARTS = {
    ("0x41", "0xd0c"): "Neoverse-N1",
    ("0x41", "0xd40"): "Neoverse-V1",
    ("0x41", "0xd49"): "Neoverse-N2",
    ("0x41", "0xd4f"): "Neoverse-V2",
    ("0x41", "0xd8e"): "Neoverse-N3",
    ("0x41", "0xd84"): "Neoverse-V3",
    ("0x41", "0xd08"): "Cortex-A72",
    ("0x41", "0xd0b"): "Cortex-A76",
    ("0xc0", "0xac3"): "Ampere-1",
    ("0xc0", "0xac4"): "Ampere-1a",
}


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo"), system: str | None = None) -> str:
    """The CPU's model name: /proc/cpuinfo on Linux (ARM by its part numbers), sysctl on macOS."""
    text = _read(cpuinfo) or ""
    parts: set[tuple[str, str]] = set()
    implementer = ""
    for line in text.splitlines():
        key, _, value = (s.strip() for s in line.partition(":"))
        if key in ("model name", "Model", "cpu model") and value:
            return value
        if key == "CPU implementer":
            implementer = value
        elif key == "CPU part" and implementer:
            parts.add((implementer, value))
    if parts:
        return "ARM " + " + ".join(
            f"{ARM_PARTS.get(p, 'unknown')} ({p[0]}:{p[1]})" for p in sorted(parts)
        )
    if (system or platform.system()) == "Darwin":
        try:
            brand = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            brand = ""
        if brand:
            return brand
    # Linux on a plain `aarch64` says only the architecture: no model at all.
    processor = platform.processor()
    return processor if processor and processor != platform.machine() else UNREADABLE


def governor(cpu_root: Path = CPU_ROOT) -> str:
    """The scaling governor of every CPU: one name, or each name with its CPU count."""
    found = Counter(
        value
        for path in sorted(cpu_root.glob("cpu[0-9]*/cpufreq/scaling_governor"))
        if (value := _read(path))
    )
    if not found:
        return UNREADABLE  # no cpufreq: a VM, a container, or not Linux
    if len(found) == 1:
        return next(iter(found))
    return "mixed: " + ", ".join(f"{name} ({count} CPUs)" for name, count in sorted(found.items()))


def turbo(cpu_root: Path = CPU_ROOT) -> str:
    """Whether the CPU may boost above its base clock: on, off, or unreadable."""
    no_turbo = _read(cpu_root / "intel_pstate" / "no_turbo")
    if no_turbo in ("0", "1"):
        return "off" if no_turbo == "1" else "on"
    boost = _read(cpu_root / "cpufreq" / "boost")
    if boost in ("0", "1"):
        return "on" if boost == "1" else "off"
    return UNREADABLE


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages, or None where the OS has none (Windows)."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None


def load_text(load: tuple[float, float, float] | None = None) -> str:
    """The load averages as people read them: `1.52 1.10 0.87 (1, 5, 15 min)`."""
    load = load if load is not None else load_average()
    if load is None:
        return "unknown"
    return " ".join(f"{x:.2f}" for x in load) + " (1, 5, 15 min)"


def python_build(executable: Path) -> dict[str, Any]:
    """Implementation, version and speed-relevant configure flags of one interpreter."""
    try:
        done = subprocess.run(
            [str(executable), "-I", "-c", PYTHON_BUILD_SCRIPT],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        info = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {"executable": str(executable), "implementation": UNREADABLE}
    flags = speed_flags(info.pop("config_args"))
    return {"executable": str(executable), **info, "build_flags": flags}


def speed_flags(config_args: object) -> list[str] | None:
    """The SPEED_FLAGS among sysconfig's CONFIG_ARGS; None when there are none to read."""
    words = shlex.split(config_args) if isinstance(config_args, str) else None
    return None if words is None else [w for w in words if w.split("=")[0] in SPEED_FLAGS]


def host_facts() -> dict[str, Any]:
    """This host, now, without its Pythons: CPU, governor, turbo, OS and its identity
    (serkit.results.identity: kernel, image, libc, microcode, CPU flags)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return {
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "host_id": host_id(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(affinity(0)) if affinity else None,
        "governor": governor(),
        "turbo": turbo(),
        "os": platform.platform(),
        **host_identity(),
    }


def collect(pythons: Mapping[str, Path | None] | None = None) -> dict[str, Any]:
    """This host, now (`host_facts`), and the build of each Python given (by version, as
    serkit's `find_pythons` returns them), or of this one."""
    chosen = {k: v for k, v in (pythons or {}).items() if v is not None}
    if not chosen:
        chosen = {f"{sys.version_info[0]}.{sys.version_info[1]}": Path(sys.executable)}
    builds = {v: python_build(chosen[v]) for v in sorted(chosen, key=version_order)}
    return {**host_facts(), "pythons": builds}


def ci_run(environ: Mapping[str, str] | None = None) -> str | None:
    """The CI workflow run this is part of (GitHub Actions: repository and run id, the same
    in every shard and re-run of it); None outside CI. The history view counts a workflow's
    shards as one run (serkit.report.history)."""
    environ = os.environ if environ is None else environ
    run_id = environ.get("GITHUB_RUN_ID")
    if not run_id:
        return None
    return f"{environ.get('GITHUB_REPOSITORY') or 'github'}#{run_id}"


def record_host(
    results_dir: Path,
    machine: str,
    pythons: Mapping[str, Path | None] | None = None,
    *,
    shard: str | None = None,
    commit: str | None = None,
    environments: Sequence[str] = (),
    filed: Sequence[str] = (),
    measured_as: str | None = None,
    started_at: str | None = None,
    plan: Mapping[str, Any] | None = None,
    state: Mapping[str, Any] | None = None,
    harness: str | None = None,
) -> Path:
    """Add this run's host (what `collect` finds) to results_dir/<machine>/serkit-host.yaml.

    `shard` ("K/N"), `commit`, `environments` (labels), `filed` (the names of the
    results files it filed, serkit.results.history) and `measured_as` (quick or full, and
    any narrowing: serkit.run.points) say what the run measured: a results file's host is
    the run that names it, and two values one run filed had their rounds interleaved
    (serkit.results.host_file.same_run). `plan` says how it sampled and what it left out,
    `state` how much of it the machine spent in its slow state (serkit.sample_speed), `harness`
    what its timed processes ran around the canary (serkit.suite.cases.harness_record).
    """
    path = Path(results_dir) / machine / HOST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    warnings: list[str] = []
    earlier = read_runs(path.parent, warnings)
    if earlier is None and os.path.lexists(path):  # not serkit's, or broken: kept aside,
        path.replace(path.with_name(HOST_FILE + ".unreadable"))  # never overwritten unread
    run = {
        "shard": shard,
        "ci_run": ci_run(),
        "commit": commit,
        "environments": list(environments),
        "results": list(filed),
        "measured_as": measured_as,
        "started_at": started_at,
        "plan": dict(plan) if plan else None,
        "state": dict(state) if state else None,
        "canary_harness": harness,
        **collect(pythons),
    }
    write_runs(path, machine, merge_runs([earlier or [], [run]]))
    return path


def run_state(results_dir: Path, machine: str, files: Sequence[str]) -> dict[str, Any] | None:
    """How much of the run that filed `files` the machine spent in its slow state, judged
    against the fast canary of every run it holds (serkit.sample_speed); None without a canary."""
    tree = read_tree(results_dir, [machine])
    found = tree.machines.get(machine)
    chosen = [m for m in (found.measurements if found else []) if m.file.name in set(files)]
    share, reference = measured_state(chosen)
    return share.as_record(reference) if share.samples else None


def describe_hosts(tree: ResultsTree) -> list[dict[str, Any]]:
    """Each machine: asv's profile, serkit's host record, and what its results cover."""
    rows = []
    for name, machine in sorted(tree.machines.items()):
        envs = {m.env for m in machine.measurements}
        runs = read_runs(tree.root / name, tree.warnings) or []
        rows.append(
            {
                "machine": name,
                "asv": {f: machine.profile.get(f) for f in ASV_FIELDS},
                "asv_extra": {
                    k: v for k, v in machine.profile.items() if k not in ASV_MACHINE_FIELDS
                },
                "host": runs[-1] if runs else None,
                "runs": len(runs),
                "cpus": cpus_seen(runs),
                "host_changes": host_changes(runs),
                "last_ran": str(runs[-1].get("recorded_at")) if runs else None,
                "noise": _noise(read_noise(tree.root / name, tree.warnings)),
                "power": read_power(tree.root / name, tree.warnings),  # data: worded where shown
                "results": {
                    "files": machine.files,
                    "environments": len(envs),
                    "commits": len({m.commit for m in machine.measurements}),
                    "pythons": sorted({env.python for env in envs}),
                },
            }
        )
    return rows


def host_changes(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each run whose host differs from the run before it (oldest first): when, and what."""
    out = []
    for before, after in zip(runs, runs[1:]):
        changes = identity_changes(before, after)
        if changes:
            out.append({"recorded_at": after.get("recorded_at"), "changes": changes})
    return out


def _noise(record: NoiseRecord | None) -> dict[str, Any] | None:
    return {**dataclasses.asdict(record), "in_words": record.in_words()} if record else None
