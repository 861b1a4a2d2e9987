"""Sessions: `nox -s bench` is the main job, `nox -s lint tests` the checks (see README)."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite, after fetching (or mirroring) the fixture sources."""
    session.install("-e", ".[test]")
    # Honours SERKIT_FIXTURE_MIRROR, which CI points at ../shared/fixtures.
    session.run("serkit", "fixtures", "fetch")
    # pytest exits 5 when it collects nothing; nox fails on any non-zero exit.
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and mypy, strict on the package."""
    session.install("-e", ".", "ruff", "mypy", "types-PyYAML", "types-tabulate", "types-tqdm")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "serkit")


@nox.session
def bench(session: nox.Session) -> None:
    """The main job: the codecs this machine has, then the size table of every fixture."""
    session.install(".")
    session.run("serkit", "fixtures", "fetch")
    session.run("serkit", "list")
    session.run("serkit", "sizes", *session.posargs)
