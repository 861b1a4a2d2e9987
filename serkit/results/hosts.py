"""What a person needs to judge a comparison of hosts, beyond what asv records.

asv's machine profile holds the CPU name, core count, architecture, OS and RAM (or only
the name, for `asv machine --yes --machine NAME`). It does not hold the frequency
governor, the turbo (boost) state or how each Python was built, and each of these moves
timings by tens of percent. `record_host` writes them beside asv's profile, as
`results/<machine>/serkit-host.yaml`, so they travel with the results. (Not a .json
name: asv reads every .json file in a machine's folder as a results file, and warns.)
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from tabulate import tabulate

from serkit.results.noise import DEFAULT_FLOOR, NoiseRecord, read_noise
from serkit.results.tree import (
    ASV_MACHINE_FIELDS,
    ResultsTree,
    version_order,
)

HOST_FILE = "serkit-host.yaml"
# Not asv's `version` key: `asv update` rewrites any file in the results tree whose
# `version` is below its own, and asv only warns about a file without one.
FORMAT_KEY, FORMAT = "serkit_host_format", 1
UNREADABLE = "unreadable"
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


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    for line in (_read(cpuinfo) or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model") and value.strip():
            return value.strip()
    return platform.processor() or UNREADABLE


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


def collect(pythons: Mapping[str, Path | None] | None = None) -> dict[str, Any]:
    """This host, now: CPU, governor, turbo, OS, and the build of each Python given
    (by version, as serkit's `find_pythons` returns them), or of this one."""
    chosen = {k: v for k, v in (pythons or {}).items() if v is not None}
    if not chosen:
        chosen = {f"{sys.version_info[0]}.{sys.version_info[1]}": Path(sys.executable)}
    affinity = getattr(os, "sched_getaffinity", None)
    return {
        FORMAT_KEY: FORMAT,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(affinity(0)) if affinity else None,
        "governor": governor(),
        "turbo": turbo(),
        "os": platform.platform(),
        "pythons": {v: python_build(chosen[v]) for v in sorted(chosen, key=version_order)},
    }


def record_host(
    results_dir: Path, machine: str, pythons: Mapping[str, Path | None] | None = None
) -> Path:
    """Write what `collect` finds to results_dir/<machine>/serkit-host.yaml; its path."""
    path = Path(results_dir) / machine / HOST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"machine": machine, **collect(pythons)}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def read_host(folder: Path, warnings: list[str]) -> dict[str, Any] | None:
    path = folder / HOST_FILE
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        warnings.append(f"skipped {path}: not valid YAML, truncated or corrupted ({problem})")
        return None
    if not isinstance(data, dict) or data.get(FORMAT_KEY) != FORMAT:
        warnings.append(f"skipped {path}: not a serkit host file of format {FORMAT}")
        return None
    return data


# --- `serkit hosts` ------------------------------------------------------------------


def describe_hosts(tree: ResultsTree) -> list[dict[str, Any]]:
    """Each machine: asv's profile, serkit's host record, and what its results cover."""
    rows = []
    for name, machine in sorted(tree.machines.items()):
        envs = {m.env for m in machine.measurements}
        rows.append(
            {
                "machine": name,
                "asv": {f: machine.profile.get(f) for f in ASV_FIELDS},
                "asv_extra": {
                    k: v for k, v in machine.profile.items() if k not in ASV_MACHINE_FIELDS
                },
                "host": read_host(tree.root / name, tree.warnings),
                "noise": _noise(read_noise(tree.root / name, tree.warnings)),
                "results": {
                    "files": machine.files,
                    "environments": len(envs),
                    "commits": len({m.commit for m in machine.measurements}),
                    "pythons": sorted({env.python for env in envs}),
                },
            }
        )
    return rows


NOT_MEASURED = (
    f"not measured (`serkit noise`); verdicts assume differences under {DEFAULT_FLOOR:.0%} "
    "are noise"
)


def _noise(record: NoiseRecord | None) -> dict[str, Any] | None:
    return {**dataclasses.asdict(record), "in_words": record.in_words()} if record else None


def _python_text(version: str, build: Mapping[str, Any]) -> str:
    if build.get("implementation") == UNREADABLE:
        return f"Python {version}: {UNREADABLE}"
    flags = build.get("build_flags")
    if flags is None:
        shown = "build flags unreadable"
    else:
        pgo_lto = any(f.startswith(("--enable-optimizations", "--with-lto")) for f in flags)
        shown = " ".join(flags) + ("" if pgo_lto else " (no PGO, no LTO)")
    return f"{build.get('implementation')} {build.get('version')} {shown.strip()}"


def _text(value: Any) -> str:
    return "-" if value in (None, "") else str(value)


def render_hosts(rows: list[dict[str, Any]], markdown: bool = False) -> str:
    """One column per machine, so that hosts compare side by side (or a GitHub table)."""
    fields: list[tuple[str, Any]] = [
        ("asv: cpu", lambda r: r["asv"]["cpu"]),
        ("asv: num_cpu", lambda r: r["asv"]["num_cpu"]),
        ("asv: arch", lambda r: r["asv"]["arch"]),
        ("asv: os", lambda r: r["asv"]["os"]),
        ("asv: ram", lambda r: r["asv"]["ram"]),
        ("cpu model", lambda r: r["host"] and r["host"].get("cpu_model")),
        ("cpus (usable)", _cpus),
        ("governor", lambda r: r["host"] and r["host"].get("governor")),
        ("turbo", lambda r: r["host"] and r["host"].get("turbo")),
        ("python builds", _pythons),
        ("platform", lambda r: r["host"] and r["host"].get("os")),
        ("host recorded", lambda r: r["host"] and r["host"].get("recorded_at")),
        ("noise", lambda r: r["noise"]["in_words"] if r["noise"] else NOT_MEASURED),
        ("results", _coverage),
    ]
    table = [[label, *(_text(get(r)) for r in rows)] for label, get in fields]
    if markdown:  # a Markdown cell is one line
        table = [[cell.replace("\n", "<br>") for cell in row] for row in table]
    out = tabulate(
        table,
        headers=["", *(r["machine"] for r in rows)],
        disable_numparse=True,
        tablefmt="github" if markdown else "simple",
    )
    missing = [r["machine"] for r in rows if r["host"] is None]
    if missing:
        out += (
            f"\n\n- : not recorded. asv's profile may hold only the name (asv machine --yes "
            f"--machine NAME); no {HOST_FILE} for {', '.join(missing)}."
        )
    return out


def _cpus(row: Mapping[str, Any]) -> str | None:
    host = row["host"]
    if not host:
        return None
    return f"{_text(host.get('logical_cpus'))} ({_text(host.get('usable_cpus'))})"


def _pythons(row: Mapping[str, Any]) -> str | None:
    builds = (row["host"] or {}).get("pythons") or {}
    return "\n".join(_python_text(v, b) for v, b in builds.items()) or None


def _coverage(row: Mapping[str, Any]) -> str:
    r = row["results"]
    pythons = ", ".join(r["pythons"]) or "-"
    return f"{r['files']} files, {r['environments']} envs, {r['commits']} commits; Python {pythons}"
