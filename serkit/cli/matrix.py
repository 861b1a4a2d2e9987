"""`serkit matrix`: the asv environments; refreshed from the package index; what they cost."""

from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path
from typing import Any

from serkit.checkout import CONFIG_NAME, project_root, results_dir
from serkit.cli.common import print_json, print_table, warn
from serkit.cli.exits import UsageError, checked
from serkit.cli.options import Option, Use, add_option, command, positive_int
from serkit.codecs.spec import STDLIB
from serkit.errors import SerkitError
from serkit.files import atomic_write
from serkit.run.ci_plan import WORKFLOW, plan_of
from serkit.run.index import PLATFORM_NAMES, fetch_files, fetch_metadata, platform_here
from serkit.run.interpreters import find_pythons
from serkit.run.libraries import needed_by
from serkit.run.matrix import environments, measured, not_served, render_asv_config
from serkit.run.releases import Releases, data_path, load, refresh, save, staleness
from serkit.suite.cases import FULL_SEES, precision_needed
from serkit.units import plural

# What `serkit matrix` does instead of listing the environments: one at a time.
ACTIONS = (
    Option(("--write-config",), "write the asv configuration (asv.conf.json)", metavar="PATH"),
    Option(
        ("--refresh",),
        "ask the package index which releases exist and which have compiled wheels "
        "for each runner kind's platform and Python, then rewrite releases.json and "
        "asv.conf.json (one request per library; a pure-Python library's kept releases "
        "are read for what they pin)",
        action="store_true",
    ),
    Option(
        ("--cost",),
        "the matrix's time, per environment, runner kind and shard, from the durations "
        "asv recorded in a results tree (--results)",
        action="store_true",
    ),
    Option(
        ("--ci-plan",),
        "expand the CI workflow's bench matrix (--workflow) and check it before it runs: "
        "each shard's environments (every one in exactly one shard), the artifacts' names, "
        "what the publish job merges, the sentinel once per runner kind; exit 1 on a problem",
        action="store_true",
    ),
)


def _percent(text: str) -> float:
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        value = 0.0
    if not 0 < value < 100:
        raise argparse.ArgumentTypeError(f"give a percentage above 0 and below 100, not {text!r}")
    return value


OWN = (  # the options of one action each (or of listing), beside the table's
    Option(
        ("--workflow",),
        "with --ci-plan: this workflow (default .github/workflows/bench.yml)",
        metavar="PATH",
    ),
    Option(("--index-url",), "with --refresh: this simple index, not the file's", metavar="URL"),
    Option(
        ("--schedule",),
        "with --cost: full, every environment measured again; weekly, the scheduled run, "
        "which measures only what no stored point covers (here, a new release of each "
        "library in turn) and the sentinel pairs (at 10 processes a pair unless --processes)",
        choices=("full", "weekly"),
        default="full",
    ),
    Option(
        ("--durations",),
        "with --cost: a durations table saved as JSON (docs/cost.md), not a results tree",
        metavar="FILE",
    ),
    Option(
        ("--detect",),
        "with --cost: each timed pair with the processes its measured spread needs to "
        "see a PCT change (the full run's aim: 5), at least 5 and at most 20, not the same "
        "count for every pair (needs results with per-process samples, not --durations)",
        type=_percent,
        metavar="PCT",
    ),
    Option(
        ("--every-pair",),
        "with --cost: every pair of the grid timed, as runs did before a full run left "
        "out the pairs predicted over its budget (the model's 'before')",
        action="store_true",
    ),
    Option(
        ("--counted-everywhere",),
        "with --cost: memory per call and instructions counted in every environment, as "
        "matrix runs did before each release counted them on one Python (the model's "
        "'before')",
        action="store_true",
    ),
    Option(
        ("--save-durations",),
        "with --cost and a results tree: write its durations as a table (JSON) that "
        "--durations reads, with every pair's calls predicted here now, and stop",
        metavar="FILE",
    ),
    Option(
        ("--shards",),
        "with --cost: the shard count to show (default: the fewest within the budget)",
        type=positive_int,
        metavar="N",
    ),
)


def add_commands(commands: Any) -> None:
    matrix = command(
        commands,
        "matrix",
        run_matrix,
        help="the asv environments: Pythons x library releases, from the package index",
        description=(
            "The environments the asv suite runs in: per Python, one for the standard "
            "library's codecs and one per kept release of each library, that library "
            "installed with what its codecs need beside it (orjson for cattrs-orjson, genson "
            "for a schema codec), unmeasured. The releases are data "
            "(serkit/run/releases.json); --refresh asks the package index again."
        ),
        options=(
            "--format",
            Use("--results", note="with --cost"),
            Use("--machine", note="with --cost: this machine's results only"),
            Use(
                "--processes",
                note="with --cost: as if every timed pair ran N (a full run: 10), not as "
                "many as the results recorded",
            ),
            *OWN,
        ),
    )
    action = matrix.add_mutually_exclusive_group()
    for option in ACTIONS:
        add_option(action, option)


def run_matrix(args: argparse.Namespace) -> int:
    if args.write_config:
        path = Path(args.write_config)
        try:
            if not path.parent.is_dir():  # a file named, not a folder to make
                raise FileNotFoundError(errno.ENOENT, "no such folder", str(path.parent))
            atomic_write(path, render_asv_config())
        except OSError as exc:
            raise SerkitError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(f"wrote {path}")
        return 0
    if args.refresh:
        return _refresh(args)
    if args.ci_plan:
        return _ci_plan(args)
    if args.cost:
        # The model reads asv's results: its own module.
        from serkit.cli.cost import Before, print_cost, print_weekly, save_durations

        if args.durations and args.results:
            raise UsageError("--durations and --results are two sources: give one")
        if args.durations:
            results = Path(args.durations)
        else:
            results = Path(args.results) if args.results else results_dir(project_root())
        if args.save_durations:
            if args.durations:
                raise UsageError("--save-durations writes a table from --results, not --durations")
            return save_durations(results, args.machine, Path(args.save_durations))
        if args.detect is not None and args.durations:
            raise UsageError("--detect needs each pair's processes: --results, not --durations")
        # The run's own aim (serkit.run.precision) unless --processes fixes every pair's.
        detect = args.detect if args.detect is not None or args.processes else FULL_SEES * 100
        precision = None if detect is None else precision_needed(detect / 100)
        before = Before(args.every_pair, args.counted_everywhere)
        if args.schedule == "weekly":
            return print_weekly(
                results, args.format, args.machine, args.processes, precision, before
            )
        return print_cost(
            results, args.format, args.shards, args.machine, args.processes, precision, before
        )
    return _show(args)


def _ci_plan(args: argparse.Namespace) -> int:
    path = Path(args.workflow) if args.workflow else project_root() / WORKFLOW
    found = plan_of(path, load())
    if args.format == "json":
        print_json(
            {
                "workflow": str(path),
                "jobs": [
                    {
                        "name": job.name,
                        "runner": job.runner,
                        "shard": str(job.shard) if job.shard else None,
                        "environments": [env.label for env in job.environments],
                        "artifact": job.artifact,
                        "sentinel": job.sentinel,
                    }
                    for job in found.jobs
                ],
                "merged": found.merged,
                "problems": found.problems,
            }
        )
    else:
        rows = [
            [
                job.name,
                len(job.environments),
                job.artifact or "-",
                "yes" if job.artifact in found.merged else "no",
                "yes" if job.sentinel else "-",
            ]
            for job in found.jobs
        ]
        headers = ["job", "environments", "artifact", "merged", "sentinel"]
        print_table(rows, headers, args.format, disable_numparse=True)
        total = sum(len(job.environments) for job in found.jobs)
        print(
            f"{path}: {plural(len(found.jobs), 'job')}, {plural(total, 'environment')} "
            f"measured across them, {plural(len(found.merged), 'artifact')} merged (releases "
            "as committed; the "
            "workflow's matrix job refreshes them first)."
        )
    for problem in found.problems:
        print(f"serkit: problem: {problem}", file=sys.stderr)
    if found.problems:
        return checked(True)
    print("The workflow fits together: every environment in exactly one shard.", file=sys.stderr)
    return 0


def _refresh(args: argparse.Namespace) -> int:
    path = data_path()
    before = load(path)
    index = args.index_url or before.index
    print(f"serkit: asking {index} for the matrix's libraries", file=sys.stderr)
    after = refresh(
        before,
        lambda name: fetch_files(name, index),
        metadata_of=fetch_metadata,
        progress=lambda name: print(f"serkit: {name}", file=sys.stderr),
    )
    save(after, path)
    print(f"wrote {path}")
    try:
        config = project_root() / CONFIG_NAME
    except SerkitError:  # an installed serkit outside a checkout: no config to keep in step
        config = None
    if config is not None:
        atomic_write(config, render_asv_config(after))
        print(f"wrote {config}")
    for line in changes(before, after):
        print(line)
    return 0


def changes(before: Releases, after: Releases) -> list[str]:
    """Per library, the releases a refresh added and dropped, newest first."""
    old = {lib.name: [r.version for r in lib.releases] for lib in before.libraries}
    lines = [
        f"{lib.name}: no codec of serkit's needs it any more: dropped"
        for lib in before.libraries
        if lib.name not in {a.name for a in after.libraries}
    ]
    for library in after.libraries:
        if library.name not in old:
            lines.append(f"{library.name}: added, for {', '.join(needed_by(library.name))}")
        new = [r.version for r in library.releases]
        added = [v for v in new if v not in old.get(library.name, [])]
        dropped = [v for v in old.get(library.name, []) if v not in new]
        if added or dropped:
            parts = [f"+ {v}" for v in added] + [f"- {v}" for v in dropped]
            lines.append(f"{library.name}: {', '.join(parts)}")
        elif library.newest_served and library.newest_served not in new:
            what = "wheels" if library.pure_python else "compiled wheels"
            lines.append(
                f"{library.name}: {library.newest_served} is served without {what} "
                "for the matrix: left out"
            )
    return lines or ["no release added or dropped"]


def _show(args: argparse.Namespace) -> int:
    data = load()
    warn(staleness(data))
    envs = list(environments(data=data))
    found = find_pythons(data.pythons)
    here = platform_here()
    # Where each environment runs: a release and its companions as that platform has them.
    runs_on = {p: set(environments(platform=p, data=data)) for p in PLATFORM_NAMES}
    if args.format == "json":
        print_json(
            [
                {
                    "name": env.asv_name,
                    "python": env.python,
                    "library": env.library,
                    "release": env.version,
                    "companions": env.companions,
                    "requirements": env.requirements,
                    "platforms": [p for p in PLATFORM_NAMES if env in runs_on[p]],
                    "interpreter": str(found[env.python] or "") or None,
                }
                for env in envs
            ]
        )
        return 0
    libraries = measured(data)
    releases = sum(len(lib.releases) for lib in libraries)
    own = "".join(
        f"; {lib.name} {lib.minor_lines}" for lib in libraries if lib.minor_lines is not None
    )
    others = [lib.name for lib in data.libraries if lib not in libraries]
    print(
        f"{plural(len(envs), 'environment')}: {plural(len(data.pythons), 'Python')}, each "
        f"with one for the standard library and one per release of "
        f"{plural(len(libraries), 'library', 'libraries')} "
        f"({releases} releases kept: the newest of each of the newest minor lines, "
        f"{data.minor_lines}{own}; checked {data.checked or 'never'})."
    )
    if others:
        names = ", ".join(others)
        print(f"Installed beside the libraries whose codecs need them, never measured: {names}.")
    rows = []
    for env in envs:
        on = ["yes" if env in runs_on[p] else "-" for p in PLATFORM_NAMES]
        release = env.version or ("Python's own" if env.library == STDLIB else "")
        beside = ", ".join(f"{k} {v}" for k, v in env.companions.items()) or "-"
        rows.append([env.python, env.library, release, beside, *on, str(found[env.python] or "-")])
    headers = ["python", "library", "release", "with", *PLATFORM_NAMES, "interpreter here"]
    print_table(rows, headers, args.format, disable_numparse=True)
    if here is None:
        print("This platform is none of the runner kinds': the matrix uses every release.")
    for python in data.pythons:
        if found[python] is None:
            print(f"Python {python} was not found here: its environments will be skipped.")
    missing = [f"{lib} on {py}" for py, lib in not_served(data)]
    if missing:
        print(f"No usable wheel on any platform: {', '.join(missing)}.")
    return 0
