"""`serkit matrix --cost`: the matrix's time per runner kind and shard (serkit.run.cost)."""

from __future__ import annotations

import sys
from pathlib import Path

from serkit.cli.common import print_json, print_table, warn
from serkit.errors import SerkitError
from serkit.run.cost import ASV_RUN_S, BUILD_S, SHARD_BUDGET_S, read_costs, runner_costs
from serkit.run.releases import load
from serkit.units import plural


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def print_cost(
    results: Path,
    fmt: str,
    shards: int | None,
    machine: str | None = None,
    processes: int | None = None,
) -> int:
    measured, warnings = read_costs(results, machine)
    warn(warnings)
    if not any(m.library is not None for m in measured):
        raise SerkitError(
            f"no matrix environment's results in {results}"
            + (f" for machine {machine}" if machine else "")
            + ": run `serkit bench --matrix` (a --python and a shard are enough to start)"
        )
    data = load()
    kinds = runner_costs(data, measured, shards, processes)
    if fmt == "json":
        print_json(
            {
                "results": str(results),
                "asv_run_s": ASV_RUN_S,
                "processes": processes,
                "build_s": BUILD_S,
                "shard_budget_s": SHARD_BUDGET_S,
                "runner_kinds": [
                    {
                        "runner": kind.platform.runner,
                        "platform": kind.platform.name,
                        "total_s": round(kind.total_s, 1),
                        "shards": [
                            {"shard": str(s), "seconds": round(t, 1), "environments": n}
                            for s, t, n in kind.shards
                        ],
                        "environments": [
                            {
                                "label": e.env.label,
                                "seconds": None if e.seconds is None else round(e.seconds, 1),
                                "source": e.source,
                            }
                            for e in kind.estimates
                        ],
                    }
                    for kind in kinds
                ],
            }
        )
        return 0
    machines = sorted({m.machine for m in measured})
    own = sum(1 for e in kinds[0].estimates if e.source == "measured")
    print(
        f"From {plural(len(measured), 'results file')} of {', '.join(machines)} in {results}: "
        f"{own} of the {len(kinds[0].estimates)} {kinds[0].platform.name} environments "
        f"measured, the others borrowed from the nearest measured (the same release on "
        f"another Python, else another release). Each benchmark's duration times its "
        + (f"{processes} processes (timed pairs)" if processes else "processes")
        + f", {ASV_RUN_S:g} s per asv run, {BUILD_S:g} s per build."
    )
    count = len(kinds[0].shards)
    rows = [
        [
            kind.platform.runner,
            kind.platform.name,
            len(kind.estimates),
            _hours(kind.total_s),
            count,
            _hours(kind.longest_shard_s),
        ]
        for kind in kinds
    ]
    headers = ["runner kind", "platform", "environments", "whole matrix", "shards", "longest"]
    print_table(rows, headers, fmt, disable_numparse=True)
    print()
    shard_rows = [
        [kind.platform.runner, str(shard), n, _hours(seconds)]
        for kind in kinds
        for shard, seconds, n in kind.shards
    ]
    print_table(shard_rows, ["runner kind", "shard", "environments", "time"], fmt)
    unknown = sorted({e.env.label for kind in kinds for e in kind.unknown})
    if unknown:
        print(f"Not estimated, nothing like them measured: {', '.join(unknown)}.")
    within = all(kind.longest_shard_s <= SHARD_BUDGET_S for kind in kinds)
    verdict = "within" if within else "OVER"
    print(f"Every shard {verdict} the {_hours(SHARD_BUDGET_S)} budget.", file=sys.stderr)
    return 0
