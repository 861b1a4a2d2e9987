"""Figures published by the posts serkit grew from, recorded once, with source and units."""

from __future__ import annotations

from dataclasses import dataclass, field


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


# --- the posts, and every table serkit replicates -----------------------------------------


@dataclass(frozen=True)
class Post:
    """One post: where its text is, what it ran on, and what it called each codec."""

    id: str
    title: str
    seeds: tuple[str, ...]  # file names in the project's seeds folder (shared/seeds)
    date: str  # as far as the seed tells
    setup: str  # the machine and versions, as the post gives them
    reference: str  # the codec id normalized columns divide by
    labels: dict[str, str]  # codec id -> the post's name for what it timed
    # The post's name -> why serkit cannot time it on Python 3.
    unavailable: dict[str, str] = field(default_factory=dict)
    source: str = ""  # where the figures are, for a post that is not a seed file


@dataclass(frozen=True)
class PublishedFigures:
    """One quantity a post published for several codecs on one document."""

    post: str
    title: str
    unit: str
    note: str
    fixture: str  # serkit's fixture for the post's document
    values: dict[str, float]  # codec id -> value
    unavailable_values: dict[str, float] = field(default_factory=dict)  # post's name -> value
    higher_is_better: bool = False  # a rate, not a time or a size


POST_000 = Post(
    id="000/001",
    title="MessagePack against the world of Python serializers",
    seeds=("000_0fa7dc883429bcec.txt", "001_37662e2ae96845d2.txt"),
    date="undated (msgpack 0.4.6 is from 2015); 001 is a copy of 000 with HTML tables",
    setup="Python 2.7.10 on an Intel Core i3-3240 at 3.40 GHz",
    reference="json",
    labels={
        "pickle-p0": "cPickle 1.71",
        "json": "json 2.0.9",
        "ujson": "ujson 1.33",
        "msgpack": "msgpack 0.4.6",
    },
)

POST_000_DUMPS = PublishedTable(
    post="000/001",
    title="dumps time",
    unit="ms",
    note="rows are list lengths; how many calls each cell timed is not in the seed",
    values={
        "pickle-p0": {10: 0.823, 100: 8.34, 1_000: 85, 10_000: 853, 100_000: 8_660},
        "json": {10: 1.080, 100: 11.9, 1_000: 120, 10_000: 1_200, 100_000: 12_100},
        "ujson": {10: 0.175, 100: 1.81, 1_000: 18.7, 10_000: 191, 100_000: 1_920},
        "msgpack": {10: 0.0714, 100: 0.792, 1_000: 8.15, 10_000: 82.9, 100_000: 851},
    },
)

POST_000_LOADS = PublishedTable(
    post="000/001",
    title="loads time",
    unit="ms",
    note="rows are list lengths",
    values={
        "pickle-p0": {10: 0.712, 100: 7.25, 1_000: 73.7, 10_000: 764, 100_000: 7_710},
        "json": {10: 0.604, 100: 6.46, 1_000: 67.5, 10_000: 699, 100_000: 7_130},
        "ujson": {10: 0.179, 100: 2.37, 1_000: 27.2, 10_000: 287, 100_000: 2_840},
        "msgpack": {10: 0.073, 100: 0.82, 1_000: 11.1, 10_000: 115, 100_000: 1_190},
    },
)

POST_002 = Post(
    id="002",
    title="Serialization: MsgPack vs Pickle",
    seeds=("002_2e39a120c5cada3f.txt",),
    date="2019-02-23",
    setup="Python 3 (its version and machine unstated), 100,000 round trips per codec",
    reference="pickle-p2",
    labels={
        # Python 3.7's default protocol was 3: the same opcodes as 2 for data without bytes.
        "pickle-p2": "pickle (default protocol, 3)",
        "msgpack-ext": "msgpack with ExtType 0 and 10",
    },
)

POST_002_SIZE = PublishedFigures(
    post="002",
    title="size of one sensor record",
    unit="B",
    note="the notebook printed each packed length",
    fixture="sensor-record",
    values={"pickle-p2": 83, "msgpack-ext": 64},
)

POST_002_RATE = PublishedFigures(
    post="002",
    title="round trips per second",
    unit="msg/s",
    # The results table; the notebook cell above it printed 30,962 msg/s (3.23 s) for msgpack.
    note="100,000 loops of loads(dumps(record)), each checked equal to the record",
    fixture="sensor-record",
    values={"pickle-p2": 85_983, "msgpack-ext": 30_227},
    higher_is_better=True,
)

POST_003 = Post(
    id="003",
    title="Python 2.7.2 serializer speed comparisons",
    seeds=("003_33033dfd5e142545.txt",),
    date="2012-07-25",
    setup="Python 2.7.2 (machine unstated), timeit of 15,000 loops per cell",
    reference="json",
    labels={
        "pickle-p0": "cPickle (ascii)",
        "pickle-p2": "cPickle (binary)",
        "json": "json",
        "simplejson": "simplejson-3.3.1",
        "ujson": "ujson-1.33",
        "msgpack": "msgpack-python-0.3.0",
    },
    unavailable={
        "pickle (ascii)": "Python 2's pure-Python pickle; Python 3's pickle is the C one, "
        "timed as cPickle's rows",
        "pickle (binary)": "Python 2's pure-Python pickle; Python 3's pickle is the C one, "
        "timed as cPickle's rows",
        "python-cjson-1.0.5": "a Python 2 C extension: not available on Python 3",
        "yajl 0.3.5": "a Python 2 C extension: not available on Python 3",
    },
)

POST_003_ENCODE = PublishedFigures(
    post="003",
    title="encode time",
    unit="s per 15,000 loops",
    note="timeit(number=15000) of one call, once per cell",
    fixture="small-dict",
    values={
        "ujson": 0.232215,
        "msgpack": 0.241945,
        "pickle-p2": 0.305273,
        "json": 0.780438,
        "simplejson": 1.04763,
        "pickle-p0": 1.62062,
    },
    unavailable_values={
        "yajl 0.3.5": 0.634148,
        "python-cjson-1.0.5": 0.680604,
        "pickle (ascii)": 14.0497,
        "pickle (binary)": 15.4712,
    },
)

POST_003_DECODE = PublishedFigures(
    post="003",
    title="decode time",
    unit="s per 15,000 loops",
    note="timeit(number=15000) of one call, once per cell; every JSON library decoded json's text",
    fixture="small-dict",
    values={
        "msgpack": 0.240885,
        "pickle-p2": 0.393152,
        "ujson": 0.396875,
        "simplejson": 0.780531,
        "pickle-p0": 1.38561,
        "json": 1.65921,
    },
    unavailable_values={
        "python-cjson-1.0.5": 0.694321,
        "yajl 0.3.5": 0.748369,
        "pickle (binary)": 5.20554,
        "pickle (ascii)": 17.8767,
    },
)

POST_004 = Post(
    id="004",
    title="Serialization Format Performance",
    seeds=("004_7670e0ed09d75d65.txt",),
    date="2016-01-31",
    setup="Python 2 (cPickle) on a 2013 MacBook Pro, Intel Core i7-4850HQ; "
    "the timing code is not in the seed",
    reference="json",
    labels={
        "json": "json (in stdlib)",
        "ujson": "ujson",
        "yaml": "PyYAML (default loader)",
        "yaml-c": "PyYAML (C Loader)",
        "msgpack": "msgpack-python",
        "pickle-p0": "cPickle",
    },
)

POST_004_LOAD = PublishedFigures(
    post="004",
    title="load time",
    unit="ms",
    note="a 48 KB document of the alphabetically first US senators' biographies",
    fixture="senate-bios",
    values={
        "json": 1.4,
        "ujson": 0.4,
        "yaml": 303.1,
        "yaml-c": 27.9,
        "msgpack": 0.2,
        "pickle-p0": 14.1,
    },
)


@dataclass(frozen=True)
class PublishedRatios:
    """Each codec's time over the post's reference codec's, per document, as published."""

    post: str
    title: str
    operation: str  # "dumps" or "loads"
    note: str
    values: dict[str, dict[str, float]]  # codec id -> serkit fixture -> ratio; reference 1
    unit: str = "x the reference's time"


# The commit of orjson's README that carries these figures ("Update benchmarks for 3.10.6").
ORJSON_README_COMMIT = "4c05bfafdd2613e20b9be994ec3eaa846700a568"

POST_005 = Post(
    id="005",
    title="orjson's README: latency relative to orjson",
    seeds=(),
    source=f"the orjson README (github.com/ijl/orjson, README.md at commit "
    f"{ORJSON_README_COMMIT[:12]}, Performance section)",
    date="2024-07-02",
    setup="Python 3.11.9 on Linux (amd64), the machine unstated; orjson 3.10.6, ujson 5.10.0, "
    "python-rapidjson 1.18, simplejson 3.19.2; pytest-benchmark, one benchmark per library "
    "and document (rounds of at least 1 s, GC off, benchmarks in random order); each "
    "relative latency is the ratio of two benchmarks' medians",
    reference="orjson",
    labels={
        "orjson": "orjson 3.10.6",
        "ujson": "ujson 5.10.0",
        "rapidjson": "python-rapidjson 1.18",
        "simplejson": "simplejson 3.19.2",
        "json": "json (Python 3.11.9)",
    },
)

# serkit's fixture -> the README's file name for the same corpus, in the README's order.
POST_005_DOCUMENTS = {
    "twitter": "twitter.json",
    "github": "github.json",
    "citm-catalog": "citm_catalog.json",
    "canada": "canada.json",
}

POST_005_DUMPS = PublishedRatios(
    post="005",
    title="dumps latency relative to orjson",
    operation="dumps",
    note="the README's Relative (latency) column of each serialization table",
    values={
        "orjson": {"twitter": 1, "github": 1, "citm-catalog": 1, "canada": 1},
        "ujson": {"twitter": 7.3, "github": 9.8, "citm-catalog": 6.3, "canada": 3.9},
        "rapidjson": {"twitter": 6.8, "github": 7.6, "citm-catalog": 4.9, "canada": 11.8},
        "simplejson": {"twitter": 15.6, "github": 20.6, "citm-catalog": 31.1, "canada": 20.3},
        "json": {"twitter": 11.3, "github": 14.6, "citm-catalog": 11.3, "canada": 12.6},
    },
    unit="x orjson's time",
)

POST_005_LOADS = PublishedRatios(
    post="005",
    title="loads latency relative to orjson",
    operation="loads",
    note="the README's Relative (latency) column of each deserialization table",
    values={
        "orjson": {"twitter": 1, "github": 1, "citm-catalog": 1, "canada": 1},
        "ujson": {"twitter": 2.1, "github": 2.3, "citm-catalog": 1.9, "canada": 2.4},
        "rapidjson": {"twitter": 3.8, "github": 2.6, "citm-catalog": 3.0, "canada": 6.7},
        "simplejson": {"twitter": 3.0, "github": 2.1, "citm-catalog": 2.7, "canada": 5.6},
        "json": {"twitter": 3.3, "github": 2.2, "citm-catalog": 2.7, "canada": 6.1},
    },
    unit="x orjson's time",
)

# The commit of msgspec that published these figures ("Update benchmarks", 2023-12-08; on
# the documentation's benchmarks page, docs/source/benchmarks.rst, which later commits
# moved to docs/benchmarks.rst with the figures unchanged).
MSGSPEC_BENCHMARKS_COMMIT = "f71d96f4e7dce9baa6b619d555863d62b1cd4e2e"

POST_006 = Post(
    id="006",
    title="msgspec's benchmarks: JSON serialization & validation",
    seeds=(),
    source=f"msgspec's documentation, Benchmarks page (github.com/jcrist/msgspec, "
    f"docs/source/benchmarks.rst at commit {MSGSPEC_BENCHMARKS_COMMIT[:12]}): the data of its "
    "JSON Serialization & Validation charts",
    date="2023-12-08",
    setup="CPython 3.11 on the author's ~2020 x86 Linux laptop; msgspec 0.18.5, mashumaro 3.11, "
    "cattrs 23.2.3, pydantic 2.5.2 and 1.10.13; one JSON message of 1,000 File and Directory "
    "objects (a tagged union, recursive, with an enum and datetimes), classes written by hand "
    "for each library; encode of the decoded objects and decode (with validation) of the "
    "message each timed by timeit's autorange, each library in a process of its own",
    reference="msgspec-struct-json",
    labels={
        "msgspec-struct-json": "msgspec 0.18.5",
        "mashumaro-orjson": "mashumaro 3.11",
        "cattrs-orjson": "cattrs 23.2.3",
        "pydantic-json": "pydantic v2 (2.5.2)",
    },
    unavailable={"pydantic v1": "pydantic 1.10.13: serkit's pydantic-json needs pydantic 2"},
)

# Seconds per call in the page's data, here in ms to six significant digits (the chart shows
# three), and the peak RSS increase in MiB.
POST_006_ENCODE = PublishedFigures(
    post="006",
    title="encode time",
    unit="ms",
    note="the chart's encode figures (its data gives seconds per call)",
    fixture="file-tree",
    values={
        "msgspec-struct-json": 0.167275,
        "mashumaro-orjson": 0.797896,
        "cattrs-orjson": 2.06540,
        "pydantic-json": 3.47030,
    },
    unavailable_values={"pydantic v1": 19.6149},
)
POST_006_DECODE = PublishedFigures(
    post="006",
    title="decode and validate time",
    unit="ms",
    note="the chart's decode figures (its data gives seconds per call)",
    fixture="file-tree",
    values={
        "msgspec-struct-json": 0.422206,
        "mashumaro-orjson": 2.67868,
        "cattrs-orjson": 3.39233,
        "pydantic-json": 3.80696,
    },
    unavailable_values={"pydantic v1": 25.2885},
)
POST_006_MEMORY = PublishedFigures(
    post="006",
    title="peak memory increase",
    unit="MiB",
    note="the process's peak RSS after both timings, less its peak before it imported the "
    "library and its classes (the message already read); exact as published",
    fixture="file-tree",
    values={
        "msgspec-struct-json": 0.640625,
        "mashumaro-orjson": 7.1171875,
        "cattrs-orjson": 3.25390625,
        "pydantic-json": 16.26171875,
    },
    unavailable_values={"pydantic v1": 10.03125},
)

POSTS: dict[str, Post] = {
    post.id: post for post in (POST_000, POST_002, POST_003, POST_004, POST_005, POST_006)
}
