"""`serkit report`: the versioned HTML report from the asv results."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from serkit.checkout import project_root, reports_dir
from serkit.cli.common import results_dir_of, warn
from serkit.cli.options import Use, command
from serkit.text import diagnostic
from serkit.units import plural


def add_commands(commands: Any) -> None:
    report = command(
        commands,
        "report",
        run_report,
        help="the HTML report: snapshots, library versions, hosts, fidelity (+ asv's pages)",
        description=(
            "Write a versioned HTML report from the asv results: asv publish's pages, and "
            "serkit's own beside them. Each report goes to <DIR>/<serkit version>-"
            "<commit>/ (DIR from --into); <DIR>/index.html opens the newest one's Overview, "
            "and <DIR>/reports.html lists every version."
        ),
        options=(
            "--results",
            Use("--into", note="where report versions are kept (default: .asv/reports)"),
        ),
    )
    report.add_argument("--no-asv", action="store_true", help="leave out asv publish's pages")
    report.add_argument(
        "--replication",
        metavar="FILE",
        help="serkit replicate's saved JSON (default: replication.json beside the results)",
    )


def write_report(
    root: Path,
    results: Path,
    output: Path,
    *,
    with_asv: bool,
    replication: Path | None = None,
    hosts: Sequence[str] | None = None,
) -> None:
    """The HTML report, and one line on stderr saying where it is. With `hosts` (the
    machines the command measured), a host without a noise measurement is named on the
    console only among them: the report's pages name every one."""
    from serkit.compare.in_words import no_noise_text
    from serkit.progress import PHASES
    from serkit.report.html import write_report as write_html
    from serkit.run import runner

    def quiet_asv(where: Path, asv_args: list[str]) -> int:
        return runner.asv(where, asv_args, quiet=True)

    PHASES.say(f"writing the report from {diagnostic(results)} ...")
    written = write_html(
        root,
        results,
        output,
        asv_runner=quiet_asv if with_asv else None,
        replication=replication,
    )
    named = [n for n in written.no_noise if hosts is None or n.machine in hosts]
    shown = [*written.warnings, *map(no_noise_text, named)]
    if others := len(written.no_noise) - len(named):
        shown.append(
            f"{plural(others, 'other host')} in the results {'has' if others == 1 else 'have'} "
            "no noise measurement (the report's pages name them)"
        )
    warn(shown)
    done = (
        f"report: {written.folder / 'index.html'} ({plural(len(written.pages), 'page')}"
        f"{', with asv' + chr(39) + 's pages' if written.asv_pages else ''}); "
        f"every version: {written.listing}"
    )
    PHASES.say(diagnostic(done))


def run_report(args: argparse.Namespace) -> int:
    root = project_root()
    output = Path(args.into) if args.into else reports_dir(root)
    replication = Path(args.replication) if args.replication else None
    write_report(
        root, results_dir_of(args), output, with_asv=not args.no_asv, replication=replication
    )
    return 0
