"""One (codec, fixture) pair made ready to time, as every harness that times one makes it
(the asv suite, `serkit agreement`, `validate`, `try`, the replication): its document built
within what the person running it allowed, its config chosen, its payload proven to decode,
and the calls inside one timed body sized to its speed."""

from __future__ import annotations

import ctypes
import os
import timeit
from dataclasses import dataclass, field
from typing import Any, Callable

from serkit.codecs.registry import (
    Codec,
    Config,
    get_codec,
    registry,
)
from serkit.errors import SerkitError
from serkit.schemas.types import Schema, hash_number
from serkit.suite.cases import ALLOW_PICKLE_ENV, SAMPLE_TIME_S, truthy

# How long one timed body should last; calls shorter than this are repeated inside it.
INNER_TARGET_S = 20e-6
MAX_INNER_LOOPS = 1000
LONG_CALL_S = 1e-3  # a pair this slow to prepare needs no inner loop
# asv's first call of a benchmark is its warm-up, and for a call this long (ten times
# asv's 10 ms `sample_time`) asv then picks number = 1. Preparing the pair has already
# made that call, so such a pair is timed with number = 1 and no second warm-up.
WARMED_CALL_S = 0.1


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
    # The fixtures and their readers are imported here, not at the top: a timed process of
    # `serkit try`'s prepares a user's document and never loads a fixture (about 20 ms).
    from serkit.inputs.fixtures import load_fixture
    from serkit.inputs.limits import Grant, granting, limits_from_env

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
    from serkit.schemas.pinned import fixture_schema  # see load_granted

    schema = fixture_schema(fixture)
    get_codec(codec).with_schema(schema)  # NoSchema where its library cannot express it
    return schema


def schema_number(codec: str, fixture: str) -> int:
    """The hash of the schema `codec` runs under on `fixture`, as asv records it."""
    return hash_number(pair_schema(codec, fixture).sha256)
