"""Phase lines with the time since a command began, and the time left from the rounds done."""

from __future__ import annotations

import io

from serkit.progress import PhaseClock, clock_text
from serkit.run.run_progress import RoundTimes, RunState


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _state(rounds: int = 5, extra: int = 5, envs: tuple[str, ...] = ("a",)) -> RunState:
    state = RunState("c0ffee", True, False, None, rounds, list(envs), {}, [], "notes")
    state.extra_rounds = extra
    return state


def test_a_duration_reads_as_a_clock() -> None:
    assert clock_text(0) == "0:00"
    assert clock_text(42.4) == "0:42"
    assert clock_text(533) == "8:53"
    assert clock_text(3725) == "1:02:05"
    assert clock_text(-1) == "0:00"  # a clock stepped back is not a negative time


def test_every_phase_line_ends_in_the_time_since_the_command_began() -> None:
    clock, stream = Clock(), io.StringIO()
    phases = PhaseClock(clock, stream=stream, tty=False)
    clock.now += 65
    phases.say("round 2 of 5")
    phases.restart()
    clock.now += 3
    phases.say("writing the report")
    assert stream.getvalue().splitlines() == [
        "serkit: round 2 of 5 [1:05 elapsed]",
        "serkit: writing the report [0:03 elapsed]",
    ]


def test_the_time_left_is_said_on_a_terminal_only() -> None:
    clock = Clock()
    on_terminal = PhaseClock(clock, tty=True)
    in_a_log = PhaseClock(clock, stream=io.StringIO())  # no tty: a log keeps no guesses
    clock.now += 30
    assert on_terminal.words("round 3 of 5", 90) == (
        "serkit: round 3 of 5 [0:30 elapsed, about 1:30 left]"
    )
    assert on_terminal.words("round 6 of at most 10", 40, at_most=True).endswith("up to 0:40 left]")
    assert on_terminal.words("round 1 of 5", None) == "serkit: round 1 of 5 [0:30 elapsed]"
    assert in_a_log.words("round 3 of 5", 90) == "serkit: round 3 of 5 [0:30 elapsed]"


def test_the_time_left_comes_from_the_later_rounds_once_one_has_run() -> None:
    """The first round also measures sizes and facts: it tells only until a later one ran."""
    state, times = _state(), RoundTimes()
    assert times.left_s(state, 0) is None  # nothing finished: no guess
    times.add(0, 60.0)
    state.done.append((0, "a"))
    assert times.left_s(state, 1) == 4 * 60.0
    times.add(1, 20.0)
    state.done.append((1, "a"))
    times.add(2, 30.0)
    state.done.append((2, "a"))
    assert times.left_s(state, 3) == 2 * 25.0  # rounds 4 and 5, each as rounds 2 and 3 took


def test_the_time_left_counts_each_environments_run() -> None:
    state, times = _state(rounds=3, envs=("a", "b", "broken")), RoundTimes()
    state.failed["broken"] = "not built"
    for env in ("a", "b"):
        times.add(0, 10.0)
        state.done.append((0, env))
    times.add(1, 4.0)
    state.done.append((1, "a"))
    assert times.left_s(state, 1) == 3 * 4.0  # round 2 in b, round 3 in a and b


def test_past_the_plan_the_time_left_is_a_bound_from_the_extra_rounds() -> None:
    state, times = _state(rounds=2, extra=3), RoundTimes()
    for index, took in enumerate((50.0, 20.0)):
        times.add(index, took)
        state.done.append((index, "a"))
    assert times.left_s(state, 2) == 3 * 20.0  # no extra round yet: a planned one's time
    times.add(2, 5.0)
    state.done.append((2, "a"))
    assert times.left_s(state, 3) == 2 * 5.0
