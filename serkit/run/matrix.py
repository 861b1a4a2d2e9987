"""The environment matrix: which Pythons and which library releases the asv suite runs.

The releases are data (`releases.json`, serkit.run.releases), refreshed from the package
index by `serkit matrix --refresh`; `asv.conf.json` is generated from them (`serkit
matrix --write-config`, checked by a test).

The matrix (`serkit bench --matrix`, CI's history) has one environment per Python and
library release, that library installed with what its codecs need beside it (and
serkit), plus one per Python with none, for the codecs of the standard library. What a
library's codecs need (serkit.run.libraries): every distribution their calls import
(cattrs-orjson and mashumaro-orjson: orjson), and the schema inference (genson) where one
of them is a schema codec; each such companion at its newest release for the Python and
platform, and none of the companion's own codecs timed there. An environment's identity
is then its Python, its library and that library's release, and its companions' releases:
a new release of one library adds an environment and renames only those environments
whose codecs call it (an orjson release renames cattrs' and mashumaro's), so every other
library's asv results, file names and graphs go on across it.

A run of one Python (`serkit bench`, quick or `--full`) installs the *newest set*, each
library's newest release with a compiled wheel for that Python on this platform, in one
environment of every library: ten environments would cost every round's `asv run` ten
times over (docs/cost.md). That environment's name changes with any release; the report
reads both kinds the same way (serkit.report.runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata

from serkit.checkout import ENV_DIR, HTML_DIR, RESULTS_DIR
from serkit.codecs.spec import STDLIB
from serkit.results.tree import version_order
from serkit.run.index import PLATFORM_NAMES
from serkit.run.libraries import companions, matrix_libraries
from serkit.run.releases import Library, Release, Releases, load
from serkit.suite.cases import LIBRARY_ENV

EVERY_LIBRARY = "newest releases"  # the label of a run-of-one-Python's environment


@dataclass(frozen=True)
class MatrixEnvironment:
    """One asv environment: a Python, and what it installs at which release."""

    python: str
    # The library this environment measures, alone (a codec library's distribution name,
    # or STDLIB with nothing installed); None: every library, each at `requirements`.
    library: str | None
    requirements_: tuple[tuple[str, str], ...] = ()  # (distribution, exact version), sorted

    @classmethod
    def of(
        cls,
        python: str,
        library: str,
        version: str | None = None,
        with_: Mapping[str, str] | None = None,
    ) -> MatrixEnvironment:
        """A matrix environment: one library at one release (STDLIB: none), and `with_`, the
        companions its codecs need."""
        installs = {**(with_ or {}), **({library: version} if version else {})}
        return cls(python, library, tuple(sorted(installs.items())))

    @property
    def requirements(self) -> dict[str, str]:
        """What asv installs (exact versions), beside serkit itself."""
        return dict(self.requirements_)

    @property
    def version(self) -> str | None:
        """The release of the library measured alone; None for STDLIB and every library."""
        return self.requirements.get(self.library) if self.library else None

    @property
    def companions(self) -> dict[str, str]:
        """What a library's environment installs beside it, unmeasured: {} for the others."""
        if self.library is None:
            return {}
        return {k: v for k, v in self.requirements_ if k != self.library}

    @property
    def label(self) -> str:
        if self.library is None:
            return f"py{self.python} {EVERY_LIBRARY}"
        return f"py{self.python} {self.library} {self.version or ''}".rstrip()

    @property
    def asv_name(self) -> str:
        """The name asv gives this environment: what `asv run -E` selects it by."""
        from asv.environment import get_env_name  # deferred: asv is only needed to run

        tagged = {("nobuild", LIBRARY_ENV): self.library} if self.library else {}
        # "virtualenv" although the config's type is serkit.run.asv_env's, which keeps these names.
        return str(get_env_name("virtualenv", self.python, self.requirements, tagged))

    def as_include(self) -> dict[str, object]:
        entry: dict[str, object] = {"python": self.python, "req": self.requirements}
        if self.library is not None:
            # env_nobuild: set for the benchmarks only (they time this library's codecs
            # alone), and part of the env's name.
            entry["env_nobuild"] = {LIBRARY_ENV: self.library}
        return entry


def _data(data: Releases | None) -> Releases:
    return data if data is not None else load()


def measured(data: Releases | None = None) -> list[Library]:
    """The libraries of the data that get environments of their own, in the file's order:
    all but those only ever installed beside another (genson: serkit.run.libraries)."""
    beside_only = {name for name, own in matrix_libraries().items() if not own}
    return [library for library in _data(data).libraries if library.name not in beside_only]


def environments(
    pythons: tuple[str, ...] | None = None,
    *,
    platform: str | None = None,
    data: Releases | None = None,
) -> Iterator[MatrixEnvironment]:
    """Every environment of the matrix, per Python: the standard library's, then each
    measured library's releases, newest first. With `platform`, only the releases with a
    wheel there, their companions as that platform has them; without, those of every
    runner kind's platform (asv.conf.json): one environment per distinct set of companions."""
    data = _data(data)
    platforms = (platform,) if platform else PLATFORM_NAMES
    for python in pythons or data.pythons:
        yield MatrixEnvironment.of(python, STDLIB)
        for library in measured(data):
            for release in library.releases:
                found = (_with_companions(python, library, release, p, data) for p in platforms)
                yield from dict.fromkeys(env for env in found if env is not None)


def _with_companions(
    python: str, library: Library, release: Release, platform: str, data: Releases
) -> MatrixEnvironment | None:
    """`library` at `release` on `platform`, with its companions' newest releases there;
    None where it or a companion has no wheel there."""
    if not release.has_wheel(python, platform):
        return None
    with_ = {}
    for name in companions(library.name):
        newest = data.library(name).newest_for(python, platform)
        if newest is None:
            return None
        with_[name] = newest.version
    return MatrixEnvironment.of(python, library.name, release.version, with_)


# Memory per call and instruction counts do not vary from process to process, and the
# Python-versions view and the release history each need one Python's worth of them: a
# full matrix run counts them in each Python's newest release of each library (and the
# standard library's environment, on every Python), and in every release on this Python.
# Counting everywhere was about a third of the first fill's runner time (docs/cost.md).
COUNTS_PYTHON = "3.12"


def counted(envs: Iterable[MatrixEnvironment]) -> frozenset[MatrixEnvironment]:
    """Of `envs`, a runner kind's whole matrix in `environments` order (each library's
    releases newest first per Python), those that count memory per call and instructions:
    the standard library's; each Python's newest release of each library; each release on
    COUNTS_PYTHON, or on its newest Python where it has no wheel for that one."""
    envs = list(envs)
    found: set[MatrixEnvironment] = set()
    newest: set[tuple[str, str | None]] = set()
    pythons: dict[tuple[str | None, str | None], list[MatrixEnvironment]] = {}
    for env in envs:
        if env.library == STDLIB or (env.python, env.library) not in newest:
            found.add(env)
            newest.add((env.python, env.library))
        pythons.setdefault((env.library, env.version), []).append(env)
    for same_release in pythons.values():
        on = [env for env in same_release if env.python == COUNTS_PYTHON]
        found.update(on or [max(same_release, key=lambda env: version_order(env.python))])
    return frozenset(found)


def newest_set(
    python: str, *, platform: str | None = None, data: Releases | None = None
) -> MatrixEnvironment:
    """The environment of a run of one Python: every library's newest release for it."""
    found = []
    for library in _data(data).libraries:
        newest = library.newest_for(python, platform)
        if newest is not None:
            found.append((library.name, newest.version))
    return MatrixEnvironment(python, None, tuple(sorted(found)))


def installed_set(python: str, data: Releases | None = None) -> MatrixEnvironment:
    """The environment of a run of one Python the matrix does not list (3.9, past its end
    of life, or one newer than the last refresh): every library at the release installed
    beside serkit, in this same Python, which is what its installer resolved for it; a
    library not installed here is left unpinned, its release unrecorded."""
    found = []
    for library in _data(data).libraries:
        try:
            found.append((library.name, metadata.version(library.name)))
        except metadata.PackageNotFoundError:
            found.append((library.name, ""))
    return MatrixEnvironment(python, None, tuple(sorted(found)))


def newest_sets(data: Releases | None = None) -> Iterator[MatrixEnvironment]:
    """Every Python's newest set, once for each distinct one the runner kinds install."""
    data = _data(data)
    for python in data.pythons:
        sets = (newest_set(python, platform=p, data=data) for p in PLATFORM_NAMES)
        yield from dict.fromkeys(s for s in sets if s.requirements_)


def not_served(data: Releases | None = None) -> Iterator[tuple[str, str]]:
    """(python, library) pairs where no kept release has a compiled wheel on any platform."""
    data = _data(data)
    for python in data.pythons:
        for library in data.libraries:
            if library.newest_for(python) is None:
                yield python, library.name


# The checkout's extras every environment installs: memray, for memory per call
# (benchmarks/bench_memory.py); the codec libraries come from the matrix, pinned.
PROJECT_EXTRAS = "[memory]"
# How asv installs the checkout into an environment. serkit.run.asv_env runs uv in its
# place when uv is installed, and this command as it is otherwise.
INSTALL_COMMAND = [f"in-dir={{env_dir}} python -m pip install {{build_dir}}{PROJECT_EXTRAS}"]


def configured(data: Releases | None = None) -> list[MatrixEnvironment]:
    """Every environment asv.conf.json names: per Python, its newest set in one environment
    (a run of one Python), then the matrix's (the standard library's, one per release)."""
    data = _data(data)
    together = list(newest_sets(data))
    return [
        env
        for python in data.pythons
        for env in (
            *(s for s in together if s.python == python),
            *environments((python,), data=data),
        )
    ]


def asv_config(data: Releases | None = None) -> dict[str, object]:
    """The asv configuration, matrix included: what `asv.conf.json` must contain."""
    data = _data(data)
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
        "pythons": list(data.pythons),
        # No cartesian product: exclude it all, and name every environment in `include`.
        "exclude": [{"python": ".*"}],
        "include": [env.as_include() for env in configured(data)],
    }


CONFIG_HEADER = (
    "// Generated from serkit/run/releases.json by `serkit matrix --write-config`: refresh\n"
    "// that (`serkit matrix --refresh`) or edit it, never this. A test checks they agree.\n"
)


def render_asv_config(data: Releases | None = None) -> str:
    return CONFIG_HEADER + json.dumps(asv_config(data), indent=4) + "\n"
