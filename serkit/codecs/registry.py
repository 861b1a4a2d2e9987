"""The codec registry: one declaration per codec, imported lazily, read everywhere.

A :class:`CodecSpec` declares the facts that never change (id, format, library) and
how to bind the library once it is imported. :func:`get_codec` binds it and returns a
:class:`Codec`, which adds what can only be known at run time: the installed version
and the implementation that actually loaded.
"""

from __future__ import annotations

import importlib.machinery
import platform
import sys
import time
import types
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from types import MappingProxyType
from typing import Any, Callable, NamedTuple

from serkit.errors import (
    CodecConflict,
    CodecNotInstalled,
    DecodeError,
    EncodeError,
    SerkitError,
    UnknownCodec,
)

ENTRY_POINT_GROUP = "serkit.codecs"
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


@dataclass(frozen=True)
class Codec:
    """A bound codec. `dumps` always returns bytes; text codecs encode UTF-8."""

    name: str
    format: str
    library: str
    version: str
    implementation: str  # "c" (any compiled extension) or "python"
    configs: tuple[Config, ...]
    summary: str = ""

    def dumps(self, obj: Any) -> bytes:
        """Encode with the first config that accepts `obj`; wrap the library's error."""
        try:
            return self._first_accepting("dumps", obj)  # type: ignore[no-any-return]
        except Exception as exc:
            raise EncodeError(
                f"{self.name} cannot encode {type(obj).__name__}: {_brief(exc)}"
            ) from exc

    def loads(self, data: bytes) -> Any:
        """Decode with the first config that accepts `data`; wrap the library's error."""
        try:
            return self._first_accepting("loads", data)
        except Exception as exc:
            raise DecodeError(f"{self.name} cannot decode its input: {_brief(exc)}") from exc

    def _first_accepting(self, operation: str, arg: Any) -> Any:
        """Call `operation` of each config in turn; re-raise the base config's error if all fail."""
        errors: list[Exception] = []
        for config in self.configs:
            try:
                return getattr(config, operation)(arg)
            except Exception as exc:
                errors.append(exc)
        raise errors[0]

    def config_for(self, obj: Any) -> Config:
        """The config to time on `obj`: the first that round-trips it without raising."""
        return self.round_trip(obj).config

    def round_trip(self, obj: Any) -> RoundTrip:
        """Encode and decode `obj` with the first config that accepts it.

        Raises EncodeError when no config can encode `obj` (the pair is unsupported),
        DecodeError when one encodes it but none decodes its own output.
        """
        encode_error: BaseException | None = None
        decode_error: BaseException | None = None
        clock = time.perf_counter
        for config in self.configs:
            start = clock()
            try:
                payload = config.dumps(obj)
            except Exception as exc:
                encode_error = encode_error or exc
                continue
            encoded = clock()
            try:
                decoded = config.loads(payload)
            except Exception as exc:
                decode_error = decode_error or exc
                continue
            return RoundTrip(config, payload, decoded, encoded - start, clock() - encoded)
        if decode_error is not None:
            raise DecodeError(
                f"{self.name} cannot decode its own output: {_brief(decode_error)}"
            ) from decode_error
        raise EncodeError(
            f"{self.name} cannot encode {type(obj).__name__}: {_brief(encode_error)}"
        ) from encode_error


class RoundTrip(NamedTuple):
    config: Config
    payload: bytes
    decoded: Any
    # How long the config's dumps and loads took, as first calls in the process (cold).
    dumps_s: float = 0.0
    loads_s: float = 0.0


def _brief(exc: BaseException | None, limit: int = 120) -> str:
    """A library's error message, cut short: some repr the whole object they refused."""
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "unknown error"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_compiled(obj: object) -> bool:
    """True when `obj` is implemented in a compiled extension rather than Python code."""
    if obj is None:
        return False
    if isinstance(obj, types.BuiltinFunctionType):
        return True
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
    return origin == "built-in" or origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def _installed_version(library: str) -> str:
    if library == STDLIB:
        return platform.python_version()
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        raise CodecNotInstalled(f"{library} is not installed (pip install {library})") from None


def _entry_points() -> Iterable[metadata.EntryPoint]:
    if sys.version_info >= (3, 10):
        return metadata.entry_points(group=ENTRY_POINT_GROUP)
    return metadata.entry_points().get(ENTRY_POINT_GROUP, ())


class CodecRegistry:
    """Codec specs by id. Built-ins and entry points are read on first use."""

    def __init__(self) -> None:
        self._specs: dict[str, CodecSpec] = {}
        self._codecs: dict[str, Codec] = {}
        self._loaded = False
        self.specs: Mapping[str, CodecSpec] = MappingProxyType(self._specs)

    def register(self, spec: CodecSpec, *, clobber: bool = False) -> None:
        """Add a codec; refuse to replace an existing id unless `clobber` is set."""
        self._load()  # built-ins first, so that a new codec cannot take their ids silently
        if spec.name in self._specs and not clobber:
            raise CodecConflict(f"codec {spec.name!r} is already registered")
        self._specs[spec.name] = spec
        self._codecs.pop(spec.name, None)

    def names(self) -> list[str]:
        """Every known codec id, sorted, installed or not."""
        self._load()
        return sorted(self._specs)

    def spec(self, name: str) -> CodecSpec:
        self._load()
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownCodec(
                f"unknown codec {name!r}; known codecs: {', '.join(sorted(self._specs))}"
            ) from None

    def check(self, names: Iterable[str]) -> list[str]:
        """The ids in order, repeats dropped; UnknownCodec for a typo, before any work starts."""
        chosen = list(dict.fromkeys(names))
        for name in chosen:
            self.spec(name)
        return chosen

    def get(self, name: str) -> Codec:
        """Import and bind a codec. Raises CodecNotInstalled when its library is missing."""
        if name in self._codecs:
            return self._codecs[name]
        spec = self.spec(name)
        try:
            binding = spec.bind()
        except ImportError as exc:
            raise CodecNotInstalled(
                f"{spec.library} is not installed (pip install {spec.library}): {exc}"
            ) from exc
        except SerkitError:
            raise
        except Exception as exc:  # a plugin's bug must not look like a serkit crash
            raise SerkitError(f"codec {name!r} failed to load: {_brief(exc)}") from exc
        # Nothing declared proves nothing: only named, compiled parts make a C codec.
        parts = binding.native_parts
        native = bool(parts) and all(is_compiled(part) for part in parts)
        codec = Codec(
            name=spec.name,
            format=spec.format,
            library=spec.library,
            version=_installed_version(spec.library),
            implementation="c" if native else "python",
            configs=binding.configs,
            summary=spec.summary,
        )
        self._codecs[name] = codec
        return codec

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        from serkit.codecs.builtin import BUILTIN_CODECS  # deferred: it imports this module

        for spec in BUILTIN_CODECS:
            self.register(spec)
        for entry_point in _entry_points():
            # A broken plugin must not take the built-in codecs down with it.
            try:
                loaded = entry_point.load()
                for spec in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
                    if not isinstance(spec, CodecSpec):
                        raise TypeError(f"expected a CodecSpec, got {type(spec).__name__}")
                    self.register(spec)
            except Exception as exc:
                warnings.warn(
                    f"serkit: skipped codec entry point {entry_point.name!r} "
                    f"({entry_point.value}): {exc}",
                    stacklevel=2,
                )


registry = CodecRegistry()
codec_names = registry.names
get_codec = registry.get
check_codecs = registry.check
register_codec = registry.register
