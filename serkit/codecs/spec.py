"""What a codec declares: the facts that never change, and how to bind its library.

The built-in codecs (serkit.codecs.builtin) and third-party ones (the `serkit.codecs`
entry-point group) are written against these types; serkit.codecs.registry binds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from serkit.schemas.types import Schema

FORMATS = ("json", "msgpack", "cbor", "yaml", "pickle", "marshal", "bson", "protobuf", "avro")
STDLIB = "stdlib"  # the `library` of codecs that ship with Python
# Where the schema codecs (and bson beside them) add information in a run that names no
# fixtures: a record-shaped document with nested records, optional fields and nulls. One
# fixture keeps the quick run's new pairs to a handful; SERKIT_BENCH_FIXTURES names others.
RECORD_FIXTURES = ("twitter",)

Dumps = Callable[[Any], bytes]
Loads = Callable[[bytes], Any]


@dataclass(frozen=True)
class Config:
    """One way of calling a library. Benchmarks time exactly these two callables."""

    dumps: Dumps
    loads: Loads
    # Options that differ from the codec's base call, e.g. "option=OPT_NON_STR_KEYS".
    # Empty for the base call. Shown wherever a result used this config.
    options: str = ""


def _same(obj: Any) -> Any:
    return obj


@dataclass(frozen=True)
class SchemaBinding:
    """What a schema codec builds from one schema: its calls, and the way in and out of its types.

    `configs` time typed objects to bytes and back; `to_typed` builds those objects from
    the plain document once, when a pair is prepared; `to_plain` turns what `loads` gave
    back into plain data again, for fidelity.
    """

    configs: tuple[Config, ...]
    to_typed: Callable[[Any], Any] = _same
    to_plain: Callable[[Any], Any] = _same


@dataclass(frozen=True)
class Binding:
    """What a spec's `bind` returns once it has imported its library."""

    # The base config first; later ones are fallbacks for data the base refuses,
    # used only where a user of the library would need them (see Codec.config_for).
    # A schema codec has none until it is given a schema (`for_schema`).
    configs: tuple[Config, ...]
    # Objects that must all be compiled for the codec to count as a C implementation.
    native_parts: tuple[object, ...]
    # A schema codec's types, built from a document's schema; raises NoSchema when the
    # library cannot express that schema. None for a codec that needs no schema.
    for_schema: Callable[[Schema], SchemaBinding] | None = None


@dataclass(frozen=True)
class DirectCall:
    """The plain library call a user would write, as source, for the overhead benchmark.

    `setup` binds names once (imports, hooks); `dumps` and `loads` are expressions of
    `obj` and `payload` that serkit times in place of the adapter's callables.
    """

    setup: str
    dumps: str
    loads: str


@dataclass(frozen=True)
class CodecSpec:
    """The declared, install-independent facts about a codec."""

    name: str
    format: str
    library: str  # distribution name, for the version and the install hint
    bind: Callable[[], Binding]  # imports the library; raises ImportError when missing
    summary: str = ""  # the base call, in words a user of the library would recognise
    module: str = ""  # what `import` loads the library as, for the import-time benchmark
    # Why `loads` must never see untrusted bytes (it runs code, it can crash Python);
    # "" when no hazard is known. Shown by `serkit list` and `serkit fidelity`.
    untrusted_input_hazard: str = ""
    # The same work without serkit's adapter, timed beside it by bench_overhead.
    direct: DirectCall | None = None
    # What the timed call does, beyond the library's plain call, that changes its speed
    # (options, a reused encoder object); "" for the plain call. Shown with its timings.
    variant: str = ""
    # Pure Python by design, so a "python" implementation is expected, not a fallback.
    pure_python: bool = False
    # Encodes typed objects built from a schema derived from the document (Binding.for_schema).
    needs_schema: bool = False
    # Distributions its calls import beside `library` (cattrs-orjson: orjson): the matrix
    # installs them in that library's environments, at their newest release, unmeasured.
    needs: tuple[str, ...] = ()
    # The fixtures it adds information on: a run that names no fixtures times it on these
    # only (None: on every fixture). Schema codecs name record-shaped ones, few, so that
    # the quick run stays cheap; SERKIT_BENCH_FIXTURES times them on any.
    fixtures: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"codec {self.name!r}: format must be one of {FORMATS}")

    @property
    def safe_for_untrusted_input(self) -> bool:
        return not self.untrusted_input_hazard
