"""Each process judged once, when a results tree is read, by the machine's state
(serkit.sample_speed).

A sample's state is read against the fast canary of its host on its Python, from every run
of that host the tree holds (or of its machine, where its run recorded no host); a pair's
corrected values are divided by its own slow ratio in its run, so a run is judged by its
own samples and the host's fast canary alone. What comes out is stored on each measurement
(Measurement.processes): every reader takes it from there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from serkit.results.measurement import Benchmark, Measurement
from serkit.sample_speed import ProcessValue, StateShare, process_values, reference, state_share

Group = tuple[str, str, str]  # ("host" or "machine", its name, the Python)


def process_states(
    benchmark: Benchmark | None, m: Measurement, ref: float | None
) -> tuple[tuple[ProcessValue, ...], float | None]:
    """`m`'s processes, each judged by serkit.sample_speed's rule (`process_values`), and the
    slow ratio its corrected ones were divided by; () where asv kept no samples, or
    `benchmark` (benchmarks.json's) does not say how they stand by process. The one place
    a process is judged."""
    size = benchmark.samples_per_process if benchmark is not None else None
    if size is not None and m.samples_per_process:
        size = m.samples_per_process  # the file's own plan, where its notes say it
    if size is None or not m.samples:
        return (), None
    canaries = m.canary if len(m.canary) == len(m.samples) else (None,) * len(m.samples)
    return process_values(m.samples, canaries, size, ref)


def _group(m: Measurement) -> Group:
    return ("host", m.host, m.env.python) if m.host else ("machine", m.machine, m.env.python)


def judge(
    measurements: Sequence[Measurement], benchmarks: Mapping[str, Benchmark]
) -> list[Measurement]:
    """`measurements` (every one read of a tree) with each one's canary reference, slow
    ratio and processes set: its reference, the fast state's reading on its Python, from
    every run of its host in the tree, or, where its run recorded no host (a run whose
    host record is yet to be written, or older), from every run of its machine."""
    readings: dict[Group, list[float]] = {}
    for m in measurements:
        found = [c for c in m.canary if c]
        readings.setdefault(("machine", m.machine, m.env.python), []).extend(found)
        if m.host is not None:
            readings.setdefault(("host", m.host, m.env.python), []).extend(found)
    refs = {group: reference(found) for group, found in readings.items()}
    out = []
    for m in measurements:
        ref = refs.get(_group(m)) if m.canary else None
        states, ratio = process_states(benchmarks.get(m.benchmark), m, ref)
        out.append(dataclasses.replace(m, canary_reference=ref, slow_ratio=ratio, processes=states))
    return out


def measured_state(measurements: Iterable[Measurement]) -> tuple[StateShare, float | None]:
    """How much of `measurements`' samples (one machine's) the machine spent in its slow
    state, and the fast canary reading it was judged against (ns)."""
    readings: list[float | None] = []
    memory: list[float | None] = []
    ref: float | None = None
    slow_ratios: list[float] = []
    waited: dict[Path, float] = {}
    for m in measurements:
        ref = ref or m.canary_reference
        readings += m.canary
        same = len(m.memory_canary) == len(m.canary)
        memory += m.memory_canary if same else [None] * len(m.canary)
        if m.slow_ratio is not None:
            slow_ratios.append(m.slow_ratio)
        waited[m.file] = m.run_waited_s
    share = state_share(readings, ref, memory)
    adjusted = dataclasses.replace(
        share, slow_ratios=tuple(sorted(slow_ratios)), waited_s=sum(waited.values())
    )
    return adjusted, ref
