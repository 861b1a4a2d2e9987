"""Facts recorded beside every timing: which implementation ran, and whether it was exact.

asv results have no column for them, so each is a track of its own, 1 or 0, in the
same environment and commit as the timings it qualifies.
"""

from __future__ import annotations

from collections.abc import Mapping

from asv_runner.benchmarks.mark import SkipNotImplemented

from serkit.codecs.registry import codec_names, get_codec, schema_codec_names
from serkit.errors import SerkitError
from serkit.inputs.fixtures import fixture_names
from serkit.schemas.types import SUPPLIED
from serkit.suite.case_benchmark import CaseBenchmark
from serkit.suite.facts import FactsBenchmark, PairFacts
from serkit.suite.preparation import pair_schema, schema_number


class Implementation:
    params = (codec_names(),)
    param_names = ("codec",)
    unit = "1 = compiled, 0 = pure Python"
    timeout = 60

    # A track times nothing, so `setup` is safe here.
    def setup(self, codec: str) -> None:
        try:
            self.implementation = get_codec(codec).implementation
        except SerkitError as exc:
            raise NotImplementedError(str(exc)) from exc

    def track_compiled(self, codec: str) -> int:
        return int(self.implementation == "c")


class Fidelity(FactsBenchmark):
    unit = "1 = exact round trip, 0 = lossy"

    # Judged with the sizes, once per codec release, Python and document (serkit.suite.facts).
    def track_exact(
        self, facts: Mapping[tuple[str, str], PairFacts], codec: str, fixture: str
    ) -> int:
        found = self.pair(facts, codec, fixture)
        if found.exact is None:  # not installed, unsupported, error, no schema
            raise SkipNotImplemented(found.not_judged)
        return found.exact


class KeyOrder(FactsBenchmark):
    unit = "1 = lossy in dict key order only, 0 = other losses"

    def track_key_order_only(
        self, facts: Mapping[tuple[str, str], PairFacts], codec: str, fixture: str
    ) -> int:
        """Of a lossy round trip, 1 when it lost dict key order and nothing else."""
        found = self.pair(facts, codec, fixture)
        if found.key_order_only is None:  # exact, or no verdict at all
            raise SkipNotImplemented(found.not_judged or "exact: nothing lost")
        return found.key_order_only


class Schema(CaseBenchmark):
    """The schema a schema codec ran under: a new inference shows here as a new value."""

    # Only the codecs that run under a schema: asv forks a process for every pair it
    # selects, and the others' only said "needs none" (170 processes of a quick run).
    params = (schema_codec_names(), fixture_names())
    unit = "sha256 of the derived schema: its first 12 hex digits as an integer"
    inputs = "nothing"

    def track_schema_sha256(self, codec: str, fixture: str) -> int:
        try:
            return schema_number(codec, fixture)
        except SerkitError as exc:  # needs none, not installed, no schema fits
            raise SkipNotImplemented(str(exc)) from exc


class SchemaOrigin(CaseBenchmark):
    """Where that schema came from: derived from the document, or supplied by the user."""

    params = Schema.params
    unit = "1 when the user supplied the schema, 0 when it was derived"
    inputs = "nothing"

    def track_user_supplied(self, codec: str, fixture: str) -> int:
        try:
            return int(pair_schema(codec, fixture).origin == SUPPLIED)
        except SerkitError as exc:  # needs none, not installed, no schema fits
            raise SkipNotImplemented(str(exc)) from exc
