"""`serkit try PATH...`: every codec on your own documents, measured here, without asv."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serkit.cli.documents import granted
from serkit.cli.exits import UsageError
from serkit.cli.options import LIMITS, Use, command, positive_seconds
from serkit.errors import SerkitError
from serkit.text import diagnostic
from serkit.trial.budget import TARGET_S
from serkit.trial.measure import try_paths

if TYPE_CHECKING:
    from serkit.trial.trials import DocumentTrial


def add_commands(commands: Any) -> None:
    trial = command(
        commands,
        "try",
        granted(run_try),
        help="every codec on your own documents: time, size, fidelity (no asv)",
        description=(
            "Time every codec's dumps and loads on your documents (JSON, YAML, msgpack, or "
            "pickle with --allow-pickle; chosen by extension, else by content), in several "
            "processes a codec, each judged by the machine's state as serkit bench's are, "
            "more of them where the ranking is still undecided, with their encoded and "
            "compressed sizes, whether each gives back what it was given, and the "
            "implementation that ran. Each document's table "
            "opens with a ranked verdict: exact codecs first, ties grouped by serkit's "
            "verdict test, lossy and unsafe ones ranked apart (--rank-by, --exact-only, "
            "--safe-only). "
            "A document over a limit (file size, nodes, depth, aliases) is refused, "
            "unless you raise the limit here."
        ),
        options=(
            "--codec",
            Use(
                "--into",
                note="the timings and sizes, as an asv results tree under --machine, which "
                "`serkit compare NAME_A NAME_B --results DIR` reads",
            ),
            Use("--machine", note="with --into"),
            "--rank-by",
            "--exact-only",
            "--safe-only",
            "--format",
            LIMITS,
        ),
    )
    trial.add_argument("paths", nargs="+", metavar="PATH", help="document files")
    trial.add_argument(
        "--budget",
        type=positive_seconds,
        default=TARGET_S,
        metavar="SECONDS",
        help=f"time to spend on each document, preparing included (default: {TARGET_S:g})",
    )


def run_try(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_hazards, print_json
    from serkit.codecs.registry import check_codecs
    from serkit.compare.verdict_words import ranking_dict
    from serkit.run import runner
    from serkit.suite.cases import INJECT_ENV
    from serkit.trial.render import hazards, ranking, render
    from serkit.trial.save import check_target, save

    codecs = check_codecs(args.codec) if args.codec else None
    if args.machine and not args.into:
        raise UsageError("--machine names the run --into files: give --into DIR too")
    into = Path(args.into) if args.into else None
    machine = None
    if into is not None:
        machine = args.machine or runner.machine_name()
        check_target(into, machine)  # before minutes of measuring, not after
    only = {"exact_only": args.exact_only, "safe_only": args.safe_only}
    documents = try_paths(
        args.paths,
        codecs,
        allow_pickle=args.allow_pickle,
        budget_s=args.budget,
        measure=args.rank_by,
        **only,
    )
    if args.format == "json":
        print_json(
            [
                {**d.as_dict(), "ranking": ranking_dict(ranking(d, args.rank_by, **only))}
                for d in documents
            ]
        )
    else:
        markdown = args.format == "markdown"
        print(render(documents, markdown, measure=args.rank_by, **only))
        print_hazards(
            hazards(documents),
            "\nUNSAFE on untrusted input: never give their loads bytes you did not write",
        )
    if into is not None and machine is not None:
        written = save(documents, into, machine)
        saved = f"saved to {written}; compare with another run: serkit compare {machine} OTHER"
        saved = f"{saved} --results {into}"
        if any(d.injected for d in documents):  # a test tree: never read as a plain run
            saved = f"{saved}; every timing in it carries the slowdown {INJECT_ENV} injected"
        print(f"serkit: {diagnostic(saved)}", file=sys.stderr)
    return _measured_something(documents)


def _measured_something(documents: list[DocumentTrial]) -> int:
    """0, or an error when some document was measured by no codec at all (e.g. too deep)."""
    empty = [d.path for d in documents if all(t.round_trip_s is None for t in d.codecs)]
    if empty:
        raise SerkitError(f"no codec could measure {', '.join(empty)}: see the table above")
    return 0
