"""`serkit doctor`: the state of this machine and Python that moves benchmark timings.

Each item has a value and, where it hurts the stability or the meaning of timings, a
warning saying what to do. The CPU facts are read as `serkit hosts` reads them
(`serkit.results.hosts`); nothing here changes the system.
"""

from __future__ import annotations

import os
import platform
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from serkit.codecs.registry import codec_names, registry
from serkit.results import hosts as hostinfo

# A 1-minute load above this share of the usable CPUs means other work competes.
LOAD_PER_CPU = 0.25
NO_CPUFREQ = "no cpufreq here (a VM or container?): the host may change the clock unseen"


@dataclass(frozen=True)
class Item:
    name: str
    value: str
    warning: str = ""  # "" when this item does not hurt timings


def _cpu_items(cpu_root: Any = hostinfo.CPU_ROOT) -> list[Item]:
    model = hostinfo.cpu_model()
    governor = hostinfo.governor(cpu_root)
    turbo = hostinfo.turbo(cpu_root)
    if governor == hostinfo.UNREADABLE:
        governor_warning = NO_CPUFREQ
    elif governor != "performance":
        governor_warning = (
            "the clock follows the load: set the performance governor "
            "(cpupower frequency-set -g performance, or python -m pyperf system tune)"
        )
    else:
        governor_warning = ""
    if turbo == "on":
        turbo_warning = "boost clocks vary with heat and load: turn boost off for stable timings"
    elif turbo == hostinfo.UNREADABLE:
        turbo_warning = NO_CPUFREQ
    else:
        turbo_warning = ""
    return [
        Item("cpu model", model, "unreadable" if model == hostinfo.UNREADABLE else ""),
        Item("governor", governor, governor_warning),
        Item("turbo / boost", turbo, turbo_warning),
    ]


def usable_cpus() -> list[int] | None:
    """The CPUs this process may run on, or None where the OS cannot say (not Linux)."""
    affinity: Callable[[int], set[int]] | None = getattr(os, "sched_getaffinity", None)
    return sorted(affinity(0)) if affinity else None


def _load_item(load: Sequence[float] | None, cpus: int) -> Item:
    if load is None:
        return Item("load average", "unreadable")
    value = " ".join(f"{x:.2f}" for x in load) + " (1, 5, 15 min)"
    limit = LOAD_PER_CPU * cpus
    if load[0] > limit:
        warning = (
            f"above {limit:.2f} ({LOAD_PER_CPU} per usable CPU): other work competes; "
            "interleave rounds and compare medians of ratios, or wait for a quiet machine"
        )
        return Item("load average", value, warning)
    return Item("load average", value)


def _affinity_item(usable: list[int] | None, logical: int | None) -> Item:
    if usable is None:
        return Item("pinned", "unknown (no sched_getaffinity)")
    shown = ",".join(str(c) for c in usable)
    if logical is not None and len(usable) < logical:
        return Item("pinned", f"yes, to CPU {shown} of {logical}")
    return Item(
        "pinned",
        f"no: any of CPU {shown}",
        "the scheduler may move the benchmark between CPUs: pin it "
        "(taskset -c N serkit ..., or asv run --cpu-affinity N)",
    )


def python_items(config_args: object = None, debug: bool | None = None) -> list[Item]:
    """This interpreter: version, build flags (PGO, LTO), debug build."""
    if config_args is None:
        config_args = sysconfig.get_config_var("CONFIG_ARGS")
    if debug is None:
        debug = hasattr(sys, "gettotalrefcount")  # only debug builds have it
    flags = hostinfo.speed_flags(config_args)
    name = f"{platform.python_implementation()} {platform.python_version()}"
    items = [Item("python", f"{name} ({sys.executable})")]
    if flags is None:
        items.append(Item("python build", "unreadable (no CONFIG_ARGS)"))
    else:
        missing = [
            label
            for flag, label in (("--enable-optimizations", "PGO"), ("--with-lto", "LTO"))
            if not any(f.split("=")[0] == flag for f in flags)
        ]
        warning = (
            f"no {' or '.join(missing)}: slower than a distribution's Python; "
            "compare timings only between the same builds"
            if missing
            else ""
        )
        items.append(Item("python build", " ".join(flags) or "no speed-relevant flags", warning))
    if debug:
        items.append(
            Item("debug build", "yes", "a debug build is several times slower: never benchmark it")
        )
    else:
        items.append(Item("debug build", "no"))
    return items


def codec_items() -> list[Item]:
    """Each codec's implementation: a compiled codec that fell back to Python is flagged."""
    items = []
    for name in codec_names():
        facts = registry.facts(name)
        codec = facts.codec
        if codec is None:
            items.append(Item(f"codec {name}", f"not installed: {facts.reason}"))
            continue
        value = f"{codec.implementation} ({codec.library} {codec.version})"
        warning = ""
        if codec.implementation != "c" and not facts.spec.pure_python:
            warning = "pure Python where a compiled build exists: its timings are not the C codec's"
        items.append(Item(f"codec {name}", value, warning))
    return items


def diagnose() -> list[Item]:
    """Every item, in the order `serkit doctor` prints them."""
    usable = usable_cpus()
    logical = os.cpu_count()
    load = hostinfo.load_average()
    return [
        *_cpu_items(),
        Item("cpus", f"{logical} logical, {len(usable) if usable else '?'} usable"),
        _load_item(load, len(usable) if usable else (logical or 1)),
        _affinity_item(usable, logical),
        *python_items(),
        *codec_items(),
    ]


def as_json(items: Sequence[Item]) -> dict[str, Any]:
    return {
        "items": [asdict(item) for item in items],
        "warnings": sum(1 for item in items if item.warning),
    }
