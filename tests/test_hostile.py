from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from misbehaving_codec import ABORT, HANG, SEGFAULT, misbehaviour, valid_json

import serkit
from serkit.checks import hostile
from serkit.checks.hostile import (
    CRASH,
    EXCEPTION,
    FED,
    MUTATIONS,
    VALUE,
    Incident,
    hostile_payload,
    run_codec,
    run_hostile,
    seed_payloads,
)
from serkit.checks.workers import NOT_INSTALLED


def test_payloads_are_reproducible_from_codec_seed_and_index() -> None:
    seeds = seed_payloads(serkit.get_codec("msgpack"))
    assert seeds and all(0 < len(p) <= hostile.SEED_MAX_BYTES for p in seeds)
    first = [hostile_payload(seeds, "msgpack", 7, i) for i in range(30)]
    assert first == [hostile_payload(seeds, "msgpack", 7, i) for i in range(30)]
    assert first != [hostile_payload(seeds, "msgpack", 8, i) for i in range(30)]
    assert [m for m, _ in first[:3]] == list(MUTATIONS)
    truncated, flipped = first[0][1], first[1][1]
    assert any(seed.startswith(truncated) and len(seed) > len(truncated) for seed in seeds)
    assert any(len(seed) == len(flipped) and 1 <= _bits_apart(seed, flipped) <= 8 for seed in seeds)
    # A codec that encodes nothing still gets random payloads.
    assert hostile_payload([], "x", 0, 0)[0] == "random"


def _bits_apart(a: bytes, b: bytes) -> int:
    return sum(bin(x ^ y).count("1") for x, y in zip(a, b))


def test_real_codecs_raise_or_return_and_never_hang_on_this_seed() -> None:
    results = run_hostile(["json", "msgpack", "pickle-p5"], count=300, jobs=2)
    for result in results.values():
        assert result.status == FED and result.fed == 300, result
        assert result.outcomes[EXCEPTION] > 200, result
        assert result.outcomes[CRASH] == result.outcomes["hang"] == 0, result
    json_classes = set(results["json"].exception_classes)
    assert json_classes <= {"json.decoder.JSONDecodeError", "UnicodeDecodeError"}
    # The library's own exception classes, not serkit's DecodeError wrapper.
    assert not any("serkit" in c for r in results.values() for c in r.exception_classes)


def test_pickle_is_fed_only_inside_the_sandbox() -> None:
    result = run_codec("pickle-p0", count=600)
    assert result.status == FED and result.fed == 600
    # Mutated global names are looked up; the sandbox refuses every one it has not seen
    # in pickle's own valid payloads, before anything is imported or called.
    assert result.blocked == {"pickle.find_class": result.outcomes["blocked"]}
    assert result.outcomes["blocked"] > 0


@pytest.mark.slow
def test_the_sandbox_refuses_what_a_malicious_pickle_asks_for(tmp_path: Path) -> None:
    """The worker loop, in a subprocess, on a payload that would run a shell command."""
    marker = tmp_path / "ran"
    script = f"""
import io, pickle, sys
from serkit.checks import hostile
evil = pickle.dumps(type("E", (), {{"__reduce__": lambda s: (__import__("os").system,
                                    ("touch {marker}",))}})())
hostile.hostile_payload = lambda *args: ("random", evil)
out = io.StringIO()
hostile.run_worker("pickle-p0", 0, 0, 1, out)
print(out.getvalue().splitlines()[-1])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "0\tblocked\tpickle.find_class"
    assert not marker.exists()


@pytest.mark.slow
def test_crashes_and_hangs_are_recorded_and_the_run_goes_on(
    misbehaving_codec: serkit.Codec,
) -> None:
    seed, count = 3, 45
    seeds = seed_payloads(misbehaving_codec)
    expected: dict[str, list[int]] = {}
    for index in range(count):
        _, data = hostile_payload(seeds, "misbehaving", seed, index)
        action = "value" if valid_json(data) else misbehaviour(data)
        expected.setdefault(action, []).append(index)
    assert {ABORT, SEGFAULT, HANG} <= set(expected), "pick a seed that shows every failure"

    result = run_codec("misbehaving", seed=seed, count=count, payload_timeout=1.0)

    assert result.status == FED and result.fed == count, result
    signals = {ABORT: "SIGABRT", SEGFAULT: "SIGSEGV"}
    crashes = [
        Incident(CRASH, i, hostile.mutation_of(i, True), signals[action])
        for action in (ABORT, SEGFAULT)
        for i in expected[action]
    ]
    hangs = [
        Incident("hang", i, hostile.mutation_of(i, True), "no answer in 1 s")
        for i in expected[HANG]
    ]
    assert sorted(result.incidents, key=lambda i: i.index) == sorted(
        crashes + hangs, key=lambda i: i.index
    )
    assert result.outcomes == {
        EXCEPTION: len(expected.get("raise", [])),
        VALUE: len(expected.get("value", [])),
        "blocked": 0,
        "hang": len(hangs),
        CRASH: len(crashes),
    }
    assert result.exception_classes == {"ValueError": len(expected["raise"])}


def test_an_unknown_codec_is_an_error_not_fed() -> None:
    result = run_codec("no-such-codec", count=10)
    assert result.status == hostile.ERROR and "unknown codec" in result.detail
    assert result.fed == 0


def test_the_time_budget_stops_a_codec(misbehaving_codec: serkit.Codec) -> None:
    result = run_codec("misbehaving", seed=3, count=10_000, payload_timeout=1.0, budget=1.5)
    assert result.status == FED and "time budget" in result.detail
    assert 0 < result.fed < 10_000


def test_not_installed_is_its_own_status(ghost_codec: str) -> None:
    result = run_codec(ghost_codec, count=10)
    assert result.status == NOT_INSTALLED and "pip install ghost-lib" in result.detail


@pytest.mark.slow
def test_worker_writes_one_line_per_payload() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "serkit.checks.hostile",
            "--codec",
            "json",
            "--start",
            "5",
            "--stop",
            "9",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ready\t")
    assert [line.split("\t")[0] for line in lines[1:]] == ["5", "6", "7", "8"]
    assert all(line.split("\t")[1] in (EXCEPTION, VALUE) for line in lines[1:])
