"""`serkit hosts`: the machines in the results, with the facts that move their timings."""

from __future__ import annotations

import argparse
from typing import Any

from serkit.cli.options import command
from serkit.errors import SerkitError


def add_commands(commands: Any) -> None:
    command(
        commands,
        "hosts",
        run_hosts,
        help="the machines in the results: CPU, governor, turbo, Python builds, OS",
        description="Each machine in the results tree with the facts that move its timings "
        "(CPU, governor, turbo, Python builds, OS, load during its runs), as recorded "
        "with each run (docs/comparing-hosts.md#serkit-hosts).",
        options=("--results", "--format"),
    )


def run_hosts(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json, results_dir_of, warn
    from serkit.report.hosts_table import render_hosts, worded
    from serkit.results.host_file import mixed_cpu_warnings
    from serkit.results.hosts import describe_hosts
    from serkit.results.tree import read_tree

    root = results_dir_of(args)
    tree = read_tree(root)
    rows = describe_hosts(tree)
    warn(tree.warnings)
    warn(mixed_cpu_warnings(rows))  # shards under one name that ran on different CPUs
    if not rows:
        raise SerkitError(f"no asv results in {root} (no machine folders)")
    if args.format == "json":
        print_json(worded(rows))
    else:
        print(render_hosts(rows, markdown=args.format == "markdown"))
    return 0
