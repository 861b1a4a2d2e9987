"""`serkit try --save DIR`: a trial written as an asv results tree, which `serkit compare` reads.

So "my data, tomorrow, on another machine" needs no fixture: each run saves under its own
machine name (`--machine`, by default the name `serkit bench` files results under), and
`serkit compare NAME_A NAME_B --results DIR` pairs the two by codec, document and the
releases each codec ran with, as it pairs two hosts' suite results.

What is written, in asv's results format version 2 (serkit.results.tree reads it):

- `DIR/benchmarks.json`: three benchmarks, `serkit_try.time_dumps` and
  `serkit_try.time_loads` (seconds per call) and `serkit_try.track_bytes` (the encoded
  size), each over the parameters `codec` and `document` (the file's name).
- `DIR/<machine>/machine.json`: the host, as asv's own profile has it (left as it is when
  present).
- `DIR/<machine>/<commit>-try-<when>.json`: one file per run, never overwritten, so nothing
  measured before is lost; of several at one commit, `serkit compare` takes the newest.

Each timing keeps every sample its processes took, each process's SAMPLES_PER_PROCESS
together (declared as the time benchmarks' `repeat`), and each sample's canary readings
before and after it, in serkit's notes (serkit.results.canary), with what each codec ran
with (serkit.results.asv_file.CODECS_KEY): `serkit compare` judges each process by the
machine's state and pairs each codec by its releases, exactly as it does a `serkit bench`
tree's. A timing's value is the median of its processes' values as `try` judged them, its
spread their quartiles. A call timed only once (too slow for one process in its share)
has no spread, and no verdict. The commit is the trial method's own (TRIAL_METHOD), not
the checkout's: two saves pair whichever serkit commit made them, unless the way `try`
samples changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from serkit import files
from serkit.codecs.registry import registry
from serkit.codecs.spec import STDLIB
from serkit.errors import RefusedFile, SerkitError
from serkit.inputs.documents import read_record
from serkit.results.asv_file import BENCHMARKS_FILE, MACHINE_FILE, results_data
from serkit.results.canary import note_row, params_key
from serkit.results.hosts import UNREADABLE, cpu_model
from serkit.run.libraries import codec_libraries, companions
from serkit.run.naming import checked_machine
from serkit.suite.benchmark_names import TRY_SIZE, TRY_TIME
from serkit.trial.sampling import SAMPLES_PER_PROCESS, WARM_S
from serkit.trial.timings import Timing
from serkit.trial.trials import CodecTrial, DocumentTrial

# Changing how `try` samples or judges (serkit.trial.sampling, .timings) changes this: results
# of another method are then not compared (asv's benchmark version differs), never silently
# paired.
TRIAL_METHOD = (
    f"serkit-try/5: processes, each a new interpreter, of {SAMPLES_PER_PROCESS} samples of "
    f"about 1 ms of each operation back to back after {WARM_S * 1e3:g} ms of its calls, a "
    "short call once more before each, each on the vCPU whose canary read faster, by the "
    "thread's CPU time, the canary around each sample, each process judged by its state"
)
COMMIT = hashlib.sha1(TRIAL_METHOD.encode()).hexdigest()
CODE_VERSION = hashlib.sha256(TRIAL_METHOD.encode()).hexdigest()
PARAM_NAMES = ["codec", "document"]
# Each benchmark as asv's discovery describes it; its `params` are added by each save
# (described), so that asv's own pages can read the tree.
BENCHMARKS: dict[str, dict[str, Any]] = {
    name: {
        "name": name,
        "type": kind,
        "unit": unit,
        "param_names": PARAM_NAMES,
        "version": CODE_VERSION,
        "code": TRIAL_METHOD,
        **({"repeat": SAMPLES_PER_PROCESS} if kind == "time" else {}),
    }
    for name, kind, unit in (
        *((name, "time", "seconds") for name in TRY_TIME.values()),
        (TRY_SIZE, "track", "bytes"),
    )
}
SAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")  # a document's name as a parameter asv can keep


def check_target(into: Path, machine: str | None = None) -> dict[str, Any]:
    """Refuse, before anything is measured, a folder `serkit try` cannot save into: one
    where a link, a FIFO or a device sits where it writes, or `machine` is no folder name.
    What its benchmarks.json describes already ({} where it has none), read once."""
    if into.exists() and not into.is_dir():
        raise SerkitError(f"--save {into}: not a folder")
    described = into / BENCHMARKS_FILE
    files.check_target(described)
    if machine is not None:
        checked_machine(machine, "the machine name")
        files.check_folder(into / machine)
        files.check_target(into / machine / MACHINE_FILE)
    if not described.is_file():
        return {}
    try:  # the guarded reader, never through a link: the folder may hold anything
        known = read_record(described, follow_links=False, what=f"a {BENCHMARKS_FILE}")
    except RefusedFile as exc:
        why = f"cannot read its {BENCHMARKS_FILE} ({exc.rule})"
        raise SerkitError(f"--save {into}: {why}") from None
    others = sorted(set(known) - set(BENCHMARKS) - {"version"}) if isinstance(known, dict) else []
    if not isinstance(known, dict) or others:
        raise SerkitError(
            f"--save {into}: it holds another suite's results ({BENCHMARKS_FILE} describes "
            f"{others[0] if others else 'something else'}): save to a folder of its own"
        )
    return known


def document_names(trials: Sequence[DocumentTrial]) -> list[str]:
    """Each document's parameter: its file name in safe characters, made unique."""
    names: list[str] = []
    for trial in trials:
        base = SAFE_NAME.sub("_", Path(trial.path).name)[:120] or "document"
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


def _requirements(codecs: Sequence[CodecTrial]) -> dict[str, str]:
    """Every installed release a codec ran with: its library and what it needs beside it."""
    found: dict[str, str] = {}
    for trial in codecs:
        if trial.round_trip_s is None:
            continue
        library = registry.spec(trial.codec).library
        if library == STDLIB:
            continue
        for name in (library, *companions(library)):
            try:
                found[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
    return dict(sorted(found.items()))


def _profile(machine: str) -> dict[str, Any]:
    cpu = cpu_model()
    return {
        "machine": machine,
        "os": f"{platform.system()} {platform.release()}",
        "arch": platform.machine(),
        "cpu": "" if cpu == UNREADABLE else cpu,
        "num_cpu": str(os.cpu_count() or ""),
        "ram": "",
        "version": 1,
    }


def _timing_cells(timing: Timing | None) -> tuple[Any, Any, Any, Any]:
    """value, Q1, Q3 and samples; no spread from a single value."""
    if timing is None:
        return None, None, None, None
    q1, median, q3 = timing.quartiles
    if timing.first_call_only or len(timing.values) < 2:
        return median, None, None, list(timing.samples)
    return median, q1, q3, list(timing.samples)


def _notes(timing: Timing | None) -> list[list[Any]]:
    """A timing's canary notes: one row a process, its intervals as its clock took them."""
    if timing is None or not timing.canary or not timing.per_process:
        return []
    size, calls = timing.per_process, timing.calls_per_sample
    return [
        note_row(
            [sample * calls for sample in timing.samples[at : at + size]],
            timing.canary[at : at + size],
        )
        for at in range(0, len(timing.samples), size)
    ]


def _codecs(trials: Sequence[DocumentTrial]) -> list[str]:
    return list(dict.fromkeys(c.codec for t in trials for c in t.codecs))


def run_axes(trials: Sequence[DocumentTrial]) -> list[list[str]]:
    """The run's parameters as asv keeps them, repr() of each: its codecs, its documents."""
    return [[repr(c) for c in _codecs(trials)], [repr(n) for n in document_names(trials)]]


def results_file(
    trials: Sequence[DocumentTrial], machine: str, now_ms: int
) -> tuple[str, dict[str, Any]]:
    """The name and content of one run's asv results file."""
    names = document_names(trials)
    codecs = _codecs(trials)
    by_pair = {(c.codec, name): c for t, name in zip(trials, names) for c in t.codecs}
    axes = run_axes(trials)
    grid = [(c, n) for c in codecs for n in names]  # asv's order: itertools.product(*axes)
    rows: dict[str, dict[str, Any]] = {}
    notes: dict[str, dict[str, list[list[Any]]]] = {}
    for operation, benchmark in TRY_TIME.items():
        timings = [getattr(by_pair[key], operation) if key in by_pair else None for key in grid]
        cells = [_timing_cells(timing) for timing in timings]
        notes[benchmark] = {
            params_key([repr(codec), repr(name)]): _notes(timing)
            for (codec, name), timing in zip(grid, timings)
            if _notes(timing)
        }
        rows[benchmark] = {
            "result": [c[0] for c in cells],
            "params": axes,
            "version": CODE_VERSION,
            "started_at": now_ms,
            "stats_q_25": [c[1] for c in cells],
            "stats_q_75": [c[2] for c in cells],
            "samples": [c[3] for c in cells],
        }
    sizes = [by_pair[key].fidelity.bytes if key in by_pair else None for key in grid]
    rows[TRY_SIZE] = {
        "result": sizes,
        "params": axes,
        "version": CODE_VERSION,
        "started_at": now_ms,
    }
    requirements = _requirements([c for t in trials for c in t.codecs])
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now_ms / 1000))
    env_name = f"try-py{python}-{stamp}"
    header = {
        "commit_hash": COMMIT,
        "env_name": env_name,
        "date": now_ms,
        "params": {"machine": machine, "python": python, **requirements},
        "python": python,
        "requirements": requirements,
        "env_vars": {},
    }
    ran = {c.codec for t in trials for c in t.codecs if c.round_trip_s is not None}
    libraries = {name: needs for name, needs in codec_libraries().items() if name in ran}
    data = results_data(header, rows, {b: n for b, n in notes.items() if n}, libraries)
    return f"{COMMIT[:8]}-{env_name}.json", data


def described(known: Mapping[str, Any], axes: list[list[str]]) -> dict[str, Any]:
    """benchmarks.json, complete as asv needs it: each benchmark's parameters those of the
    runs saved before (`known`, what the folder's file describes) and then this run's `axes`."""
    listed: dict[str, Any] = {"version": 2}
    for name, row in BENCHMARKS.items():
        earlier = known.get(name)
        before = earlier.get("params") if isinstance(earlier, dict) else None
        if not (isinstance(before, list) and len(before) == len(axes)):
            before = [[] for _ in axes]
        params = [
            list(dict.fromkeys([*(v for v in old if isinstance(v, str)), *new]))
            for old, new in zip((a if isinstance(a, list) else [] for a in before), axes)
        ]
        listed[name] = {**row, "params": params}
    return listed


def save(trials: Sequence[DocumentTrial], into: Path, machine: str) -> Path:
    """Write `trials` into the results tree at `into` under `machine`; the file written."""
    known = check_target(into, machine)
    folder = into / machine
    files.make_folder(folder, within=into)  # no link on the way is followed
    profile = folder / MACHINE_FILE
    now_ms = int(time.time() * 1000)
    name, data = results_file(trials, machine, now_ms)
    path = folder / name
    while os.path.lexists(path):  # two saves in one second: neither is lost
        now_ms += 1000
        name, data = results_file(trials, machine, now_ms)
        path = folder / name
    writes = {into / BENCHMARKS_FILE: json.dumps(described(known, run_axes(trials)), indent=1)}
    if not profile.is_file():
        writes[profile] = json.dumps(_profile(machine), indent=1)
    writes[path] = json.dumps(data, indent=1)
    files.write_together(writes, within=into)  # all or none: a full disk changes nothing
    return path
