"""`serkit replicate`: the posts' published tables beside today's measurements."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from serkit.checkout import ASV_DIR, REPLICATION_FILE, replication_path
from serkit.cli.exits import UsageError
from serkit.cli.options import Use, add_saving, command


def add_commands(commands: Any) -> None:
    from serkit.replicate.posts import DEFAULT_ROUNDS, MIN_ROUNDS, SLOW_DEFAULT_ROUNDS, post_ids

    replicate = command(
        commands,
        "replicate",
        run_replicate,
        help="the posts' published tables beside today's measurements, with verdicts",
        description=(
            "Re-run the experiments of the posts serkit grew from (and, as post 005, the "
            "benchmark in orjson's README) and show the published "
            "numbers beside today's: both normalized to a reference codec, the ranking then "
            "and now, and a verdict on each claim. Run with every post, the JSON document is "
            f"also saved to {ASV_DIR}/{REPLICATION_FILE} in the checkout (see --save, --no-save)."
        ),
        options=(
            "--mirror",
            "--format",
            Use("--slow", note="post 000's 10,000 and 100,000 records, GBs of memory"),
            Use(
                "--rounds",
                note=f"per measurement, at least {MIN_ROUNDS} "
                f"(default {DEFAULT_ROUNDS}, or {SLOW_DEFAULT_ROUNDS} with --slow)",
            ),
        ),
    )
    replicate.add_argument(
        "post",
        nargs="?",
        metavar="POST",
        help=f"one post: {', '.join(post_ids())} (000 and 001 are one post); default all",
    )
    add_saving(replicate, f"{ASV_DIR}/{REPLICATION_FILE}", "a run of every post")


def replication_target(args: argparse.Namespace) -> Path | None:
    """Where the JSON document goes: --save, else the checkout's .asv/ after a full run."""
    from serkit.cli.common import save_target

    return save_target(args, replication_path, partial=bool(args.post))


def run_replicate(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json, save_document
    from serkit.replicate.posts import (
        DEFAULT_ROUNDS,
        MIN_ROUNDS,
        SLOW_DEFAULT_ROUNDS,
        Options,
        render,
        resolve_post,
        run,
        save,
    )

    if args.rounds is not None and args.rounds < MIN_ROUNDS:
        raise UsageError(f"--rounds must be at least {MIN_ROUNDS}, not {args.rounds}")
    posts = [resolve_post(args.post)] if args.post else None  # a typo fails before any work
    target = replication_target(args)
    rounds = args.rounds or (SLOW_DEFAULT_ROUNDS if args.slow else DEFAULT_ROUNDS)
    document = run(posts, Options(rounds=rounds, slow=args.slow))
    save_document(save, document, target, "replication document")
    if args.format == "json":
        print_json(document)
    else:
        sys.stdout.write(render(document, markdown=args.format == "markdown"))
    count = len(document["posts"])
    print(f"serkit: replicated {count} post(s) in {document['wall_s']:.0f} s", file=sys.stderr)
    if not args.slow and any(post["post"] == "000/001" for post in document["posts"]):
        print(
            "serkit: post 000/001's 10,000 and 100,000 records were left out (add --slow)",
            file=sys.stderr,
        )
    return 0
