"""Hostile documents, fed to every command that reads them, each in a capped subprocess.

Each case runs `python -m serkit ...` (or the suite's preparation) as a new process with
its address space capped at 2 GiB and a 60 s timeout (a hang guard, not a speed test),
and checks: one `serkit: error:` line and a non-zero exit (or one `serkit: warning:`
line), no traceback, and no side effect: the pickle payload's marker file never appears.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from serkit.inputs.user_fixtures import FOLDER_ENV, MANIFEST
from serkit.suite.cases import ALLOW_PICKLE_ENV

REPO = Path(__file__).resolve().parents[1]
ADDRESS_SPACE = 2 * 2**30
HANG_GUARD_S = 60
CONTENT_SHA256 = "ab" * 32  # a declaration's claim; these documents are refused before it counts


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float

    def lines(self, kind: str) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith(f"serkit: {kind}:")]


def _run(argv: list[str], cwd: Path, store: Path, **env: str) -> Ran:
    environ = {**os.environ, FOLDER_ENV: str(store), "PYTHONPATH": str(REPO), **env}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        preexec_fn=_capped,
    )
    return Ran(done.returncode, done.stdout, done.stderr, time.monotonic() - start)


def serkit(*args: str, cwd: Path, store: Path, **env: str) -> Ran:
    return _run(["-m", "serkit", *args], cwd, store, **env)


def suite_prepares(fixture: str, cwd: Path, store: Path, **env: str) -> Ran:
    """What each asv benchmark process does first: prepare its (codec, fixture) pair."""
    code = (
        "from serkit.suite.cases import CaseBenchmark\n"
        f"assert CaseBenchmark().prepare_for('json', {fixture!r}) is not None\n"
    )
    return _run(["-c", code], cwd, store, **env)


def assert_refused(ran: Ran, reason: str, marker: Path) -> None:
    assert "Traceback" not in ran.stderr, ran.stderr
    assert len(ran.lines("error")) == 1, ran.stderr
    assert ran.returncode == 1, (ran.returncode, ran.stderr)
    assert reason in ran.stdout + ran.stderr, (ran.stdout, ran.stderr)
    assert not marker.exists(), "the payload ran"
    assert ran.wall_s < HANG_GUARD_S


def assert_suite_skips(ran: Ran, fixture: str, reason: str, marker: Path) -> None:
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.returncode == 0, ran.stderr  # the pair is skipped, saying why; the rest run
    (skipped,) = [line for line in ran.stdout.splitlines() if line.startswith("serkit: skipped")]
    assert skipped.startswith(f"serkit: skipped json x {fixture}: ") and reason in skipped
    assert not marker.exists(), "the payload ran"


def assert_fixture_readers_refuse(
    fixture: str, reason: str, marker: Path, cwd: Path, store: Path, *flags: str, **env: str
) -> None:
    """verify, sizes and the suite's preparation, each refusing declared `fixture`."""
    for command in (
        ["fixtures", "verify", "--fixture", fixture, *flags],
        ["sizes", "--fixture", fixture, "--codec", "json", *flags],
    ):
        assert_refused(serkit(*command, cwd=cwd, store=store), reason, marker)
    ran = suite_prepares(fixture, cwd, store, **env)
    assert_suite_skips(ran, fixture, reason, marker)


def declare(store: Path, name: str, filename: str, data: bytes, **extra: Any) -> str:
    """Declare `data` as someone sharing a fixtures folder could: bytes pinned correctly."""
    store.mkdir(exist_ok=True)
    (store / filename).write_bytes(data)
    entry = {
        "file": filename,
        "sha256": CONTENT_SHA256,
        "file_sha256": hashlib.sha256(data).hexdigest(),
        **extra,
    }
    manifest = store / MANIFEST
    document = json.loads(manifest.read_text()) if manifest.exists() else {"fixtures": {}}
    document["fixtures"][name] = entry
    manifest.write_text(json.dumps(document))
    return f"{name}@{CONTENT_SHA256[:8]}"


class Payload:
    """Unpickled, it creates the marker file: any side effect proves code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "payload-ran"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


# --- a pickle that runs code -------------------------------------------------------------


def test_a_fixtures_file_that_allows_its_own_pickle_is_refused_and_nothing_runs(
    tmp_path: Path, store: Path, marker: Path
) -> None:
    declare(store, "orders", "orders.pickle", pickle.dumps(Payload(marker)), allow_pickle=True)
    for allowed in ([], ["--allow-pickle"]):
        ran = serkit(
            "fixtures", "verify", "--fixture", "small-dict", *allowed, cwd=tmp_path, store=store
        )
        assert_refused(ran, "allow_pickle is refused: a file cannot allow itself", marker)
        # The registry leaves your fixtures out, saying so once, for every command.
        assert len(ran.lines("warning")) == 1


def test_a_declared_pickle_loads_only_with_the_flag(
    tmp_path: Path, store: Path, marker: Path
) -> None:
    fixture = declare(store, "orders", "orders.pickle", pickle.dumps(Payload(marker)))
    reason = "is a pickle; loading a pickle runs code named by the file: pass --allow-pickle"
    assert_fixture_readers_refuse(fixture, reason, marker, tmp_path, store)


def test_a_swapped_pickle_is_refused_by_its_bytes_before_it_is_loaded_even_when_allowed(
    tmp_path: Path, store: Path, marker: Path
) -> None:
    fixture = declare(store, "orders", "orders.pickle", pickle.dumps({"orders": []}))
    (store / "orders.pickle").write_bytes(pickle.dumps(Payload(marker)))  # swapped in later
    reason = "has changed: its file sha256 is"
    allowed = {ALLOW_PICKLE_ENV: "1"}  # the suite's --allow-pickle
    assert_fixture_readers_refuse(
        fixture, reason, marker, tmp_path, store, "--allow-pickle", **allowed
    )


def test_a_pickle_given_on_the_command_line_needs_the_flag(
    tmp_path: Path, store: Path, marker: Path
) -> None:
    path = tmp_path / "orders.pkl"
    path.write_bytes(pickle.dumps(Payload(marker)))
    for command in (["try", str(path)], ["fixtures", "add", str(path)]):
        assert_refused(serkit(*command, cwd=tmp_path, store=store), "runs code", marker)
    assert not store.exists()


# --- documents that expand, or nest, past the limits --------------------------------------

LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi")
)
BILLION_LAUGHS = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + LAUGHS
).encode()
DEEP_JSON = ("[" * 400 + "]" * 400).encode()  # every codec measures 250; fidelity stops at ~490


@pytest.mark.parametrize(
    ("filename", "data", "reason"),
    [
        pytest.param(
            "laughs.yaml",
            BILLION_LAUGHS,
            "expands to more than 33,554,432 nodes (the limit; to allow more, pass --max-nodes",
            id="billion-laughs-yaml",
        ),
        pytest.param(
            "deep.json",
            DEEP_JSON,
            "nests deeper than 256 levels (the limit; to allow more, pass --max-depth",
            id="deep-json",
        ),
        pytest.param(
            "huge.msgpack",
            b"\xdd\xff\xff\xff\xff",  # an array that claims 4 billion items
            "is not valid msgpack: ValueError: 4294967295 exceeds max_array_len",
            id="huge-header-msgpack",
        ),
    ],
)
def test_a_document_past_the_limits_is_refused_by_every_command_that_reads_it(
    tmp_path: Path, store: Path, marker: Path, filename: str, data: bytes, reason: str
) -> None:
    path = tmp_path / filename
    path.write_bytes(data)
    for command in (["try", str(path)], ["fixtures", "add", str(path)]):
        assert_refused(serkit(*command, cwd=tmp_path, store=store), reason, marker)
    assert not store.exists()  # add left nothing behind

    fixture = declare(store, "shared", filename, data)  # as a shared folder could hold it
    assert_fixture_readers_refuse(fixture, reason, marker, tmp_path, store)


def test_a_limit_is_raised_only_from_the_command_line_and_a_deep_document_nothing_can_measure_fails(
    tmp_path: Path, store: Path, marker: Path
) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(("[" * 600 + "]" * 600).encode())
    ran = serkit(
        "try", str(path), "--max-depth", "1000", "--codec", "json", cwd=tmp_path, store=store
    )
    # Read, since the person allowed it; then no codec could measure it, and it says so.
    assert_refused(ran, f"no codec could measure {path}", marker)
    assert "RecursionError" in ran.stdout  # the table says why, per codec


# --- odd but honest documents: read, and said so in one line -----------------------------


@pytest.mark.parametrize(
    ("filename", "text", "warning"),
    [
        pytest.param(
            "manifests.yaml",
            "---\nkind: Service\n---\nkind: Deployment\n---\nkind: ConfigMap\n---\n",
            "manifests.yaml: 3 YAML documents, measured as a list",
            id="multi-document-yaml",
        ),
        pytest.param(
            "orders.json",
            '{"orders": [{"id": 1, "id": 2}]}',
            "orders.json: key 'id' appears more than once in the object at ['orders'][0], "
            "and only its last value is measured",
            id="duplicate-json-keys",
        ),
    ],
)
def test_an_odd_document_is_read_with_one_warning(
    tmp_path: Path, store: Path, filename: str, text: str, warning: str
) -> None:
    path = tmp_path / filename
    path.write_text(text)
    for command in (
        ["try", str(path), "--codec", "json", "--budget", "1"],
        ["fixtures", "add", str(path)],
    ):
        ran = serkit(*command, cwd=tmp_path, store=store)
        assert "Traceback" not in ran.stderr, ran.stderr
        assert ran.returncode == 0, ran.stderr
        (line,) = ran.lines("warning")
        assert line.endswith(warning), line


def test_the_person_raises_a_limit_with_a_flag_or_a_variable(
    tmp_path: Path, store: Path, marker: Path
) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_bytes(BILLION_LAUGHS.split(b"e:")[0])  # four levels: 8,307 nodes
    for how, env in ((["--max-nodes", "1000"], {}), ([], {"SERKIT_MAX_DOCUMENT_NODES": "1000"})):
        ran = serkit("fixtures", "add", str(path), *how, cwd=tmp_path, store=store, **env)
        assert_refused(ran, "expands to more than 1,000 nodes", marker)
    ran = serkit("fixtures", "add", str(path), "--max-nodes", "8307", cwd=tmp_path, store=store)
    assert ran.returncode == 0 and not ran.stderr, ran.stderr
    assert ran.stdout.startswith("added: laughs@")
