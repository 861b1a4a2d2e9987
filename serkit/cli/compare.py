"""`serkit compare`: two machines' asv results side by side, and the check CI gates on."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from serkit.cli.options import command
from serkit.compare.gate import DEFAULT_PERCENT
from serkit.errors import SerkitError
from serkit.text import diagnostic

if TYPE_CHECKING:
    from serkit.compare.gate import FailOn


def _fail_on(text: str) -> FailOn:
    """argparse type for --fail-on: a bad value is a usage error (exit 2)."""
    from serkit.compare.gate import parse_fail_on

    try:
        return parse_fail_on(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_commands(commands: Any) -> None:
    compare = command(
        commands,
        "compare",
        run_compare,
        help="compare the asv results of two machines: B/A per benchmark, noise, sizes",
        description=(
            "Compare two machines' asv results, matched by benchmark, parameters and "
            "environment (Python, library versions, environment variables). By default "
            "each value is compared at the newest commit both hosts measured it at, and "
            "only what changed is shown (--all: every pair; --explain: the rules). A "
            "timing that serkit measured in several processes a side is faster or slower "
            "only when a t-test on those processes tells the two apart and the difference "
            "exceeds the hosts' noise floor (`serkit noise`; 10% where none was "
            "measured); other values (plain asv's) only when their 99% confidence "
            "intervals are disjoint. Sizes (track_* in bytes, but "
            "not memory) must be equal. Exit status: 0 ok; 1 the check found a problem (a "
            "size differs, or a timing fails --fail-on); 2 usage; 3 an error (no results, "
            "nothing to compare). See docs/comparing-hosts.md#what-is-compared-with-what."
        ),
        options=("--results", "--format"),
    )
    compare.add_argument("machine_a", metavar="MACHINE_A", help="machine name: A, the baseline")
    compare.add_argument("machine_b", metavar="MACHINE_B", help="machine name: B, compared with A")
    compare.add_argument("--commit", metavar="C", help="this commit (a prefix) on both hosts")
    compare.add_argument(
        "--fail-on",
        type=_fail_on,
        metavar="slower[:PCT]",
        help=(
            "exit 1 when a timing on MACHINE_B is judged slower than on MACHINE_A (the noise rule) "
            f"by more than PCT %% (default {DEFAULT_PERCENT:g}), for CI"
        ),
    )
    compare.add_argument(
        "--all",
        action="store_true",
        dest="every",
        help="show every pair with its spread, the summary per codec, and what only one "
        "machine measured (by default: only what changed, in counts the rest)",
    )
    compare.add_argument(
        "--explain",
        action="store_true",
        help="also print the rules behind each verdict: commit, noise, the machine's state",
    )


def run_compare(args: argparse.Namespace) -> int:
    from serkit.cli import exits
    from serkit.cli.common import print_json, results_dir_of, warn
    from serkit.compare.comparison import compare
    from serkit.compare.gate import check, check_lines
    from serkit.compare.in_words import same_run_line, warnings_of
    from serkit.compare.json_form import as_json
    from serkit.compare.render import render
    from serkit.results.tree import read_tree

    tree = read_tree(results_dir_of(args), [args.machine_a, args.machine_b])
    try:
        result = compare(tree, args.machine_a, args.machine_b, args.commit)
    except SerkitError as exc:
        warn(tree.warnings)  # a skipped file may be why nothing can be compared
        print(f"serkit: error: {diagnostic(exc)}", file=sys.stderr)
        return exits.ERROR  # the tree's warnings first: a skipped file may be why
    if result.same_run:  # nothing can differ: no check to make, no noise floor to warn of
        warn(result.warnings)
        if args.format == "json":
            print_json(as_json(result))
            print(f"serkit: {diagnostic(same_run_line(result))}", file=sys.stderr)
        else:
            sys.stdout.write(render(result, markdown=args.format == "markdown"))
        return exits.OK
    warn(warnings_of(result))
    if args.format == "json":
        print_json(as_json(result))
    else:
        markdown = args.format == "markdown"
        sys.stdout.write(render(result, markdown, every=args.every, explain=args.explain))
    mismatches = len(result.size_mismatches)
    if mismatches:
        print(
            f"serkit: {mismatches} size(s) differ between {args.machine_a} and {args.machine_b} in "
            "the same environment: the hosts did not run the same thing",
            file=sys.stderr,
        )
    failed = False
    if args.fail_on is not None:
        found = check(result, args.fail_on)
        for line in check_lines(found, args.machine_a, args.machine_b):
            print(f"serkit: {diagnostic(line)}", file=sys.stderr)
        failed = not found.ok
    return exits.checked(bool(mismatches) or failed)
