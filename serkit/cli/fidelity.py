"""`serkit fidelity`: what each codec gives back of each document, and of hostile input."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from serkit.checks import hostile
from serkit.cli.exits import checked
from serkit.cli.options import Option, Use, command, positive_int, positive_seconds

if TYPE_CHECKING:
    from serkit.checks import fidelity

OWN = (  # the options only this command takes
    Option(
        ("--probes",),
        "add every probe (the default unless --fixture names documents)",
        action=argparse.BooleanOptionalAction,
    ),
    Option(
        ("--hostile",),
        "also feed each codec's loads hostile payloads, in sandboxed subprocesses",
        action="store_true",
    ),
    Option(("--hostile-count",), "hostile payloads per codec", type=positive_int, metavar="N",
           default=hostile.DEFAULT_COUNT),
    Option(("--hostile-seed",), "the seed the hostile payloads are drawn from", type=int,
           metavar="SEED", default=hostile.DEFAULT_SEED),
    Option(("--hostile-budget",), "time limit per codec", type=positive_seconds,
           metavar="SECONDS", default=hostile.DEFAULT_BUDGET),
)  # fmt: skip


def add_commands(commands: Any) -> None:
    command(
        commands,
        "fidelity",
        run_fidelity,
        help="what each codec gives back of each fixture and probe; --hostile: of bad input",
        description="Round-trip each fixture and probe through each codec and say what came "
        "back: exact, equal after a known conversion, lossy (and what was lost), or "
        "refused; with --hostile, what each codec's loads does with bad bytes, in a "
        "sandboxed worker (docs/fidelity.md). Exit status 1 when a codec cannot decode its "
        "own output, or hangs or crashes on hostile input.",
        options=(
            "--mirror",
            "--codec",
            Use("--fixture", note="probe ids too"),
            "--slow",
            "--format",
            *OWN,
        ),
    )


def fidelity_documents(args: argparse.Namespace) -> list[str]:
    """The --fixture ids (fixtures or probes), else the defaults; sources checked first."""
    from serkit.checks import fidelity
    from serkit.cli.common import require_sources

    if args.fixture:
        names = list(dict.fromkeys(args.fixture))
        for name in names:
            fidelity.document_kind(name)  # fail on a typo before any work starts
        if args.probes:
            probes = fidelity.default_documents(fixtures=False)
            names += [p for p in probes if p not in names]
    else:
        names = fidelity.default_documents(slow=args.slow, probes=args.probes is not False)
    require_sources(names)
    return names


def _fidelity_cell(result: fidelity.FidelityResult) -> str:
    from serkit.checks import fidelity

    if result.status == fidelity.LOSSY:
        return "lossy: " + ", ".join(d.kind for d in result.differences)
    return result.status


def _hostile_cell(result: hostile.HostileResult | None) -> str:
    if result is None:
        return "-"
    if result.status != hostile.FED:
        return result.status
    counts = result.outcomes
    parts = [f"{counts[hostile.EXCEPTION]} raised", f"{counts[hostile.VALUE]} returned"]
    parts += [
        f"{counts[outcome]} {label}"
        for outcome, label in (
            (hostile.BLOCKED, "blocked"),
            (hostile.HANG, "HUNG"),
            (hostile.CRASH, "CRASHED"),
        )
        if counts[outcome]
    ]
    stopped = "" if result.fed == result.requested else f" (stopped at {result.fed})"
    return ", ".join(parts) + stopped


def _codec_facts(name: str, hostile_result: hostile.HostileResult | None) -> dict[str, Any]:
    from serkit.codecs.registry import registry

    known = registry.facts(name)
    spec = known.spec
    facts: dict[str, Any] = {"codec": name, "format": spec.format, "library": spec.library}
    facts.update(implementation=known.implementation, version=known.version)
    facts.update(
        safe_for_untrusted_input=spec.safe_for_untrusted_input,
        untrusted_input_hazard=spec.untrusted_input_hazard,
        hostile=hostile_result.as_dict() if hostile_result else None,
    )
    return facts


def _run_hostile(args: argparse.Namespace, codecs: list[str]) -> dict[str, hostile.HostileResult]:
    from serkit.progress import progress

    with progress(total=len(codecs), desc="hostile input", unit="codec") as bar:

        def advance(_: hostile.HostileResult) -> None:
            bar.update(1)

        return hostile.run_hostile(
            codecs,
            seed=args.hostile_seed,
            count=args.hostile_count,
            budget=args.hostile_budget,
            done=advance,
        )


def run_fidelity(args: argparse.Namespace) -> int:
    """What each codec gives back of each document, and optionally of hostile input."""
    from serkit.checks import fidelity, validation
    from serkit.cli.common import print_json, print_table
    from serkit.codecs.registry import check_codecs, codec_names
    from serkit.progress import progress

    codecs = check_codecs(args.codec or codec_names())
    documents = fidelity_documents(args)
    results: list[fidelity.FidelityResult] = []
    for name in progress(documents, desc="round trips", unit="fixture"):
        results.extend(validation.check_any(name, codecs))
    hostile_results = _run_hostile(args, codecs) if args.hostile else {}
    facts = [_codec_facts(name, hostile_results.get(name)) for name in codecs]
    if args.format == "json":
        kinds = {name: fidelity.document_kind(name) for name in documents}
        rows = [{**r.as_dict(), "kind": kinds[r.fixture]} for r in results]
        print_json({"cells": rows, "codecs": facts})
        return checked(_found_problem(results, hostile_results))
    cells = {(r.codec, r.fixture): r for r in results}
    headers = ["codec", "untrusted"] + (["hostile"] if args.hostile else []) + documents
    table = [
        [f["codec"], "safe" if f["safe_for_untrusted_input"] else "UNSAFE"]
        + ([_hostile_cell(hostile_results.get(f["codec"]))] if args.hostile else [])
        + [_fidelity_cell(cells[f["codec"], d]) for d in documents]
        for f in facts
    ]
    print("What each codec gives back of each fixture and probe")
    print_table(table, headers, args.format)
    _print_legend(args, results, facts, hostile_results)
    return checked(_found_problem(results, hostile_results))


def _found_problem(
    results: list[fidelity.FidelityResult], hostile_results: dict[str, hostile.HostileResult]
) -> bool:
    """A codec that cannot decode its own output, or that hangs or crashes on bad bytes: a
    lossy round trip is a fact of the format, said in the table, not a failed check."""
    from serkit.checks import fidelity

    broken = any(r.status == fidelity.ERROR for r in results)
    return broken or any(
        r.outcomes[hostile.HANG] or r.outcomes[hostile.CRASH]
        for r in hostile_results.values()
        if r.status == hostile.FED
    )


def _print_legend(
    args: argparse.Namespace,
    results: list[fidelity.FidelityResult],
    facts: list[dict[str, Any]],
    hostile_results: dict[str, hostile.HostileResult],
) -> None:
    from serkit.checks import fidelity
    from serkit.cli.common import print_hazards

    print()
    seen = {d.kind for r in results for d in r.differences}
    for status, meaning in fidelity.STATUSES.items():
        print(f"{status}: {meaning}")
        if status == fidelity.LOSSY:
            for kind, what in fidelity.DIFFERENCE_KINDS.items():
                if kind in seen:
                    print(f"    {kind}: {what}")
    print("(--format json adds each difference's count and the path of its first example)")
    print_hazards(
        {f["codec"]: f["untrusted_input_hazard"] for f in facts},
        "untrusted: UNSAFE codecs must never decode bytes you did not write:",
    )
    if not args.hostile:
        return
    print(
        f"hostile: {args.hostile_count:,} truncated, bit-flipped and random payloads per codec "
        f"(seed {args.hostile_seed}), decoded only in sandboxed subprocesses:\n"
        "    raised: a clean exception; returned: decoded to some value; "
        "blocked: the sandbox refused what loads tried;\n"
        f"    HUNG: no answer within {hostile.DEFAULT_PAYLOAD_TIMEOUT:g} s; "
        "CRASHED: the process died"
    )
    for name, result in hostile_results.items():
        if result.detail:
            print(f"    {name}: {result.detail}")
        for incident in result.incidents[:10]:
            print(
                f"    {name}: payload {incident.index} ({incident.mutation}) {incident.outcome}: "
                f"{incident.how}; reproduce with python -m serkit.checks.hostile --codec {name} "
                f"--seed {result.seed} --start {incident.index} --stop {incident.index + 1}"
            )
        if len(result.incidents) > 10:
            print(f"    {name}: {len(result.incidents) - 10} more in --format json")
