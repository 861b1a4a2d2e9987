"""Figures published by the posts serkit grew from, recorded once, with source and units."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedTable:
    """One table of one post: values[codec id][row key], in `unit`."""

    post: str
    title: str
    unit: str
    note: str
    values: dict[str, dict[int, float]]


POST_000_SIZES = PublishedTable(
    post="000/001",
    title="MessagePack against the world of Python serializers: size of the serialized message",
    unit="KiB",
    # Every value is a multiple of 4: the post reported space on disk, in 4 KiB blocks.
    note="rows are list lengths; Python 2.7.10, cPickle default protocol (0), json 2.0.9, "
    "ujson 1.33, msgpack 0.4.6",
    values={
        "pickle-p0": {10: 32, 100: 300, 1_000: 2_968, 10_000: 29_704, 100_000: 297_312},
        "json": {10: 32, 100: 320, 1_000: 3_168, 10_000: 31_676, 100_000: 316_744},
        "ujson": {10: 28, 100: 244, 1_000: 2_404, 10_000: 24_016, 100_000: 240_132},
        "msgpack": {10: 16, 100: 140, 1_000: 1_372, 10_000: 13_692, 100_000: 136_892},
    },
)

DISK_BLOCK = 4096  # bytes; post 000 sizes count whole blocks


def as_disk_kib(size: int) -> int:
    """Bytes as post 000 counted them: whole 4 KiB blocks, in KiB."""
    return -(-size // DISK_BLOCK) * DISK_BLOCK // 1024
