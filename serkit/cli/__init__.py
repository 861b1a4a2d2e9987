"""The `serkit` command line. Every user mistake ends in one line on stderr, not a traceback."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate
from tqdm import tqdm

from serkit import __version__
from serkit.checkout import (
    ASV_DIR,
    REPLICATION_FILE,
    project_root,
    replication_path,
    reports_dir,
    results_dir,
)
from serkit.checks import fidelity, hostile
from serkit.checks.sizes import EXACT, LOSSY, SizeResult, measure_fixture
from serkit.codecs.registry import codec_names, get_codec, registry
from serkit.errors import SerkitError
from serkit.inputs.fixtures import (
    FIXTURES,
    MIRROR_ENV,
    SOURCES,
    content_hash,
    data_dir,
    fetch_source,
    get_fixture,
    load_fixture,
    source_path,
)
from serkit.run import runner as bench
from serkit.run.interpreters import find_pythons
from serkit.run.matrix import LIBRARIES, PYTHONS, environments, render_asv_config, unused_releases
from serkit.suite.cases import CODECS_ENV, FIXTURES_ENV, SLOW_ENV, split_ids


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _progress(items: Sequence[str], desc: str) -> Any:
    # On stderr, and only for people: pipes and CI logs get no bar.
    return tqdm(items, desc=desc, unit="fixture", file=sys.stderr, disable=None, leave=False)


def _chosen_fixtures(args: argparse.Namespace) -> list[str]:
    """The --fixture ids, and their sources, checked before any work starts.

    By default every fixture but the slow ones.
    """
    if args.fixture:
        chosen = [get_fixture(name) for name in args.fixture]
    else:
        chosen = [f for f in FIXTURES.values() if args.slow or not f.slow]
    for fixture in chosen:
        if fixture.source is not None:
            source_path(fixture.source)  # a missing source fails now, not after an hour
    return [f.name for f in chosen]


# --- serkit list ---------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    for name in codec_names():
        spec = registry.spec(name)
        row: dict[str, Any] = {"id": name, "format": spec.format, "library": spec.library}
        row.update(
            safe_for_untrusted_input=spec.safe_for_untrusted_input,
            untrusted_input_hazard=spec.untrusted_input_hazard,
            variant=spec.variant,
            direct=dataclasses.asdict(spec.direct) if spec.direct else None,
        )
        try:
            codec = get_codec(name)
        except SerkitError as exc:  # one missing or broken codec must not hide the others
            row.update(version=None, implementation=None, available=False, reason=str(exc))
        else:
            row.update(version=codec.version, implementation=codec.implementation, available=True)
            row.update(reason="", call=codec.summary)
        rows.append(row)
    if args.json:
        _print_json(rows)
        return 0
    table = [
        [
            r["id"],
            r["format"],
            r["library"],
            r["version"] or "-",
            r["implementation"] or "-",
            "safe" if r["safe_for_untrusted_input"] else "UNSAFE",
            "yes" if r["available"] else f"no: {r['reason']}",
        ]
        for r in rows
    ]
    headers = ["codec", "format", "library", "version", "impl", "untrusted", "available"]
    print(tabulate(table, headers=headers))
    _print_hazards(
        {r["id"]: r["untrusted_input_hazard"] for r in rows},
        "\nUNSAFE on untrusted input: never give their loads bytes you did not write",
    )
    return 0


def _print_hazards(hazards: dict[str, str | None], heading: str) -> None:
    """The codecs whose loads must not see untrusted bytes, grouped by what they risk."""
    grouped: dict[str, list[str]] = {}
    for codec, hazard in hazards.items():
        if hazard:
            grouped.setdefault(hazard, []).append(codec)
    if grouped:
        print(heading)
    for hazard, codecs in grouped.items():
        print(f"    {', '.join(codecs)}: {hazard}")


# --- serkit fixtures -------------------------------------------------------------------


def cmd_fixtures_list(args: argparse.Namespace) -> int:
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
    if args.json:
        _print_json(rows)
        return 0
    table = [
        [r["id"], r["origin"], "yes" if r["slow"] else "", r["sha256"][:12], r["description"]]
        for r in rows
    ]
    print(tabulate(table, headers=["fixture", "from", "slow", "sha256", "what"]))
    print(f"\nFetched sources live in {data_dir()} (set SERKIT_DATA_DIR to move them).")
    return 0


def cmd_fixtures_fetch(args: argparse.Namespace) -> int:
    for source in SOURCES:
        path = fetch_source(source)
        print(f"{source.filename} ({source.license}): sha256 verified, at {path}")
    return 0


def cmd_fixtures_verify(args: argparse.Namespace) -> int:
    """Check each source's sha256, then that each fixture builds to its pinned hash."""
    failures = 0
    for source in SOURCES:
        path = source_path(source)
        print(f"ok    {source.filename} (sha256 {source.sha256[:12]}…, {path})")
    names = _chosen_fixtures(args)
    for name in _progress(names, "verifying"):
        fixture = get_fixture(name)
        actual = content_hash(load_fixture(name))
        if actual == fixture.sha256:
            tqdm.write(f"ok    {name} (content sha256 {actual[:12]}…)", file=sys.stdout)
        else:
            failures += 1
            tqdm.write(
                f"FAIL  {name}: built {actual[:12]}…, pinned {fixture.sha256[:12]}…; "
                "results for it would not be comparable",
                file=sys.stdout,
            )
    skipped = [f.name for f in FIXTURES.values() if f.slow and f.name not in names]
    if skipped:
        print(f"skipped slow fixtures: {', '.join(skipped)} (add --slow)")
    return 1 if failures else 0


# --- serkit sizes ----------------------------------------------------------------------


def _size_cell(result: SizeResult) -> str:
    if result.bytes is None:
        return result.status
    mark = ("*" if result.status == LOSSY else "") + ("+" if result.options else "")
    return f"{result.bytes:,}{mark}"


def cmd_sizes(args: argparse.Namespace) -> int:
    codecs = args.codec or codec_names()
    for name in codecs:
        registry.spec(name)  # fail on a typo before any work starts
    fixtures = _chosen_fixtures(args)
    results: list[SizeResult] = []
    for fixture in _progress(fixtures, "encoding"):
        results.extend(measure_fixture(fixture, codecs))
    if args.json:
        _print_json([r.as_dict() for r in results])
        return 0
    cells = {(r.codec, r.fixture): r for r in results}
    table = [[c] + [_size_cell(cells[c, f]) for f in fixtures] for c in codecs]
    print("Encoded size in bytes (B)")
    print(tabulate(table, headers=["codec", *fixtures], stralign="right"))
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


# --- serkit fidelity -------------------------------------------------------------------


def _fidelity_documents(args: argparse.Namespace) -> list[str]:
    """The --fixture ids (fixtures or probes), else the defaults; sources checked first."""
    if args.fixture:
        names = list(dict.fromkeys(args.fixture))
        for name in names:
            fidelity.document_kind(name)  # fail on a typo before any work starts
        if args.probes:
            probes = fidelity.default_documents(fixtures=False)
            names += [p for p in probes if p not in names]
    else:
        names = fidelity.default_documents(slow=args.slow, probes=args.probes is not False)
    for name in names:
        fixture = FIXTURES.get(name)
        if fixture is not None and fixture.source is not None:
            source_path(fixture.source)  # a missing source fails now, not after an hour
    return names


def _fidelity_cell(result: fidelity.FidelityResult) -> str:
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
    spec = registry.spec(name)
    facts: dict[str, Any] = {"codec": name, "format": spec.format, "library": spec.library}
    try:
        codec = get_codec(name)
    except SerkitError:
        facts.update(implementation=None, version=None)
    else:
        facts.update(implementation=codec.implementation, version=codec.version)
    facts.update(
        safe_for_untrusted_input=spec.safe_for_untrusted_input,
        untrusted_input_hazard=spec.untrusted_input_hazard,
        hostile=hostile_result.as_dict() if hostile_result else None,
    )
    return facts


def cmd_fidelity(args: argparse.Namespace) -> int:
    """What each codec gives back of each document, and optionally of hostile input."""
    codecs = list(dict.fromkeys(args.codec or codec_names()))
    for name in codecs:
        registry.spec(name)  # fail on a typo before any work starts
    documents = _fidelity_documents(args)
    results: list[fidelity.FidelityResult] = []
    for name in _progress(documents, "round trips"):
        results.extend(fidelity.check_document(name, codecs))
    hostile_results: dict[str, hostile.HostileResult] = {}
    if args.hostile:
        with tqdm(
            total=len(codecs), desc="hostile input", unit="codec", file=sys.stderr, disable=None
        ) as bar:

            def advance(_: hostile.HostileResult) -> None:
                bar.update(1)

            hostile_results = hostile.run_hostile(
                codecs,
                seed=args.hostile_seed,
                count=args.hostile_count,
                budget=args.hostile_budget,
                done=advance,
            )
    facts = [_codec_facts(name, hostile_results.get(name)) for name in codecs]
    if args.format == "json":
        kinds = {name: fidelity.document_kind(name) for name in documents}
        rows = [{**r.as_dict(), "kind": kinds[r.fixture]} for r in results]
        _print_json({"cells": rows, "codecs": facts})
        return 0
    cells = {(r.codec, r.fixture): r for r in results}
    headers = ["codec", "untrusted"] + (["hostile"] if args.hostile else []) + documents
    table = [
        [f["codec"], "safe" if f["safe_for_untrusted_input"] else "UNSAFE"]
        + ([_hostile_cell(hostile_results.get(f["codec"]))] if args.hostile else [])
        + [_fidelity_cell(cells[f["codec"], d]) for d in documents]
        for f in facts
    ]
    print("What each codec gives back of each fixture and probe")
    print(tabulate(table, headers=headers))
    _print_fidelity_legend(args, results, facts, hostile_results)
    return 0


def _print_fidelity_legend(
    args: argparse.Namespace,
    results: list[fidelity.FidelityResult],
    facts: list[dict[str, Any]],
    hostile_results: dict[str, hostile.HostileResult],
) -> None:
    print()
    seen = {d.kind for r in results for d in r.differences}
    for status, meaning in fidelity.STATUSES.items():
        print(f"{status}: {meaning}")
        if status == fidelity.LOSSY:
            for kind, what in fidelity.DIFFERENCE_KINDS.items():
                if kind in seen:
                    print(f"    {kind}: {what}")
    print("(--format json adds each difference's count and the path of its first example)")
    _print_hazards(
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


def _positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {value}")
    return number


# --- the asv suite ----------------------------------------------------------------------


def cmd_matrix(args: argparse.Namespace) -> int:
    if args.write_config:
        path = Path(args.write_config)
        path.write_text(render_asv_config())
        print(f"wrote {path}")
        return 0
    envs = list(environments())
    found = find_pythons(PYTHONS)
    if args.json:
        _print_json(
            [
                {
                    "name": env.asv_name,
                    "python": env.python,
                    "varied": env.varied,
                    "requirements": env.requirements,
                    "not_installed": list(env.missing),
                    "interpreter": str(found[env.python] or "") or None,
                }
                for env in envs
            ]
        )
        return 0
    axes = sum(1 for library in LIBRARIES if library.axis)
    print(
        f"{len(envs)} environments: {len(PYTHONS)} Pythons, each with a baseline of the newest "
        f"releases and one environment per older release of {axes} libraries, one at a time."
    )
    table = [
        [
            env.python,
            env.varied or "baseline",
            env.requirements[env.varied] if env.varied else "newest",
            str(found[env.python] or "-"),
        ]
        for env in envs
    ]
    headers = ["python", "varies", "release", "interpreter here"]
    print(tabulate(table, headers=headers, disable_numparse=True))
    for python in PYTHONS:
        if found[python] is None:
            print(f"Python {python} was not found here: its environments will be skipped.")
    unused = [f"{lib} {ver} on {py}" for py, lib, ver in unused_releases()]
    print(f"Left out, no compiled wheel on PyPI: {', '.join(unused)}.")
    missing = sorted({(env.python, m) for env in envs for m in env.missing})
    print("Not installed, no wheel at all: " + ", ".join(f"{m} on {p}" for p, m in missing) + ".")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from serkit.results.hosts import record_host

    root = project_root()
    quick = args.quick if args.quick is not None else not args.matrix
    plan = bench.plan(root, matrix=args.matrix, pythons=args.python)
    names = ", ".join(env.label for env in plan.environments)
    mode = f"quick ({bench.QUICK_DESCRIPTION})" if quick else "full (asv's default statistics)"
    print(f"serkit: {len(plan.environments)} environment(s), {mode}: {names}", file=sys.stderr)
    extra = args.asv_args[1:] if args.asv_args[:1] == ["--"] else args.asv_args
    status = bench.run(root, plan, quick=quick, extra=extra)
    if status not in (0, 2):
        raise SerkitError(f"asv run failed (exit {status}); see its output above")
    # What asv does not record (governor, turbo, Python builds) travels with the results.
    home = Path(plan.asv_env.get("HOME") or Path.home())
    record_host(results_dir(root), bench.machine_name(extra, home), plan.pythons)
    # Report what was measured even when some benchmarks failed: nothing is lost.
    if not args.no_report:
        _report(root, results_dir(root), reports_dir(root), with_asv=True)
    if status == 2:
        # asv also exits 2 when it refuses its arguments; its own message says which.
        print("serkit: asv exited 2: some benchmarks failed (see above)", file=sys.stderr)
    return 0 if status == 0 else 1


def _report(
    root: Path, results: Path, output: Path, *, with_asv: bool, replication: Path | None = None
) -> None:
    from serkit.report.html import write_report

    def quiet_asv(where: Path, asv_args: list[str]) -> int:
        return bench.asv(where, asv_args, quiet=True)

    print(f"serkit: writing the report from {results} ...", file=sys.stderr)
    written = write_report(
        root,
        results,
        output,
        asv_runner=quiet_asv if with_asv else None,
        replication=replication,
    )
    _warn(written.warnings)
    print(
        f"serkit: report: {written.folder / 'index.html'} ({len(written.pages)} pages"
        f"{', with asv' + chr(39) + 's pages' if written.asv_pages else ''}); "
        f"every version: {written.index}",
        file=sys.stderr,
    )


def cmd_report(args: argparse.Namespace) -> int:
    root = project_root()
    output = Path(args.output) if args.output else reports_dir(root)
    replication = Path(args.replication) if args.replication else None
    _report(root, _results_dir(args), output, with_asv=not args.no_asv, replication=replication)
    return 0


def _seconds(value: float) -> str:
    from serkit.compare.render import format_value

    return format_value(value, "seconds")


def cmd_agreement(args: argparse.Namespace) -> int:
    from serkit.trust.agreement import TOLERANCE, measure_agreement

    result = measure_agreement(
        project_root(), args.codec, args.fixture, args.operation, args.rounds
    )
    rows = [
        [i + 1, f"{a * 1e9:,.0f}", f"{t * 1e9:,.0f}", f"{r:.3f}"]
        for i, (a, t, r) in enumerate(zip(result.asv_s, result.other_s, result.ratios))
    ]
    print(f"{result.operation} of {result.fixture} with {result.codec}, ns per call")
    print(tabulate(rows, headers=["round", "asv suite (ns)", "timeit (ns)", "ratio"]))
    verdict = "agree" if result.within else "DISAGREE"
    print(
        f"median of the rounds' ratios asv/timeit: {result.ratio:.3f} "
        f"(range {min(result.ratios):.3f}-{max(result.ratios):.3f}): {verdict}, "
        f"tolerance {TOLERANCE:.0%}"
    )
    return 0 if result.within else 1


def _load_text() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "unreadable"


def cmd_validate(args: argparse.Namespace) -> int:
    from serkit.trust.agreement import PANEL, TOLERANCE, validate

    load_before = _load_text()
    results = validate(project_root(), PANEL, args.rounds, args.processes)
    load_after = _load_text()
    if args.json:
        _print_json(
            {
                "rounds": args.rounds,
                "processes": args.processes,
                "load_average": {"before": load_before, "after": load_after},
                "pairs": [r.as_dict() for r in results],
            }
        )
        return 0 if all(r.within for r in results) else 1
    rows = [
        [
            f"{r.codec} {r.operation} {r.fixture}",
            _seconds(statistics.median(r.asv_s)),
            _seconds(statistics.median(r.other_s)),
            f"{r.ratio:.3f}",
            f"{min(r.ratios):.3f}-{max(r.ratios):.3f}",
            "agree" if r.within else "DISAGREE",
        ]
        for r in results
    ]
    print(
        f"The asv suite against pyperf ({args.processes} worker processes each), "
        f"{args.rounds} interleaved rounds; time per call, medians over the rounds"
    )
    headers = ["pair", "asv suite", "pyperf", "ratio asv/pyperf", "range", "verdict"]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print(
        f"ratio: the median of the rounds' ratios; tolerance {TOLERANCE:.0%}. "
        f"Load average (1, 5, 15 min): {load_before} before, {load_after} after."
    )
    return 0 if all(r.within for r in results) else 1


def cmd_overhead(args: argparse.Namespace) -> int:
    from serkit.suite.overhead import FIXTURE
    from serkit.trust.overhead import TARGET_FLOOR_S, TARGET_RATIO, measure_overheads

    codecs = list(dict.fromkeys(args.codec)) if args.codec else None
    for name in codecs or ():
        registry.spec(name)  # fail on a typo before asv starts
    load_before = _load_text()
    results = measure_overheads(project_root(), codecs, args.rounds)
    if not results:
        raise SerkitError("asv recorded no overhead timings; see its output above")
    if args.json:
        _print_json([r.as_dict() for r in results])
        return 0 if all(r.within for r in results) else 1
    rows = [
        [
            r.codec,
            r.operation,
            _seconds(r.adapter_median_s),
            _seconds(r.direct_median_s),
            f"{r.overhead_s * 1e9:+,.0f} ns",
            f"{r.ratio:.3f}",
            f"{min(r.ratios):.3f}-{max(r.ratios):.3f}",
            "within" if r.within else "OVER",
            r.variant,
        ]
        for r in results
    ]
    print(f"serkit's adapter against the direct library call, on {FIXTURE}, time per call")
    headers = [
        "codec",
        "op",
        "adapter",
        "direct",
        "overhead",
        "ratio",
        "range",
        "target",
        "variant",
    ]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print(
        f"target: overhead at most max({TARGET_RATIO:.0%} of direct, "
        f"{TARGET_FLOOR_S * 1e9:.0f} ns). adapter, direct: medians of {args.rounds} asv runs; "
        "ratio: the median of the runs' ratios, overhead: (ratio - 1) x direct.\n"
        f"Load average (1, 5, 15 min): {load_before} before, {_load_text()} after."
    )
    return 0 if all(r.within for r in results) else 1


def cmd_doctor(args: argparse.Namespace) -> int:
    from serkit.trust.doctor import as_json, diagnose

    items = diagnose()
    if args.json:
        _print_json(as_json(items))
        return 0
    rows = [[i.name, i.value, f"WARNING: {i.warning}" if i.warning else ""] for i in items]
    print(tabulate(rows, headers=["", "state", "for benchmarking"], disable_numparse=True))
    count = sum(1 for i in items if i.warning)
    print(f"\n{count} warning(s). See README, Measurement you can trust, for a stable setup.")
    return 0


# --- comparing hosts -------------------------------------------------------------------


def _results_dir(args: argparse.Namespace) -> Path:
    """--results as given (relative to the working folder), or the checkout's asv results."""
    return Path(args.results) if args.results else results_dir(project_root())


def _warn(warnings: Sequence[str]) -> None:
    for warning in warnings:
        print(f"serkit: warning: {warning}", file=sys.stderr)


def cmd_compare(args: argparse.Namespace) -> int:
    from serkit.compare.comparison import compare
    from serkit.compare.render import as_json, render
    from serkit.results.tree import read_tree

    tree = read_tree(_results_dir(args), [args.host_a, args.host_b])
    try:
        result = compare(tree, args.host_a, args.host_b, args.commit)
    except SerkitError:
        _warn(tree.warnings)  # a skipped file may be why nothing can be compared
        raise
    _warn(result.warnings)
    if args.format == "json":
        _print_json(as_json(result))
    else:
        sys.stdout.write(render(result, markdown=args.format == "markdown"))
    mismatches = len(result.size_mismatches)
    if mismatches:
        print(
            f"serkit: {mismatches} size(s) differ between {args.host_a} and {args.host_b} in "
            "the same environment: the hosts did not run the same thing",
            file=sys.stderr,
        )
    return 1 if mismatches else 0


def cmd_hosts(args: argparse.Namespace) -> int:
    from serkit.results.hosts import describe_hosts, render_hosts
    from serkit.results.tree import read_tree

    root = _results_dir(args)
    tree = read_tree(root)
    rows = describe_hosts(tree)
    _warn(tree.warnings)
    if not rows:
        raise SerkitError(f"no asv results in {root} (no machine folders)")
    if args.format == "json":
        _print_json(rows)
    else:
        print(render_hosts(rows))
    return 0


# --- replicating the posts ------------------------------------------------------------


def _replication_target(args: argparse.Namespace) -> Path | None:
    """Where the JSON document goes: --save, else the checkout's .asv/ after a full run."""
    if args.save:
        return Path(args.save)
    if args.no_save or args.post:
        return None
    try:
        return replication_path(results_dir(project_root()))
    except SerkitError as exc:
        print(f"serkit: not saved ({exc}); use --save FILE", file=sys.stderr)
        return None


def cmd_replicate(args: argparse.Namespace) -> int:
    from serkit.replicate.posts import (
        DEFAULT_ROUNDS,
        SLOW_DEFAULT_ROUNDS,
        Options,
        render,
        resolve_post,
        run,
        save,
    )

    posts = [resolve_post(args.post)] if args.post else None  # a typo fails before any work
    target = _replication_target(args)
    rounds = args.rounds or (SLOW_DEFAULT_ROUNDS if args.slow else DEFAULT_ROUNDS)
    document = run(posts, Options(rounds=rounds, slow=args.slow))
    if target is not None:
        try:
            save(document, target)
        except OSError as exc:
            raise SerkitError(f"cannot write {target}: {exc}") from exc
        print(f"serkit: saved the replication document to {target}", file=sys.stderr)
    if args.format == "json":
        _print_json(document)
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


# --- wiring ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="serkit", description="Benchmark suite for Python serializers."
    )
    parser.add_argument("--version", action="version", version=f"serkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    mirror = argparse.ArgumentParser(add_help=False)
    mirror.add_argument(
        "--mirror",
        metavar="DIR",
        help=f"folder holding the fixture sources, used instead of the network (env {MIRROR_ENV})",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="machine-readable output")
    by_codec = argparse.ArgumentParser(add_help=False)
    by_codec.add_argument(
        "--codec", type=split_ids, action="extend", help="codec ids, comma-separated"
    )
    selection = argparse.ArgumentParser(add_help=False)
    selection.add_argument(
        "--fixture", type=split_ids, action="extend", help="fixture ids, comma-separated"
    )
    selection.add_argument(
        "--slow", action="store_true", help="include the slow fixtures (hundreds of MB)"
    )

    listing = commands.add_parser(
        "list", parents=[as_json], help="each codec: format, library, version, implementation"
    )
    listing.set_defaults(run=cmd_list)

    fixtures = commands.add_parser("fixtures", help="list, fetch and verify fixture documents")
    actions = fixtures.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", parents=[as_json], help="the fixtures").set_defaults(
        run=cmd_fixtures_list
    )
    actions.add_parser(
        "fetch", parents=[mirror], help="download sources from pinned URLs, check sha256"
    ).set_defaults(run=cmd_fixtures_fetch)
    actions.add_parser(
        "verify", parents=[mirror, selection], help="check sources and fixture content hashes"
    ).set_defaults(run=cmd_fixtures_verify)

    sizes = commands.add_parser(
        "sizes", parents=[mirror, selection, as_json, by_codec], help="encoded size of each fixture"
    )
    sizes.set_defaults(run=cmd_sizes)

    fidelity_parser = commands.add_parser(
        "fidelity",
        parents=[mirror, by_codec],
        help="what each codec gives back of each fixture and probe; --hostile: of bad input",
    )
    fidelity_parser.add_argument(
        "--fixture", type=split_ids, action="extend", help="fixture or probe ids, comma-separated"
    )
    fidelity_parser.add_argument(
        "--slow", action="store_true", help="include the slow fixtures (hundreds of MB)"
    )
    fidelity_parser.add_argument(
        "--probes",
        action=argparse.BooleanOptionalAction,
        help="add every probe (the default unless --fixture names documents)",
    )
    fidelity_parser.add_argument("--format", choices=("table", "json"), default="table")
    fidelity_parser.add_argument(
        "--hostile",
        action="store_true",
        help="also feed each codec's loads hostile payloads, in sandboxed subprocesses",
    )
    fidelity_parser.add_argument(
        "--hostile-count",
        type=_positive_int,
        default=hostile.DEFAULT_COUNT,
        metavar="N",
        help=f"hostile payloads per codec (default {hostile.DEFAULT_COUNT})",
    )
    fidelity_parser.add_argument(
        "--hostile-seed", type=int, default=hostile.DEFAULT_SEED, metavar="SEED"
    )
    fidelity_parser.add_argument(
        "--hostile-budget",
        type=float,
        default=hostile.DEFAULT_BUDGET,
        metavar="SECONDS",
        help=f"time limit per codec (default {hostile.DEFAULT_BUDGET:g})",
    )
    fidelity_parser.set_defaults(run=cmd_fidelity)

    matrix = commands.add_parser(
        "matrix", parents=[as_json], help="the asv environments: Pythons x library releases"
    )
    matrix.add_argument(
        "--write-config", metavar="PATH", help="write the asv configuration (asv.conf.json)"
    )
    matrix.set_defaults(run=cmd_matrix)

    run_bench = commands.add_parser(
        "bench",
        help="run the asv suite: quick on this Python, or the whole matrix; then the report",
        description=(
            "Run the asv suite for the checked-out commit, record this host's facts beside "
            "the results, then write the HTML report (serkit report). "
            f"Narrow the grid with {CODECS_ENV}, {FIXTURES_ENV} and {SLOW_ENV}."
        ),
    )
    run_bench.add_argument(
        "--matrix", action="store_true", help="every environment of every Python found"
    )
    run_bench.add_argument(
        "--python", type=split_ids, action="extend", help="with --matrix: these Pythons only"
    )
    speed = run_bench.add_mutually_exclusive_group()
    speed.add_argument(
        "--quick",
        action="store_true",
        default=None,
        help=f"{bench.QUICK_DESCRIPTION} (default alone)",
    )
    speed.add_argument(
        "--full", dest="quick", action="store_false", help="asv's statistics (default --matrix)"
    )
    run_bench.add_argument(
        "--no-report", action="store_true", help="skip the HTML report (serkit report)"
    )
    run_bench.add_argument(
        "asv_args", nargs=argparse.REMAINDER, help="after --: passed on to `asv run`"
    )
    run_bench.set_defaults(run=cmd_bench)

    agreement = commands.add_parser(
        "agreement", help="check the asv suite's timing of one call against plain timeit"
    )
    agreement.add_argument("--codec", default="orjson")
    agreement.add_argument("--fixture", default="small-dict")
    agreement.add_argument("--operation", choices=["dumps", "loads", "round_trip"], default="dumps")
    agreement.add_argument("--rounds", type=int, default=5)
    agreement.set_defaults(run=cmd_agreement)

    validate = commands.add_parser(
        "validate",
        parents=[as_json],
        help="check the asv suite's timings of a fixed panel of calls against pyperf",
    )
    validate.add_argument("--rounds", type=_positive_int, default=3)
    validate.add_argument(
        "--processes", type=_positive_int, default=10, help="pyperf worker processes per pair"
    )
    validate.set_defaults(run=cmd_validate)

    overhead = commands.add_parser(
        "overhead",
        parents=[as_json, by_codec],
        help="what serkit's adapter adds over the direct library call (asv, small-dict)",
    )
    overhead.add_argument(
        "--rounds", type=_positive_int, default=5, help="asv runs, one round each (default 5)"
    )
    overhead.set_defaults(run=cmd_overhead)

    doctor = commands.add_parser(
        "doctor",
        parents=[as_json],
        help="the state of this machine and Python that matters for benchmarking",
    )
    doctor.set_defaults(run=cmd_doctor)

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
            "not memory) must be equal: a difference exits 1. See README, Comparing hosts."
        ),
    )
    compare.add_argument("host_a", metavar="HOST_A", help="machine name: A, the baseline")
    compare.add_argument("host_b", metavar="HOST_B", help="machine name: B, compared with A")
    compare.add_argument("--commit", metavar="C", help="this commit (a prefix) on both hosts")
    compare.add_argument("--format", choices=["table", "json", "markdown"], default="table")
    compare.set_defaults(run=cmd_compare)

    hosts = commands.add_parser(
        "hosts",
        parents=[results],
        help="the machines in the results: CPU, governor, turbo, Python builds, OS",
    )
    hosts.add_argument("--format", choices=["table", "json"], default="table")
    hosts.set_defaults(run=cmd_hosts)

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
    report.set_defaults(run=cmd_report)

    from serkit.replicate.posts import (
        DEFAULT_ROUNDS,
        MIN_ROUNDS,
        SLOW_DEFAULT_ROUNDS,
        post_ids,
    )

    replicate = commands.add_parser(
        "replicate",
        parents=[mirror],
        help="the posts' published tables beside today's measurements, with verdicts",
        description=(
            "Re-run the experiments of the posts serkit grew from and show the published "
            "numbers beside today's: both normalized to a reference codec, the ranking then "
            "and now, and a verdict on each claim. Run with every post, the JSON document is "
            f"also saved to {ASV_DIR}/{REPLICATION_FILE} in the checkout (see --save, --no-save)."
        ),
    )
    replicate.add_argument(
        "post",
        nargs="?",
        metavar="POST",
        help=f"one post: {', '.join(post_ids())} (000 and 001 are one post); default all",
    )
    replicate.add_argument("--format", choices=["table", "json", "markdown"], default="table")
    replicate.add_argument(
        "--slow",
        action="store_true",
        help="include post 000's 10,000 and 100,000 records (minutes, GBs of memory)",
    )
    replicate.add_argument(
        "--rounds",
        type=_positive_int,
        metavar="N",
        help=f"interleaved rounds per measurement, at least {MIN_ROUNDS} "
        f"(default {DEFAULT_ROUNDS}, or {SLOW_DEFAULT_ROUNDS} with --slow)",
    )
    saving = replicate.add_mutually_exclusive_group()
    saving.add_argument("--save", metavar="FILE", help="also write the JSON document to FILE")
    saving.add_argument(
        "--no-save",
        action="store_true",
        help=f"do not write {ASV_DIR}/{REPLICATION_FILE} after a full run",
    )
    replicate.set_defaults(run=cmd_replicate)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    saved_mirror = os.environ.get(MIRROR_ENV)
    if getattr(args, "mirror", None):
        os.environ[MIRROR_ENV] = args.mirror  # fixtures built later read it too
    try:
        return int(args.run(args))
    except SerkitError as exc:
        print(f"serkit: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("serkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `serkit list | head`
        return 0
    finally:  # main() is also called in-process, by tests and other tools
        if saved_mirror is None:
            os.environ.pop(MIRROR_ENV, None)
        else:
            os.environ[MIRROR_ENV] = saved_mirror


if __name__ == "__main__":
    sys.exit(main())
