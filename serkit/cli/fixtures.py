"""`serkit fixtures list|fetch|verify` and `serkit sizes`: the documents, and their sizes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from serkit.checks.sizes import EXACT, LOSSY, SizeResult, measure_fixture
from serkit.cli.common import (
    add_format,
    chosen_fixtures,
    codec_parent,
    fixture_parent,
    mirror_parent,
    print_json,
    print_table,
)
from serkit.codecs.registry import check_codecs, codec_names
from serkit.inputs.fixtures import (
    FIXTURES,
    SOURCES,
    content_hash,
    data_dir,
    fetch_source,
    get_fixture,
    load_fixture,
    source_path,
)
from serkit.progress import progress


def add_commands(commands: Any) -> None:
    mirror, selection = mirror_parent(), fixture_parent()
    fixtures = commands.add_parser("fixtures", help="list, fetch and verify fixture documents")
    actions = fixtures.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the fixtures")
    add_format(listing)
    listing.set_defaults(run=run_fixtures_list)
    actions.add_parser(
        "fetch", parents=[mirror], help="download sources from pinned URLs, check sha256"
    ).set_defaults(run=run_fixtures_fetch)
    actions.add_parser(
        "verify", parents=[mirror, selection], help="check sources and fixture content hashes"
    ).set_defaults(run=run_fixtures_verify)

    sizes = commands.add_parser(
        "sizes", parents=[mirror, selection, codec_parent()], help="encoded size of each fixture"
    )
    add_format(sizes)
    sizes.set_defaults(run=run_sizes)


def run_fixtures_list(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = [
        {
            "id": f.name,
            "origin": f.origin,
            "slow": f.slow,
            "sha256": f.sha256,
            "source": f.source.url if f.source else None,
            "license": f.source.license if f.source else None,
            "description": f.description,
        }
        for f in FIXTURES.values()
    ]
    if args.format == "json":
        print_json(rows)
        return 0
    table = [
        [r["id"], r["origin"], "yes" if r["slow"] else "", r["sha256"][:12], r["description"]]
        for r in rows
    ]
    print_table(table, ["fixture", "from", "slow", "sha256", "what"], args.format)
    print(f"\nFetched sources live in {data_dir()} (set SERKIT_DATA_DIR to move them).")
    return 0


def run_fixtures_fetch(args: argparse.Namespace) -> int:
    for source in SOURCES:
        path = fetch_source(source)
        print(f"{source.filename} ({source.license}): sha256 verified, at {path}")
    return 0


def run_fixtures_verify(args: argparse.Namespace) -> int:
    """Check each source's sha256, then that each fixture builds to its pinned hash."""
    failures = 0
    for source in SOURCES:
        path = source_path(source)
        print(f"ok    {source.filename} (sha256 {source.sha256[:12]}…, {path})")
    names = chosen_fixtures(args)
    with progress(names, desc="verifying", unit="fixture") as bar:
        for name in bar:
            fixture = get_fixture(name)
            actual = content_hash(load_fixture(name))
            if actual == fixture.sha256:
                bar.write(f"ok    {name} (content sha256 {actual[:12]}…)", file=sys.stdout)
            else:
                failures += 1
                bar.write(
                    f"FAIL  {name}: built {actual[:12]}…, pinned {fixture.sha256[:12]}…; "
                    "results for it would not be comparable",
                    file=sys.stdout,
                )
    skipped = [f.name for f in FIXTURES.values() if f.slow and f.name not in names]
    if skipped:
        print(f"skipped slow fixtures: {', '.join(skipped)} (add --slow)")
    return 1 if failures else 0


def _size_cell(result: SizeResult) -> str:
    if result.bytes is None:
        return result.status
    mark = ("*" if result.status == LOSSY else "") + ("+" if result.options else "")
    return f"{result.bytes:,}{mark}"


def run_sizes(args: argparse.Namespace) -> int:
    codecs = check_codecs(args.codec or codec_names())
    fixtures = chosen_fixtures(args)
    results: list[SizeResult] = []
    for fixture in progress(fixtures, desc="encoding", unit="fixture"):
        results.extend(measure_fixture(fixture, codecs))
    if args.format == "json":
        print_json([r.as_dict() for r in results])
        return 0
    cells = {(r.codec, r.fixture): r for r in results}
    table = [[c] + [_size_cell(cells[c, f]) for f in fixtures] for c in codecs]
    print("Encoded size in bytes (B)")
    print_table(table, ["codec", *fixtures], args.format, stralign="right")
    print(f"\n* {LOSSY}: decodes to different types or values than it encoded")
    needed: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if r.options:
            needed.setdefault((r.codec, r.options), []).append(r.fixture)
    if needed:
        print("+ used an option this data needs:")
    for (codec, options), names in needed.items():
        print(f"    {codec}: {options} ({', '.join(names)})")
    print(f"unmarked sizes round-trip {EXACT}ly.")
    return 0
