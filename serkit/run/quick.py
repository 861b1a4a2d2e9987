"""The quick run: a first answer in under two minutes, and what it leaves to `--full`.

Every codec, `dumps` and `loads`, on five documents of different shapes, with their sizes
and fidelity: that answers "which codec, for my data, on my machine?" without the rest
of the grid. asv is handed exactly those pairs by parameter (`-b 'name(codec, fixture)'`),
so a pair left out costs no process at all; a pair that would cost more than the quick
run's budget is predicted before it is ever called (serkit.suite.prediction) and left
to `--full` too. Both are recorded with the run and stated by the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from serkit.codecs.registry import codec_names, default_fixtures
from serkit.errors import SerkitError
from serkit.inputs.fixtures import default_fixture_names, fixture_names, get_fixture
from serkit.suite.budget import pair_cost_s
from serkit.suite.cases import FIXTURES_ENV, LEAVE_OUT_ENV, SAMPLES_PER_PROCESS, Selection
from serkit.suite.prediction import Prediction, predict

# Small, record-shaped, a list of records, a real nested document, a real large corpus.
QUICK_FIXTURES = ("small-dict", "sensor-record", "random-dicts-100", "senate-bios", "twitter")
# Per benchmark module: the classes the quick run takes (facts and sizes: every one).
QUICK_BENCHMARKS = (r"bench_(?:facts|size)\.\w+", r"bench_time\.(?:Dumps|Loads)")
# What a full run adds, besides the other fixtures and the pairs over the budget.
FULL_ONLY = (
    "the round trip",
    "import time",
    "the adapter's overhead",
    "memory per call",
    "instruction counts",
)
# What a quick run measures of its pairs when asked (--memory, --instructions).
ON_REQUEST = {
    "memory per call": r"bench_memory\.\w+",
    "instruction counts": r"bench_instructions\.\w+",
}


@dataclass(frozen=True)
class LeftOut:
    """A pair the quick run does not time: predicted too slow for its budget."""

    codec: str
    fixture: str
    prediction: Prediction

    def in_words(self) -> str:
        return (
            f"{self.codec} x {self.fixture}: predicted {self.prediction.in_words()}, over the "
            "quick run's budget"
        )


@dataclass(frozen=True)
class QuickPlan:
    """The pairs a quick run times, and what it leaves to `--full`."""

    pairs: tuple[tuple[str, str], ...]  # (codec, fixture), timed and sized
    left_out: tuple[LeftOut, ...] = ()
    fixtures_left: tuple[str, ...] = ()  # default fixtures the quick run does not take
    notes: tuple[str, ...] = field(default=())  # codecs that could not be predicted, and why
    # Pairs of the plan's fixtures that a codec's spec times only elsewhere (a schema
    # codec: one corpus); named to the suite so that no process measures them either.
    declared_out: tuple[tuple[str, str], ...] = ()
    asked: tuple[str, ...] = ()  # of ON_REQUEST: measured of the same pairs, by request

    def asking(self, *, memory: bool, instructions: bool) -> QuickPlan:
        """The plan, measuring memory per call or instruction counts of its pairs too."""
        wanted = {"memory per call": memory, "instruction counts": instructions}
        return replace(self, asked=tuple(name for name, on in wanted.items() if on))

    def regexes(self) -> list[str]:
        """asv `-b` regexes selecting exactly the plan's pairs in QUICK_BENCHMARKS, with the
        implementation of each codec; one per benchmark module pattern."""
        if not self.pairs:
            return []
        pairs = "|".join(re.escape(f"'{codec}', '{fixture}'") for codec, fixture in self.pairs)
        codecs = "|".join(
            re.escape(f"'{codec}'") for codec in dict.fromkeys(c for c, _ in self.pairs)
        )
        # A size's compressor, or any further parameter, after the pair.
        paired = rf"\((?:{pairs})(?:, '[^']*')*\)$"
        modules = [*QUICK_BENCHMARKS, *(ON_REQUEST[name] for name in self.asked)]
        out = [f"^{module}\\.\\w+{paired}" for module in modules]
        out.append(rf"^bench_facts\.Implementation\.\w+\((?:{codecs})\)$")
        return out

    def parts(self) -> list[list[str]]:
        """The first round's `asv run`s: the timings and facts, then, when asked, memory and
        instruction counts in a run of their own. Counting runs two valgrind processes, one
        per core: never beside a timed process, and a Ctrl-C while counting keeps the times."""
        regexes = self.regexes()
        asked = [f"^{ON_REQUEST[name]}\\." for name in self.asked]
        timed = [r for r in regexes if not any(r.startswith(a) for a in asked)]
        later = [r for r in regexes if r not in timed]
        return [timed, later] if later else [timed]

    def environment(self) -> dict[str, str]:
        """SERKIT_BENCH_* for the run: its fixtures (only they are built before asv forks),
        and the pairs left out (so that no process measures their facts either)."""
        fixtures = dict.fromkeys(fixture for _, fixture in self.pairs)
        out = [(item.codec, item.fixture) for item in self.left_out] + list(self.declared_out)
        left = ",".join(f"{codec}@{fixture}" for codec, fixture in out)
        return {FIXTURES_ENV: ",".join(fixtures), **({LEAVE_OUT_ENV: left} if left else {})}

    def as_record(self) -> dict[str, Any]:
        """What the run's host record keeps, for the report to state."""
        return {
            "kind": "quick",
            "fixtures": sorted({fixture for _, fixture in self.pairs}, key=_fixture_order),
            "fixtures_left_to_full": list(self.fixtures_left),
            "left_to_full": [name for name in FULL_ONLY if name not in self.asked],
            "pairs_left_to_full": [
                {
                    "codec": item.codec,
                    "fixture": item.fixture,
                    "predicted_dumps_s": round(item.prediction.dumps_s, 4),
                    "predicted_loads_s": round(item.prediction.loads_s, 4),
                }
                for item in self.left_out
            ],
        }


def _fixture_order(name: str) -> int:
    names = fixture_names()
    return names.index(name) if name in names else len(names)


def plan_quick(
    selection: Selection,
    *,
    rounds: int,
    budget_s: float,
    predicted: Mapping[str, Any] | None = None,
) -> QuickPlan:
    """The quick run's pairs: the selected codecs (every one by default) on the selected
    fixtures (QUICK_FIXTURES by default), less those whose predicted cost in `rounds`
    processes is over `budget_s`. `predicted` stands in for serkit.suite.prediction.predict
    (tests)."""
    codecs = list(selection.codecs or codec_names())
    fixtures = list(selection.fixtures or QUICK_FIXTURES)
    for fixture in fixtures:
        get_fixture(fixture)  # a typo fails before any work
    pairs: list[tuple[str, str]] = []
    left: list[LeftOut] = []
    notes: list[str] = []
    declared_out: list[tuple[str, str]] = []
    for codec in codecs:
        # Where its spec says a default run times it (a schema codec: one corpus), unless
        # the run names its fixtures.
        declared = None if selection.fixtures else default_fixtures(codec)
        for fixture in fixtures:
            if declared is not None and fixture not in declared:
                declared_out.append((codec, fixture))
                continue
            try:
                found = (predicted or {}).get(f"{codec} {fixture}") or predict(codec, fixture)
            except SerkitError as exc:  # not installed here, cannot encode it: asv will say
                notes.append(f"{codec} x {fixture}: not predicted ({exc})")
                pairs.append((codec, fixture))
                continue
            worst = max(found.dumps_s, found.loads_s)
            cost = pair_cost_s(found.dumps_s + found.loads_s, worst, rounds, SAMPLES_PER_PROCESS)
            if cost > budget_s:
                left.append(LeftOut(codec, fixture, found))
            else:
                pairs.append((codec, fixture))
    if not pairs:
        # asv handed no pair would run every benchmark: say what left them all out instead.
        why = "; ".join(item.in_words() for item in left) or "no codec is timed on them"
        raise SerkitError(
            f"the quick run has no pair left to time on {', '.join(fixtures)} ({why}); "
            "`serkit bench --full` times every pair"
        )
    fixtures_left = tuple(name for name in default_fixture_names() if name not in fixtures)
    return QuickPlan(tuple(pairs), tuple(left), fixtures_left, tuple(notes), tuple(declared_out))


def leaves_out_in_words(record: Mapping[str, Any]) -> list[str]:
    """A run record's quick plan (QuickPlan.as_record), as the report and README say it."""
    out = []
    fixtures = record.get("fixtures_left_to_full") or []
    parts = list(record.get("left_to_full") or [])
    if fixtures:
        parts.append("the fixtures " + ", ".join(fixtures))
    if parts:
        out.append("left to serkit bench --full: " + ", ".join(parts))  # HTML: no Markdown
    for item in record.get("pairs_left_to_full") or []:
        seconds = max(float(item["predicted_dumps_s"]), float(item["predicted_loads_s"]))
        out.append(
            f"{item['codec']} x {item['fixture']}: not timed, predicted {seconds:.2g} s a call "
            "(from its cost per byte on a small document), over the quick run's budget"
        )
    return out
