"""An asv environment type that installs an environment's requirements in one call.

asv's virtualenv plugin runs pip once per requirement: 13 calls for a baseline
environment, each paying pip's start-up and index look-up again. This type builds the
same virtualenv, then installs every requirement at once, with uv when it is installed
(the `bench` extra brings it) and else with one pip call. With uv, it also installs
the checkout for each commit, in place of the config's pip command.

asv loads this module through the `plugins` entry of asv.conf.json, and
`environment_type` selects it. Environment names stay those of asv's own virtualenv
type, so `asv run -E <name>` and the results already on disk keep their meaning.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from asv import environment, util
from asv.console import log
from asv.plugins.virtualenv import Virtualenv

from serkit.run.matrix import INSTALL_COMMAND, PROJECT_EXTRAS

TOOL_NAME = "serkit-virtualenv"
# The type whose environment names (and folders) this one keeps.
NAMED_AS = Virtualenv.tool_name


def find_uv() -> str | None:
    """The uv executable: the `uv` package's own, else one on PATH, else None."""
    try:
        from uv import find_uv_bin
    except ImportError:
        return shutil.which("uv")
    try:
        return str(find_uv_bin())
    except FileNotFoundError:
        return shutil.which("uv")


def uv_index_options(environ: dict[str, str]) -> list[str]:
    """pip's index settings from the environment, as uv options.

    uv reads UV_* variables, not PIP_*: without this, a machine set up to install from
    a local wheel folder or a mirror would send uv elsewhere than pip.
    """
    options: list[str] = []
    if environ.get("PIP_INDEX_URL"):
        options += ["--index-url", environ["PIP_INDEX_URL"]]
    for url in environ.get("PIP_EXTRA_INDEX_URL", "").split():
        options += ["--extra-index-url", url]
    for place in environ.get("PIP_FIND_LINKS", "").split():
        options += ["--find-links", place]
    if environ.get("PIP_NO_INDEX", "").lower() in ("1", "true", "yes", "on"):
        options.append("--no-index")
    return options


class OneCallVirtualenv(Virtualenv):  # type: ignore[misc]
    """asv's virtualenv environment, its requirements installed in one installer call."""

    tool_name = TOOL_NAME

    @property
    def name(self) -> str:
        python = self._python[2:] if self._python.startswith("pypy") else self._python
        return str(
            environment.get_env_name(NAMED_AS, python, self._requirements, self._tagged_env_vars)
        )

    @property
    def dir_name(self) -> str:
        # asv's folder for the same environment, as asv's virtualenv type computes it:
        # rebuilt in place (its info file names the type) rather than left beside a new one.
        name = environment.get_env_name(
            NAMED_AS, self._python, self._requirements, self._tagged_env_vars, build=True
        )
        return hashlib.md5(name.encode("utf-8")).hexdigest()

    def requirement_specs(self) -> list[str]:
        """Every requirement as installer arguments, read as asv's own plugin reads them."""
        specs: list[str] = []
        for key, value in {**self._requirements, **self._base_requirements}.items():
            name = key[4:] if key.startswith("pip+") else key
            parsed = util.ParsedPipDeclaration(f"{name} {value}")
            specs += parsed.flags
            if parsed.path:
                specs.append(parsed.path)
            else:
                specs.append(f"{parsed.pkgname}{parsed.specification or ''}")
        # Unpinned `wheel` as asv installs it; not asv's `pip>=8`, which any pip that
        # virtualenv seeds satisfies, and which --upgrade would turn into a download.
        return ["wheel", *specs]

    def _env_python(self) -> str:
        return str(Path(self._path) / ("Scripts" if os.name == "nt" else "bin") / "python")

    def _install_requirements(self) -> None:
        env = dict(os.environ)
        env.update(self.build_env_vars)
        specs = self.requirement_specs()
        uv = find_uv()
        try:
            if uv is not None:
                command = [uv, "pip", "install", "--python", self._env_python(), "--upgrade"]
                command += [*uv_index_options(env), *specs]
                util.check_output(command, env=env, timeout=self._install_timeout)
            else:
                self._run_pip(["install", "--upgrade", *specs], env=env)
        except util.ProcessError:
            # asv then deletes the half-built environment: none is left partly installed.
            installer = "uv" if uv is not None else "pip"
            log.error(
                f"{installer} could not install the requirements of {self.name} "
                f"in one call: {' '.join(specs)}"
            )
            raise

    def _install_project(self, repo: object, commit_hash: str, build_dir: str) -> None:
        """The checkout, installed by uv: 0.45 s instead of pip's 1.6 s, for every commit
        in every environment. Any other install_command than serkit's runs as configured."""
        uv = find_uv()
        if uv is None or self._install_command != INSTALL_COMMAND:
            super()._install_project(repo, commit_hash, build_dir)
            return
        env = dict(os.environ)
        env.update(self.build_env_vars)
        commit = repo.get_decorated_hash(commit_hash, 8)  # type: ignore[attr-defined]
        log.info(f"Installing {commit} into {self.name} with uv")
        # Every commit is checked out in the same folder: never reuse a cached build.
        command = [uv, "pip", "install", "--python", self._env_python()]
        command += ["--refresh-package", self._project, *uv_index_options(env)]
        command.append(build_dir + PROJECT_EXTRAS)
        # Run from the env folder, as the pip command does: not where the checkout's
        # own packages would look installed already.
        util.check_output(command, env=env, cwd=self._path, timeout=self._install_timeout)
