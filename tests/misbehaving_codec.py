"""A codec whose `loads` crashes or hangs on some invalid input: for the hostile-run tests.

The tests install it as a `serkit.codecs` entry point on the worker's PYTHONPATH, the
way any third-party codec arrives, so no test hook lives in serkit itself. Valid JSON
always decodes; what invalid input does depends only on its bytes (see `misbehaviour`),
so a test can predict every payload's outcome.
"""

from __future__ import annotations

import ctypes
import json
import os
import zlib
from typing import Any

from serkit import Binding, CodecSpec, Config

ABORT, SEGFAULT, HANG, RAISE = "abort", "segfault", "hang", "raise"


def misbehaviour(data: bytes) -> str:
    """What `loads` does with bytes that are not valid JSON: one in ten of each failure."""
    bucket = zlib.crc32(data) % 10
    return {0: ABORT, 1: SEGFAULT, 2: HANG}.get(bucket, RAISE)


def valid_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: JSONTestSuite's deepest arrays
        return False
    return True


def loads(data: bytes) -> Any:
    if valid_json(data):
        return json.loads(data)
    action = misbehaviour(data)
    if action == ABORT:
        os.abort()
    if action == SEGFAULT:
        ctypes.string_at(0)  # reads address 0
    if action == HANG:
        while True:  # busy, never returns: only the parent's kill ends it
            pass
    raise ValueError("not JSON")


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _bind() -> Binding:
    return Binding((Config(dumps, loads),), ())


SPEC = CodecSpec("misbehaving", "json", "serkit-misbehaving-codec", _bind)
