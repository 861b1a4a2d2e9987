"""Slices of the matrix, so that N runners of one kind finish it N times sooner.

`serkit bench --matrix --shard K/N` runs the K-th of N slices. The slices are:

- deterministic: the environments are put in one fixed order (by library, the standard
  library's first, then Python, then release), whatever order they came in, and dealt
  out round-robin;
- disjoint and covering: each environment goes to exactly one slice;
- balanced: slice sizes differ by at most one, and so does each library's count of
  environments in a slice. An environment's cost is mostly its library's (PyYAML's pure
  Python is the longest by far; see docs/cost.md), and one library's releases cost about
  the same, so dealing each library's environments out in turn evens the time too.

The slices are cut from the matrix before an interpreter is looked for, so runners that
miss different Pythons still agree on which slice holds which environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from serkit.codecs.spec import STDLIB
from serkit.errors import SerkitError
from serkit.results.tree import version_order
from serkit.run.interpreters import FREE_THREADED
from serkit.run.matrix import MatrixEnvironment

SHARD_FORMAT = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")

E = TypeVar("E", bound=MatrixEnvironment)


class BadShard(SerkitError):
    """A --shard that is not K/N with 1 <= K <= N."""


@dataclass(frozen=True)
class Shard:
    index: int  # K, from 1
    count: int  # N

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise BadShard(f"shard {self.index}/{self.count}: K/N needs 1 <= K <= N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`K/N`, as --shard takes it: `2/3` is the second of three slices."""
        match = SHARD_FORMAT.fullmatch(text)
        if match is None:
            raise BadShard(f"--shard takes K/N, such as 2/3 (the second of three), not {text!r}")
        return cls(int(match[1]), int(match[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def _order(env: MatrixEnvironment) -> tuple[bool, str, tuple[int, ...], bool, tuple[int, ...]]:
    return (
        env.library != STDLIB,
        env.library or "",
        version_order(env.python.removesuffix(FREE_THREADED)),
        env.python.endswith(FREE_THREADED),
        version_order(env.version or ""),
    )


def shard_slice(environments: Iterable[E], shard: Shard) -> tuple[E, ...]:
    """The environments of one slice, in the fixed order the slices are dealt from."""
    ordered = sorted(environments, key=_order)
    return tuple(ordered[shard.index - 1 :: shard.count])
