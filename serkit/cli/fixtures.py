"""`serkit fixtures list|fetch|verify|add` and `serkit sizes`: the documents, and their sizes."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from serkit.cli.documents import granted
from serkit.cli.exits import checked
from serkit.cli.options import LIMITS, command
from serkit.errors import DocumentError, FixtureChanged, NoSchema, SerkitError
from serkit.inputs.user_fixtures import FOLDER_ENV, MANIFEST
from serkit.text import diagnostic
from serkit.units import bytes_binary

if TYPE_CHECKING:
    from serkit.checks.sizes import SizeResult


def add_commands(commands: Any) -> None:
    fixtures = commands.add_parser(
        "fixtures",
        help="list, fetch and verify fixture documents",
        description="The documents the suite times: list them, fetch their sources (each "
        "pinned by sha256), verify them, or add one of yours (docs/fixtures.md).",
    )
    actions = fixtures.add_subparsers(dest="action", metavar="ACTION", required=True)
    command(
        actions,
        "list",
        run_fixtures_list,
        help="the fixtures",
        description="Each fixture: where it comes from, whether it is slow, its content "
        "hash, the schema the schema codecs use on it, and what it holds.",
        options=("--format",),
    )
    command(
        actions,
        "fetch",
        run_fixtures_fetch,
        help="download sources from pinned URLs, check sha256",
        description="Download each fixture's source (from --mirror or "
        "SERKIT_FIXTURE_MIRROR when given) into the cache and check its pinned sha256; a "
        "source already there and verified is left alone.",
        options=("--mirror",),
    )
    command(
        actions,
        "verify",
        granted(run_fixtures_verify),
        help="check sources and fixture content hashes",
        description="Check each fetched source against its pinned sha256, and each fixture's "
        "content against its content hash: results are keyed by these hashes, so a "
        "changed document is caught before it is measured. Exit status 1 when any check "
        "fails (the FAIL lines).",
        options=("--mirror", "--fixture", "--slow", LIMITS),
    )
    _add_add(actions)
    command(
        commands,
        "sizes",
        granted(run_sizes),
        help="encoded size of each fixture",
        description="Encode each fixture with each codec and show the encoded size in "
        "bytes: no timing, no asv (the report's fixture pages add gzip-6 and zstd-3).",
        options=("--mirror", "--fixture", "--slow", "--codec", "--format", LIMITS),
    )


def _add_add(actions: Any) -> None:
    adding = command(
        actions,
        "add",
        granted(run_fixtures_add),
        help="make one of your documents a fixture of the suite, pinned by its content hash",
        description=(
            "Copy a document (JSON, YAML, msgpack, or pickle with --allow-pickle) into this "
            f"checkout's fixtures/user/ (or ${FOLDER_ENV}) and declare it in {MANIFEST} "
            "there. Its id is NAME@HASH, the first 8 hex digits of its content sha256: a "
            "changed document is a new fixture, never new results under an old id."
        ),
        options=(LIMITS,),
    )
    adding.add_argument("path", metavar="PATH", help="the document file")
    adding.add_argument("--name", help="the fixture's name (default: from the file name)")
    adding.add_argument("--description", default="", help="what the document is, in words")
    adding.add_argument(
        "--schema",
        metavar="SCHEMA.json",
        help="a JSON Schema of yours for the schema codecs (default: derived from the document); "
        "the document must fit it, and it is pinned beside the document's content hash",
    )
    adding.add_argument(
        "--replace",
        action="store_true",
        help="let changed content or another schema take a declared name "
        "(the old id's results stay under it)",
    )


def run_fixtures_list(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_json, print_table
    from serkit.inputs.fixtures import FIXTURES, data_dir
    from serkit.inputs.user_fixtures import NO_SCHEMA_PIN
    from serkit.suite.cases import FIXTURES_ENV

    rows: list[dict[str, Any]] = [
        {
            "id": f.name,
            "origin": f.origin,
            "slow": f.slow,
            "named_only": f.named_only,  # one post's document: timed where a run names it
            "sha256": f.sha256,
            "source": f.source.url if f.source else None,
            "license": f.source.license if f.source else None,
            "description": f.description,
            # The schema the schema codecs run under, pinned beside the content hash.
            "schema": schema_kind(f.schema_sha256, f.supplied_schema is not None),
            "schema_sha256": f.schema_sha256 if f.schema_sha256 != NO_SCHEMA_PIN else None,
        }
        for f in FIXTURES.values()
    ]
    if args.format == "json":
        print_json(rows)
        return 0
    table = [
        [
            r["id"],
            r["origin"],
            "yes" if r["slow"] else "named" if r["named_only"] else "",
            r["sha256"][:12],
            r["schema"] + (f" {r['schema_sha256'][:12]}" if r["schema_sha256"] else ""),
            r["description"],
        ]
        for r in rows
    ]
    print_table(table, ["fixture", "from", "slow", "sha256", "schema", "what"], args.format)
    if any(r["named_only"] for r in rows):
        print(
            f"\nslow named: one post's document, timed only where a run names it ({FIXTURES_ENV})"
        )
    print(f"\nFetched sources live in {data_dir()} (set SERKIT_DATA_DIR to move them).")
    print(f"Your own documents are declared in {folder_text()}/{MANIFEST} (serkit fixtures add).")
    return 0


def schema_kind(pin: str | None, supplied: bool) -> str:
    """A fixture's schema in one word or two: none, derived, user-supplied, or not pinned."""
    from serkit.inputs.user_fixtures import NO_SCHEMA_PIN
    from serkit.schemas.types import SUPPLIED

    if supplied:
        return SUPPLIED
    if pin is None:
        return "not pinned"
    return "none" if pin == NO_SCHEMA_PIN else "derived"


def schema_text(pin: str | None, supplied: bool) -> str:
    """What `fixtures add` pinned as the document's schema, in a line."""
    from serkit.schemas.derive import INFERENCE_LIBRARY

    kind = schema_kind(pin, supplied)
    if kind == "not pinned":
        return f"not pinned ({INFERENCE_LIBRARY} is not installed; derived on each use)"
    if kind == "none":
        return "none: no record type fits the document, so its schema codecs say no schema"
    return f"{kind}, sha256 {pin}"


def folder_text() -> str:
    from serkit.inputs import user_fixtures

    where = user_fixtures.folder()
    return str(where) if where is not None else f"fixtures/user (or ${FOLDER_ENV})"


def run_fixtures_add(args: argparse.Namespace) -> int:
    from serkit.inputs.user_fixtures import add_document, declarations
    from serkit.schemas.pinned import schema_pin
    from serkit.schemas.supplied import from_json_schema
    from serkit.suite.cases import FIXTURES_ENV

    known = {d.id: d for d in declarations()}
    declared = add_document(
        args.path,
        name=args.name,
        description=args.description,
        replace=args.replace,
        schema=args.schema,
        pin_schema=schema_pin,
    )
    before = known.get(declared.id)
    verb = "added" if before is None else "already declared"
    if before is not None and before.schema_sha256 not in (None, declared.schema_sha256):
        verb = "schema replaced"
    print(
        f"{verb}: {declared.id} ({bytes_binary(declared.size)}, content sha256 "
        f"{declared.sha256[:12]}…), {declared.file}"
    )
    print(f"schema: {schema_text(declared.schema_sha256, declared.schema_file is not None)}")
    if declared.schema_file is not None:
        for note in from_json_schema(declared.read_schema()).notes:
            print(f"    {note}")
    print(f"time it in the suite: {FIXTURES_ENV}={declared.id} serkit bench")
    return 0


def run_fixtures_fetch(args: argparse.Namespace) -> int:
    from serkit.inputs import jsontestsuite
    from serkit.inputs.fixtures import SOURCES, fetch_source

    for source in SOURCES:
        path = fetch_source(source)
        print(f"{source.filename} ({source.license}): sha256 verified, at {path}")
    folder = jsontestsuite.fetch(progress=True)
    print(
        f"JSONTestSuite test_parsing, {len(jsontestsuite.sources())} files "
        f"({jsontestsuite.LICENSE}): each sha256 verified, at {folder}"
    )
    return 0


def run_fixtures_verify(args: argparse.Namespace) -> int:
    """Check each source's sha256, then that each fixture builds to its pinned hash."""
    from serkit.cli.common import chosen_fixtures
    from serkit.inputs import jsontestsuite
    from serkit.inputs.fixtures import FIXTURES, SOURCES, content_hash, get_fixture, source_path
    from serkit.inputs.user_fixtures import declarations
    from serkit.progress import progress

    failures = 0
    for source in SOURCES:
        path = source_path(source)
        print(f"ok    {source.filename} (sha256 {source.sha256[:12]}…, {path})")
    try:  # a malformed fixtures.json, which the registry only warns of, fails here
        declarations()
    except SerkitError as exc:
        failures += 1
        print(f"FAIL  your fixtures: {diagnostic(exc)}")
    suite = jsontestsuite.verified_files()
    folder = next(iter(suite.values())).parent
    print(f"ok    JSONTestSuite test_parsing ({len(suite)} files, each sha256 checked, {folder})")
    names = chosen_fixtures(args)
    if not args.fixture:
        # Slow for the grid, but quick to build: a document parsed from a fetched source, and
        # the documents a post times.
        quick = [f.name for f in FIXTURES.values() if f.source is not None or f.named_only]
        names += [name for name in quick if name not in names]
    with progress(names, desc="verifying", unit="fixture") as bar:
        for name in bar:
            fixture = get_fixture(name)
            try:
                # Built from its source: never from a built copy (load_fixture's).
                document = fixture.build()
                actual = content_hash(document)
            except (FixtureChanged, DocumentError) as exc:  # one of your documents
                failures += 1
                bar.write(f"FAIL  {name}: {diagnostic(exc)}", file=sys.stdout)
                continue
            if actual == fixture.sha256:
                schema_ok, schema = _verify_schema(name, document)
                if schema_ok:
                    line = f"ok    {name} (content sha256 {actual[:12]}…, {schema})"
                else:
                    failures += 1
                    line = f"FAIL  {name}: {schema}"
                bar.write(line, file=sys.stdout)
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
    if failures:
        print(f"serkit: {failures} failed verification (the FAIL lines above)", file=sys.stderr)
    return checked(failures > 0)


def _verify_schema(name: str, document: Any) -> tuple[bool, str]:
    """Whether the fixture's schema still has its pinned hash, and what it is, in words."""
    from serkit.inputs.fixtures import get_fixture
    from serkit.schemas.derive import INFERENCE_LIBRARY, NOT_INSTALLED, inference_version
    from serkit.schemas.pinned import fixture_schema

    fixture = get_fixture(name)
    if fixture.supplied_schema is None:
        if fixture.schema_sha256 is None:
            return True, "schema not pinned: derived on each use"
        if inference_version() == NOT_INSTALLED:
            return True, f"schema not checked: {INFERENCE_LIBRARY} is not installed"
    try:
        schema = fixture_schema(name, document)
    except NoSchema:  # and pinned so: fixture_schema says SchemaChanged otherwise
        return True, "no schema fits it, as pinned"
    except SerkitError as exc:  # changed, or your schema file changed or unreadable
        return False, str(exc)
    return True, f"{schema.origin} schema sha256 {schema.sha256[:12]}…"


def _size_cell(result: SizeResult) -> str:
    from serkit.checks.sizes import LOSSY

    if result.bytes is None:
        return result.status
    mark = ("*" if result.status == LOSSY else "") + ("+" if result.options else "")
    return f"{result.bytes:,}{mark}"


def run_sizes(args: argparse.Namespace) -> int:
    from serkit.checks.sizes import measure_fixture
    from serkit.cli.common import chosen_fixtures
    from serkit.codecs.registry import check_codecs, codec_names
    from serkit.progress import progress

    codecs = check_codecs(args.codec or codec_names())
    chosen = chosen_fixtures(args)
    results: list[SizeResult] = []
    unread: dict[str, SerkitError] = {}  # your documents that could not be read
    for fixture in progress(chosen, desc="encoding", unit="fixture"):
        try:
            results.extend(measure_fixture(fixture, codecs))
        except (FixtureChanged, DocumentError) as exc:
            unread[fixture] = exc
    fixtures = [f for f in chosen if f not in unread]
    _print_sizes(args, codecs, fixtures, results)
    if unread:
        first, *rest = unread.values()
        more = f" (and {', '.join(list(unread)[1:])} could not be read either)" if rest else ""
        raise SerkitError(f"{first}{more}; the sizes above leave them out")
    return 0


def _print_sizes(
    args: argparse.Namespace, codecs: list[str], fixtures: list[str], results: list[SizeResult]
) -> None:
    from serkit.checks.sizes import EXACT, LOSSY
    from serkit.cli.common import print_json, print_table

    if args.format == "json":
        print_json([r.as_dict() for r in results])
        return
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
