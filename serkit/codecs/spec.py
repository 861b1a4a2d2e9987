"""What a codec declares: the facts that never change, and how to bind its library.

The built-in codecs (serkit.codecs.builtin) and third-party ones (the `serkit.codecs`
entry-point group) are written against these types; serkit.codecs.registry binds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

FORMATS = ("json", "msgpack", "cbor", "yaml", "pickle", "marshal")
STDLIB = "stdlib"  # the `library` of codecs that ship with Python

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


@dataclass(frozen=True)
class Binding:
    """What a spec's `bind` returns once it has imported its library."""

    # The base config first; later ones are fallbacks for data the base refuses,
    # used only where a user of the library would need them (see Codec.config_for).
    configs: tuple[Config, ...]
    # Objects that must all be compiled for the codec to count as a C implementation.
    native_parts: tuple[object, ...]


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

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"codec {self.name!r}: format must be one of {FORMATS}")

    @property
    def safe_for_untrusted_input(self) -> bool:
        return not self.untrusted_input_hazard
