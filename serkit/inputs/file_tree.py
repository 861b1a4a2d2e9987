"""Post 006's document: a tree of files and directories, shaped as msgspec's validation benchmark's.

msgspec's "JSON Serialization & Validation" benchmark (its benchmarks page, post 006)
times one message of 1,000 File and Directory objects. Its shape, as msgspec's data
generator describes it (benchmarks/generate_data.py, the commit post 006 pins): a root
directory; every node a file or, one time in five, a directory; each has a name of 4 to
30 ASCII letters, the user who created it (one of 26 first names) and when (2018 to
2023, UTC); one node in four was also updated, by someone, later; a directory holds up
to 30 nodes, while the total lasts, and the root takes whatever is left; a file has a
size (up to 1,000,000 bytes) and a permission (READ, WRITE or READ_WRITE).

This generator is serkit's own, seeded, and not msgspec's: the same shape, other values.
Timestamps are timezone-aware datetimes, as msgspec's typed objects hold them.
"""

from __future__ import annotations

import datetime
import random
import string
from typing import Any

FILE_TREE_NODES = 1_000  # the benchmark's message size (its -n default)
FILE_TREE_SEED = 2023  # the year of msgspec's run; any fixed seed would do
USERS = (
    "ada", "bo", "chen", "dara", "emil", "fay", "gus", "hana", "ivo", "jun", "kai", "lea",
    "milo", "nia", "otto", "pia", "quin", "rosa", "sam", "tova", "udo", "vera", "wes",
    "xena", "yuri", "zoe",
)  # fmt: skip
PERMISSIONS = ("READ", "WRITE", "READ_WRITE")
LETTERS = string.ascii_letters
_UTC = datetime.timezone.utc
_FIRST = int(datetime.datetime(2018, 1, 1, tzinfo=_UTC).timestamp())
_LAST = int(datetime.datetime(2023, 1, 1, tzinfo=_UTC).timestamp())
DIRECTORY_SHARE = 0.2  # of the nodes below the root
UPDATED_SHARE = 0.25
MAX_CHILDREN = 30


def file_tree(nodes: int = FILE_TREE_NODES, seed: int = FILE_TREE_SEED) -> dict[str, Any]:
    """`nodes` files and directories in one tree under a root directory, from one seeded stream."""
    rng = random.Random(seed)
    unplaced = nodes - 1  # the root is placed

    def moment(after: int) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(rng.randint(after, _LAST), tz=_UTC)

    def node(directory: bool) -> dict[str, Any]:
        nonlocal unplaced
        created = moment(_FIRST)
        entry: dict[str, Any] = {
            "type": "directory" if directory else "file",
            "name": "".join(rng.choices(LETTERS, k=rng.randint(4, 30))),
            "created_by": rng.choice(USERS),
            "created_at": created,
        }
        if rng.random() < UPDATED_SHARE:
            entry["updated_by"] = rng.choice(USERS)
            entry["updated_at"] = moment(int(created.timestamp()))
        if directory:
            children = min(rng.randint(0, MAX_CHILDREN), unplaced)
            unplaced -= children  # reserved before the subtrees take their own
            entry["contents"] = [node(rng.random() < DIRECTORY_SHARE) for _ in range(children)]
        else:
            entry["nbytes"] = rng.randint(0, 1_000_000)
            entry["permissions"] = rng.choice(PERMISSIONS)
        return entry

    root = node(True)
    while unplaced:  # the root holds what the subtrees left
        unplaced -= 1
        root["contents"].append(node(rng.random() < DIRECTORY_SHARE))
    return root
