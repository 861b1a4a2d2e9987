"""JSON conformance: every JSON codec's `loads` on JSONTestSuite's parsing tests.

Each ``y_`` file must be accepted, each ``n_`` file rejected; ``i_`` files may go either
way (serkit.inputs.jsontestsuite). A file is decoded only in a worker subprocess
(``python -m serkit.checks.conformance``) whose address space is capped
(RLIMIT_AS) and which must answer each file within a time limit. One worker per codec
decodes every file in turn, so the whole matrix costs a few seconds; when a file
crashes or hangs that worker, the file is run again alone in a fresh worker, whose
outcome is the one recorded, and a new worker carries on with the next file. So a crash
or a hang is pinned on the one file that causes it, and never stops the run.

Outcomes: *accepted* (``loads`` returned), *rejected* (it raised), *crashed* (the worker
died: a signal or an abnormal exit) and *hung* (no answer within the time limit).
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from serkit.checks.workers import (
    EOF,
    ERROR,
    Worker,
    bind_in_worker,
    class_name,
    limit_resources,
)
from serkit.errors import DecodeError
from serkit.inputs.jsontestsuite import ACCEPT, EITHER, REJECT, expectation

ACCEPTED, REJECTED, CRASHED, HUNG = "accepted", "rejected", "crashed", "hung"
OUTCOMES = (ACCEPTED, REJECTED, CRASHED, HUNG)
# Statuses of a codec's whole run.
RAN = "ran"

DEFAULT_FILE_TIMEOUT = 5.0  # seconds per file; the slowest decode measured here is 0.1 s
DEFAULT_MEMORY_BYTES = 1 << 30  # no test file is over 100 KB: 1 GiB only stops a runaway
STARTUP_TIMEOUT = 60.0  # a worker imports serkit and its codec's library first
_MODULE = "serkit.checks.conformance"


@dataclass(frozen=True)
class FileOutcome:
    """What one codec's `loads` did with one test file."""

    file: str
    expected: str  # ACCEPT, REJECT or EITHER
    outcome: str  # one of OUTCOMES
    detail: str = ""  # the value's type, the exception class, the signal or the time limit

    @property
    def conforms(self) -> bool:
        """Accepted when it must be, rejected when it must be; never a crash or a hang."""
        if self.outcome in (CRASHED, HUNG):
            return False
        return self.expected == EITHER or (self.expected == ACCEPT) == (self.outcome == ACCEPTED)


@dataclass
class CodecConformance:
    """One codec's run over the test files."""

    codec: str
    status: str  # RAN, NOT_INSTALLED or ERROR
    version: str = ""
    implementation: str = ""
    files: list[FileOutcome] = field(default_factory=list)
    seconds: float = 0.0
    detail: str = ""  # why the run could not start or stopped early

    def counts(self) -> dict[str, dict[str, int]]:
        """{expected: {outcome: files}}, every key present."""
        table = {kind: dict.fromkeys(OUTCOMES, 0) for kind in (ACCEPT, REJECT, EITHER)}
        for result in self.files:
            table[result.expected][result.outcome] += 1
        return table

    def accepts_invalid(self) -> list[str]:
        """The n_ files it accepted."""
        return [r.file for r in self.files if r.expected == REJECT and r.outcome == ACCEPTED]

    def rejects_valid(self) -> list[str]:
        """The y_ files it rejected."""
        return [r.file for r in self.files if r.expected == ACCEPT and r.outcome == REJECTED]

    def incidents(self) -> list[FileOutcome]:
        """The files it crashed or hung on, whatever they expect."""
        return [r for r in self.files if r.outcome in (CRASHED, HUNG)]

    @property
    def conforms(self) -> bool:
        return self.status == RAN and all(r.conforms for r in self.files)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["counts"] = self.counts()
        data["accepts_invalid"] = self.accepts_invalid()
        data["rejects_valid"] = self.rejects_valid()
        data["conforms"] = self.conforms
        return data


def json_codecs() -> list[str]:
    """Every registered schemaless codec whose format is JSON, installed or not (a schema
    codec decodes into one document's types: JSONTestSuite's files have none)."""
    from serkit.codecs.registry import codec_names, registry

    return [
        name
        for name in codec_names()
        if registry.spec(name).format == "json" and not registry.spec(name).needs_schema
    ]


# --- the worker --------------------------------------------------------------------------


def run_worker(
    codec_name: str, paths: Sequence[str], memory: int, timeout: float, out: TextIO
) -> int:
    """Decode each file in `paths` with one codec, one result line each, in this process."""
    sys.dont_write_bytecode = True
    limit_resources(memory)
    _limit_cpu(math.ceil(timeout * len(paths) + STARTUP_TIMEOUT))
    codec = bind_in_worker(codec_name, out)
    if codec is None:
        return 0
    out.write(f"ready\t{codec.version}\t{codec.implementation}\n")
    out.flush()
    for index, path in enumerate(paths):
        data = Path(path).read_bytes()  # read before timing starts to matter: never hangs
        try:
            value = codec.loads(data)
        except Exception as exc:  # RecursionError and MemoryError are refusals too
            cause = exc.__cause__ if isinstance(exc, DecodeError) and exc.__cause__ else exc
            outcome, detail = REJECTED, class_name(cause)
        else:
            outcome, detail = ACCEPTED, type(value).__name__
        out.write(f"{index}\t{outcome}\t{detail}\n")
        out.flush()
    return 0


def _limit_cpu(seconds: int) -> None:
    """A backstop for a worker whose parent is gone: the parent's per-file limit comes first."""
    try:
        import resource
    except ImportError:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or hard > seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, hard))


# --- the parent --------------------------------------------------------------------------


class _Stopped(Exception):
    """A worker could not start or fell out of step: the codec's run ends as ERROR."""


def _start(
    codec: str, paths: Sequence[Path], limits: tuple[float, int], scratch: Path, label: str
) -> Worker:
    timeout, memory = limits
    args = ["--codec", codec, "--memory", str(memory), "--timeout", str(timeout)]
    args += ["--", *map(str, paths)]
    return Worker(_MODULE, args, scratch, label)


def _greeting(worker: Worker, result: CodecConformance) -> bool:
    """Read the worker's first line: True when it is ready to decode."""
    try:
        first = worker.next_line(STARTUP_TIMEOUT)
    except queue.Empty:
        first = EOF
    if first is not None and first.startswith("unavailable\t"):
        _, result.status, result.detail = first.split("\t", 2)
        return False
    if first is None or not first.startswith("ready\t"):
        raise _Stopped(f"worker failed to start ({worker.end()}): {worker.stderr_tail()}")
    _, result.version, result.implementation = first.split("\t", 2)
    return True


def _answer(worker: Worker, index: int, timeout: float) -> tuple[str, str]:
    """The worker's (outcome, detail) for its file `index`, or its crash or hang."""
    try:
        line = worker.next_line(timeout)
    except queue.Empty:
        worker.end()
        return HUNG, f"no answer in {timeout:g} s"
    if line is None:
        how = worker.end()
        tail = worker.stderr_tail()
        return CRASHED, f"{how}: {tail}" if tail and how.startswith("exit") else how
    reported, outcome, detail = [*line.split("\t", 2), "", ""][:3]
    if reported != str(index) or outcome not in (ACCEPTED, REJECTED):
        worker.end()
        raise _Stopped(f"worker out of step at file {index}: {line[:100]!r}")
    return outcome, detail


def run_codec(
    codec: str,
    files: Mapping[str, Path],
    *,
    timeout: float = DEFAULT_FILE_TIMEOUT,
    memory: int = DEFAULT_MEMORY_BYTES,
) -> CodecConformance:
    """Decode every file with one codec, in workers; each crash or hang pinned on its file."""
    result = CodecConformance(codec, RAN)
    names, paths = list(files), list(files.values())
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="serkit-conformance-") as folder:
        scratch = Path(folder)
        try:
            _run_batches(codec, names, paths, (timeout, memory), scratch, result)
        except _Stopped as exc:
            result.status, result.detail = ERROR, str(exc)
    result.seconds = round(time.monotonic() - started, 2)
    return result


def _run_batches(
    codec: str,
    names: list[str],
    paths: list[Path],
    limits: tuple[float, int],
    scratch: Path,
    result: CodecConformance,
) -> None:
    start = 0
    while start < len(paths):
        batch = start  # the worker's file 0
        worker = _start(codec, paths[batch:], limits, scratch, f"batch-{batch}")
        try:
            if not _greeting(worker, result):
                return
            for index in range(batch, len(paths)):
                outcome, detail = _answer(worker, index - batch, limits[0])
                if outcome in (CRASHED, HUNG):
                    outcome, detail = _alone(codec, paths[index], limits, scratch, detail)
                name = names[index]
                result.files.append(FileOutcome(name, expectation(name), outcome, detail))
                start = index + 1
                if worker.process.poll() is not None and start < len(paths):
                    break  # the worker is gone: a fresh one takes the next file
        finally:
            worker.end()


def _alone(
    codec: str, path: Path, limits: tuple[float, int], scratch: Path, in_batch: str
) -> tuple[str, str]:
    """Run one file that crashed or hung a batch worker again, in a worker of its own."""
    worker = _start(codec, [path], limits, scratch, f"alone-{path.name}")
    try:
        if not _greeting(worker, CodecConformance(codec, RAN)):
            raise _Stopped(f"{codec} was available to one worker and not to the next")
        outcome, detail = _answer(worker, 0, limits[0])
    finally:
        worker.end()
    if outcome in (CRASHED, HUNG):
        return outcome, detail
    # Only after other files: the crash or hang depended on what came before.
    return outcome, f"{detail}; in a batch: {in_batch}"


def run_conformance(
    files: Mapping[str, Path],
    codecs: Iterable[str] | None = None,
    *,
    timeout: float = DEFAULT_FILE_TIMEOUT,
    memory: int = DEFAULT_MEMORY_BYTES,
    jobs: int | None = None,
    done: Callable[[CodecConformance], None] | None = None,
) -> dict[str, CodecConformance]:
    """Run each codec (default: every JSON codec) over `files`, `jobs` codecs at a time."""
    names = list(codecs) if codecs is not None else json_codecs()

    def one(name: str) -> CodecConformance:
        result = run_codec(name, files, timeout=timeout, memory=memory)
        if done is not None:
            done(result)
        return result

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        return dict(zip(names, pool.map(one, names)))


# --- what a run found ---------------------------------------------------------------


def verdict(result: CodecConformance) -> str:
    """One phrase per codec: "conforms", or what it gets wrong and how often."""
    if result.status != RAN:
        return result.status
    problems = []
    if result.accepts_invalid():
        problems.append(f"accepts {len(result.accepts_invalid())} invalid")
    if result.rejects_valid():
        problems.append(f"rejects {len(result.rejects_valid())} valid")
    if result.incidents():
        problems.append(f"{len(result.incidents())} crashed or hung")
    return "; ".join(problems) or "conforms"


def findings(results: Mapping[str, CodecConformance]) -> list[str]:
    """Every codec that accepts invalid JSON, rejects valid JSON, crashes or hangs, named."""
    lines = []
    for result in results.values():
        if result.status != RAN:
            lines.append(f"{result.codec}: {result.status}: {result.detail}")
            continue
        invalid, valid = result.accepts_invalid(), result.rejects_valid()
        if invalid:
            lines.append(f"{result.codec} accepts {len(invalid)} invalid: {', '.join(invalid)}")
        if valid:
            lines.append(f"{result.codec} rejects {len(valid)} valid: {', '.join(valid)}")
        for incident in result.incidents():
            lines.append(f"{result.codec} {incident.outcome} on {incident.file}: {incident.detail}")
    return lines


@dataclass(frozen=True)
class MatrixRow:
    """One file: what it expects, and each codec's outcome (None: that codec did not run it)."""

    file: str
    expected: str
    cells: tuple[FileOutcome | None, ...]


def matrix(results: Mapping[str, CodecConformance], *, every_file: bool = False) -> list[MatrixRow]:
    """The file x codec matrix of the codecs that ran, in file-name order.

    Without `every_file`, only the files where the codecs disagree or one breaks the rule:
    the rest say nothing a count does not.
    """
    ran = [r for r in results.values() if r.status == RAN]
    by_codec = [{f.file: f for f in r.files} for r in ran]
    rows = []
    for name in sorted({f.file for r in ran for f in r.files}):
        cells = tuple(outcomes.get(name) for outcomes in by_codec)
        found = [c for c in cells if c is not None]
        differ = len({c.outcome for c in found}) > 1 or any(not c.conforms for c in found)
        if every_file or differ:
            rows.append(MatrixRow(name, expectation(name), cells))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """The worker's command line. Not for people: `serkit conformance` runs it."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {_MODULE}",
        description="Decode each file with one codec, in this process, one line per file.",
    )
    parser.add_argument("--codec", required=True)
    parser.add_argument("--memory", type=int, default=DEFAULT_MEMORY_BYTES, help="bytes")
    parser.add_argument("--timeout", type=float, default=DEFAULT_FILE_TIMEOUT, help="s per file")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    return run_worker(args.codec, args.paths, args.memory, args.timeout, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
