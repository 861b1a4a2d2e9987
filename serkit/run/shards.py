"""Slices of the matrix, so that N runners of one kind finish it N times sooner.

`serkit bench --matrix --shard K/N` runs the K-th of N slices. The slices are:

- deterministic: the environments are put in one fixed order (baselines first, then by
  Python and label), whatever order they came in, and dealt out round-robin;
- disjoint and covering: each environment goes to exactly one slice;
- balanced: slice sizes differ by at most one, and so do their counts of baseline
  environments, the long ones (a baseline times every codec; an axis environment only
  the codecs of the library it varies).

The slices are cut from the matrix before an interpreter is looked for, so runners that
miss different Pythons still agree on which slice holds which environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from serkit.errors import SerkitError
from serkit.results.tree import version_order
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


def _order(env: MatrixEnvironment) -> tuple[bool, tuple[int, ...], str, list[tuple[str, str]]]:
    return (
        env.varied is not None,
        version_order(env.python),
        env.label,
        sorted(env.requirements.items()),
    )


def shard_slice(environments: Iterable[E], shard: Shard) -> tuple[E, ...]:
    """The environments of one slice, in the fixed order the slices are dealt from."""
    ordered = sorted(environments, key=_order)
    return tuple(ordered[shard.index - 1 :: shard.count])
