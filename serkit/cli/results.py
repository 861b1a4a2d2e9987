"""`serkit results merge`: results trees from many hosts and shards, into one store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from serkit.checkout import project_root
from serkit.cli.common import warn
from serkit.cli.options import Use, command
from serkit.text import diagnostic
from serkit.units import plural


def add_commands(commands: Any) -> None:
    group = commands.add_parser(
        "results",
        help="the results store: merge results trees from many hosts into one",
        description="The results store: results trees of many hosts (CI artifacts, "
        "checkouts) merged into one, which `serkit report` and `serkit compare` read "
        "(docs/comparing-hosts.md#merging-results-serkit-results-merge).",
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    merging = command(
        actions,
        "merge",
        run_merge,
        help="merge asv results trees (CI artifacts, checkouts, rsync'd folders) into one",
        description=(
            "Merge asv results trees into the store DIR (created if missing). Every results "
            "file lands there; one already there with the same content is left alone, so "
            "merging twice changes nothing. A file that would overwrite a different result "
            "for the same machine, commit and environment is refused, and nothing is "
            "written. Host records (serkit-host.yaml) keep every source's runs. "
            "benchmarks.json is written from this checkout's suite, never copied. "
            "See docs, Comparing hosts."
        ),
        options=(Use("--into", note="the store, an asv results tree", required=True),),
    )
    merging.add_argument("sources", nargs="+", metavar="SRC", help="an asv results folder")


def run_merge(args: argparse.Namespace) -> int:
    from serkit.results.merge import merge  # imported when run: parsing stays light
    from serkit.run import runner

    root = project_root()  # benchmarks.json comes from this checkout's suite
    into = Path(args.into)

    def discover(folder: Path) -> Path:
        return runner.discover_benchmarks(root, folder)

    result = merge([Path(s) for s in args.sources], into, discover)
    warn(result.warnings)
    summary = (
        f"merged {plural(len(result.sources), 'tree')} into {into}: "
        f"{plural(len(result.added), 'results file')} added, {result.identical} already there; "
        f"machines: {', '.join(result.machines) or 'none'}; host records updated: "
        f"{len(result.hosts)}; benchmarks.json "
        + ("rewritten from the suite" if result.benchmarks_rewritten else "unchanged")
    )
    print(f"serkit: {diagnostic(summary)}", file=sys.stderr)  # folder names from elsewhere
    return 0
