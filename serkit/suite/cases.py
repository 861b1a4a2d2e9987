"""What the asv suite runs: the codec x fixture grid, how a run narrows it, and the
settings a run passes to its processes (SERKIT_BENCH_*), read and checked in one place.

Each pair is prepared by serkit.suite.preparation and timed by the class every benchmark
derives from, serkit.suite.case_benchmark.CaseBenchmark.
"""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

from serkit.errors import SerkitError
from serkit.suite.budget import seconds_from_env
from serkit.suite.canary import (
    CANARY_HARNESS,
)

# The codec registry and the fixtures are imported inside the functions that use them: the
# command line reads this module's names to build its parser and pays for neither.

CODECS_ENV = "SERKIT_BENCH_CODECS"
FIXTURES_ENV = "SERKIT_BENCH_FIXTURES"
SLOW_ENV = "SERKIT_BENCH_SLOW"
# Set by the matrix on a library's environment: the one library whose codecs it times.
LIBRARY_ENV = "SERKIT_BENCH_LIBRARY"
# asv's warm-up, in seconds, for pairs that preparing did not warm up (asv's default:
# 0.1). The quick run sets 0.02: on 93 fast pairs here the results moved by no more than
# between two runs with 0.1, and each pair took 0.08 s less.
WARMUP_ENV = "SERKIT_BENCH_WARMUP"
# Load your fixtures that are pickles (loading one runs code): only the person running the
# suite can allow it, never the fixtures folder (serkit.inputs.user_fixtures).
ALLOW_PICKLE_ENV = "SERKIT_BENCH_ALLOW_PICKLE"
# Pairs a run leaves out, "codec@fixture,...": the quick or full run's, predicted over its
# budget (serkit.run.quick), so that no process of the run measures them, facts included.
LEAVE_OUT_ENV = "SERKIT_BENCH_LEAVE_OUT"
# Count instructions per call under valgrind too (serkit.suite.instructions): opt-in.
INSTRUCTIONS_ENV = "SERKIT_BENCH_INSTRUCTIONS"
# How many processes time each pair (asv's `rounds`; asv interleaves them, one round over
# the whole grid, then the next). Each process takes SAMPLES_PER_PROCESS samples, kept
# together in asv's samples, so every spread serkit states is the spread between
# processes: on a shared VM one process can read a call 2x slower than another, which
# samples taken in one process never show. `serkit bench` sets it (quick run: QUICK_ROUNDS).
ROUNDS_ENV = "SERKIT_BENCH_ROUNDS"
FULL_ROUNDS = 10
# Within each process, SAMPLES_PER_PROCESS samples of SAMPLE_TIME_S each; the process's
# value is the least of those taken in the fast state (serkit.sample_speed): another tenant's
# work only ever slows a call down, and a short sample is the likelier to miss it. In a
# slow stretch this machine's fast spells last 0.2-2 ms (docs/trust.md, "The state
# flickers"), so samples are kept shorter than a spell: 25 of 0.2 ms, where 5 of 2 ms
# found a fast sample in 13 of 40 processes of a 1 µs call, 25 of 0.2 ms did in 18.
SAMPLES_PER_PROCESS = 25
SAMPLE_TIME_S = 0.0002
# Sequential sampling on a run's own precision: after its planned rounds, a pair gets more
# rounds, up to as many again, while its typical processes (serkit.stats.typical_processes)
# are fewer than TYPICAL_PROCESSES or place it less precisely than its plan needs to see
# QUICK_SEES or FULL_SEES (in 90 % of pairs, at the verdicts' 0.5 % level; see
# precision_needed). The rule looks at one run's own processes, never at a comparison, so
# it cannot lean a verdict either way. Under load one process in eight read 5 % to 2x slow,
# and the verdicts judge the typical ones only.
TYPICAL_PROCESSES = 5
QUICK_SEES = 0.10
FULL_SEES = 0.05
_Z_LEVEL = 2.807  # two-sided 0.5 % of a normal distribution: the verdicts' level
_Z_POWER = 1.282  # one-sided 10 %: a 90 % chance of calling the change


def precision_needed(change: float, floor: float = 0.0, spread: float = 1.0) -> float:
    """The standard error of a pair's mean log (serkit.stats.standard_error) at which two
    such pairs, compared, call `change` in 90 % of cases at the verdicts' level; and, with
    a `floor`, read it past that floor in 90 % of cases, where the between-runs verdicts
    apply one. `spread`: how much more two runs' values of a pair differ than their
    processes' standard errors say (1: not at all, as within one run)."""
    step = math.log1p(change)
    test = step / (_Z_LEVEL + _Z_POWER)
    past_floor = (step - math.log1p(floor)) / _Z_POWER if floor else test
    return min(test, past_floor) / math.sqrt(2) / spread


# Set only by `serkit power` and by hand: every timed sample makes this share more calls
# than its timer counts, a known slowdown that really runs (the same calls, the same
# instruction mix, where whole calls make the share), and the instruction counts make them
# too (serkit.suite.cachegrind).
# A share is whole calls in INJECTED_LOOPS (+5 %: one more in 20). The samples keep the
# plain run's bodies and `number`, so an injected run samples as the run it is compared
# with; the part of a call that whole calls cannot make is a spin (`injected_sampling`).
INJECT_ENV = "SERKIT_BENCH_INJECT"
INJECTED_LOOPS = 20

# Generous for pure-Python YAML on the largest default fixture (seconds per call);
# the slow fixtures get more, as they are opt-in.
TIMEOUT_S = 300
SLOW_TIMEOUT_S = 1800


def _gzip6(data: bytes) -> bytes:
    # mtime=0: the header then carries no timestamp, so equal input gives equal bytes.
    return gzip.compress(data, compresslevel=6, mtime=0)


def _zstd3(data: bytes) -> bytes:
    # zstandard below Python 3.14; from 3.14 the standard library's own (PEP 784), as
    # zstandard publishes no free-threaded wheel. Both write one frame with the content
    # size and no checksum; the libzstd each was built with may differ.
    try:
        import zstandard
    except ImportError:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]

        return bytes(zstd.compress(data, level=3))
    return zstandard.ZstdCompressor(level=3).compress(data)


# Compressed size: the name states the algorithm and level (each tool's default level).
COMPRESSORS: Mapping[str, Callable[[bytes], bytes]] = {"gzip-6": _gzip6, "zstd-3": _zstd3}


def compressor_versions() -> dict[str, str]:
    """The releases of the libraries behind COMPRESSORS: a compressed size depends on them."""
    import zlib

    try:
        import zstandard

        zstd = f"zstandard {zstandard.__version__}"
    except ImportError:
        zstd = f"compression.zstd of Python {platform.python_version()}"
    return {"gzip-6": f"zlib {zlib.ZLIB_RUNTIME_VERSION}", "zstd-3": zstd}


def split_ids(value: str) -> list[str]:
    """`"a, b,"` -> `["a", "b"]`: how every comma-separated list of ids is read."""
    return [item.strip() for item in value.split(",") if item.strip()]


def warmup_from_env(environ: Mapping[str, str] = os.environ) -> float | None:
    """SERKIT_BENCH_WARMUP in seconds, or None (asv's own) when unset."""
    return seconds_from_env(
        WARMUP_ENV, most=10, what="of warm-up, 0 to 10", zero=True, environ=environ
    )


def warmup_words(warmup_s: float | None) -> str:
    """A run's warm-up in words: serkit's seconds of the pair's calls, or asv's own."""
    return "asv's warm-up" if warmup_s is None else f"{warmup_s:g} s of warm-up"


def harness_record(warmup_s: float | None) -> str:
    """What a run records of its harness: CANARY_HARNESS and the warm-up its processes
    made (serkit.suite.canary)."""
    return f"harness {CANARY_HARNESS}, {warmup_words(warmup_s)}"


def rounds_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """SERKIT_BENCH_ROUNDS: processes per timed pair (default FULL_ROUNDS), at least 2."""
    value = environ.get(ROUNDS_ENV, "").strip()
    if not value:
        return FULL_ROUNDS
    if not value.isdigit() or not 2 <= int(value) <= 100:
        raise SerkitError(f"{ROUNDS_ENV}={value!r}: give a whole number of processes, 2 to 100")
    return int(value)


def injected_from_env(environ: Mapping[str, str] = os.environ) -> int | None:
    """SERKIT_BENCH_INJECT as extra calls per INJECTED_LOOPS (0.05 -> 1), or None when unset."""
    value = environ.get(INJECT_ENV, "").strip()
    if not value:
        return None
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    extra = round(share * INJECTED_LOOPS)
    if not 0 <= share <= 10 or abs(extra - share * INJECTED_LOOPS) > 1e-9:
        raise SerkitError(
            f"{INJECT_ENV}={value!r}: give a share of extra calls in steps of 1/{INJECTED_LOOPS}"
        )
    return extra


def truthy(value: str | None) -> bool:
    """Whether an environment variable says yes (1, true, yes, on)."""
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Selection:
    """The part of the grid a run times. The grid itself never changes."""

    codecs: tuple[str, ...] | None = None  # None: every codec
    fixtures: tuple[str, ...] | None = None  # None: every fixture but the slow ones
    slow: bool = False  # include the slow fixtures (random-dicts-10000 and -100000)
    library: str | None = None  # a library's environment: only this library's codecs
    instructions: bool = False  # count instructions per call too (bench_instructions)
    left_out: frozenset[tuple[str, str]] = frozenset()  # (codec, fixture) pairs, LEAVE_OUT_ENV

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Selection:
        """Read SERKIT_BENCH_*; an unknown id raises UnknownCodec or UnknownFixture."""
        from serkit.codecs.registry import check_codecs
        from serkit.inputs.fixtures import check_fixtures

        codecs = (
            tuple(split_ids(environ[CODECS_ENV])) if environ.get(CODECS_ENV, "").strip() else None
        )
        fixtures = (
            tuple(split_ids(environ[FIXTURES_ENV]))
            if environ.get(FIXTURES_ENV, "").strip()
            else None
        )
        check_codecs(codecs or ())
        check_fixtures(fixtures or ())
        left_out = frozenset(
            (codec, fixture)
            for item in split_ids(environ.get(LEAVE_OUT_ENV, ""))
            for codec, _, fixture in [item.partition("@")]
        )
        return cls(
            codecs,
            fixtures,
            truthy(environ.get(SLOW_ENV)),
            environ.get(LIBRARY_ENV),
            truthy(environ.get(INSTRUCTIONS_ENV)),
            left_out,
        )

    def excludes_codec(self, codec: str) -> str | None:
        """Why this run leaves `codec` out, or None when it is selected."""
        from serkit.codecs.registry import registry

        if self.codecs is not None and codec not in self.codecs:
            return f"{codec} is not in {CODECS_ENV}"
        if self.library is not None and registry.spec(codec).library != self.library:
            return f"this environment varies {self.library} only"
        return None

    def excludes(self, codec: str, fixture: str) -> str | None:
        """Why this run leaves (codec, fixture) out, or None when it is selected."""
        from serkit.codecs.registry import default_fixtures
        from serkit.inputs.fixtures import get_fixture

        if self.fixtures is not None and fixture not in self.fixtures:
            return f"{fixture} is not in {FIXTURES_ENV}"
        if self.fixtures is None and get_fixture(fixture).named_only:
            return f"{fixture} is one post's document: {FIXTURES_ENV} names it to time it"
        if self.fixtures is None and get_fixture(fixture).slow and not self.slow:
            return f"{fixture} is slow; set {SLOW_ENV}=1 to include it"
        if (codec, fixture) in self.left_out:
            return (
                "not among the run's pairs (predicted over its budget, or, in a quick run, "
                "not among its codec's fixtures): the run's plan says why"
            )
        declared = default_fixtures(codec)
        if self.fixtures is None and declared is not None and fixture not in declared:
            where = f"on {', '.join(declared)}" if declared else "on the fixtures a run names"
            return f"{codec} is timed {where} unless {FIXTURES_ENV} names {fixture}"
        return self.excludes_codec(codec)


def preload(selection: Selection) -> None:
    """Build, in this process, the selected fixtures that are derived from a fetched source.

    asv's forkserver imports the suite once and forks every benchmark process from it, so
    each process then copies the document (10 ms) instead of parsing the source again
    (0.3 s, in 7 benchmarks x 18 codecs). A missing source is left for the benchmarks to
    report as a skip.
    """
    from serkit.inputs.fixtures import fixture_names, get_fixture, load_fixture

    for name in selection.fixtures or fixture_names():
        fixture = get_fixture(name)
        if fixture.source is None or (selection.fixtures is None and fixture.slow):
            continue
        with contextlib.suppress(SerkitError):
            load_fixture(name)
