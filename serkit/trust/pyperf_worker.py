"""pyperf's side of `serkit validate`: one prepared call, timed as the asv suite times it.

Run as `python -m serkit.trust.pyperf_worker --codec C --fixture F --operation OP [pyperf
options]`. pyperf re-runs this module in its worker processes, each of which prepares
the pair with `serkit.suite.preparation.prepare` and times the same loop as `bench_time`: the
callables bound to locals, the call repeated `loops` times (pyperf calibrates `loops`).
"""

from __future__ import annotations

import argparse
import itertools
import time
from typing import Callable

import pyperf

from serkit.suite.preparation import Case, prepare


def time_func(case: Case, operation: str) -> Callable[[int], float]:
    """pyperf's time function: seconds for `loops` calls, the loop as in bench_time."""
    dumps, loads, obj, payload = case.config.dumps, case.config.loads, case.obj, case.payload
    clock = time.perf_counter

    def time_dumps(loops: int) -> float:
        start = clock()
        for _ in itertools.repeat(None, loops):
            dumps(obj)
        return clock() - start

    def time_loads(loops: int) -> float:
        start = clock()
        for _ in itertools.repeat(None, loops):
            loads(payload)
        return clock() - start

    def time_round_trip(loops: int) -> float:
        start = clock()
        for _ in itertools.repeat(None, loops):
            loads(dumps(obj))
        return clock() - start

    funcs = {"dumps": time_dumps, "loads": time_loads, "round_trip": time_round_trip}
    return funcs[operation]


def _pass_on(command: list[str], args: argparse.Namespace) -> None:
    # pyperf starts its workers with its own options; ours must be added to theirs.
    command += ["--codec", args.codec, "--fixture", args.fixture, "--operation", args.operation]


def main() -> None:
    runner = pyperf.Runner(
        program_args=("-m", "serkit.trust.pyperf_worker"), add_cmdline_args=_pass_on
    )
    runner.argparser.add_argument("--codec", required=True)
    runner.argparser.add_argument("--fixture", required=True)
    runner.argparser.add_argument(
        "--operation", choices=["dumps", "loads", "round_trip"], default="dumps"
    )
    args = runner.parse_args()
    case = prepare(args.codec, args.fixture)
    name = f"{args.operation} of {args.fixture} with {args.codec}"
    runner.bench_time_func(name, time_func(case, args.operation))


if __name__ == "__main__":
    main()
