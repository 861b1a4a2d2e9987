"""`serkit compare`, `serkit hosts` and `serkit report`: reading the asv results."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from serkit.checkout import project_root, reports_dir, results_dir
from serkit.cli.common import add_format, print_json, warn
from serkit.compare.gate import DEFAULT_PERCENT, FailOn, parse_fail_on
from serkit.errors import SerkitError
from serkit.run import runner
from serkit.units import plural

# `serkit compare`'s exit statuses (docs/cli.md): a check that found a problem is told
# apart from an error, so CI can gate on the first and page someone on the second.
CHECK_FAILED, ERROR = 1, 3


def _fail_on(text: str) -> FailOn:
    """argparse type for --fail-on: a bad value is a usage error (exit 2)."""
    try:
        return parse_fail_on(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_commands(commands: Any) -> None:
    results = argparse.ArgumentParser(add_help=False)
    results.add_argument(
        "--results", metavar="DIR", help="an asv results folder (default: .asv/results)"
    )
    compare = commands.add_parser(
        "compare",
        parents=[results],
        help="compare the asv results of two machines: B/A per benchmark, noise, sizes",
        description=(
            "Compare two machines' asv results, matched by benchmark, parameters and "
            "environment (Python, library versions, environment variables). By default "
            "each value is compared at the newest commit both hosts measured it at. A "
            "difference is within noise when the 99% confidence intervals overlap (the "
            "interquartile ranges where either has none). Sizes (track_* in bytes, but "
            "not memory) must be equal. Exit status: 0 ok; 1 the check found a problem (a "
            "size differs, or a timing fails --fail-on); 2 usage; 3 an error (no results, "
            "nothing to compare). See docs/comparing-hosts.md#what-is-compared-with-what."
        ),
    )
    compare.add_argument("host_a", metavar="HOST_A", help="machine name: A, the baseline")
    compare.add_argument("host_b", metavar="HOST_B", help="machine name: B, compared with A")
    compare.add_argument("--commit", metavar="C", help="this commit (a prefix) on both hosts")
    compare.add_argument(
        "--fail-on",
        type=_fail_on,
        metavar="slower[:PCT]",
        help=(
            "exit 1 when a timing on HOST_B is judged slower than on HOST_A (the noise rule) "
            f"by more than PCT %% (default {DEFAULT_PERCENT:g}), for CI"
        ),
    )
    add_format(compare)
    compare.set_defaults(run=run_compare)

    hosts = commands.add_parser(
        "hosts",
        parents=[results],
        help="the machines in the results: CPU, governor, turbo, Python builds, OS",
        description="Each machine in the results tree with the facts that move its timings "
        "(CPU, governor, turbo, Python builds, OS, load during its runs), as recorded "
        "with each run (docs/comparing-hosts.md#serkit-hosts).",
    )
    add_format(hosts)
    hosts.set_defaults(run=run_hosts)

    report = commands.add_parser(
        "report",
        parents=[results],
        help="the HTML report: snapshots, library versions, hosts, fidelity (+ asv's pages)",
        description=(
            "Write a versioned HTML report from the asv results: asv publish's pages, and "
            "serkit's own beside them. Each report goes to <output>/<serkit version>-"
            "<commit>/, and <output>/index.html lists every version."
        ),
    )
    report.add_argument(
        "--output", metavar="DIR", help="where report versions are kept (default: .asv/reports)"
    )
    report.add_argument("--no-asv", action="store_true", help="leave out asv publish's pages")
    report.add_argument(
        "--replication",
        metavar="FILE",
        help="serkit replicate's saved JSON (default: replication.json beside the results)",
    )
    report.set_defaults(run=run_report)


def _results_dir(args: argparse.Namespace) -> Path:
    """--results as given (relative to the working folder), or the checkout's asv results."""
    return Path(args.results) if args.results else results_dir(project_root())


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
    from serkit.compare.comparison import no_noise_host
    from serkit.report.html import write_report as write_html

    def quiet_asv(where: Path, asv_args: list[str]) -> int:
        return runner.asv(where, asv_args, quiet=True)

    print(f"serkit: writing the report from {results} ...", file=sys.stderr)
    written = write_html(
        root,
        results,
        output,
        asv_runner=quiet_asv if with_asv else None,
        replication=replication,
    )
    shown = written.warnings
    if hosts is not None:
        shown = [w for w in shown if no_noise_host(w) in (None, *hosts)]
        if others := len(written.warnings) - len(shown):
            shown.append(
                f"{plural(others, 'other host')} in the results {'has' if others == 1 else 'have'} "
                "no noise measurement (the report's pages name them)"
            )
    warn(shown)
    print(
        f"serkit: report: {written.folder / 'index.html'} ({len(written.pages)} pages"
        f"{', with asv' + chr(39) + 's pages' if written.asv_pages else ''}); "
        f"every version: {written.index}",
        file=sys.stderr,
    )


def run_report(args: argparse.Namespace) -> int:
    root = project_root()
    output = Path(args.output) if args.output else reports_dir(root)
    replication = Path(args.replication) if args.replication else None
    write_report(
        root, _results_dir(args), output, with_asv=not args.no_asv, replication=replication
    )
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from serkit.compare.comparison import compare
    from serkit.compare.gate import check, check_lines
    from serkit.compare.render import as_json, render
    from serkit.results.tree import read_tree

    tree = read_tree(_results_dir(args), [args.host_a, args.host_b])
    try:
        result = compare(tree, args.host_a, args.host_b, args.commit)
    except SerkitError as exc:
        warn(tree.warnings)  # a skipped file may be why nothing can be compared
        print(f"serkit: error: {exc}", file=sys.stderr)
        return ERROR
    warn(result.warnings)
    if args.format == "json":
        print_json(as_json(result))
    else:
        sys.stdout.write(render(result, markdown=args.format == "markdown"))
    mismatches = len(result.size_mismatches)
    if mismatches:
        print(
            f"serkit: {mismatches} size(s) differ between {args.host_a} and {args.host_b} in "
            "the same environment: the hosts did not run the same thing",
            file=sys.stderr,
        )
    failed = False
    if args.fail_on is not None:
        found = check(result, args.fail_on)
        for line in check_lines(found, args.host_a, args.host_b):
            print(f"serkit: {line}", file=sys.stderr)
        failed = not found.ok
    return CHECK_FAILED if mismatches or failed else 0


def run_hosts(args: argparse.Namespace) -> int:
    from serkit.results.host_file import mixed_cpu_warnings
    from serkit.results.hosts import describe_hosts, render_hosts
    from serkit.results.tree import read_tree

    root = _results_dir(args)
    tree = read_tree(root)
    rows = describe_hosts(tree)
    warn(tree.warnings)
    warn(mixed_cpu_warnings(rows))  # shards under one name that ran on different CPUs
    if not rows:
        raise SerkitError(f"no asv results in {root} (no machine folders)")
    if args.format == "json":
        print_json(rows)
    else:
        print(render_hosts(rows, markdown=args.format == "markdown"))
    return 0
