"""What the asv suite runs: the codec x fixture grid, how to narrow it, and its inputs.

`benchmarks/` stays thin: its classes derive from :class:`CaseBenchmark` and time one
call each. Everything they need is prepared here.

Two things keep microsecond timings honest, each measured on orjson dumps of
small-dict against a plain ``timeit`` of the same call:

- No `setup`. asv_runner forces ``number = 1`` for any timed benchmark that has one,
  which put timer overhead into every result (asv-notes). asv does check a benchmark's
  ``skip_params`` in the benchmark's own process, once, right before timing it; so
  ``skip_params`` here is a lazy container. Asking it whether a pair is skipped
  prepares that one pair on the benchmark instance, outside the timed loop.
- Inner loops. asv calls a parameterized benchmark through a closure and a bound
  method, which read 11-13 % slow on a 1.3 µs call. So each timed body repeats its call
  `inner_loops` times, a count chosen per pair to last about 20 µs, and the pair's
  `timer` divides the clock by that count: results stay in seconds per call, as with
  pyperf's ``inner_loops``, and the harness cost shrinks below 1 %.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import gzip
import itertools
import math
import os
import platform
import time
import timeit
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, cast

from serkit.codecs.registry import (
    Codec,
    Config,
    check_codecs,
    codec_names,
    default_fixtures,
    get_codec,
    registry,
)
from serkit.errors import SerkitError
from serkit.inputs.fixtures import check_fixtures, fixture_names, get_fixture, load_fixture
from serkit.inputs.limits import Grant, granting, limits_from_env
from serkit.schemas.pinned import fixture_schema
from serkit.schemas.types import Schema, hash_number
from serkit.suite.budget import seconds_from_env, timed_once
from serkit.suite.canary import (
    CANARY_HARNESS,
    CanaryClock,
    Extra,
    note_canary,
    notes_folder,
    reference_scale,
    spin_loops_for,
)
from serkit.suite.state_watch import sample_gate, wait_before_sampling

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
# value is the least of those taken in the fast state (serkit.state): another tenant's
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

# How long one timed body should last; calls shorter than this are repeated inside it.
INNER_TARGET_S = 20e-6
MAX_INNER_LOOPS = 1000
LONG_CALL_S = 1e-3  # a pair this slow to prepare needs no inner loop
# asv's first call of a benchmark is its warm-up, and for a call this long (ten times
# asv's 10 ms `sample_time`) asv then picks number = 1. Preparing the pair has already
# made that call, so such a pair is timed with number = 1 and no second warm-up.
WARMED_CALL_S = 0.1

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
        if self.codecs is not None and codec not in self.codecs:
            return f"{codec} is not in {CODECS_ENV}"
        if self.library is not None and registry.spec(codec).library != self.library:
            return f"this environment varies {self.library} only"
        return None

    def excludes(self, codec: str, fixture: str) -> str | None:
        """Why this run leaves (codec, fixture) out, or None when it is selected."""
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
    for name in selection.fixtures or fixture_names():
        fixture = get_fixture(name)
        if fixture.source is None or (selection.fixtures is None and fixture.slow):
            continue
        with contextlib.suppress(SerkitError):
            load_fixture(name)


@dataclass(frozen=True)
class Case:
    """One (codec, fixture) pair, ready to time: the config and both of its inputs."""

    codec: str
    fixture: str
    config: Config
    obj: Any
    payload: bytes
    prepare_s: float  # preparing it, cold: only to tell slow pairs from fast ones
    dumps_s: float  # the first dumps of `obj` with `config`, cold
    loads_s: float | None  # the first loads of `payload`, cold; None when not decoded
    # What the first loads gave back, kept only when asked (prepare_object's keep_decoded).
    decoded: Any = field(default=None, repr=False, compare=False)
    # The codec as it ran: a schema codec bound to the document's schema (its to_plain
    # turns `decoded` back into plain data). `obj` is then the typed objects it encodes.
    bound: Codec | None = field(default=None, repr=False, compare=False)

    @property
    def schema_sha256(self) -> str | None:
        schema = self.bound.schema if self.bound is not None else None
        return schema.sha256 if schema is not None else None

    def operation(self, name: str) -> Callable[[], object]:
        """The call a benchmark of `name` ("dumps", "loads", "round_trip") repeats."""
        dumps, loads, obj, payload = self.config.dumps, self.config.loads, self.obj, self.payload
        calls: dict[str, Callable[[], object]] = {
            "dumps": lambda: dumps(obj),
            "loads": lambda: loads(payload),
            "round_trip": lambda: loads(dumps(obj)),
        }
        return calls[name]

    def first_call_s(self, operation: str) -> float | None:
        """How long preparing made `operation`'s call take, cold; None if it did not."""
        if operation == "dumps":
            return self.dumps_s
        if self.loads_s is None:
            return None
        return self.loads_s if operation == "loads" else self.dumps_s + self.loads_s

    def warmed_up(self, operation: str) -> bool:
        """Whether preparing made a call of `operation` long enough to be its warm-up."""
        first = self.first_call_s(operation)
        return first is not None and first >= WARMED_CALL_S

    def best_call_s(self, operation: str) -> float:
        """`operation`'s call, at its fastest in this process so far (seconds)."""
        if self.prepare_s >= LONG_CALL_S:
            # Long enough already: do not spend seconds estimating it (cold, so longer).
            return self.first_call_s(operation) or self.prepare_s
        call = self.operation(operation)
        call()  # the first call is cold (caches, lazy imports); do not size by it
        return max(min(timeit.repeat(call, number=10, repeat=3)) / 10, 1e-9)

    def inner_loops(self, operation: str) -> int:
        """How many calls of `operation` make one timed body last about INNER_TARGET_S."""
        return inner_loops_for(self.best_call_s(operation))


def inner_loops_for(call_s: float) -> int:
    """Calls of `call_s` seconds each that make one timed body last about INNER_TARGET_S."""
    return max(1, min(MAX_INNER_LOOPS, round(INNER_TARGET_S / call_s)))


def bodies_per_sample(calls: int, call_s: float) -> int:
    """asv's `number` for a body of `calls` calls: the bodies of one SAMPLE_TIME_S sample."""
    return max(1, round(SAMPLE_TIME_S / (calls * call_s)))


def injected_sampling(inner_loops: int, number: int, extra: int) -> tuple[int, float]:
    """For `extra` more calls in every INJECTED_LOOPS, in a sample of the plain run's
    `inner_loops` x `number` calls: the whole calls it makes more, and the rest of the
    share, a part of one call (0 to 1), which a spin of the canary's arithmetic makes.

    The sample keeps the plain run's calls: one of a long call stays one, as a slower
    release of the codec would leave it, where whole calls alone would need ten.
    """
    whole, rest = divmod(inner_loops * number * extra, INJECTED_LOOPS)
    return whole, rest / INJECTED_LOOPS


def spin_readings(call_s: float) -> int:
    """Readings of a sample's calls and a spin that size an injected spin (`call_s` a
    call): about 10 ms of calls, 3 to 15 readings."""
    return max(3, min(15, round(0.01 / call_s))) if call_s > 0 else 15


def _calls_ns(call: Callable[[], object], calls: int, warm: bool = False) -> float:
    """`calls` calls back to back, as a sample's bodies make them (the collector off, as in
    timeit: on, it slows a large decode by up to a third, docs/trust.md "Agreement with
    pyperf"), after one untimed call where the sample has its warm call: ns a call. A
    call right after a spin reads slower than the next ones, most of all a long call
    timed one a sample, so calls timed colder than the sample's would size its spin too
    long."""
    clock = time.perf_counter_ns
    collecting = gc.isenabled()
    gc.disable()
    try:
        if warm:
            call()
        start = clock()
        for _ in itertools.repeat(None, calls):
            call()
        return (clock() - start) / calls
    finally:
        if collecting:
            gc.enable()


def warm_up(
    call: Callable[[], object], seconds: float, clock: Callable[[], float] = time.perf_counter
) -> int:
    """Make `call` back to back for `seconds`, the collector off as in a sample: the calls
    made (at least one)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        end, calls = clock() + seconds, 0
        while True:
            call()
            calls += 1
            if clock() >= end:
                return calls
    finally:
        if collecting:
            gc.enable()


# glibc serves an allocation of 128 KiB or more with its own mmap and munmap, until the
# process frees such a block: then it raises that threshold (up to 32 MiB) for good. So
# the same call could time twice as fast after any large free (msgpack-ext dumps of
# sensor-record: 9.7 µs in a fresh process, 4.6 µs once the Senate source had been read),
# and a pair's timing depended on what its process happened to load first. Every timing
# process starts from the state a long-running program reaches: the threshold raised.
SETTLE_BYTES = 30 * 2**20
_allocator_settled = False


def settle_allocator() -> bool:
    """Allocate and free one large block with the C allocator, once per process.

    Whether it ran: False where the C library cannot be reached (then nothing changes).
    """
    global _allocator_settled
    if not _allocator_settled:
        try:
            libc = ctypes.CDLL(None)
            libc.malloc.restype = ctypes.c_void_p
            libc.malloc.argtypes = [ctypes.c_size_t]
            libc.free.argtypes = [ctypes.c_void_p]
            libc.free(libc.malloc(SETTLE_BYTES))  # never touched: no page is written
        except (OSError, AttributeError, TypeError):
            return False
        _allocator_settled = True
    return True


def prepare(codec: str, fixture: str, *, decode: bool = True) -> Case:
    """Build the fixture and encode it with the config that fits it.

    With `decode`, also prove the payload decodes. A codec with fallback configs always
    round-trips, since a config can fail on either side (msgpack refuses int keys only
    when unpacking). Raises a SerkitError subclass when the pair cannot run.
    Every harness that times a pair prepares it here, so each settles the allocator first.
    """
    settle_allocator()
    get_codec(codec)  # a missing library fails before the fixture is built
    return prepare_object(codec, fixture, load_granted(fixture), decode=decode)


def load_granted(fixture: str) -> Any:
    """The fixture, built within what the person running the suite allowed (the limits, and
    pickles only with ALLOW_PICKLE_ENV): never what a fixtures file says of itself."""
    allowed = truthy(os.environ.get(ALLOW_PICKLE_ENV))
    with granting(Grant(limits_from_env(), allow_pickle=allowed)):
        return load_fixture(fixture)


def prepare_object(
    codec: str,
    document: str,
    obj: Any,
    *,
    decode: bool = True,
    keep_decoded: bool = False,
    schema: Schema | None = None,
) -> Case:
    """:func:`prepare` for a document already built, e.g. one a user brought.

    `keep_decoded` keeps what the codec gave back (Case.decoded), for a caller that
    checks fidelity on the same round trip it times. A schema codec is bound to `schema`,
    else to the document's own (pinned for a fixture, derived for any other), and times
    the document's typed objects: building them is not timed.
    """
    settle_allocator()
    bound, obj = get_codec(codec).for_document(document, obj, schema)
    start = timeit.default_timer()
    decoded = None
    if decode or keep_decoded or len(bound.configs) > 1:
        trip = bound.round_trip(obj)
        config, payload = trip.config, trip.payload
        dumps_s, loads_s = trip.dumps_s, trip.loads_s
        decoded = trip.decoded if keep_decoded else None
    else:
        config, payload = bound.configs[0], bound.dumps(obj)
        dumps_s, loads_s = timeit.default_timer() - start, None
    elapsed = timeit.default_timer() - start
    return Case(codec, document, config, obj, payload, elapsed, dumps_s, loads_s, decoded, bound)


def pair_schema(codec: str, fixture: str) -> Schema:
    """The schema `codec` runs under on `fixture`: the fixture's, derived or the user's.

    SerkitError when it needs none, is not installed, or no schema fits (or has changed).
    """
    if not registry.spec(codec).needs_schema:
        raise SerkitError(f"{codec} needs no schema")
    schema = fixture_schema(fixture)
    get_codec(codec).with_schema(schema)  # NoSchema where its library cannot express it
    return schema


def schema_number(codec: str, fixture: str) -> int:
    """The hash of the schema `codec` runs under on `fixture`, as asv records it."""
    return hash_number(pair_schema(codec, fixture).sha256)


def per_call_timer(inner_loops: int, extra: Extra | None = None) -> Callable[[], float]:
    """A clock for asv that reads in units of 1/inner_loops s: seconds per call; with
    `extra`, it makes those calls in each sample it times (serkit.suite.canary.Extra)."""
    clock = timeit.default_timer
    if extra is None:
        return lambda: clock() / inner_loops
    make, started = extra.make, False

    def read() -> float:
        nonlocal started
        started = not started
        if not started:  # a sample's end: its extra calls fall inside it, after its own
            make()
        return clock() / inner_loops

    return read


class _PreparedOnCheck:
    """asv's ``skip_params``: a membership test that prepares the pair it is asked about."""

    def __init__(self, bench: CaseBenchmark) -> None:
        self._bench = bench
        self._answers: dict[tuple[Any, ...], bool] = {}

    def __contains__(self, params: object) -> bool:
        key: tuple[Any, ...] = tuple(cast("Iterable[Any]", params))
        if key not in self._answers:
            self._answers[key] = self._bench.prepare_for(*key) is not None
        return self._answers[key]


class CaseBenchmark:
    """Base of every benchmark class over the codec x fixture grid.

    After preparation the instance has `dumps`, `loads`, `obj` and `payload` for its
    pair. A class that times something names it in `operation`; it then also gets
    `inner_loops` and the matching `timer`, and every codec pays the same overhead.
    """

    operation: str | None = None  # "dumps", "loads" or "round_trip" for timed classes
    # What preparation must build: "payload" (fixture, config, encoded payload),
    # "round_trip" (the payload proven to decode), or "nothing" for benchmarks that do
    # their own work and only need the pair to be selected and eligible.
    inputs = "payload"

    params: tuple[list[str], ...] = (codec_names(), fixture_names())
    param_names: tuple[str, ...] = ("codec", "fixture")
    timeout = SLOW_TIMEOUT_S if truthy(os.environ.get(SLOW_ENV)) else TIMEOUT_S

    dumps: Callable[[Any], bytes]
    loads: Callable[[bytes], Any]
    obj: Any
    payload: bytes
    bound: Codec | None = None  # a schema codec as prepared: bound to the document's schema
    inner_loops: int = 1  # calls the body makes, and the timer divides by
    repeat: int  # asv's samples per process, and `rounds` its processes: set on timed classes
    rounds: int
    sample_time: float
    number: int  # asv's; set only for a pair whose preparation was its warm-up
    warmup_time: float
    timer: Callable[[], float]
    _noted: tuple[str, tuple[str, ...]]  # asv's name and parameters of a timed pair

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.operation is not None:  # timed: a few samples in each of `rounds` processes
            cls.repeat = SAMPLES_PER_PROCESS
            cls.sample_time = SAMPLE_TIME_S
            cls.rounds = rounds_from_env()

    def __init__(self) -> None:
        self.skip_params = _PreparedOnCheck(self)

    def teardown(self, *params: Any) -> None:
        """Note this process's samples and their canary readings, for `serkit bench`."""
        folder, clock = notes_folder(), getattr(self, "timer", None)  # timed classes only
        if folder is not None and isinstance(clock, CanaryClock):
            note_canary(folder, *self._noted, clock)

    def prepare_for(self, codec: str, fixture: str, *rest: Any) -> str | None:
        """Prepare the pair; return why it is skipped, or None when it is ready."""
        reason = Selection.from_env().excludes(codec, fixture)
        if reason is None and self.inputs != "nothing":
            reason = self._prepare(codec, fixture, tuple(str(p) for p in (codec, fixture, *rest)))
        if reason is not None:
            print(f"serkit: skipped {codec} x {fixture}: {reason}")
        return reason

    def _prepare(self, codec: str, fixture: str, params: tuple[str, ...]) -> str | None:
        if self.operation is not None and notes_folder() is not None:
            # Timed under `serkit bench`: in the machine's fast state where the run's budget
            # allows, calibration and samples alike.
            wait_before_sampling()
        try:
            case = prepare(codec, fixture, decode=self.inputs == "round_trip")
        except SerkitError as exc:  # not installed, or cannot encode or decode it
            return str(exc)
        self.dumps, self.loads = case.config.dumps, case.config.loads
        self.obj, self.payload, self.bound = case.obj, case.payload, case.bound
        if self.operation is None:
            return None
        best = case.best_call_s(self.operation)
        self.inner_loops = inner_loops_for(best)
        # serkit picks asv's `number`, not asv: asv sizes a sample by the wall clock
        # around it, canary readings and all (about 120 µs here, 1.8x that in the slow
        # state), so a run calibrated in the slow state took 1 body a 0.2 ms sample where
        # another took 5, and a sample of few bodies reads slow (docs/trust.md, "A
        # sample's first call"). A later round keeps the first round's.
        self.number = bodies_per_sample(self.inner_loops, best)
        # asv imports the suite as a package named after its folder (benchmarks.bench_time)
        # and leaves that package out of benchmark names (bench_time.Dumps.time_dumps).
        module = type(self).__module__.partition(".")[2] or type(self).__module__
        name = f"{module}.{type(self).__name__}"
        call_s = case.first_call_s(self.operation) or 0.0
        # One call timed as a sample is: timeit's clock, the collector off.
        warm_call = functools.partial(timeit.timeit, case.operation(self.operation), number=1)
        noted = notes_folder() is not None
        if timed_once(
            name,
            params,
            case.prepare_s,
            call_s,
            self.rounds,
            self.repeat,
            reference_scale,
            warm_call,
        ):
            # One sample, now (serkit.suite.budget); preparing made the call: its warm-up.
            self.number, self.repeat, self.warmup_time = 1, 1, 0.0
        elif case.warmed_up(self.operation):  # see WARMED_CALL_S
            self.number, self.warmup_time = 1, 0.0
        elif (warmup := warmup_from_env()) is not None:
            self.warmup_time = warmup
            if noted:
                # Under `serkit bench`, the warm-up is the pair's calls alone, made here.
                # asv's is whole samples, each with the gate, the canaries and a note
                # around it: calls were about half of its 20 ms for a call of 1.4 µs, 80 %
                # for one of 0.3 ms (docs/trust.md).
                warm_up(case.operation(self.operation), warmup)
                self.warmup_time = 0.0
        # Under `serkit bench`, the canaries leave the caches cold for a sample's first
        # call: one untimed call after them warms them again, unless a call is too long
        # to care.
        warmed = noted and call_s < LONG_CALL_S
        extra = None
        if (injected := injected_from_env()) is not None:
            calls, share = injected_sampling(self.inner_loops, self.number, injected)
            call = case.operation(self.operation)
            sample_calls = self.inner_loops * self.number
            timed_call = functools.partial(_calls_ns, call, sample_calls, warmed)
            loops = spin_loops_for(share, timed_call, spin_readings(best)) if share else 0
            # No work to add (an A/A arm): nothing added to the timed path.
            extra = Extra(call, calls, loops) if calls or loops else None
        self.timer = per_call_timer(self.inner_loops, extra)
        if noted:
            # Each sample keeps the canary readings taken around it (serkit.suite.canary):
            # the machine's speed state when it was taken.
            warm = case.operation(self.operation) if warmed else None
            gate = sample_gate()
            self.timer = CanaryClock(
                self.inner_loops,
                keep=self.repeat,
                warm=warm,
                extra=extra,
                gate=gate.wait if gate is not None else None,
            )
            self._noted = (f"{name}.time_{self.operation}", tuple(repr(p) for p in params))
        return None
