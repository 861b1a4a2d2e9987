"""`serkit conformance`: JSONTestSuite's parsing files against every JSON codec's loads."""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serkit.checkout import ASV_DIR, CONFORMANCE_FILE, conformance_path
from serkit.checks import conformance
from serkit.cli.exits import checked
from serkit.cli.options import Option, add_saving, command, positive_int, positive_seconds
from serkit.errors import SerkitError

if TYPE_CHECKING:
    from serkit.checks.conformance import CodecConformance, FileOutcome

OWN = (  # the options only this command takes
    Option(
        ("--all-files",),
        "show every file in the matrix, not only those where codecs differ or fail",
        action="store_true",
    ),
    Option(("--timeout",), "time limit per file", type=positive_seconds, metavar="SECONDS",
           default=conformance.DEFAULT_FILE_TIMEOUT),
    Option(("--memory-limit",), "address-space limit per worker", type=positive_int,
           metavar="MIB", default=conformance.DEFAULT_MEMORY_BYTES >> 20),
)  # fmt: skip


def add_commands(commands: Any) -> None:
    parser = command(
        commands,
        "conformance",
        run_conformance,
        help="JSONTestSuite's parsing files against every JSON codec's loads",
        description=(
            "Decode each of JSONTestSuite's 318 test_parsing files with every JSON codec, each "
            "codec in capped worker subprocesses, and classify each result as accepted, "
            "rejected, crashed or hung. y_ files must be accepted, n_ files rejected, i_ files "
            "either. Run over every JSON codec, the matrix is also saved to "
            f"{ASV_DIR}/{CONFORMANCE_FILE} in the checkout, for the report (see --save, "
            "--no-save). Exit status 1 when a codec accepts an invalid file, rejects a "
            "valid one, crashes or hangs, or could not run."
        ),
        options=("--mirror", "--codec", "--format", *OWN),
    )
    add_saving(parser, f"{ASV_DIR}/{CONFORMANCE_FILE}", "a run over every JSON codec")


def json_codecs(chosen: list[str] | None) -> list[str]:
    """The --codec ids, which must be JSON codecs; by default every JSON codec."""
    from serkit.codecs.registry import check_codecs, registry

    if not chosen:
        return conformance.json_codecs()
    names = check_codecs(chosen)
    other = [n for n in names if registry.spec(n).format != "json"]
    if other:
        formats = ", ".join(f"{n} is {registry.spec(n).format}" for n in other)
        raise SerkitError(f"conformance tests JSON codecs only ({formats})")
    typed = [n for n in names if registry.spec(n).needs_schema]
    if typed:
        raise SerkitError(
            f"conformance tests schemaless codecs only: {', '.join(typed)} decode into a "
            "document's types, and JSONTestSuite's files have no schema"
        )
    return names


def _target(args: argparse.Namespace) -> Path | None:
    from serkit.cli.common import save_target

    return save_target(args, conformance_path, partial=bool(args.codec))


def run_conformance(args: argparse.Namespace) -> int:
    from serkit import units
    from serkit.checks.conformance_document import document, save
    from serkit.cli.common import print_json, save_document
    from serkit.inputs import jsontestsuite
    from serkit.progress import progress

    codecs = json_codecs(args.codec)
    files = jsontestsuite.verified_files()  # a missing or changed file fails before any work
    target = _target(args)
    memory = args.memory_limit << 20
    started = time.monotonic()
    with progress(total=len(codecs), desc="conformance", unit="codec") as bar:
        results = conformance.run_conformance(
            files,
            codecs,
            timeout=args.timeout,
            memory=memory,
            done=lambda _: bar.update(1),
        )
    wall = time.monotonic() - started
    doc = document(results, timeout=args.timeout, memory=memory, wall_s=wall)
    save_document(save, doc, target, "conformance matrix")
    if args.format == "json":
        print_json(doc)
        return checked(bool(conformance.findings(results)))
    print_counts(results, args.format)
    print()
    print_matrix(results, args.format, all_files=args.all_files)
    print()
    print_findings(results)
    print(
        f"\nEach codec decoded the {len(files)} files of JSONTestSuite @"
        f"{jsontestsuite.COMMIT[:7]} in worker subprocesses capped at "
        f"{units.bytes_binary(memory)} of address space, {units.seconds(args.timeout)} per file; "
        f"the run took {units.seconds(wall)}."
    )
    return checked(bool(conformance.findings(results)))


def _of(done: int, total: int) -> str:
    return f"{done}/{total}"


COUNT_HEADERS = [
    "codec",
    "version",
    "impl",
    "y_ accepted",
    "n_ rejected",
    "i_ accepted / rejected",
    "crashed",
    "hung",
    "verdict",
]


def counts_row(result: CodecConformance) -> list[str]:
    """A codec's files by what they expect and what it did, under COUNT_HEADERS."""
    from serkit.inputs.jsontestsuite import ACCEPT, EITHER, REJECT

    if result.status != conformance.RAN:
        return [result.codec, result.version or "-", "-", "-", "-", "-", "-", "-", result.status]
    counts = result.counts()
    y, n, i = counts[ACCEPT], counts[REJECT], counts[EITHER]
    return [
        result.codec,
        result.version,
        result.implementation,
        _of(y[conformance.ACCEPTED], sum(y.values())),
        _of(n[conformance.REJECTED], sum(n.values())),
        f"{i[conformance.ACCEPTED]} / {i[conformance.REJECTED]}",
        str(sum(c[conformance.CRASHED] for c in counts.values())),
        str(sum(c[conformance.HUNG] for c in counts.values())),
        conformance.verdict(result),
    ]


def print_counts(results: Mapping[str, CodecConformance], fmt: str) -> None:
    from serkit.cli.common import print_table

    print("JSONTestSuite test_parsing, files per codec (y_ must be accepted, n_ rejected)")
    print_table([counts_row(r) for r in results.values()], COUNT_HEADERS, fmt)


def _cell(found: FileOutcome | None) -> str:
    if found is None:
        return "-"
    return found.outcome if found.conforms else f"{found.outcome} *"


def print_matrix(
    results: Mapping[str, CodecConformance], fmt: str, *, all_files: bool = False
) -> None:
    from serkit.cli.common import print_table

    rows = conformance.matrix(results, every_file=all_files)
    ran = [r.codec for r in results.values() if r.status == conformance.RAN]
    which = "every file" if all_files else "the files where the codecs differ or one fails"
    print(f"The matrix, {which} (* against the rule):")
    if rows:
        print_table([[row.file, *map(_cell, row.cells)] for row in rows], ["file", *ran], fmt)
    else:
        print("    none: every codec gives every file the same outcome, as the rules ask")


def print_findings(results: Mapping[str, CodecConformance]) -> None:
    lines = conformance.findings(results)
    if not lines:
        print("Every codec accepts every valid file and rejects every invalid one.")
    for line in lines:
        print(line)
