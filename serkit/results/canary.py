"""The canary readings of a run, kept in its asv results file beside asv's own samples.

The benchmark processes note each sample's interval and the canary readings around it
(serkit.suite.canary). After every `asv run`, `serkit bench` writes the environment's
notes so far into its results file under CANARY_KEY: asv rewrites the file on each run,
keeping only its own keys, so each attach writes the whole run's notes again. A copy of
the file (history, `serkit results merge`) carries them along, and asv's tools ignore
the key.

Since version 2 each row keeps both readings taken around a sample, before and after, and
the reader judges them (serkit.sample_speed.reading); a version 1 row kept one reading per
sample, the lesser of the two, and is read as it was written.

A note is matched to asv's samples by its intervals: asv divides each by the pair's
`number`, so a process's samples and its note share one whole-number ratio. No order is
assumed, so a resumed run, an extra round or a failed process cannot misalign them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from serkit.sample_speed import reading
from serkit.suite.canary import CANARY_NOTES, PROCESS_NOTES

CANARY_KEY = "serkit_canary"
CANARY_VERSION = 2
# Version 1 rows hold one reading per sample (the lesser of the two around it).
READ_VERSIONS = (1, CANARY_VERSION)
# How near a whole number the ratio of a note's interval to asv's sample must be.
RATIO_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Note:
    """One process's samples as it timed them, with each sample's canary reading (ns) and
    its memory canary reading (ns; () in notes made before the memory canary)."""

    intervals: tuple[float, ...]
    canaries: tuple[float, ...]
    memory: tuple[float, ...] = ()
    before: tuple[float, ...] = ()  # the reading before each sample; () in version 1 rows


class Readings(NamedTuple):
    """Each sample's two canary readings, and the first canary's before the sample alone;
    None where its process has no note (or, for `before`, a version 1 note)."""

    canary: tuple[float | None, ...]
    memory: tuple[float | None, ...]
    before: tuple[float | None, ...]


def params_key(params: Sequence[str]) -> str:
    return json.dumps(list(params))


def _note_lines(folder: Path) -> Iterator[str]:
    """Every note in `folder`: one a process's file, and the lines of the older one file."""
    for path in sorted(folder.glob(PROCESS_NOTES)):
        try:
            yield path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    if (folder / CANARY_NOTES).is_file():
        with open(folder / CANARY_NOTES, encoding="utf-8", errors="replace") as lines:
            yield from lines


def read_notes(folder: Path) -> dict[str, dict[str, list[list[Any]]]]:
    """The notes in `folder`, by benchmark and parameters, as rows of the results file
    (intervals, then each sample's canary readings before and after it, then the memory
    canary's); an unreadable note is left out (its samples then have no state, and are
    judged as before the canary)."""
    rows: dict[str, dict[str, list[list[Any]]]] = {}
    for line in _note_lines(folder):
        try:
            note = json.loads(line)
            intervals = [float(t) for t in note["t"]]
            canaries = [[float(b), float(a)] for b, a in note["canary"]]
            memory = [[float(b), float(a)] for b, a in note.get("memory", [])]
            key = params_key([str(p) for p in note["params"]])
            benchmark = str(note["benchmark"])
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if len(intervals) == len(canaries):
            row = [intervals, canaries] + ([memory] if len(memory) == len(intervals) else [])
            rows.setdefault(benchmark, {}).setdefault(key, []).append(row)
    return rows


def note_row(intervals: Sequence[float], readings: Sequence[tuple[float, float]]) -> list[Any]:
    """One process's row as a results file keeps it (a version 2 row, as `read_notes` makes
    them): its samples' intervals, and each sample's canary readings before and after."""
    return [list(intervals), [[before, after] for before, after in readings]]


def clear_notes(folder: Path) -> None:
    """Remove every canary note in `folder` (a scratch suite starting again)."""
    for path in folder.glob(PROCESS_NOTES):
        path.unlink(missing_ok=True)
    (folder / CANARY_NOTES).unlink(missing_ok=True)


def notes_of(data: Mapping[str, Any]) -> dict[tuple[str, str], list[Note]]:
    """The notes a results file's data holds, by (benchmark, params_key); {} if none."""
    found: dict[tuple[str, str], list[Note]] = {}
    block = data.get(CANARY_KEY)
    if not isinstance(block, dict) or block.get("version") not in READ_VERSIONS:
        return found
    both = block["version"] == CANARY_VERSION
    judged = _judged if both else _as_written
    rows = block.get("rows")
    if not isinstance(rows, dict):
        return found
    for benchmark, by_params in rows.items():
        if not isinstance(by_params, dict):
            continue
        for key, notes in by_params.items():
            try:
                found[(str(benchmark), str(key))] = [
                    _note(judged, *row, both=both)
                    for row in notes
                    if len(row) in (2, 3) and len(row[0]) == len(row[1])
                ]
            except (TypeError, ValueError):
                continue
    return found


def matched_notes(
    folder: Path, samples: Mapping[tuple[str, str], Sequence[float]]
) -> dict[tuple[str, str], list[Note]]:
    """A plain `asv run`'s notes in `folder` (serkit.suite.canary.notes_folder), by (benchmark,
    params_key), each only where its last interval is one of `samples` (asv's, by the same
    key) times a whole number: the folder may also hold other runs' notes of the same
    commit and environment, whose intervals are none of this file's samples."""
    found = notes_of({CANARY_KEY: {"version": CANARY_VERSION, "rows": read_notes(folder)}})
    kept: dict[tuple[str, str], list[Note]] = {}
    for key, notes in found.items():
        taken = samples.get(key, ())
        mine = [n for n in notes if n.intervals and _one_of(n.intervals[-1], taken)]
        if mine:
            kept[key] = mine
    return kept


def _one_of(interval: float, samples: Sequence[float]) -> bool:
    """Whether `interval` is one of `samples` times a whole number (asv's `number`)."""
    return any(_same_number([interval], [s]) for s in samples)


def samples_per_process(notes: Mapping[tuple[str, str], Sequence[Note]]) -> dict[str, int]:
    """Each benchmark's samples per process in the run that wrote these notes: its longest
    note, one process's samples. A results tree's benchmarks.json says only what its last
    run took, and a plan can change between runs (a series on 2026-11-27 took 25 samples
    a process beside runs that took 5), so a file that carries notes is grouped by its own."""
    sizes: dict[str, int] = {}
    for (benchmark, _), kept in notes.items():
        for note in kept:
            sizes[benchmark] = max(sizes.get(benchmark, 0), len(note.intervals))
    return sizes


def _judged(readings: Any) -> tuple[float, ...]:
    """Each sample's reading from the two taken around it (a version 2 row)."""
    return tuple(float(reading(float(b), float(a))) for b, a in readings)


def _as_written(readings: Any) -> tuple[float, ...]:
    """Each sample's one reading (a version 1 row)."""
    return tuple(map(float, readings))


def _note(
    judged: Callable[[Any], tuple[float, ...]],
    intervals: Any,
    canaries: Any,
    memory: Any = (),
    *,
    both: bool = False,
) -> Note:
    """A note from a row of the results file (`both`: a version 2 row, whose readings are
    pairs); a memory row of another length is left out."""
    kept = judged(memory) if len(memory) == len(intervals) else ()
    before = tuple(float(b) for b, _ in canaries) if both else ()
    return Note(tuple(map(float, intervals)), judged(canaries), kept, before)


def _same_number(intervals: Sequence[float], samples: Sequence[float]) -> bool:
    if not samples or any(s <= 0 for s in samples):
        return False
    number = round(intervals[0] / samples[0])
    return number >= 1 and all(
        abs(t / s - number) <= RATIO_TOLERANCE * number for t, s in zip(intervals, samples)
    )


def sample_canaries(samples: Sequence[float], size: int | None, notes: Sequence[Note]) -> Readings:
    """Each sample's canary readings, None where no note matches its process's samples."""
    canary: list[float | None] = [None] * len(samples)
    memory: list[float | None] = [None] * len(samples)
    before: list[float | None] = [None] * len(samples)
    if not notes or not size:
        return Readings(tuple(canary), tuple(memory), tuple(before))
    unused = list(notes)
    for start in range(0, len(samples), size):
        chunk = samples[start : start + size]
        for note in unused:
            intervals = note.intervals[-len(chunk) :]
            if len(intervals) == len(chunk) and _same_number(intervals, chunk):
                canary[start : start + len(chunk)] = note.canaries[-len(chunk) :]
                if note.memory:
                    memory[start : start + len(chunk)] = note.memory[-len(chunk) :]
                if note.before:
                    before[start : start + len(chunk)] = note.before[-len(chunk) :]
                unused.remove(note)
                break
    return Readings(tuple(canary), tuple(memory), tuple(before))
