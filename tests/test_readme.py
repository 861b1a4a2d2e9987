"""The README is a front page: short, both commands near the top, its counts the registry's."""

from __future__ import annotations

import re
from pathlib import Path

from serkit.codecs.registry import codec_names, registry
from serkit.run.planning import QUICK_BUDGET_S
from serkit.run.quick import plan_quick
from serkit.suite.cases import Selection

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAIN = "python3 -m venv .venv && .venv/bin/python -m pip install -q 'nox[uv]' && .venv/bin/nox -s"


def test_the_readme_is_a_front_page_not_a_notebook() -> None:
    assert len(README.splitlines()) <= 220
    assert len(README.split()) <= 1500


def test_both_commands_are_in_its_first_40_lines_and_ci_runs_the_test_one() -> None:
    top = README.splitlines()[:40]
    assert f"{MAIN} bench" in top
    assert f"{MAIN} lint docs tests" in top
    assert f"{MAIN} lint docs tests" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_its_codec_counts_are_the_registrys() -> None:
    names = codec_names()
    schema = [name for name in names if registry.spec(name).needs_schema]
    assert f"serkit registers {len(names)} codecs" in README
    assert f"**{len(names) - len(schema)} schemaless:**" in README
    assert f"**{len(schema)} with a schema**" in README


def test_it_names_the_codecs_a_quick_run_times() -> None:
    """Its count of codecs, and its schema codecs on twitter only, as the quick run plans them."""
    plan = plan_quick(Selection(), rounds=5, budget_s=QUICK_BUDGET_S)
    timed = {codec for codec, _ in plan.pairs}
    # fastavro on twitter is predicted (timed, at the reference speed) at the budget's very
    # edge, so a loaded moment can put it either side: the README says so, and counts the
    # run without it.
    flat = " ".join(README.split())
    assert "`fastavro` on `twitter` (predicted at the budget's edge" in flat
    counted = timed - {"fastavro"}
    assert f"quick run times {len(counted)} of them" in flat
    schema = {c for c in timed if registry.spec(c).needs_schema}
    assert {fixture for codec, fixture in plan.pairs if codec in schema} == {"twitter"}
    said = re.search(r"(\w+) schema codecs on `twitter` only", README)
    # fastavro is a schema codec too: counted without it, as the codecs above.
    counted_schema = len(schema & counted)
    assert said is not None and said.group(1) == {5: "five", 6: "six"}.get(counted_schema)
