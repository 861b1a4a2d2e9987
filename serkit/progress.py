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
) -> Any:
    """A tqdm bar over `items` (or a manual one of `total` steps) that hides itself off a tty."""
    return tqdm(
        items, total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, leave=leave
    )
