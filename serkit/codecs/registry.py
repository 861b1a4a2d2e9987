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
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from serkit.codecs.builtin import BUILTIN_CODECS
from serkit.codecs.spec import (
    FORMATS,
    STDLIB,
    Binding,
    CodecSpec,
    Config,
    DirectCall,
    Dumps,
    Loads,
    SchemaBinding,
)
from serkit.codecs.typed import TYPED_CODECS
from serkit.errors import (
    CodecConflict,
    CodecNotInstalled,
    DecodeError,
    EncodeError,
    NoSchema,
    SerkitError,
    UnknownCodec,
)
from serkit.schemas.types import Schema

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "serkit.codecs"

# The declarations' types, importable from here too: plugins written before
# serkit.codecs.spec existed import them from the registry.
__all__ = [
    "FORMATS",
    "STDLIB",
    "Binding",
    "Codec",
    "CodecFacts",
    "CodecRegistry",
    "CodecSpec",
    "Config",
    "DirectCall",
    "Dumps",
    "Loads",
    "RoundTrip",
    "SchemaBinding",
    "builtin_specs",
    "codec_names",
    "default_fixtures",
    "get_codec",
    "is_compiled",
    "register_codec",
    "registry",
    "schema_codec_names",
]


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
    # A schema codec: its configs come from `with_schema`, and time typed objects.
    needs_schema: bool = False
    schema: Schema | None = None  # the schema this codec is bound to, once it is
    to_typed: Callable[[Any], Any] = field(default=lambda obj: obj, repr=False, compare=False)
    to_plain: Callable[[Any], Any] = field(default=lambda obj: obj, repr=False, compare=False)
    for_schema: Callable[[Schema], SchemaBinding] | None = field(
        default=None, repr=False, compare=False
    )

    def with_schema(self, schema: Schema) -> Codec:
        """This codec bound to `schema`: its calls time that schema's typed objects.

        NoSchema when the library cannot express the schema; the same codec unchanged for
        a codec that needs no schema. Built once per schema (classes, descriptors) and kept.
        """
        if not self.needs_schema or self.for_schema is None:
            return self
        key = (self.name, self.version, schema.sha256)
        if key not in _SCHEMA_BOUND:
            try:
                built = self.for_schema(schema)
            except SerkitError:
                raise
            except Exception as exc:  # a library refusing a type it cannot build
                raise NoSchema(f"{self.name} cannot build types for it: {_brief(exc)}") from exc
            _SCHEMA_BOUND[key] = replace(
                self,
                configs=built.configs,
                schema=schema,
                to_typed=built.to_typed,
                to_plain=built.to_plain,
            )
        return _SCHEMA_BOUND[key]

    def for_document(
        self, document: str, obj: Any, schema: Schema | None = None
    ) -> tuple[Codec, Any]:
        """This codec bound to the document's schema, and the document as its typed objects.

        The schema is `schema`, else the document's own: a fixture's pinned one, any other
        derived from `obj`. A codec that needs no schema gives back itself and `obj`.
        NoSchema when no schema fits; EncodeError when the types refuse a value.
        """
        if not self.needs_schema:
            return self, obj
        if schema is None:
            # Here, not at the top: the pinned schemas read the fixtures (about 20 ms of
            # imports), which a timed process of `serkit try`'s, given its schema, never needs.
            from serkit.schemas.pinned import schema_for

            schema = schema_for(document, obj)
        bound = self.with_schema(schema)
        try:
            return bound, bound.to_typed(obj)
        except Exception as exc:  # a value its types cannot hold
            raise EncodeError(f"{self.name} cannot build its typed objects: {_brief(exc)}") from exc

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
        self._check_bound()
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
        self._check_bound()
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

    def _check_bound(self) -> None:
        if self.needs_schema and self.schema is None:
            raise NoSchema(f"{self.name} encodes typed objects: bind it to a schema first")


# Schema codecs bound to a schema, by (codec, version, schema sha256): building a
# pydantic model or a protobuf descriptor takes milliseconds, a document's calls microseconds.
_SCHEMA_BOUND: dict[tuple[str, str, str], Codec] = {}


@dataclass(frozen=True)
class CodecFacts:
    """What is known of a codec whether or not its library imports: for listings and reports."""

    spec: CodecSpec
    codec: Codec | None  # None when the library is missing or failed to bind
    reason: str = ""  # why `codec` is None

    @property
    def version(self) -> str | None:
        return self.codec.version if self.codec else None

    @property
    def implementation(self) -> str | None:
        return self.codec.implementation if self.codec else None


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


def bind_spec(spec: CodecSpec, version: str | None = None) -> Codec:
    """`spec` bound: its library imported, its configs made, and its installed version,
    unless `version` is given (a timed process of `serkit try`'s is given its parent's)."""
    try:
        binding = spec.bind()
    except ImportError as exc:
        raise CodecNotInstalled(
            f"{spec.library} is not installed (pip install {spec.library}): {exc}"
        ) from exc
    except SerkitError:
        raise
    except Exception as exc:  # a plugin's bug must not look like a serkit crash
        raise SerkitError(f"codec {spec.name!r} failed to load: {_brief(exc)}") from exc
    # Nothing declared proves nothing: only named, compiled parts make a C codec.
    parts = binding.native_parts
    native = bool(parts) and all(is_compiled(part) for part in parts)
    return Codec(
        name=spec.name,
        format=spec.format,
        library=spec.library,
        version=version if version is not None else _installed_version(spec.library),
        implementation="c" if native else "python",
        configs=binding.configs,
        summary=spec.summary,
        needs_schema=spec.needs_schema,
        for_schema=binding.for_schema,
    )


def _installed_version(library: str) -> str:
    if library == STDLIB:
        return platform.python_version()
    from importlib import metadata  # here, not at the top: see _entry_points

    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        raise CodecNotInstalled(f"{library} is not installed (pip install {library})") from None


def _entry_points() -> Iterable[EntryPoint]:
    # Imported here, not at the top (about 25 ms): a timed process of `serkit try`'s binds
    # one built-in codec, given its version, and reads neither plugins nor versions.
    from importlib import metadata

    if sys.version_info >= (3, 10):
        return metadata.entry_points(group=ENTRY_POINT_GROUP)
    return metadata.entry_points().get(ENTRY_POINT_GROUP, ())


class CodecRegistry:
    """Codec specs by id. Built-ins and entry points are read on first use."""

    def __init__(self) -> None:
        self._specs: dict[str, CodecSpec] = {}
        self._codecs: dict[str, Codec] = {}
        self._loaded = False
        self._view: Mapping[str, CodecSpec] = MappingProxyType(self._specs)

    @property
    def specs(self) -> Mapping[str, CodecSpec]:
        """Every known codec's spec by id, read on first use: a reader that came first
        would otherwise find none, and call pickle safe on untrusted bytes."""
        self._load()
        return self._view

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

    def schema_names(self) -> list[str]:
        """The codec ids that run under a schema (CodecSpec.needs_schema), sorted."""
        return [name for name in self.names() if self.spec(name).needs_schema]

    def spec(self, name: str) -> CodecSpec:
        self._load()
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownCodec(
                f"unknown codec {name!r}; known codecs: {', '.join(sorted(self._specs))}"
            ) from None

    def facts(self, name: str) -> CodecFacts:
        """The codec's declared facts and, if it binds, its run-time ones; never raises for a
        codec that is known but not installed, so one broken codec cannot hide the others."""
        spec = self.spec(name)
        try:
            return CodecFacts(spec, self.get(name))
        except SerkitError as exc:
            return CodecFacts(spec, None, str(exc))

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
        codec = bind_spec(self.spec(name))
        self._codecs[name] = codec
        return codec

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for spec in builtin_specs():
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


def builtin_specs() -> tuple[CodecSpec, ...]:
    """serkit's own codecs, without any plugin's: what the matrix installs is decided by
    these alone, so that a plugin installed here cannot change asv.conf.json."""
    return (*BUILTIN_CODECS, *TYPED_CODECS)


registry = CodecRegistry()
codec_names = registry.names
schema_codec_names = registry.schema_names
get_codec = registry.get
check_codecs = registry.check
register_codec = registry.register


def unsafe_on_untrusted_bytes(codec: str) -> bool:
    """Whether the codec's entry says its loads must never see untrusted bytes (pickle,
    marshal: they run code or crash the interpreter); a codec this serkit does not know
    (in another serkit's results) is not said to be."""
    spec = registry.specs.get(codec)
    return spec is not None and not spec.safe_for_untrusted_input


def default_fixtures(codec: str) -> tuple[str, ...] | None:
    """The fixtures a run that names none times `codec` on, as its spec declares them.

    None: every fixture a default run times (the slow ones only when asked); a tuple: only
    those, and () for none, so the codec runs only where a run names fixtures. The run
    layer builds its selection of (codec, fixture) pairs from this; UnknownCodec for a typo.
    """
    return registry.spec(codec).fixtures
