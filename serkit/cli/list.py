"""`serkit list`: each codec, its library and version, and whether its loads is safe."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from serkit.cli.options import command
from serkit.codecs.registry import codec_names, registry


def add_commands(commands: Any) -> None:
    command(
        commands,
        "list",
        run_list,
        help="each codec: format, library, version, implementation",
        description="Each codec the suite knows: its format, library and installed version, "
        "the implementation that runs here (C or pure Python, detected), and whether it "
        "is safe for untrusted input (docs/codecs.md).",
        options=("--format",),
    )


def codec_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in codec_names():
        spec = registry.spec(name)
        where = spec.fixtures  # the fixtures a run that names none times it on
        row: dict[str, Any] = {"id": name, "format": spec.format, "library": spec.library}
        row.update(
            safe_for_untrusted_input=spec.safe_for_untrusted_input,
            untrusted_input_hazard=spec.untrusted_input_hazard,
            variant=spec.variant,
            direct=dataclasses.asdict(spec.direct) if spec.direct else None,
            # "derived": its types come from a schema derived from each document.
            schema="derived" if spec.needs_schema else None,
            fixtures=None if where is None else list(where),  # None: every fixture
        )
        known = registry.facts(name)  # one missing or broken codec must not hide the others
        row.update(
            version=known.version,
            implementation=known.implementation,
            available=known.codec is not None,
            reason=known.reason,
        )
        if known.codec is not None:
            row.update(call=known.codec.summary)
        rows.append(row)
    return rows


def run_list(args: argparse.Namespace) -> int:
    from serkit.cli.common import print_hazards, print_json, print_table
    from serkit.schemas.derive import INFERENCE_LIBRARY
    from serkit.suite.cases import FIXTURES_ENV

    rows = codec_rows()
    if args.format == "json":
        print_json(rows)
        return 0
    table = [
        [
            r["id"],
            r["format"],
            r["library"],
            r["version"] or "-",
            r["implementation"] or "-",
            r["schema"] or "-",
            "safe" if r["safe_for_untrusted_input"] else "UNSAFE",
            "yes" if r["available"] else f"no: {r['reason']}",
        ]
        for r in rows
    ]
    headers = ["codec", "format", "library", "version", "impl", "schema", "untrusted", "available"]
    print_table(table, headers, args.format)
    if any(r["schema"] for r in rows):
        print(
            "\nschema: derived: encodes typed objects built from each document's schema, "
            f"derived from it by {INFERENCE_LIBRARY} (or the one you gave `serkit fixtures add "
            "--schema`)"
        )
    limited = {r["id"]: r["fixtures"] for r in rows if r["fixtures"] is not None}
    if limited:
        print(f"\na run that names no fixtures ({FIXTURES_ENV}) times these on some only:")
        for name, where in limited.items():
            print(f"    {name}: {', '.join(where) if where else 'none (name fixtures to time it)'}")
    print_hazards(
        {r["id"]: r["untrusted_input_hazard"] for r in rows},
        "\nUNSAFE on untrusted input: never give their loads bytes you did not write",
    )
    return 0
