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

# Each test runs serkit in subprocesses on deep or huge documents (2-4 minutes each on a
# loaded 2-core machine).
pytestmark = pytest.mark.slow

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
        "from serkit.suite.case_benchmark import CaseBenchmark\n"
        f"assert CaseBenchmark().prepare_for('json', {fixture!r}) is not None\n"
    )
    return _run(["-c", code], cwd, store, **env)


def assert_refused(ran: Ran, reason: str, marker: Path) -> None:
    assert "Traceback" not in ran.stderr, ran.stderr
    assert len(ran.lines("error")) == 1, ran.stderr
    assert ran.returncode == 3, (ran.returncode, ran.stderr)
    assert reason in ran.stdout + ran.stderr, (ran.stdout, ran.stderr)
    assert not marker.exists(), "the payload ran"
    assert ran.wall_s < HANG_GUARD_S


def assert_verify_fails(ran: Ran, reason: str, marker: Path) -> None:
    """fixtures verify: a FAIL line saying why, exit 1 (the check found a problem), and
    nothing run."""
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.returncode == 1, (ran.returncode, ran.stderr)
    fails = [line for line in ran.stdout.splitlines() if line.startswith("FAIL ")]
    assert fails and any(reason in line for line in fails), ran.stdout
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
    verify = ["fixtures", "verify", "--fixture", fixture, *flags]
    assert_verify_fails(serkit(*verify, cwd=cwd, store=store), reason, marker)
    sizes = ["sizes", "--fixture", fixture, "--codec", "json", *flags]
    assert_refused(serkit(*sizes, cwd=cwd, store=store), reason, marker)
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
        assert_verify_fails(ran, "allow_pickle is refused: a file cannot allow itself", marker)
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


# --- round 3: names that lead out, files that are not files, deep and huge records ----------

ZEROS = "0" * 64


def _deep_json(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_shared_folder_cannot_name_a_file_outside_itself_nor_replace_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link.json").symlink_to(victim)
    new = tmp_path / "new.json"
    new.write_text('{"a": 1}')
    names = [str(victim), "../victim.txt", "../elsewhere/link.json", "inside-link.json"]
    for name in names:
        store = tmp_path / f"store-{names.index(name)}"
        store.mkdir()
        (store / "inside-link.json").symlink_to(victim)
        entry = {"file": name, "sha256": ZEROS, "file_sha256": ZEROS}
        (store / MANIFEST).write_text(json.dumps({"fixtures": {"o": entry}}))
        listed = serkit("fixtures", "list", cwd=tmp_path, store=store)
        assert "leads outside" in listed.stderr and "5 B" not in listed.stdout, listed
        verified = serkit(
            "fixtures", "verify", "--fixture", "small-dict", cwd=tmp_path, store=store
        )
        digest = hashlib.sha256(b"keep\n").hexdigest()[:12]
        assert digest not in verified.stdout + verified.stderr
        assert "Traceback" not in verified.stderr and verified.returncode != 0
        added = serkit(
            "fixtures", "add", str(new), "--name", "o", "--replace", cwd=tmp_path, store=store
        )
        assert added.returncode == 3 and len(added.lines("error")) == 1, added.stderr
        assert "leads outside" in added.stderr
        assert victim.read_text() == "keep\n", f"{name}: the file outside was touched"


def test_a_fifo_is_refused_unopened_by_try_and_by_a_shared_folder(tmp_path: Path) -> None:
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    ran = serkit("try", str(fifo), cwd=tmp_path, store=tmp_path / "none")
    assert ran.returncode == 3 and len(ran.lines("error")) == 1, ran.stderr
    assert "a FIFO, not a regular file" in ran.stderr
    store = tmp_path / "store"
    store.mkdir()
    os.mkfifo(store / "orders.json")
    entry = {"file": "orders.json", "sha256": CONTENT_SHA256, "file_sha256": ZEROS}
    (store / MANIFEST).write_text(json.dumps({"fixtures": {"orders": entry}}))
    fixture = f"orders@{CONTENT_SHA256[:8]}"
    for command in (
        ["fixtures", "verify", "--fixture", fixture],
        ["sizes", "--fixture", fixture, "--codec", "json"],
    ):
        ran = serkit(*command, cwd=tmp_path, store=store)
        assert "Traceback" not in ran.stderr and ran.returncode != 0, ran.stderr
        assert "a FIFO, not a regular file" in ran.stdout + ran.stderr


def test_a_deep_or_huge_fixtures_json_is_a_warning_and_help_still_works(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    for manifest, reason in (
        (_deep_json(100_000), "nests deeper than 64 levels"),
        (None, "over the 64.0 MiB limit for a fixtures.json"),
    ):
        path = store / MANIFEST
        if manifest is None:
            path.write_text("")
            os.truncate(path, 200 * 10**6)  # 200 MB, sparse: refused by its size, unread
        else:
            path.write_text(manifest)
        ran = serkit("--help", cwd=tmp_path, store=store)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
        listed = serkit("fixtures", "list", cwd=tmp_path, store=store)
        assert listed.returncode == 0 and len(listed.lines("warning")) == 1, listed.stderr
        assert reason in listed.stderr
        assert listed.wall_s < HANG_GUARD_S


def test_deep_and_huge_results_records_are_skipped_with_one_line(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from results_factory import two_hosts

    deep = _deep_json(200_000)
    cases = {
        "results file": lambda root: next((root / "b").glob("*-*.json")).write_text(deep),
        "machine.json": lambda root: (root / "b" / "machine.json").write_text(deep),
        "benchmarks.json": lambda root: (root / "benchmarks.json").write_text(deep),
        "host file": lambda root: (root / "b" / "serkit-host.yaml").write_text(
            "a:\n" + "".join("  " * i + "b:\n" for i in range(1, 5000))
        ),
        "huge results file": lambda root: os.truncate(
            next((root / "b").glob("*-*.json")), 70 * 2**20
        ),
    }
    for what, spoil in cases.items():
        root = two_hosts(tmp_path / what.replace(" ", "-"))
        spoil(root)
        said = ""
        for command in (["hosts"], ["compare", "a", "b"]):
            ran = serkit(*command, "--results", str(root), cwd=tmp_path, store=tmp_path / "no")
            assert "Traceback" not in ran.stderr, (what, ran.stderr)
            assert ran.wall_s < HANG_GUARD_S
            said += ran.stderr
        assert "nests deeper than 64 levels" in said or "over the 64.0 MiB limit" in said, (
            what,
            said,
        )


def test_a_deep_json_schema_is_refused_in_one_line(tmp_path: Path) -> None:
    document = tmp_path / "doc.json"
    document.write_text('{"a": 1}')
    schema = tmp_path / "deep.schema.json"
    levels = 900  # written as text: json.dumps itself stops short of 900 levels here
    opening = '{"type": "object", "properties": {"a": '
    schema.write_text(opening * levels + '{"type": "integer"}' + "}}" * levels)
    store = tmp_path / "store"
    ran = serkit(
        "fixtures", "add", str(document), "--schema", str(schema), cwd=tmp_path, store=store
    )
    assert ran.returncode == 3 and len(ran.lines("error")) == 1, ran.stderr
    assert "nests deeper than 64 levels" in ran.stderr and "Traceback" not in ran.stderr


# --- the system refuses a write: a full disk, a read-only folder -----------------------------


def test_a_full_disk_during_a_merge_is_one_line_exit_3_and_the_store_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    sys.path.insert(0, str(REPO / "tests"))
    from results_factory import RUNNERS, SUITE, shard_results, write_benchmarks

    from serkit.cli import main
    from serkit.run import runner

    def discover(root: Path, folder: Path) -> Path:
        write_benchmarks(folder, SUITE)
        return folder / "benchmarks.json"

    monkeypatch.setattr(runner, "discover_benchmarks", discover)
    store = tmp_path / "store"
    first = shard_results(tmp_path / "one", next(iter(RUNNERS)), 1, 2)
    assert main(["results", "merge", str(first), "--into", str(store)]) == 0
    kept = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    capsys.readouterr()

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    second = shard_results(tmp_path / "two", next(iter(RUNNERS)), 2, 2)
    monkeypatch.setattr(os, "rename", full)  # the rename into place
    assert main(["results", "merge", str(second), "--into", str(store)]) == 3
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("serkit: error:")]
    assert "no space left on the device (ENOSPC)" in line and str(store) in line, err
    assert "Traceback" not in err
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == kept


def test_a_read_only_report_folder_is_one_line_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    sys.path.insert(0, str(REPO / "tests"))
    from results_factory import two_hosts

    from serkit.cli import main

    output = tmp_path / "reports"
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.is_relative_to(output):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    results = two_hosts(tmp_path / "results")
    argv = ["report", "--results", str(results), "--into", str(output), "--no-asv"]
    assert main(argv) == 3
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("serkit: error:")]
    assert "the file system is read-only (EROFS)" in line and str(output) in line
    assert "Traceback" not in err


def test_a_read_only_home_stops_fetch_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from serkit.cli import main

    if not os.environ.get("SERKIT_FIXTURE_MIRROR"):
        pytest.skip("fetch without the network needs SERKIT_FIXTURE_MIRROR")
    home = tmp_path / "home"
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.is_relative_to(home):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    monkeypatch.setenv("SERKIT_DATA_DIR", str(home / ".cache" / "serkit"))
    assert main(["fixtures", "fetch"]) == 3
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("serkit: error:")]
    assert "read-only (EROFS)" in line and str(home) in line and "Traceback" not in err
