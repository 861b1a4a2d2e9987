"""serkit: a reproducible, cross-machine benchmark suite for Python serializers."""

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

__version__ = "0.1.0"

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
