"""Each process judged once, when a results tree is read, by the machine's state
(serkit.sample_speed).

A sample's state is read against the fast canary of its host on its Python, from every run
of that host the tree holds (or of its machine, where its run recorded no host); on a
host with several runs, each run's values are given at the host's speed, and each pair's
corrected values at its own slow ratio from the host's other runs. What comes out is
stored on each measurement (Measurement.processes): every reader takes it from there.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from serkit.results.measurement import Benchmark, Environment, Measurement
from serkit.sample_speed import (
    ProcessValue,
    RunSpeed,
    StateShare,
    fast_reading,
    pair_slow_ratio,
    process_values,
    reference,
    slow_ratio_in_run,
    speed_readings,
    state_share,
)

Group = tuple[str, str, str]  # ("host" or "machine", its name, the Python)
Pair = tuple[str, Environment, str, tuple[str, ...]]  # host, environment, benchmark, params


def process_states(
    benchmark: Benchmark | None,
    m: Measurement,
    ref: float | None,
    speed: RunSpeed | None = None,
    slow_ratio: float | None = None,
) -> tuple[ProcessValue, ...]:
    """`m`'s processes, each judged by serkit.sample_speed's rule (`process_value`): from the
    samples taken in the machine's fast state, corrected from slow ones, or raw where no
    state is known; () where asv kept no samples, or `benchmark` (benchmarks.json's) does
    not say how they stand by process. The one place a process is judged."""
    size = benchmark.samples_per_process if benchmark is not None else None
    if size is not None and m.samples_per_process:
        size = m.samples_per_process  # the file's own plan, where its notes say it
    if size is None or not m.samples:
        return ()
    canaries = m.canary if len(m.canary) == len(m.samples) else (None,) * len(m.samples)
    return process_values(m.samples, canaries, size, ref, speed, slow_ratio)


def judge(
    measurements: Sequence[Measurement], benchmarks: Mapping[str, Benchmark]
) -> list[Measurement]:
    """`measurements` (every one read of a tree) with each one's canary reference, run speed,
    slow ratio and processes set: its reference, the fast state's reading on its Python,
    from every run of its host in the tree, or, where its run recorded no host (a run whose
    host record is yet to be written, or older), from every run of its machine; and, on a
    known host, its run's speed against the host's (serkit.sample_speed.RunSpeed) and its pair's
    slow ratio from the host's other runs (`_slow_ratios`)."""
    readings: dict[Group, list[float | None]] = {}
    speeds: dict[Group, list[float | None]] = {}
    runs: dict[tuple[str, Path], list[Measurement]] = {}
    for m in measurements:
        if m.canary:
            readings.setdefault(("machine", m.machine, m.env.python), []).extend(m.canary)
            if m.host is not None:
                readings.setdefault(("host", m.host, m.env.python), []).extend(m.canary)
                speeds.setdefault(("host", m.host, m.env.python), []).extend(
                    speed_readings(m.canary, m.canary_before)
                )
            runs.setdefault((m.env.python, m.file), []).append(m)
    refs = {group: reference([c for c in found if c]) for group, found in readings.items()}
    host_ns = {group: fast_reading(found, refs[group]) for group, found in speeds.items()}
    # A host's one run is at its own speed: only where it has others is there any to scale.
    host_runs = Counter(("host", m[0].host, python) for (python, _), m in runs.items())
    judged: dict[int, tuple[float | None, RunSpeed | None]] = {}
    for (python, _), in_run in runs.items():
        first = in_run[0]
        group = ("host", first.host, python) if first.host else ("machine", first.machine, python)
        ref = refs[group]
        host = host_ns.get(group) if host_runs[group] > 1 else None
        run = [c for m in in_run for c in speed_readings(m.canary, m.canary_before)]
        run_ns = fast_reading(run, ref) if host else None
        speed = RunSpeed(run_ns, host) if run_ns and host else None
        for m in in_run:
            judged[id(m)] = (ref, speed)
    ratios = _slow_ratios(measurements, judged, benchmarks)
    out = []
    for m in measurements:
        ref, speed = judged.get(id(m), (None, None))
        ratio = ratios.get(id(m))
        states = process_states(benchmarks.get(m.benchmark), m, ref, speed, ratio)
        out.append(
            dataclasses.replace(
                m, canary_reference=ref, run_speed=speed, slow_ratio=ratio, processes=states
            )
        )
    return out


def _slow_ratios(
    measurements: Iterable[Measurement],
    judged: Mapping[int, tuple[float | None, RunSpeed | None]],
    benchmarks: Mapping[str, Benchmark],
) -> dict[int, float]:
    """Each timed pair's slow ratio on a host with several runs, by measurement, from the
    host's other runs in the same environment (serkit.sample_speed.pair_slow_ratio); never its own
    run's, another host's, or another library release's or Python's: how a call slows is
    its code's."""
    ratios: dict[Pair, dict[Path, float]] = {}
    on_host = [m for m in measurements if id(m) in judged and m.host is not None]
    for m in on_host:
        benchmark = benchmarks.get(m.benchmark)
        if benchmark is None:
            continue
        ratio = slow_ratio_in_run(process_states(benchmark, m, *judged[id(m)]))
        if ratio is not None:
            ratios.setdefault(_pair(m), {})[m.file] = ratio
    out = {}
    for m in on_host:
        others = [r for file, r in ratios.get(_pair(m), {}).items() if file != m.file]
        found = pair_slow_ratio(others)
        if found is not None:
            out[id(m)] = found
    return out


def _pair(m: Measurement) -> Pair:
    return (m.host or "", m.env, m.benchmark, m.params)


def measured_state(measurements: Iterable[Measurement]) -> tuple[StateShare, float | None]:
    """How much of `measurements`' samples (one machine's) the machine spent in its slow
    state, and the fast canary reading it was judged against (ns)."""
    readings: list[float | None] = []
    memory: list[float | None] = []
    ref: float | None = None
    scales: dict[Path, float] = {}
    slow_ratios: list[float] = []
    waited: dict[Path, float] = {}
    for m in measurements:
        ref = ref or m.canary_reference
        readings += m.canary
        same = len(m.memory_canary) == len(m.canary)
        memory += m.memory_canary if same else [None] * len(m.canary)
        if m.run_speed is not None:
            scales[m.file] = m.run_speed.scale
        if m.slow_ratio is not None:
            slow_ratios.append(m.slow_ratio)
        waited[m.file] = m.run_waited_s
    share = state_share(readings, ref, memory)
    adjusted = dataclasses.replace(
        share,
        run_scales=tuple(sorted(scales.values())),
        slow_ratios=tuple(sorted(slow_ratios)),
        waited_s=sum(waited.values()),
    )
    return adjusted, ref
