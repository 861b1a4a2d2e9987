"""Instructions per call of dumps and loads, counted with valgrind's cachegrind.

Wall time on a shared machine moves by 2x between runs; the number of instructions a
call executes does not. So the suite can count them, beside the timings: opt-in
(SERKIT_BENCH_INSTRUCTIONS=1), as the default grid takes about 3 minutes of CPU.

Here is the driver, which runs natively. A gate prepares every pair natively and skips
the ones that cannot be counted (not installed, unsupported, too slow under valgrind) or
that the store already holds; then one valgrind worker per core (two here), each over its
share of the codecs, counts the rest (serkit.suite.cachegrind says how).

What makes two runs agree:
- Every worker gets the same environment: PYTHONHASHSEED=0, a fixed locale and PATH,
  a fixed command line (`-c`, as `-m` would put the scratch folder's path into sys.path).
- glibc's `rep movsb` and `rep stosb` copies are turned off (GLIBC_TUNABLES). Valgrind
  counts one instruction per byte they move, and glibc chooses them by the buffers'
  addresses, which vary between runs: orjson dumps of small-dict read 27,600 or 43,200
  instructions per call, run by run; without them, 27,600 every time. So the counts
  describe the work done with glibc's vector loops.
- A codec's worker takes the grid's fixtures in order, selected or not, so a pair's
  process starts from the same state whatever else was selected or skipped. (That state
  matters: pickle and json key a memo by object address, and moved by up to 2 % when
  the pairs before them in the process changed.)

Counts compare work, not speed: between hosts of the same architecture they say whether
the code did more or less, never how fast the host ran it.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from serkit.errors import SerkitError
from serkit.inputs.fixtures import fixture_names
from serkit.suite import cachegrind
from serkit.suite.cachegrind import PairCounts
from serkit.suite.cases import INJECT_ENV, INSTRUCTIONS_ENV, Selection, injected_from_env

MISSING_VALGRIND = (
    "instruction counts need valgrind, which is not on PATH"
    " (Debian and Ubuntu: apt install valgrind)"
)
TOO_SLOW = "too slow to count under valgrind"
OPT_IN = f"instruction counts are opt-in: set {INSTRUCTIONS_ENV}=1"

# A pair is counted only if one dumps and one loads take at most this long natively.
# Under cachegrind a call runs 30-60x slower and a pair makes each call at least twice:
# the slowest pairs under 1 s here (0.4 s natively) took 30 s there. On this grid the
# pairs under the limit took 0.41 s or less, those over it 2.3 s or more (the best of
# the samples, on a busy 2-core machine), so a busy moment does not move a pair across.
# The slow run (SERKIT_BENCH_SLOW=1) waits longer and counts more.
NATIVE_LIMIT_S = 1.0
SLOW_NATIVE_LIMIT_S = 5.0
# How many native samples a pair near the limit gets; the best of them is compared.
GATE_SAMPLES = 7
# Preparing a pair natively stops after this many times the limit: skipped unmeasured.
GATE_TIMEOUT_LIMITS = 5
# Every pair's process under valgrind stops here, whatever the native measure said: with
# cache simulation, json of sensor-record took over 180 s under a load of 9 on 2 cores.
PAIR_BUDGET_S = 600
# asv's limit for the whole count (setup_cache): the default grid takes 3-5 minutes.
SETUP_TIMEOUT_S = 3600

_TUNABLES = ":".join(
    f"glibc.cpu.x86_{op}_threshold=2147483647" for op in ("rep_movsb", "rep_stosb")
)
_PASSED_THROUGH = (
    *("HOME", "PYTHONPATH", "XDG_CACHE_HOME"),
    *("SERKIT_DATA_DIR", "SERKIT_FIXTURE_MIRROR"),  # where the fixture sources are
    INJECT_ENV,  # a known change the counts make too (serkit.suite.cachegrind)
)
_GATE_RESULTS = "gate.jsonl"
_DOCUMENTS = "documents.pickle"  # the documents built from a source, built natively
NOT_SELECTED = "not selected in this run"
Rows = list[tuple[str, str, Optional[str]]]  # one codec's (codec, fixture, why skipped or None)
REUSED = "counted in an earlier run: read from the store"
# Part of every stored count's key: a change to how counts are made counts every pair afresh.
COUNTS_FORMAT = 1
# Part of an injected count's key alone: 2 since its extra calls are counted over the
# pair's own n (serkit.suite.cachegrind), which plain counts do not touch.
INJECTED_FORMAT = 2


def opt_in_environment() -> dict[str, str]:
    """What to add to asv's environment so that a run counts instructions too."""
    return {INSTRUCTIONS_ENV: "1"}


def valgrind_path() -> str | None:
    return shutil.which("valgrind")


def unavailable(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why this run counts no instructions, or None when it does."""
    if not Selection.from_env(environ).instructions:
        return OPT_IN
    if valgrind_path() is None:
        return MISSING_VALGRIND
    return None


def worker_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The whole environment of the gate and the workers: the same in every run."""
    env = {
        "PATH": os.defpath,
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "GLIBC_TUNABLES": _TUNABLES,
    }
    env.update({name: environ[name] for name in _PASSED_THROUGH if environ.get(name)})
    return env


@dataclass(frozen=True)
class Counted:
    """The counts of one run's selected pairs: what setup_cache hands to every track."""

    pairs: Mapping[tuple[str, str], PairCounts] = field(default_factory=dict)
    seconds: float = 0.0

    def per_call(self, codec: str, fixture: str, operation: str) -> float:
        """Instructions per call; SerkitError says why a pair has none."""
        pair = self.pairs.get((codec, fixture))
        if pair is None:
            raise SerkitError(f"{codec} x {fixture} was not counted in this run")
        count = pair.counts.get(operation)
        if count is None:
            raise SerkitError(pair.skipped or f"{operation} of {codec} x {fixture} was not counted")
        return count.per_call

    def cycles_per_call(self, codec: str, fixture: str, operation: str) -> float:
        """Estimated cycles per call (serkit.suite.cachegrind.estimated_cycles); SerkitError
        says why a pair has none."""
        self.per_call(codec, fixture, operation)  # the pair's own reason, if it has none
        cycles = self.pairs[codec, fixture].counts[operation].cycles
        if cycles is None:
            raise SerkitError(f"{operation} of {codec} x {fixture} was counted without cache-sim")
        return cycles


def count_selected(
    params: tuple[Sequence[str], Sequence[str]], environ: Mapping[str, str] = os.environ
) -> Counted:
    """Count every pair of the grid that this run selects; nothing when it is not opted in."""
    if unavailable(environ) is not None:
        return Counted()
    selection = Selection.from_env(environ)
    pairs = [(c, f) for c in params[0] for f in params[1] if selection.excludes(c, f) is None]
    limit = SLOW_NATIVE_LIMIT_S if selection.slow else NATIVE_LIMIT_S
    start = time.perf_counter()
    counted = count_pairs(pairs, native_limit_s=limit)
    elapsed = time.perf_counter() - start
    done = sum(1 for pair in counted.values() if pair.counts)
    print(f"serkit: counted the instructions of {done} of {len(pairs)} pairs in {elapsed:.0f} s")
    return Counted(counted, elapsed)


def count_pairs(
    pairs: Sequence[tuple[str, str]],
    *,
    jobs: int | None = None,
    python: str = sys.executable,
    native_limit_s: float = NATIVE_LIMIT_S,
    target: int = cachegrind.TARGET_INSTRUCTIONS,
) -> dict[tuple[str, str], PairCounts]:
    """Count dumps and loads of every pair; a pair that cannot be counted says why.

    A pair counted before with the same codec release, Python build and document (and the
    same way of counting: `counts_measure`) is read back from the facts store
    (serkit.suite.facts) rather than counted again; every pair counted here is kept there.

    Never raises for a pair: a missing valgrind, a codec that is not installed, a pair
    too slow to count or a worker that fails each end as a skip with its reason.
    """
    valgrind = valgrind_path()
    if valgrind is None:
        return {pair: PairCounts(*pair, {}, MISSING_VALGRIND) for pair in pairs}
    measure = counts_measure(valgrind, target)
    with tempfile.TemporaryDirectory(prefix="serkit-instructions-") as scratch:
        gated = _run_gate(Path(scratch) / "gate", pairs, python, native_limit_s, measure)
        reasons = {pair: reason for pair, (reason, _) in gated.items()}
        stored = _stored_counts({pair: key for pair, (reason, key) in gated.items() if not reason})
        reasons.update((pair, REUSED) for pair in stored)
        documents = Path(scratch) / "gate" / _DOCUMENTS
        # One worker per codec, over every fixture of the grid in order: a pair that is
        # not counted (not selected, skipped by the gate, or read from the store) still
        # takes its turn.
        requests = {
            codec: [
                (codec, fixture, reasons.get((codec, fixture), NOT_SELECTED) or None)
                for fixture in fixture_names()
            ]
            for codec in dict.fromkeys(codec for codec, _ in pairs)
        }
        results = {pair: PairCounts(*pair, {}, reasons.get(pair) or NOT_SELECTED) for pair in pairs}
        results.update(stored)
        wanted = [rows for rows in requests.values() if any(row[2] is None for row in rows)]
        shares = _shares(wanted, max(1, jobs or min(2, os.cpu_count() or 1)))

        def count(
            share: list[list[tuple[str, str, str | None]]],
        ) -> dict[tuple[str, str], PairCounts]:
            folder = Path(scratch) / f"worker-{shares.index(share)}"
            return _run_worker(folder, share, documents, valgrind, python, target)

        with ThreadPoolExecutor(len(shares) or 1) as pool:
            for counted in pool.map(count, shares):
                results.update((pair, row) for pair, row in counted.items() if pair in results)
    _store_counts({pair: key for pair, (_, key) in gated.items() if key}, results, stored)
    return results


def _shares(groups: list[Rows], jobs: int) -> list[list[Rows]]:
    """The codecs' groups dealt to `jobs` workers, the most pairs to count first, each to
    the worker with the fewest so far: the workers finish close together."""
    shares: list[list[Rows]] = [[] for _ in range(min(jobs, len(groups)))]
    load = [0] * len(shares)
    for rows in sorted(groups, key=lambda rows: -sum(row[2] is None for row in rows)):
        least = load.index(min(load))
        shares[least].append(rows)
        load[least] += sum(row[2] is None for row in rows)
    return shares


def counts_measure(valgrind: str, target: int) -> dict[str, Any]:
    """How this run counts, as part of each stored count's key: any change counts afresh."""
    done = subprocess.run([valgrind, "--version"], capture_output=True, text=True, check=False)
    return {
        "measure": "cachegrind",
        "format": COUNTS_FORMAT,
        "valgrind": done.stdout.strip(),
        "cache": list(cachegrind.CACHE_MODEL),
        "target": target,
        "tunables": _TUNABLES,
        "grid": fixture_names(),  # each worker's order: what a pair's process starts from
        # An injected run's counts include its extra calls: never reused for another run.
        **(
            {"injected": injected, "injected_format": INJECTED_FORMAT}
            if (injected := injected_from_env())
            else {}
        ),
    }


def _store_dir() -> Path | None:
    from serkit.suite.facts import facts_dir

    return facts_dir()


def _stored_counts(keys: Mapping[tuple[str, str], str]) -> dict[tuple[str, str], PairCounts]:
    """The pairs whose counts the store holds under their key (with cycles: cache-sim)."""
    from serkit.suite.facts import read_stored, stored_path

    found = {}
    for pair, key in keys.items():
        path = stored_path(key)
        data = read_stored(path) if path else None
        try:
            counted = PairCounts.from_dict(data) if isinstance(data, dict) else None
        except (KeyError, TypeError, ValueError, IndexError):
            counted = None  # unreadable: counted again, and written over
        if counted is not None and counted.counts and (counted.codec, counted.fixture) == pair:
            found[pair] = counted
    return found


def _store_counts(
    keys: Mapping[tuple[str, str], str],
    results: Mapping[tuple[str, str], PairCounts],
    stored: Mapping[tuple[str, str], PairCounts],
) -> None:
    """Keep every pair counted in this run whole (both operations), under its key."""
    from serkit.suite.facts import stored_path, write_stored

    for pair, key in keys.items():
        counted, path = results.get(pair), stored_path(key)
        if path is None or counted is None or pair in stored or counted.skipped:
            continue
        if set(counted.counts) == set(cachegrind.OPERATIONS):
            with contextlib.suppress(OSError):  # a read-only cache: counted again next time
                write_stored(path, counted.as_dict())


def _run_gate(
    folder: Path,
    pairs: Sequence[tuple[str, str]],
    python: str,
    limit_s: float,
    measure: Mapping[str, Any] | None = None,
) -> dict[tuple[str, str], tuple[str, str]]:
    """Prepare every pair natively: (why to skip it or "" when it can be counted, its key in
    the store or "")."""
    folder.mkdir()
    from serkit.inputs.fixtures import get_fixture

    timeout_s = max(1, round(GATE_TIMEOUT_LIMITS * limit_s))
    # The documents built from a source that the workers adopt: the default grid's, and
    # the selected slow ones. The same set, whatever else was selected, so that what a
    # worker holds before the pairs (and so their counts) does not depend on it.
    built = {f for f in fixture_names() if not get_fixture(f).slow}
    built |= {f for _, f in pairs}
    documents = sorted(f for f in built if get_fixture(f).source is not None)
    request = {
        "pairs": pairs,
        "timeout_s": timeout_s,
        "limit_s": limit_s,
        "documents": documents,
        "measure": measure,
        "store": str(store) if (store := _store_dir()) and measure is not None else None,
    }
    (folder / cachegrind.REQUEST).write_text(json.dumps(request))
    try:
        done: subprocess.CompletedProcess[str] | None = subprocess.run(
            [python, "-c", "from serkit.suite.instructions import gate_main; gate_main()"],
            cwd=folder,
            env=worker_environment(),
            capture_output=True,
            text=True,
            timeout=timeout_s * (len(pairs) + 1) + 60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        done = None
    gated: dict[tuple[str, str], tuple[str, str]] = {}
    path = folder / _GATE_RESULTS
    for line in path.read_text().splitlines() if path.exists() else ():
        row = json.loads(line)
        pair = (row["codec"], row["fixture"])
        reason = row["skipped"] or ""
        if not reason and row.get("seconds", 0.0) > limit_s:
            reason = (
                f"{TOO_SLOW}: one dumps and one loads take"
                f" {row['seconds']:.2f} s here, over the {limit_s:g} s limit"
            )
        gated[pair] = (reason, row.get("key") or "")
    if done is None or done.returncode != 0:
        last = _last_line(done.stderr) if done else f"over {timeout_s} s a pair"
        for pair in pairs:
            gated.setdefault(pair, (f"the native measure failed: {last}", ""))
    return gated


def _run_worker(
    folder: Path,
    groups: Sequence[Rows],
    documents: Path,
    valgrind: str,
    python: str,
    target: int = cachegrind.TARGET_INSTRUCTIONS,
) -> dict[tuple[str, str], PairCounts]:
    """One valgrind process over `groups`, each a codec's rows."""
    folder.mkdir()
    request = {
        "groups": [len(rows) for rows in groups],
        "budget_s": PAIR_BUDGET_S,
        "documents": str(documents) if documents.exists() else None,
        "target": target,
    }
    (folder / cachegrind.REQUEST).write_text(json.dumps(request))
    for group, rows in enumerate(groups):
        for index, row in enumerate(rows):
            (folder / cachegrind.request_path(group, index)).write_text(json.dumps(row))
    command = [
        *(valgrind, "--tool=cachegrind", "--cache-sim=yes", *cachegrind.CACHE_MODEL),
        *("--cachegrind-out-file=cg.%p", "-q"),
        *(python, "-c", "from serkit.suite.cachegrind import worker_main; worker_main()"),
    ]
    log = folder / "stderr.txt"
    with log.open("wb") as stream:
        process = subprocess.Popen(
            command,
            cwd=folder,
            env=worker_environment(),
            stdin=subprocess.DEVNULL,
            stdout=stream,
            stderr=stream,
            start_new_session=True,  # its own process group: a timeout ends every fork
        )
    counted = sum(1 for rows in groups for row in rows if row[2] is None)
    try:
        process.wait(timeout=PAIR_BUDGET_S * counted + 300)
        failure = "no result"
        if process.returncode != 0:
            failure = _last_line(log.read_text(errors="replace"))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        failure = "valgrind did not finish in time"
    results = {}
    for group, rows in enumerate(groups):
        for index, (codec, fixture, _) in enumerate(rows):
            path = folder / cachegrind.result_path(group, index)
            status = folder / cachegrind.status_path(group, index)
            if path.exists():
                results[codec, fixture] = PairCounts.from_dict(json.loads(path.read_text()))
                continue
            reason = f"counting failed: {failure}"
            if status.exists():
                code = os.waitstatus_to_exitcode(int(status.read_text()))
                reason = f"counting it under valgrind failed (exit status {code})"
                if code == -signal.SIGALRM:
                    reason = f"counting it under valgrind took over {PAIR_BUDGET_S} s"
            results[codec, fixture] = PairCounts(codec, fixture, {}, reason)
    return results


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


# --- the gate: runs natively in its own process, one forked process per pair -----------


def gate_main() -> None:
    """Time one dumps and one loads of every pair of the request, natively."""
    request = json.loads(Path(cachegrind.REQUEST).read_text())
    timeout_s, limit_s = int(request["timeout_s"]), float(request["limit_s"])
    measure, store = request.get("measure"), request.get("store")
    _build_documents(request["documents"])
    keys = _keys(request["pairs"], measure)
    for codec, fixture in request["pairs"]:
        key = keys.get((codec, fixture), "")
        if key and store and (Path(store) / key[:2] / f"{key}.json").exists():
            # Counted before: neither prepared nor timed again (the driver reads it back).
            _write_line({"codec": codec, "fixture": fixture, "skipped": None, "key": key})
            continue
        pid = os.fork()
        if pid == 0:  # its own process: a pair too slow to prepare is stopped, not waited on
            signal.alarm(timeout_s)  # for preparing the pair
            _write_line({**_gate_one(codec, fixture, limit_s, timeout_s), "key": key})
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            reason = f"preparing it natively failed (exit status {code})"
            if code == -signal.SIGALRM:
                reason = f"{TOO_SLOW}: preparing it or one call took over {timeout_s} s natively"
            _write_line({"codec": codec, "fixture": fixture, "skipped": reason})


def _build_documents(names: Sequence[str]) -> None:
    """Build here the documents derived from a source, for the workers to unpickle."""
    from serkit.inputs.fixtures import load_fixture

    documents = {}
    for name in names:
        with contextlib.suppress(SerkitError):  # no source: the pairs say so themselves
            documents[name] = load_fixture(name)
    if documents:
        with open(_DOCUMENTS, "wb") as stream:
            pickle.dump(documents, stream, protocol=pickle.HIGHEST_PROTOCOL)


def _keys(pairs: Sequence[Sequence[str]], measure: Any) -> dict[tuple[str, str], str]:
    """Each pair's key in the store (its release, this Python's build, its document and how
    it is counted), each document hashed once; none where the codec or document is missing."""
    from serkit.suite.facts import pair_key  # deferred: the driver never imports codecs

    keys: dict[tuple[str, str], str] = {}
    if measure is None:
        return keys
    hashes: dict[str, str] = {}
    for codec, fixture in pairs:
        with contextlib.suppress(SerkitError):  # the pair's own process says why
            keys[codec, fixture] = pair_key(codec, fixture, measure, hashes)
    return keys


def _gate_one(codec: str, fixture: str, limit_s: float, timeout_s: int) -> dict[str, Any]:
    from serkit.suite.preparation import prepare

    row: dict[str, Any] = {"codec": codec, "fixture": fixture, "skipped": None}
    try:
        case = prepare(codec, fixture)
    except SerkitError as exc:  # not installed, or cannot encode or decode the fixture
        row["skipped"] = str(exc)
        return row
    dumps, loads, obj = case.config.dumps, case.config.loads, case.obj
    # The best of several samples, so that a busy moment on a shared machine seldom skips
    # a pair; only a pair near the limit gets them all. The timeout bounds each sample.
    clock, best = time.perf_counter, float("inf")
    for sample in range(GATE_SAMPLES):
        signal.alarm(timeout_s)
        start = clock()
        loads(dumps(obj))
        best = min(best, clock() - start)
        if best > 3 * limit_s or (sample >= 2 and best < limit_s / 3):
            break
    row["seconds"] = best
    return row


def _write_line(row: Mapping[str, Any]) -> None:
    with open(_GATE_RESULTS, "a") as stream:
        stream.write(json.dumps(row) + "\n")
