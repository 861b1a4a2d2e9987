"""Which distributions the matrix installs, read from the codecs' own declarations.

Each codec names its library (CodecSpec.library), and what else its calls import
(CodecSpec.needs: cattrs-orjson and mashumaro-orjson call orjson); a schema codec needs
the schema inference too (INFERENCE_LIBRARY, genson). So the matrix's libraries are:

- *measured*: the library of some codec (the standard library's aside). Each release it
  keeps gets environments of its own, which time that library's codecs only;
- *companions*: what a measured library's codecs need beside it. An environment of that
  library installs each companion at its newest release for the environment's Python
  and platform, and times none of the companion's own codecs. genson is only ever a
  companion, so only its newest release is kept (serkit.run.releases).

Only serkit's own codecs count (`builtin_specs`): a plugin installed here cannot change
what asv.conf.json holds.
"""

from __future__ import annotations

from serkit.codecs.registry import builtin_specs, registry
from serkit.codecs.spec import STDLIB
from serkit.schemas.derive import INFERENCE_LIBRARY


def measured_libraries() -> tuple[str, ...]:
    """Every codec library but the standard library, in the registry's order."""
    found = (spec.library for spec in builtin_specs() if spec.library != STDLIB)
    return tuple(dict.fromkeys(found))


def companions(library: str) -> tuple[str, ...]:
    """What an environment of `library` installs beside it for its codecs to run, sorted."""
    found: set[str] = set()
    for spec in builtin_specs():
        if spec.library == library:
            found.update(spec.needs)
            if spec.needs_schema:
                found.add(INFERENCE_LIBRARY)
    found.discard(library)
    return tuple(sorted(found))


def codec_libraries() -> dict[str, tuple[str, ...]]:
    """What each registered codec runs with: its library, then its companions; what a run
    records in its results (serkit.results.asv_file.CODECS_KEY) for comparisons to pair by."""
    registry.names()  # the specs, plugins among them, are read on first use
    return {
        name: (spec.library, *(() if spec.library == STDLIB else companions(spec.library)))
        for name, spec in registry.specs.items()
    }


def matrix_libraries() -> dict[str, bool]:
    """Every distribution the matrix installs, measured ones first: name -> measured."""
    measured = measured_libraries()
    out = dict.fromkeys(measured, True)
    for library in measured:
        for companion in companions(library):
            out.setdefault(companion, False)
    return out


def needed_by(library: str) -> list[str]:
    """The codecs that make `library` part of the matrix: its own, else those needing it."""
    specs = builtin_specs()
    own = [spec.name for spec in specs if spec.library == library]
    if own:
        return own
    return [
        spec.name
        for spec in specs
        if library in spec.needs or (library == INFERENCE_LIBRARY and spec.needs_schema)
    ]
