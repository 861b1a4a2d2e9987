"""Validation as a measured property: what each codec's loads does with bytes that break its schema.

Every schema codec is bound to the schema derived from :func:`serkit.inputs.probes.schema_base`.
Each validation probe is that document broken the same way in every record (a string where
an int belongs, a required field left out, a field added); its bytes are what the same
library writes for the broken document under the broken document's own schema, as a peer
with other types would send them. The codec then decodes them with the real schema:

- *rejected*: its loads raised;
- *passed through*: it gave back the broken document as it was (every schemaless codec does,
  having no schema to check);
- *accepted, changed*: it gave back something else without a word (a string coerced to an
  int, an extra field dropped, a missing field filled in).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from serkit.checks.fidelity import (
    ACCEPTED_CHANGED,
    PASSED_THROUGH,
    REJECTED,
    VALIDATION,
    FidelityResult,
    check_document,
    compare,
    describe,
    document_kind,
    failed,
)
from serkit.codecs.registry import get_codec
from serkit.errors import SerkitError
from serkit.inputs.probes import VALIDATION_PROBES, schema_base
from serkit.schemas.derive import derive


def check_validation(codec_name: str, probe: str) -> FidelityResult:
    """One codec's loads on validation probe `probe`'s bytes."""
    broken = VALIDATION_PROBES[probe].build()
    try:
        codec = get_codec(codec_name)
        if not codec.needs_schema:  # no schema to break: its own round trip says the rest
            trip = codec.round_trip(broken)
            payload, loads = trip.payload, trip.config.loads
        else:
            writer, typed = codec.for_document(probe, broken, derive(broken))
            payload, loads = writer.dumps(typed), codec.with_schema(derive(schema_base())).loads
    except SerkitError as exc:
        return failed(codec_name, probe, exc)
    reader = codec.with_schema(derive(schema_base())) if codec.needs_schema else codec
    facts: dict[str, Any] = {
        "implementation": codec.implementation,
        "version": codec.version,
        "bytes": len(payload),
    }
    if reader.schema is not None:
        facts["schema_sha256"] = reader.schema.sha256
    try:
        decoded = reader.to_plain(loads(payload))
    except Exception as exc:  # the library's refusal, or to_plain meeting what it let in
        detail = f"{type(exc).__name__}: {exc}"[:160]
        return FidelityResult(codec_name, probe, REJECTED, detail=detail, **facts)
    differences = compare(broken, decoded)
    if not differences:
        why = "" if codec.needs_schema else "no schema to check it against"
        return FidelityResult(codec_name, probe, PASSED_THROUGH, detail=why, **facts)
    return FidelityResult(
        codec_name, probe, ACCEPTED_CHANGED, differences, detail=describe(differences), **facts
    )


def check_any(document: str, codecs: Iterable[str]) -> Iterator[FidelityResult]:
    """Every codec on `document`: a validation probe's outcomes, else the round trip's status."""
    if document_kind(document) != VALIDATION:
        yield from check_document(document, codecs)
        return
    for name in codecs:
        yield check_validation(name, document)
