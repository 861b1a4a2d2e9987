"""Encoded sizes of fixtures, with a fidelity flag: the first measurement serkit makes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from .errors import CodecNotInstalled, DecodeError, EncodeError
from .fixtures import content_hash, load_fixture
from .registry import get_codec

# Statuses of one (codec, fixture) cell.
EXACT = "exact"  # decodes to an object of identical types and values
LOSSY = "lossy"  # decodes, but to something else (str keys, lists for tuples, …)
UNSUPPORTED = "unsupported"  # the codec refuses to encode the fixture
ERROR = "error"  # the codec encodes the fixture but cannot decode its own output
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class SizeResult:
    codec: str
    fixture: str
    status: str
    bytes: int | None  # None unless encoded
    options: str  # the fallback options used, "" for the codec's base call
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _same(original_hash: str, decoded: Any) -> bool:
    try:
        return content_hash(decoded) == original_hash
    except TypeError:  # decoded into a type the hash does not know: not the original
        return False


def measure_fixture(fixture: str, codecs: Iterable[str]) -> Iterator[SizeResult]:
    """Encode fixture `fixture` with every codec in `codecs` and check the round trip."""
    obj = load_fixture(fixture)
    original = content_hash(obj)
    for name in codecs:
        try:
            codec = get_codec(name)
            trip = codec.round_trip(obj)
        except CodecNotInstalled as exc:
            yield SizeResult(name, fixture, NOT_INSTALLED, None, "", str(exc))
            continue
        except EncodeError as exc:
            yield SizeResult(name, fixture, UNSUPPORTED, None, "", str(exc))
            continue
        except DecodeError as exc:
            yield SizeResult(name, fixture, ERROR, None, "", str(exc))
            continue
        status = EXACT if _same(original, trip.decoded) else LOSSY
        yield SizeResult(name, fixture, status, len(trip.payload), trip.config.options)
