"""Environments asv could not build on a machine, and why: kept beside that machine's results.

asv records nothing for an environment it failed to create, so a report read later could
not tell "never run" from "broken". serkit's asv plugin (serkit.run.asv_env) notes each
failure here when it happens and clears it when the environment is built, and the
report's overview names what is still broken. The file is `serkit-builds.yaml` in the
machine's results folder (not `.json`: asv reads every .json there as results).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit.errors import RefusedFile
from serkit.files import atomic_write
from serkit.inputs.documents import read_record

BUILDS_FILE = "serkit-builds.yaml"
# Set by `serkit bench` for asv: where the plugin keeps the record of this run's machine.
BUILDS_ENV = "SERKIT_BENCH_BUILDS"


@dataclass(frozen=True)
class BuildFailure:
    """One environment that could not be built, in one line a reader can act on."""

    env: str  # asv's environment name
    label: str  # serkit's: "py3.11 baseline", "py3.11 msgpack 1.0.8"
    cause: str  # one line: what went wrong, in the installer's words where it said
    at: str  # ISO 8601, UTC
    output: str = ""  # the end of the installer's output, for whoever digs further

    def in_words(self) -> str:
        return f"{self.label} was not built: {self.cause}"


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def read_builds(path: Path, warnings: list[str] | None = None) -> dict[str, BuildFailure]:
    """The failures recorded in `path`, by environment name; a broken file is a warning."""
    if not path.is_file():
        return {}
    try:
        data: Any = read_record(path, format="yaml", what="a build record") or {}
        fields = {f.name for f in dataclasses.fields(BuildFailure)}
        return {
            str(name): BuildFailure(**{k: v for k, v in entry.items() if k in fields})
            for name, entry in data.items()
        }
    except (RefusedFile, AttributeError, TypeError) as exc:
        if warnings is not None:
            warnings.append(f"skipped {path}: not a serkit build record ({exc})")
        return {}


def _write(path: Path, failures: Mapping[str, BuildFailure]) -> None:
    if not failures:
        path.unlink(missing_ok=True)
        return
    data = {name: dataclasses.asdict(f) for name, f in sorted(failures.items())}
    import yaml  # imported when a record is written: reading the CLI stays light

    atomic_write(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def note_failure(path: Path, env: str, label: str, cause: str, output: str = "") -> BuildFailure:
    """Record that `env` could not be built, replacing any older note about it."""
    failure = BuildFailure(env, label, cause, _utc_now(), output[-4000:])
    _write(path, {**read_builds(path), env: failure})
    return failure


def clear_failure(path: Path, env: str) -> None:
    """`env` was built: forget any failure noted for it."""
    failures = read_builds(path)
    if env in failures:
        del failures[env]
        _write(path, failures)


def machine_builds(folder: Path, warnings: list[str] | None = None) -> list[BuildFailure]:
    """The environments still broken on the machine whose results folder is `folder`."""
    return sorted(read_builds(folder / BUILDS_FILE, warnings).values(), key=lambda f: f.label)
