"""serkit: a reproducible, cross-machine benchmark suite for Python serializers."""

from importlib import metadata as _metadata

from serkit.codecs.registry import (
    Binding,
    Codec,
    CodecSpec,
    Config,
    codec_names,
    get_codec,
    register_codec,
    registry,
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

try:  # declared once, in pyproject.toml
    __version__ = _metadata.version("serkit")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

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
    "get_codec",
    "get_fixture",
    "load_fixture",
    "register_codec",
    "registry",
]
