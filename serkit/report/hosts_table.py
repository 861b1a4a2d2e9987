"""The hosts of a results tree in words: `serkit hosts`' table, and the rows every view shows.

serkit.results.hosts.describe_hosts reads each machine's facts as data; what a verdict
there can see (`serkit power`) stays a record until it is shown here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from serkit.compare.in_words import power_text
from serkit.results.host_file import HOST_FILE, mixed_cpu_warnings
from serkit.results.identity import UNREADABLE
from serkit.results.noise import DEFAULT_FLOOR
from serkit.text import diagnostic, markdown_cell, markdown_text, terminal
from serkit.units import MISSING, bytes_binary, plural

NOT_MEASURED = (
    f"not measured (`serkit noise`); verdicts assume differences under {DEFAULT_FLOOR:.0%} "
    "are noise"
)


def worded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """describe_hosts' rows as shown (JSON, the report's pages): each record in words."""
    return [{**row, "power": power_text(row["power"])} for row in rows]


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


def asv_field_text(key: str, value: Any) -> str:
    """A field of asv's machine profile as people read it: the RAM, which asv records as a
    number of bytes (25276063744), in binary units (23.5 GiB); "-" where not recorded."""
    if value is None or value == "":
        return MISSING
    if key == "ram" and str(value).strip().isdigit():
        return bytes_binary(int(str(value).strip()))
    return str(value)


def render_hosts(rows: list[dict[str, Any]], markdown: bool = False) -> str:
    """One column per machine, so that hosts compare side by side (or a GitHub table)."""
    fields: list[tuple[str, Any]] = [
        ("asv: cpu", lambda r: r["asv"]["cpu"]),
        ("asv: num_cpu", lambda r: r["asv"]["num_cpu"]),
        ("asv: arch", lambda r: r["asv"]["arch"]),
        ("asv: os", lambda r: r["asv"]["os"]),
        ("asv: ram", lambda r: asv_field_text("ram", r["asv"]["ram"])),
        ("cpu model", lambda r: r["host"] and r["host"].get("cpu_model")),
        ("cpus (usable)", _cpus),
        ("governor", lambda r: r["host"] and r["host"].get("governor")),
        ("turbo", lambda r: r["host"] and r["host"].get("turbo")),
        ("python builds", _pythons),
        ("platform", lambda r: r["host"] and r["host"].get("os")),
        ("kernel", lambda r: r["host"] and r["host"].get("kernel")),
        ("OS release", lambda r: r["host"] and r["host"].get("os_release")),
        ("image", lambda r: r["host"] and r["host"].get("image")),
        ("libc", lambda r: r["host"] and r["host"].get("libc")),
        ("microcode", lambda r: r["host"] and r["host"].get("cpu_microcode")),
        ("cpu flags", _flag_count),
        ("host recorded", lambda r: r["host"] and r["host"].get("recorded_at")),
        ("runs recorded", lambda r: r["runs"] or None),
        ("cpus seen", _cpus_seen),
        ("host changes", _changes_text),
        ("noise", lambda r: r["noise"]["in_words"] if r["noise"] else NOT_MEASURED),
        ("what verdicts see", lambda r: power_text(r["power"])),
        ("machine state, last run", _state),
        ("results", _coverage),
    ]
    # Read from files other hosts wrote: made text for Markdown (one line a cell), or for
    # the terminal.
    escape = markdown_cell if markdown else terminal
    table = [[label, *(escape(_text(get(r))) for r in rows)] for label, get in fields]
    out = tabulate(
        table,
        headers=["", *((markdown_cell if markdown else diagnostic)(r["machine"]) for r in rows)],
        disable_numparse=True,
        tablefmt="github" if markdown else "simple",
    )

    def prose(text: str) -> str:  # each note below is one line, names and all
        return markdown_text(diagnostic(text)) if markdown else diagnostic(text)

    missing = [r["machine"] for r in rows if r["host"] is None]
    if missing:
        out += "\n\n" + prose(
            f"- : not recorded. asv's profile may hold only the name (asv machine --yes "
            f"--machine NAME); no {HOST_FILE} for {', '.join(missing)}."
        )
    for warning in mixed_cpu_warnings(rows):
        out += "\n\n" + prose(f"MIXED CPUS: {warning}.")
    return out


def _state(row: Mapping[str, Any]) -> str | None:
    """The newest run's machine state (serkit.sample_speed), as its host record kept it."""
    state = row["host"] and row["host"].get("state")
    return str(state.get("in_words")) if isinstance(state, dict) else None


def _cpus_seen(row: Mapping[str, Any]) -> str | None:
    cpus = row["cpus"]
    if not cpus:
        return None
    shown = "\n".join(
        f"{c['cpu_model']} x{c['logical_cpus']}: {plural(c['runs'], 'run')}" for c in cpus
    )
    return ("MIXED: " if len(cpus) > 1 else "") + shown


def _flag_count(row: Mapping[str, Any]) -> str | None:
    flags = (row["host"] or {}).get("cpu_flags")
    if not flags or flags == UNREADABLE:
        return flags or None
    return plural(len(str(flags).split()), "flag")


def _changes_text(row: Mapping[str, Any]) -> str | None:
    """How many runs saw their host change, and the newest change: a series crosses it."""
    changes = row.get("host_changes") or []
    if not changes:
        return None
    newest = changes[-1]
    return (
        f"CHANGED {len(changes)} time{'s' if len(changes) != 1 else ''}; newest at "
        f"{newest['recorded_at']}: " + "; ".join(newest["changes"])
    )


def _cpus(row: Mapping[str, Any]) -> str | None:
    host = row["host"]
    if not host:
        return None
    return f"{_text(host.get('logical_cpus'))} ({_text(host.get('usable_cpus'))})"


def _pythons(row: Mapping[str, Any]) -> str | None:
    builds = (row["host"] or {}).get("pythons") or {}
    return "\n".join(_python_text(v, b) for v, b in builds.items()) or None


COVERAGE = (("files", "file"), ("environments", "env"), ("commits", "commit"))


def _coverage(row: Mapping[str, Any]) -> str:
    r = row["results"]
    pythons = ", ".join(r["pythons"]) or "-"
    held = [plural(r[key], word) for key, word in COVERAGE]
    return f"{', '.join(held)}; Python {pythons}"
