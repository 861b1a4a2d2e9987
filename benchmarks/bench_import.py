"""Import time of each codec's library, in a fresh interpreter per sample."""

from __future__ import annotations

import importlib.util

from serkit.codecs.registry import codec_names, registry
from serkit.suite.cases import Selection


class ImportTime:
    params = (codec_names(),)
    param_names = ("codec",)
    timeout = 120

    # timeraw times a subprocess, not this process, so `setup` costs it nothing.
    def setup(self, codec: str) -> None:
        module = registry.spec(codec).module
        reason = Selection.from_env().excludes_codec(codec)
        if reason is None and not module:
            reason = f"codec {codec} names no module to import"
        if reason is None and importlib.util.find_spec(module.split(".")[0]) is None:
            reason = f"{module} is not installed"
        if reason is not None:
            raise NotImplementedError(reason)

    def timeraw_import(self, codec: str) -> str:
        return f"import {registry.spec(codec).module}"
