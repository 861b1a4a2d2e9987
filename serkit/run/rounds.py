"""`serkit bench` runs the rounds itself: one `asv run` per round and environment.

Each timed pair takes a few samples in each of `rounds` processes, one process per round,
the rounds interleaved over the whole grid. asv can interleave rounds itself, but it
saves an environment's results only when its run ends, and counts rounds per benchmark,
never per pair. Driving them from here gives three things:

- every finished round is saved (asv saves at the end of each `asv run`), so an
  interrupted run keeps them, and `serkit bench --resume` goes on from the next one;
- the quick run's budget (serkit.suite.budget): in the first round a pair too slow for
  it is timed once, and the later rounds leave it out by asv's parameter selection (a
  skipped pair would lose the sample: asv keeps only what a selected pair measured);
- a broken environment costs its own runs only: the others go on.

A benchmark declared with `rounds = r` (asv's attribute: 1 for tracks, 2 for import
time) takes part in the first r rounds; later rounds append their samples to the
earlier ones (`asv run --append-samples`), with asv's `number` kept per pair.

After the planned rounds come at most as many extra rounds, each only for the timed
pairs whose processes so far hold fewer than TYPICAL_PROCESSES typical ones, or place
the pair less precisely than the run's plan needs (serkit.suite.cases.precision_needed):
sequential sampling on a run's own precision, which never looks at a comparison, so it
cannot lean a verdict either way.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import re
import shutil
import signal
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from serkit.checkout import BENCH_STATE, results_dir
from serkit.errors import SerkitError
from serkit.progress import PHASES, PhaseClock
from serkit.results import asv_file, asv_runs
from serkit.results.asv_file import attach_notes
from serkit.results.builds import BUILDS_ENV, read_builds
from serkit.results.hosts import load_text
from serkit.results.tree import BENCHMARKS_FILE
from serkit.run.console import AsvConsole
from serkit.run.libraries import codec_libraries
from serkit.run.machine_speed import LEDGER, process_environment, run_probe
from serkit.run.precision import by_precision
from serkit.run.process import Interrupted, run_in_session
from serkit.run.round_selection import (
    first_round_values,
    imprecise_pairs,
    later_selection,
    short_in_words,
    split_bench_args,
)
from serkit.run.run_progress import RoundTimes, RunState
from serkit.suite.budget import BUDGET_ENV, NOTES_ENV, read_singles
from serkit.suite.cases import INSTRUCTIONS_ENV, TYPICAL_PROCESSES
from serkit.suite.memory import MEMORY_ENV
from serkit.suite.state_watch import moved_samples
from serkit.units import plural

# An extra round that brings fewer than this share of the short pairs within precision is
# the last: under a load of 7 on 2 cores here, half of every pair's processes read 2-5x
# slow, and 158 short pairs became 156, then 152, over two extra rounds.
LEAST_PROGRESS = 0.10
# The first round in parts, one `asv run` each, so that a Ctrl-C keeps the parts already
# finished (asv saves a run's values only when it ends; the first round of the default
# grid took about 4 minutes): the facts and sizes, the times, then everything else.
FIRST_ROUND_PARTS = (
    r"^bench_(facts|size)\.",
    r"^bench_time\.",
    r"^(?!bench_(facts|size|time)\.)",
)


def own_parts(codecs: Iterable[str]) -> list[list[str]]:
    """FIRST_ROUND_PARTS for an environment of one library: each part's benchmarks, only
    for the parameters of `codecs` (every benchmark's first parameter is the codec).

    asv forks a process for every parameter combination it selects, and a codec of another
    library then skips in it: with 27 codecs on 14 fixtures, that was about 20 s of each
    timed process's first round, and most of memory's and the counts' (docs/cost.md)."""
    names = "|".join(re.escape(repr(codec)) for codec in codecs)
    return [[rf"{part}[^(]*\((?:{names})[,)]"] for part in FIRST_ROUND_PARTS]


# What the rounds count as short: each timed benchmark of a pair on its own, so a pair
# counts twice ("88 pairs short" of a run of 88 pairs read as all of them).
TIMING = "a codec's dumps or loads of one fixture"

# Each `asv run` is one round, and asv keeps every sample: the per-process values that
# spreads and verdicts are computed from.
ROUND_ARGS = ("--record-samples", "-a", "rounds=1")


class _Stopped(Exception):
    """SIGINT or SIGTERM while serkit itself, not asv, was running."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


@dataclass
class _Round:
    """What every `asv run` of one `serkit bench` shares."""

    root: Path
    state: RunState
    base_env: dict[str, str]
    builds: Path  # the machine's record of environments not built
    labels: dict[str, str]
    regexes: list[str]  # what later rounds select by: the user's -b, or the run's own parts
    parts: list[list[str]]  # the first round's, one `asv run` each
    rest: list[str]  # the user's other asv arguments
    state_path: Path
    # What its timed processes need to place each sample on the faster vCPU.
    placing: dict[str, str]
    console: AsvConsole | None = None  # asv's output: a log and a bar (None: the terminal)
    # By extra round, the pairs short of precision in any environment as it began.
    short: dict[int, dict[str, set[tuple[str, ...]]]] = field(default_factory=dict)
    times: RoundTimes = field(default_factory=RoundTimes)  # what each finished run took
    phases: PhaseClock = PHASES  # the lines that say each round, with the time it has taken

    def _short_anywhere(self, round_index: int) -> dict[str, set[tuple[str, ...]]]:
        """The pairs short of precision in any environment of the run, as this extra round
        (or planned round past the least processes) begins: every environment takes them,
        so that both sides of a step sample the same stretch of time (a side that alone
        took its extra rounds later, after the load fell, read 1.4-1.7x faster than the
        other in serkit power here)."""
        if round_index not in self.short:
            benchmarks = _benchmarks(self.root)
            found: dict[str, set[tuple[str, ...]]] = {}
            for name in self.state.environments:
                if name in self.state.failed:
                    continue
                path = self.builds.parent / results_file_name(self.state.commit, name)
                for benchmark, combos in imprecise_pairs(
                    path, benchmarks, self.state.precision
                ).items():
                    found.setdefault(benchmark, set()).update(combos)
            self.short[round_index] = found
        return self.short[round_index]

    def run(self, round_index: int, name: str) -> int | None:
        """One round in one environment: asv's status, or None when nothing was left to run."""
        state = self.state
        notes = Path(state.notes) / hashlib.sha1(name.encode()).hexdigest()[:12]
        env = {**self.base_env, NOTES_ENV: str(notes), **self.placing}
        if name in state.uncounted:  # another environment counts them (serkit.run.matrix)
            env.update({MEMORY_ENV: "0", INSTRUCTIONS_ENV: "0"})
        # The commit the run began at: a commit made meanwhile is not what it measures.
        args = ["run", f"{state.commit or 'HEAD'}^!", "-E", name, *ROUND_ARGS]
        where = f", {self.labels[name]}" if len(state.environments) > 1 else ""
        if round_index == 0:
            if state.budget_s is not None:
                env[BUDGET_ENV] = f"{state.budget_s:g}"
            return self._first_round(name, args, env, where)
        benchmarks = _benchmarks(self.root)
        results = self.builds.parent / results_file_name(state.commit, name)
        singles = read_singles(notes)
        extra = round_index >= state.rounds
        measured = first_round_values(results)
        short_only = extra or by_precision(round_index, state.rounds, state.least_rounds)
        if short_only:  # the run's short pairs, those this environment measured
            short = self._short_anywhere(round_index)
            measured = {n: combos & measured.get(n, set()) for n, combos in short.items()}
        chosen = later_selection(
            benchmarks, round_index, self.regexes, singles, measured, extra=short_only
        )
        if not chosen:
            return None
        pairs = sum(len(combos) for combos in self.short.get(round_index, {}).values())
        before = sum(len(combos) for combos in self.short.get(round_index - 1, {}).values())
        first_env = name == next(n for n in state.environments if n not in state.failed)
        if extra and round_index - 1 in self.short and pairs > before * (1 - LEAST_PROGRESS):
            # The last extra round brought few pairs within precision: more processes do
            # not help, and each verdict states what it can detect.
            if first_env:
                self.say_short(round_index, f"({before} before the last)")
            return None
        args += ["--append-samples", *(part for r in chosen for part in ("-b", r))]
        label = f"{state.round_text(round_index)}{where}"
        if not extra:
            why = (
                f": {plural(pairs, 'timing')} short of a {state.precision:.1%} standard error"
                if short_only
                else ""
            )
        else:
            why = (
                f": {plural(pairs, 'timing')} ({TIMING}) short of {TYPICAL_PROCESSES} typical "
                f"processes or of a {state.precision:.1%} standard error"
            )
        self.phases.say(f"{label}{why}", self.times.left_s(state, round_index), at_most=extra)
        with _durations_kept(results):
            return self._asv(name, args, env, label)

    def say_short(self, round_index: int, before: str = "") -> None:
        """The pairs still short of precision as `round_index` begins, which and why, in one
        line: how much of their samples read slow, and the load; nothing where none is."""
        short = self._short_anywhere(round_index)
        pairs = sum(len(combos) for combos in short.values())
        name = next((n for n in self.state.environments if n not in self.state.failed), None)
        if not pairs or name is None:
            return
        done = round_index - self.state.rounds
        after = plural(done, "extra round") if done else "the planned rounds"
        results = self.builds.parent / results_file_name(self.state.commit, name)
        words = short_in_words(results, _benchmarks(self.root), short)
        self.phases.say(
            f"{plural(pairs, 'timing')} short of precision after {after}"
            f"{' ' + before if before else ''}, so not resolved: {words}; load average "
            f"{load_text()}"
        )

    def _first_round(self, name: str, args: list[str], env: dict[str, str], where: str) -> int:
        """The first round, part by part (FIRST_ROUND_PARTS; the user's -b as one part),
        each part's end noted in the run state: a Ctrl-C keeps the parts that finished."""
        state = self.state
        parts = self.parts
        if parts == [[regex] for regex in FIRST_ROUND_PARTS] and name in state.own_codecs:
            parts = own_parts(state.own_codecs[name])
        status = 0
        for index, regexes in enumerate(parts):
            if (name, index) in state.first_round_parts:
                continue
            of = f", part {index + 1} of {len(parts)}" if len(parts) > 1 else ""
            label = f"{state.round_text(0)}{where}{of}"
            self.phases.say(label, self.times.left_s(state, 0))
            selected = [part for regex in regexes for part in ("-b", regex)]
            status = max(status, self._asv(name, [*args, *selected], env, label))
            if name in state.failed:
                return 2
            state.first_round_parts.append((name, index))
            state.save(self.state_path)
        return status

    def _asv(self, name: str, args: list[str], env: dict[str, str], label: str) -> int:
        """One `asv run`: its status; 2, noted in the state, when the environment was not built."""
        state = self.state
        command = [sys.executable, "-m", "asv", *args, *self.rest]
        console = self.console
        if console is not None:
            console.start(label)
        results = self.builds.parent / results_file_name(state.commit, name)
        notes = Path(env[NOTES_ENV])
        before, started, stamp = asv_file.read_data(results), time.monotonic(), _stamp(results)
        try:
            output = console.line if console is not None else None
            code = run_in_session(command, cwd=self.root, env=env, output=output)
            # What this run cost beyond what asv recorded of it (serkit matrix --cost).
            wall = time.monotonic() - started
            after = asv_file.read_data(results)
            asv_runs.note(notes, asv_file.recorded_run(before, after, wall))
        finally:
            if console is not None:
                console.close_bar()
            # asv rewrote the results file with its own keys only: serkit's notes again. A
            # file asv left as it was (a round stopped by Ctrl-C) holds them already, and
            # rewriting a quick run's 12 MB file took seconds of a 2 s stop.
            if _stamp(results) != stamp:
                attach_notes(results, notes, codec_libraries())
        failure = read_builds(self.builds).get(name)
        if failure is not None:
            others = len(state.environments) - len(state.failed) > 1
            go_on = "; the other environments go on" if others else ""
            self.phases.say(f"{failure.in_words()}{go_on}")
            state.failed[name] = failure.cause
            return 2
        if code not in (0, 2):
            full = disk_full(self.root, console.tail() if console is not None else ())
            if full is not None:  # one line, not asv's traceback: the cause is the disk
                raise full
            where = "above"
            if console is not None:
                where = f"in {console.log}"
                if not console.verbose:  # its last lines here, the rest in the log
                    sys.stderr.write("".join(f"  {line}\n" for line in console.tail()))
            raise SerkitError(f"asv run failed (exit {code}); see its output {where}")
        return code


@contextlib.contextmanager
def _durations_kept(path: Path) -> Iterator[None]:
    """Keep each benchmark's duration as a planned round left it in the results file.

    asv writes a benchmark's duration as the last `asv run` took it, and an extra round
    runs a few short pairs only: `serkit matrix --cost` reads a duration as one process of
    every pair (serkit.run.cost), so after an extra round it would predict a fraction."""
    before, stamp = asv_file.durations(asv_file.read_data(path)), _stamp(path)
    try:
        yield
    finally:
        if before and _stamp(path) != stamp:  # unchanged, it holds them still
            asv_file.with_durations(path, before)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """Which version of the file is at `path` (inode, modification time, size); None
    without one. asv's and serkit's writes replace a results file whole (serkit.run.asv_env),
    so every write gives a new stamp."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_mtime_ns, found.st_size)


# Less free space than this where asv writes, after a failed `asv run`, is the cause.
FULL_DISK_BYTES = 16 * 2**20


def disk_full(root: Path, output: Iterable[str]) -> OSError | None:
    """ENOSPC, naming the folder, when a failed `asv run` said so or left the disk holding
    the checkout's `.asv` all but full; else None."""
    said = any("No space left on device" in line or "ENOSPC" in line for line in output)
    folder = results_dir(root)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if said or (free is not None and free < FULL_DISK_BYTES):
        return OSError(errno.ENOSPC, "no space left on device", str(folder))
    return None


def drive(
    root: Path,
    state: RunState,
    base_env: Mapping[str, str],
    labels: Mapping[str, str],
    console: AsvConsole | None = None,
) -> int:
    """Run every round not yet done, saving `state` after each; 0 or 2, as asv exits.

    `base_env` is asv's environment; `labels` names each environment for people; asv's
    output goes to `console` (a log and a progress bar), or without one to the terminal.
    Raises Interrupted, its message saying what was kept, on SIGINT or SIGTERM.
    """
    builds = Path(base_env[BUILDS_ENV])
    regexes, rest = split_bench_args(state.extra)
    if regexes:
        parts = [regexes]
    elif state.parts:
        parts = state.parts
        regexes = [regex for part in parts for regex in part]
    else:
        parts = [[regex] for regex in FIRST_ROUND_PARTS]
    state_path = root / BENCH_STATE
    placing = process_environment(run_probe(root), Path(state.notes))
    rounds = _Round(
        root,
        state,
        dict(base_env),
        builds,
        dict(labels),
        regexes,
        parts,
        rest,
        state_path,
        placing,
        console,
    )
    status, where = 0, (0, "")
    # Both signals, between asv runs too: a process started in the background inherits
    # SIGINT ignored, and would otherwise go on through every later round.
    previous = {signum: signal.signal(signum, _stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        for round_index in range(state.next_round(), state.rounds + state.extra_rounds):
            ran = False
            for name in state.environments:
                if name in state.failed or state.is_done(round_index, name):
                    continue
                where = (round_index, name)
                began = time.monotonic()
                code = rounds.run(round_index, name)
                if code is not None:  # a round with nothing left to run tells no time
                    rounds.times.add(round_index, time.monotonic() - began)
                ran = ran or code is not None
                status = max(status, code or 0)
                state.done.append((round_index, name))
                state.save(state_path)
            if round_index >= state.rounds and not ran:
                break  # every pair is placed as precisely as the plan needs: no more rounds
        else:
            if state.extra_rounds:  # every extra round ran: what they left short
                rounds.say_short(state.rounds + state.extra_rounds)
    except (Interrupted, KeyboardInterrupt, _Stopped) as exc:
        signum: int = signal.SIGINT
        if isinstance(exc, (Interrupted, _Stopped)):
            signum = exc.signum
        state.save(state_path)
        raise Interrupted(signum, _interrupted(root, state, where, dict(labels))) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if moved := moved_samples(Path(state.notes) / LEDGER):
        rounds.phases.say(
            f"{plural(moved, 'sample')} taken on the other vCPU, where this one read "
            "the slow state and that one faster"
        )
    state_path.unlink(missing_ok=True)
    shutil.rmtree(state.notes, ignore_errors=True)
    return status


def results_file_name(commit: str, env_name: str) -> str:
    """asv's name for an environment's results file at `commit`, in its machine's folder
    (a long environment name becomes its hash)."""
    from asv.results import get_filename  # deferred: asv is needed only to run

    return Path(str(get_filename("m", commit, env_name))).name


def _benchmarks(root: Path) -> dict[str, object]:
    """asv's benchmarks.json, as the last `asv run` discovered the suite."""
    try:
        data = json.loads((results_dir(root) / BENCHMARKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _interrupted(
    root: Path, state: RunState, where: tuple[int, str], labels: dict[str, str]
) -> str:
    """The one line saying what an interrupted run kept and how to go on."""
    round_index, name = where
    runs = state.rounds * (len(state.environments) - len(state.failed))
    place = state.round_text(round_index)
    extra = round_index >= state.rounds  # past the planned rounds
    if len(state.environments) > 1 and name:
        place += f" ({labels.get(name, name)})"
    if not state.done and not state.first_round_parts:
        return f"interrupted in {place}, before any round had finished; nothing was kept"
    kept = results_dir(root).relative_to(root)
    parts = len(state.first_round_parts)
    finished = f"{len(state.done)} of {runs} asv runs" if state.done else ""
    if parts and not state.done:
        finished = f"{parts} part{'s' if parts > 1 else ''} of round 1"
    if extra:
        more = max(0, len(state.done) - runs)
        finished = f"every planned round and {plural(more, 'extra asv run')}"
    return (
        f"interrupted in {place}: {finished} finished, their values "
        f"kept in {kept}; `serkit bench --resume` goes on from there"
    )
