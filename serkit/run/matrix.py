"""The environment matrix: which Pythons and which library releases the asv suite runs.

Declared once, here. ``asv.conf.json`` is generated from it (``serkit matrix
--write-config``, checked by a test), and ``serkit matrix`` prints it.

The shape: for every Python, one *baseline* environment with the newest release of every
library, then one environment per older release of one *axis* library, everything else
left at the baseline. So each library varies alone, and the matrix grows as
(1 + older releases) x Pythons, never as a cartesian product.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from serkit.checkout import ENV_DIR, HTML_DIR, RESULTS_DIR
from serkit.schemas.derive import INFERENCE_LIBRARY
from serkit.suite.cases import LIBRARY_ENV

PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")

# Set in each axis environment: the benchmarks then time only that library's codecs,
# since every other codec there is the baseline's, already timed in the baseline env.


@dataclass(frozen=True)
class Release:
    version: str
    # Pythons with a compiled manylinux x86_64 wheel on PyPI. Only these are used: a
    # source build needs a compiler, and a pure-Python wheel would change the
    # implementation under a version label.
    wheels: tuple[str, ...]


@dataclass(frozen=True)
class Library:
    name: str  # the distribution name, as pip and serkit's codec registry spell it
    releases: tuple[Release, ...]  # oldest first
    axis: bool = True  # False: pinned in every environment, never varied
    note: str = ""

    def newest_for(self, python: str) -> Release | None:
        usable = [r for r in self.releases if python in r.wheels]
        return usable[-1] if usable else None


_ALL = PYTHONS
_NO_39 = ("3.10", "3.11", "3.12", "3.13")
_NO_313 = ("3.9", "3.10", "3.11", "3.12")

# Wheel availability as listed by PyPI's simple index, checked 2026-11-21.
LIBRARIES = (
    Library(
        "msgpack",
        (Release("1.0.8", _NO_313), Release("1.1.2", _ALL), Release("1.2.4", _NO_39)),
        note="last 1.0, 1.1 line, current",
    ),
    Library(
        "ujson",
        (Release("5.8.0", _NO_313), Release("5.10.0", _ALL), Release("6.1.0", _NO_39)),
        note="5.x before and after 2024, the 6.x line",
    ),
    Library(
        "pyyaml",
        (Release("6.0.1", _NO_313), Release("6.0.2", _ALL), Release("6.0.3", _ALL)),
        note="the 6.0 line; every wheel carries libyaml",
    ),
    Library(
        "simplejson",
        # 3.19.2 has only a pure-Python wheel for 3.13, so 3.13 does not use it.
        (Release("3.19.2", _NO_313), Release("3.20.2", _ALL), Release("4.3.0", _ALL)),
        note="late 3.x, last 3.x, the 4.x line",
    ),
    Library(
        "cbor2",
        (Release("5.6.5", _ALL), Release("5.9.0", _ALL), Release("6.2.1", _NO_39)),
        note="5.6 and 5.9, then 6.x, which moved its C extension to cbor2._cbor2",
    ),
    Library(
        "orjson",
        (Release("3.9.15", _NO_313), Release("3.10.18", _ALL), Release("3.13.0", _NO_39)),
        note="early 2024, mid 2025, current",
    ),
    Library(
        "msgspec",
        (Release("0.18.6", _NO_313), Release("0.20.0", _ALL), Release("0.22.0", _NO_39)),
        note="0.18, 0.20, current",
    ),
    Library("ormsgpack", (Release("1.13.1", ("3.11", "3.12", "3.13")),), axis=False),
    Library("python-rapidjson", (Release("1.25", _NO_39),), axis=False),
    # The schema codecs' libraries (serkit.codecs.typed) and bson's; checked 2026-11-30.
    # pydantic's own wheel is pure Python: pip picks the pydantic-core it pins.
    Library(
        "pydantic",
        (Release("2.11.10", _ALL), Release("2.14.4", _NO_39)),
        note="2.11, current (2.12 on dropped 3.9)",
    ),
    Library(
        "protobuf",
        (Release("5.29.5", _ALL), Release("7.36.2", _NO_39)),
        note="the 5.x line (upb), current",
    ),
    Library("fastavro", (Release("1.10.0", _ALL), Release("1.13.1", _NO_39)), note="1.10, current"),
    Library("pymongo", (Release("4.10.1", _ALL), Release("4.20.1", _NO_39)), note="4.10, current"),
    Library("cattrs", (Release("24.1.3", ("3.9",)), Release("26.2.1", _NO_39)), axis=False),
    Library("mashumaro", (Release("3.15", ("3.9",)), Release("3.23", _NO_39)), axis=False),
    # Not a codec's: derives every schema codec's schema. Never varied, so a schema's hash
    # moves only with the suite. 1.4.0 needs Python 3.10, so 3.9 keeps 1.3.0 (a wheel for
    # every Python): both derive each fixture's pinned schema, checked 2026-12-01 on all 13
    # fixtures (1.3.0 on 3.9 and 3.11, 1.4.0 on 3.11), and the suite checks the pins anyway.
    Library(INFERENCE_LIBRARY, (Release("1.3.0", ("3.9",)), Release("1.4.0", _NO_39)), axis=False),
)


@dataclass(frozen=True)
class MatrixEnvironment:
    """One asv environment of the matrix."""

    python: str
    requirements: dict[str, str]  # distribution -> exact version; absent = not installed
    varied: str | None = None  # the axis library, None for the baseline
    missing: tuple[str, ...] = field(default=())  # libraries with no wheel for this Python

    @property
    def label(self) -> str:
        if self.varied is None:
            return f"py{self.python} baseline"
        return f"py{self.python} {self.varied} {self.requirements[self.varied]}"

    @property
    def asv_name(self) -> str:
        """The name asv gives this environment: what `asv run -E` selects it by."""
        from asv.environment import get_env_name  # deferred: asv is only needed to run

        tagged = {("nobuild", LIBRARY_ENV): self.varied} if self.varied else {}
        # "virtualenv" although the config's type is serkit.run.asv_env's, which keeps these names.
        return str(get_env_name("virtualenv", self.python, self.requirements, tagged))

    def as_include(self) -> dict[str, object]:
        entry: dict[str, object] = {"python": self.python, "req": dict(self.requirements)}
        if self.varied is not None:
            # env_nobuild: set for the benchmarks only, and part of the env's name.
            entry["env_nobuild"] = {LIBRARY_ENV: self.varied}
        return entry


def baseline(python: str) -> MatrixEnvironment:
    requirements: dict[str, str] = {}
    missing: list[str] = []
    for library in LIBRARIES:
        newest = library.newest_for(python)
        if newest is None:
            missing.append(library.name)
        else:
            requirements[library.name] = newest.version
    return MatrixEnvironment(python, requirements, None, tuple(missing))


def environments(pythons: tuple[str, ...] = PYTHONS) -> Iterator[MatrixEnvironment]:
    """Every environment of the matrix: per Python, the baseline, then each axis release."""
    for python in pythons:
        base = baseline(python)
        yield base
        for library in LIBRARIES:
            if not library.axis or library.name not in base.requirements:
                continue
            for release in library.releases:
                if python in release.wheels and release.version != base.requirements[library.name]:
                    varied = {**base.requirements, library.name: release.version}
                    yield MatrixEnvironment(python, varied, library.name, base.missing)


def unused_releases(pythons: tuple[str, ...] = PYTHONS) -> Iterator[tuple[str, str, str]]:
    """(python, library, version) pairs left out because no compiled wheel exists."""
    for python in pythons:
        for library in LIBRARIES:
            for release in library.releases:
                if python not in release.wheels:
                    yield python, library.name, release.version


# The checkout's extras every environment installs: memray, for memory per call
# (benchmarks/bench_memory.py); the codec libraries come from the matrix, pinned.
PROJECT_EXTRAS = "[memory]"
# How asv installs the checkout into an environment. serkit.run.asv_env runs uv in its
# place when uv is installed, and this command as it is otherwise.
INSTALL_COMMAND = [f"in-dir={{env_dir}} python -m pip install {{build_dir}}{PROJECT_EXTRAS}"]


def asv_config() -> dict[str, object]:
    """The asv configuration, matrix included: what `asv.conf.json` must contain."""
    return {
        "version": 1,
        "project": "serkit",
        "repo": ".",
        "branches": ["main"],
        # serkit.run.asv_env: asv's virtualenv, its requirements installed in one call (uv if
        # installed, else pip) instead of one pip call each; environment names unchanged.
        "plugins": [".serkit.run.asv_env"],
        "environment_type": "serkit-virtualenv",
        "benchmark_dir": "benchmarks",
        # Everything asv writes lives under .asv/ (ignored by git).
        "env_dir": ENV_DIR,
        "results_dir": RESULTS_DIR,
        "html_dir": HTML_DIR,
        # No separate build step: pip builds and installs the checkout in one call,
        # which took 13 s per environment instead of 21 s.
        "build_command": [],
        "install_command": list(INSTALL_COMMAND),
        "uninstall_command": ["return-code=any python -m pip uninstall -y {project}"],
        # One server imports the suite, then forks per benchmark: 162 parameter sets took
        # 1.1 s instead of 12 s with asv's default, a new interpreter for each.
        "launch_method": "forkserver",
        "pythons": list(PYTHONS),
        # No cartesian product: exclude it all, and name every environment in `include`.
        "exclude": [{"python": ".*"}],
        "include": [env.as_include() for env in environments()],
    }


CONFIG_HEADER = (
    "// Generated from serkit/matrix.py by `serkit matrix --write-config`; edit it there.\n"
    "// A test fails when this file and serkit/matrix.py disagree.\n"
)


def render_asv_config() -> str:
    return CONFIG_HEADER + json.dumps(asv_config(), indent=4) + "\n"
