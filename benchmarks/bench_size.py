"""Encoded size of every fixture with every codec: deterministic, so a track, not a timing."""

from __future__ import annotations

import serkit

FIXTURES = [name for name in serkit.fixture_names() if not serkit.get_fixture(name).slow]


class EncodedSize:
    params = (serkit.codec_names(), FIXTURES)
    param_names = ("codec", "fixture")
    unit = "bytes"
    timeout = 300

    def setup(self, codec: str, fixture: str) -> None:
        try:
            # What is not installed or not supported is skipped, never missing.
            self.payload = serkit.get_codec(codec).dumps(serkit.load_fixture(fixture))
        except serkit.SerkitError as exc:
            raise NotImplementedError(str(exc)) from exc

    def track_bytes(self, codec: str, fixture: str) -> int:
        return len(self.payload)
