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
# What a full run's pair may cost in its planned processes, predicted before it is called:
# a pair over it is not worth timing (pure-Python YAML on random-dicts-1000 was predicted
# at over 1,600 s here, and was 20 of the matrix's 36 runner-hours with its like), so the
# run leaves it out, and the report says so with its predicted call. A run naming its
# pairs (asv's -b) times them whatever they cost.
FULL_BUDGET_S = 60.0
# What a record's predicted seconds are (serkit.suite.prediction), in its key and in words.
PREDICTED_AT = "reference"
REFERENCE_SPEED = "serkit's reference speed"
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

    def in_words(self, kind: str = "quick") -> str:
        return (
            f"{self.codec} x {self.fixture}: predicted {self.prediction.in_words()} at "
            f"{REFERENCE_SPEED}, over the {kind} run's budget"
        )


@dataclass(frozen=True)
class PairSelection:
    """The pairs a quick run times, and what it leaves to `--full`."""

    pairs: tuple[tuple[str, str], ...]  # (codec, fixture), timed and sized
    left_out: tuple[LeftOut, ...] = ()
    fixtures_left: tuple[str, ...] = ()  # default fixtures the quick run does not take
    notes: tuple[str, ...] = field(default=())  # codecs that could not be predicted, and why
    # Pairs of the plan's fixtures that a codec's spec times only elsewhere (a schema
    # codec: one corpus); named to the suite so that no process measures them either.
    declared_out: tuple[tuple[str, str], ...] = ()
    asked: tuple[str, ...] = ()  # of ON_REQUEST: measured of the same pairs, by request
    # "full": a full run's plan (plan_full), which times every benchmark of its pairs and
    # leaves out only the pairs over its budget.
    kind: str = "quick"
    budget_s: float | None = None

    def asking(self, *, memory: bool, instructions: bool) -> PairSelection:
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
        if self.kind != "quick":
            return []  # the full run's own parts (serkit.run.rounds.FIRST_ROUND_PARTS)
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
        if self.kind != "quick":  # the grid as the run's selection leaves it
            return {LEAVE_OUT_ENV: left} if left else {}
        return {FIXTURES_ENV: ",".join(fixtures), **({LEAVE_OUT_ENV: left} if left else {})}

    def as_record(self) -> dict[str, Any]:
        """What the run's host record keeps, for the report to state."""
        # The seconds below are at the reference speed (serkit.suite.prediction), which
        # records of earlier runs did not use: say so.
        speed = {"predicted_at": PREDICTED_AT}
        if self.kind != "quick":
            return {
                "kind": self.kind,
                "budget_s": self.budget_s,
                "pairs_left_out": [_predicted(item) for item in self.left_out],
                **speed,
            }
        return {
            "kind": "quick",
            "fixtures": sorted({fixture for _, fixture in self.pairs}, key=_fixture_order),
            "fixtures_left_to_full": list(self.fixtures_left),
            "left_to_full": [name for name in FULL_ONLY if name not in self.asked],
            "pairs_left_to_full": [_predicted(item) for item in self.left_out],
            **speed,
        }


def _predicted(item: LeftOut) -> dict[str, Any]:
    return {
        "codec": item.codec,
        "fixture": item.fixture,
        "predicted_dumps_s": round(item.prediction.dumps_s, 4),
        "predicted_loads_s": round(item.prediction.loads_s, 4),
    }


def _fixture_order(name: str) -> int:
    names = fixture_names()
    return names.index(name) if name in names else len(names)


def over_budget(found: Prediction, rounds: int, budget_s: float) -> bool:
    """Whether a pair predicted so costs more than `budget_s` in `rounds` processes: each
    prepares it (a cold dumps and loads), then samples its slower call."""
    worst = max(found.dumps_s, found.loads_s)
    cost = pair_cost_s(found.dumps_s + found.loads_s, worst, rounds, SAMPLES_PER_PROCESS)
    return cost > budget_s


def plan_quick(
    selection: Selection,
    *,
    rounds: int,
    budget_s: float,
    predicted: Mapping[str, Any] | None = None,
    kind: str = "quick",
) -> PairSelection:
    """The quick run's pairs: the selected codecs (every one by default) on the selected
    fixtures (QUICK_FIXTURES by default), less those whose predicted cost in `rounds`
    processes, at the reference speed (serkit.suite.prediction), is over `budget_s`.
    `predicted` stands in for serkit.suite.prediction.predict (tests). With `kind`
    "full", a full run's (plan_full)."""
    codecs = list(selection.codecs or codec_names())
    if kind == "quick":
        fixtures = list(selection.fixtures or QUICK_FIXTURES)
    else:
        fixtures = list(selection.fixtures or default_fixture_names(slow=selection.slow))
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
            if over_budget(found, rounds, budget_s):
                left.append(LeftOut(codec, fixture, found))
            else:
                pairs.append((codec, fixture))
    if not pairs and kind == "quick":
        # asv handed no pair would run every benchmark: say what left them all out instead.
        why = "; ".join(item.in_words(kind) for item in left) or "no codec is timed on them"
        raise SerkitError(
            f"the quick run has no pair left to time on {', '.join(fixtures)} ({why}); "
            "`serkit bench --full` times every pair"
        )
    if kind != "quick":
        return PairSelection(
            tuple(pairs),
            tuple(left),
            notes=tuple(notes),
            kind=kind,
            budget_s=budget_s,
        )
    fixtures_left = tuple(name for name in default_fixture_names() if name not in fixtures)
    out = tuple(declared_out)
    return PairSelection(tuple(pairs), tuple(left), fixtures_left, tuple(notes), out)


def plan_full(
    selection: Selection,
    *,
    rounds: int,
    budget_s: float = FULL_BUDGET_S,
    predicted: Mapping[str, Any] | None = None,
) -> PairSelection:
    """A full run's plan: every pair of its grid (the selected codecs and fixtures, else
    the default grid), less those predicted to cost over `budget_s` in `rounds` processes
    (FULL_BUDGET_S): what is not worth timing, predicted from a small document."""
    return plan_quick(
        selection,
        rounds=rounds,
        budget_s=budget_s,
        predicted=predicted,
        kind="full",
    )


def prediction_basis(record: Mapping[str, Any]) -> str:
    """How a run record's plan predicted what it left out, said once for all its pairs."""
    slowness = record.get("predicted_slowness")  # runs before the reference speed
    if record.get("predicted_at") == PREDICTED_AT:
        at = f", at {REFERENCE_SPEED}: the same on any host, in either state"
    elif isinstance(slowness, (int, float)) and slowness > 1:
        read = f"the canary read x{float(slowness):.2f} as it was predicted"
        at = f", at the fast state's speed ({read})"
    else:
        at = ""
    return f"each call predicted from its codec's cost per byte on a small document{at}"


def leaves_out_in_words(record: Mapping[str, Any]) -> list[str]:
    """A run record's plan (PairSelection.as_record, quick or full), as the report and README
    say it: a line a pair left out, and how they were predicted (`prediction_basis`) last."""
    out = []
    if record.get("kind") == "full":
        budget = record.get("budget_s")
        over = f"over the full run's budget of {float(budget):g} s a pair" if budget else "over"
        for item in record.get("pairs_left_out") or []:
            seconds = max(float(item["predicted_dumps_s"]), float(item["predicted_loads_s"]))
            out.append(
                f"{item['codec']} x {item['fixture']}: not timed, predicted {seconds:.2g} s a "
                f"call, {over} (asv's -b times it)"
            )
        return [*out, prediction_basis(record)] if out else out
    fixtures = record.get("fixtures_left_to_full") or []
    parts = list(record.get("left_to_full") or [])
    if fixtures:
        parts.append("the fixtures " + ", ".join(fixtures))
    if parts:
        out.append("left to serkit bench --full: " + ", ".join(parts))  # HTML: no Markdown
    pairs = record.get("pairs_left_to_full") or []
    for item in pairs:
        seconds = max(float(item["predicted_dumps_s"]), float(item["predicted_loads_s"]))
        out.append(
            f"{item['codec']} x {item['fixture']}: not timed, predicted {seconds:.2g} s a call, "
            "over the quick run's budget"
        )
    return [*out, prediction_basis(record)] if pairs else out
