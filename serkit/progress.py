"""The one progress bar: on stderr, and only for people (pipes and CI logs get none)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(
    items: Iterable[T] | None = None,
    *,
    desc: str,
    unit: str,
    total: int | None = None,
    leave: bool = False,
    bar_format: str | None = None,
) -> Any:
    """A tqdm bar over `items` (or a manual one of `total` steps) that hides itself off a
    tty; `bar_format` as tqdm's (e.g. "{desc} {elapsed}" for a wait with nothing to count)."""
    return tqdm(
        items,
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=None,
        leave=leave,
        bar_format=bar_format,
    )
