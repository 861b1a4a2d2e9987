"""serkit: a reproducible, cross-machine benchmark suite for Python serializers.

The names below are loaded on first use (PEP 562): `import serkit.cli` for `serkit --help`
does not pay for the codec registry, the fixtures or the installed metadata.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from serkit.codecs.registry import (
        Binding,
        Codec,
        CodecSpec,
        Config,
        codec_names,
        register_codec,
        registry,
    )
    from serkit.codecs.registry import (
        get_codec as get_codec,  # public, though not in __all__
    )
    from serkit.errors import (
        CodecConflict,
        CodecNotInstalled,
        DecodeError,
        EncodeError,
        FixtureSourceError,
        SerkitError,
        UnknownCodec,
        UnknownFixture,
    )
    from serkit.inputs.fixtures import (
        FIXTURES,
        Fixture,
        fixture_hash,
        fixture_names,
        get_fixture,
        load_fixture,
    )

    __version__: str

_HOMES = {
    "serkit.codecs.registry": (
        "Binding",
        "Codec",
        "CodecSpec",
        "Config",
        "codec_names",
        "get_codec",
        "register_codec",
        "registry",
    ),
    "serkit.errors": (
        "CodecConflict",
        "CodecNotInstalled",
        "DecodeError",
        "EncodeError",
        "FixtureSourceError",
        "SerkitError",
        "UnknownCodec",
        "UnknownFixture",
    ),
    "serkit.inputs.fixtures": (
        "FIXTURES",
        "Fixture",
        "fixture_hash",
        "fixture_names",
        "get_fixture",
        "load_fixture",
    ),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def _version() -> str:
    from importlib import metadata

    try:  # declared once, in pyproject.toml
        return metadata.version("serkit")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name in _HOME:
        value = getattr(importlib.import_module(_HOME[name]), name)
    else:
        raise AttributeError(f"module 'serkit' has no attribute {name!r}")
    globals()[name] = value  # looked up once
    return value


__all__ = [
    "FIXTURES",
    "Binding",
    "Codec",
    "CodecConflict",
    "CodecNotInstalled",
    "CodecSpec",
    "Config",
    "DecodeError",
    "EncodeError",
    "Fixture",
    "FixtureSourceError",
    "SerkitError",
    "UnknownCodec",
    "UnknownFixture",
    "__version__",
    "codec_names",
    "fixture_hash",
    "fixture_names",
    "get_fixture",
    "load_fixture",
    "register_codec",
    "registry",
]
