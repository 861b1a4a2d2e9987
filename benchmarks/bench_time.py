"""Time of dumps, loads and the round trip, for every codec on every fixture.

Each body repeats one call `inner_loops` times, with locals as in timeit's own loop; the
class's timer turns that back into seconds per call (see serkit.suite.cases).
"""

from __future__ import annotations

# Not `from itertools import repeat`: asv reads a module-level `repeat` as its own setting.
import itertools

from serkit.suite.case_benchmark import CaseBenchmark


class Dumps(CaseBenchmark):
    operation = "dumps"

    def time_dumps(self, codec: str, fixture: str) -> None:
        dumps, obj = self.dumps, self.obj
        for _ in itertools.repeat(None, self.inner_loops):
            dumps(obj)


class Loads(CaseBenchmark):
    operation = "loads"
    inputs = "round_trip"

    # The payload was encoded beforehand, by the same codec and config.
    def time_loads(self, codec: str, fixture: str) -> None:
        loads, payload = self.loads, self.payload
        for _ in itertools.repeat(None, self.inner_loops):
            loads(payload)


class RoundTrip(CaseBenchmark):
    operation = "round_trip"
    inputs = "round_trip"

    # One message out and back in: post 002's messages per second is 1 / this time.
    def time_round_trip(self, codec: str, fixture: str) -> None:
        dumps, loads, obj = self.dumps, self.loads, self.obj
        for _ in itertools.repeat(None, self.inner_loops):
            loads(dumps(obj))
