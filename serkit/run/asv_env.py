"""An asv environment type that installs an environment's requirements in one call.

asv's virtualenv plugin runs pip once per requirement (5 calls even for an environment
of one library), each paying pip's start-up and index look-up again. This type builds the
same virtualenv, then installs every requirement at once, with uv when it is installed
(the `bench` extra brings it) and else with one pip call. With uv, it also installs
the checkout for each commit, in place of the config's pip command.

asv loads this module through the `plugins` entry of asv.conf.json, and
`environment_type` selects it. Environment names stay those of asv's own virtualenv
type, so `asv run -E <name>` and the results already on disk keep their meaning.

More things happen here because this is the one serkit module asv imports: asv's
JSON files are written atomically (see `write_json_atomically`); every sample is kept, as
`--record-samples` keeps them, and a timed process is told where the run's results tree
is, so that a plain `asv run` keeps what serkit judges its processes by (the samples and
their canary notes); and an environment that cannot be built is noted, with its cause in
one line, where `serkit bench` and the report read it (serkit.results.builds).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from asv import environment, util
from asv import results as asv_results
from asv.console import log
from asv.plugins.virtualenv import Virtualenv

from serkit.files import atomic_write
from serkit.results.builds import BUILDS_ENV, clear_failure, note_failure
from serkit.run.matrix import EVERY_LIBRARY, INSTALL_COMMAND, PROJECT_EXTRAS
from serkit.suite.canary import RESULTS_ENV
from serkit.suite.cases import LIBRARY_ENV


def write_json_atomically(
    path: str, data: Any, api_version: int | None = None, compact: bool = False
) -> None:
    """asv.util.write_json, except that the file appears whole or not at all.

    asv writes its results, benchmarks.json and machine.json in place, so a run stopped
    while writing (Ctrl-C escalated to a kill, `kill -9`, a full disk) leaves a cut-off
    file that no later asv or serkit command can read, and the values that file held
    are lost. Here the JSON goes to a temporary file in the same folder first, then
    replaces the old one in a single rename. The content is exactly asv's.
    """
    if api_version is not None:
        data = dict(data)
        data["version"] = api_version
    text = io.StringIO()
    if compact:
        json.dump(data, text)
    else:
        json.dump(data, text, indent=4, sort_keys=True)
    atomic_write(Path(os.path.abspath(path)), text.getvalue())


# Every asv module calls util.write_json through the module (asv.util.write_json), so
# replacing the attribute reaches them all; this module is imported before asv writes.
util.write_json = write_json_atomically

_add_result = asv_results.Results.add_result


def add_result_with_samples(self: Any, *args: Any, **kwargs: Any) -> Any:
    """asv's Results.add_result, keeping every sample as `asv run --record-samples` does.

    serkit judges each timed process by its samples' states (serkit.results.judging),
    and a plain `asv run` drops the samples of its last round unless told: its canary
    notes (serkit.suite.canary.notes_folder) would then match nothing."""
    kwargs["record_samples"] = True
    return _add_result(self, *args, **kwargs)


asv_results.Results.add_result = add_result_with_samples

# What an installer says, mapped to the cause a reader acts on. The first match wins.
_CAUSES = (
    (re.compile(r"No space left on device|\[Errno 28\]", re.I), "the disk is full"),
    (
        re.compile(
            r"no version of|No matching distribution|Could not find a version|"
            r"not found in the provided package locations|no wheels? (with|for)|"
            r"only has wheels|unsatisfiable|is not available for",
            re.I,
        ),
        "nothing installable for this Python",
    ),
    (
        re.compile(
            r"Failed to (fetch|download)|error sending request|dns error|name resolution|"
            r"Name or service not known|Connection (refused|reset|aborted)|Network is unreachable|"
            r"timed out|Max retries exceeded|NewConnectionError|ProxyError|SSLError",
            re.I,
        ),
        "a network failure",
    ),
)
_NOISE = re.compile(r"^\s*(?:(?:\u00d7|error:|ERROR:|cause:|hint:|Because)\s*)+", re.I)


def _short(line: str, limit: int = 160) -> str:
    text = _NOISE.sub("", line.strip())
    text = re.split(r",? (?:and you require|we can conclude)", text)[0].strip(" .,")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def build_cause(output: str) -> str:
    """One line saying why an environment could not be built, from the installer's output."""
    lines = [line for line in output.splitlines() if line.strip()]
    for pattern, cause in _CAUSES:
        for line in lines:
            if pattern.search(line):
                return f"{cause} ({_short(line)})"
    flagged = [line for line in lines if _NOISE.match(line)]
    last = (flagged or lines or ["no output"])[-1]
    return f"the installer failed ({_short(last)})"


def _failure_output(exc: BaseException) -> str:
    if isinstance(exc, util.ProcessError):
        return f"{exc.stdout or ''}\n{exc.stderr or ''}"
    return f"{type(exc).__name__}: {exc}"


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

    def __init__(self, conf: Any, *args: Any) -> None:
        super().__init__(conf, *args)
        # Where a plain `asv run`'s timed processes keep their canary notes: in this
        # config's results tree (serkit.suite.canary.notes_folder). asv passes its own
        # variables, ASV_ by name, to every benchmark process.
        self._global_env_vars[RESULTS_ENV] = os.path.abspath(conf.results_dir)

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

    @property
    def label(self) -> str:
        """serkit's name for this environment, as `serkit matrix` prints it."""
        library = dict(self._tagged_env_vars).get(("nobuild", LIBRARY_ENV))
        if library is None:  # every library's newest release (serkit.run.matrix.newest_set)
            return f"py{self._python} {EVERY_LIBRARY}"
        return f"py{self._python} {library} {self._requirements.get(library, '')}".rstrip()

    def _note(self, exc: BaseException | None) -> str | None:
        """Note a failed build (or clear an old note after a good one); the cause, if failed."""
        record = os.environ.get(BUILDS_ENV)
        if exc is None:
            if record:
                clear_failure(Path(record), self.name)
            return None
        output = _failure_output(exc)
        cause = build_cause(output)
        if record:
            note_failure(Path(record), self.name, self.label, cause, output)
        return cause

    def _setup(self) -> None:
        try:
            super()._setup()
        except (util.ProcessError, OSError) as exc:
            cause = self._note(exc)
            # One line, not asv's traceback: asv stops this run, `serkit bench` goes on
            # with the next environment.
            raise util.UserError(f"{self.label} was not built: {cause}") from exc
        self._note(None)

    def install_project(self, conf: Any, repo: Any, commit_hash: str) -> None:
        try:
            super().install_project(conf, repo, commit_hash)
        except (util.ProcessError, OSError) as exc:
            self._note(exc)
            raise  # asv marks every benchmark of this environment failed, and goes on
        self._note(None)

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
        # The matrix's libraries from their wheels only: a source build needs a compiler,
        # and may fall back to pure Python under the release's label (serkit.run.index).
        for key in self._requirements:
            name = key[4:] if key.startswith("pip+") else key
            specs += ["--only-binary", name]
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
                # The cause goes into one line (see _setup), not uv's whole output.
                util.check_output(
                    command, env=env, timeout=self._install_timeout, display_error=False
                )
            else:
                self._run_pip(["install", "--upgrade", *specs], env=env, display_error=False)
        except util.ProcessError as exc:
            # asv then deletes the half-built environment: none is left partly installed.
            installer = "uv" if uv is not None else "pip"
            log.error(
                f"{installer} could not install the requirements of {self.name} "
                f"in one call: {build_cause(_failure_output(exc))}"
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
