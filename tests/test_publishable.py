"""asv's own pages of a store whose every string a hostile runner wrote (issue 56).

`serkit report` hands `asv publish` a copy built from an allow-list
(serkit.results.publishable). Here a tree carries a payload in every string field of a
results file, `benchmarks.json` and `machine.json`; real asv publishes it, and no live
markup may reach what asv's pages read: its `index.json` and graph files.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from results_factory import two_hosts

from serkit.report import html as report_html
from serkit.results.publishable import publishable_copy
from serkit.results.tree import ASV_MACHINE_FIELDS, read_tree

# Markup that, made live, leaves a mark the browser test looks for: an element, and a
# script that renames the page.
TAG = "<b id=ran>x</b><img src=x onerror=document.title='ran'>"
# Text that ends an attribute it is pasted into, and a link's script.
QUOTE = '" onmouseover="document.title=\'ran\'" x="'
LINK = "javascript:document.title='ran'"
PAYLOADS = (TAG, QUOTE, LINK)
# The mappings of a results file whose keys asv shows.
KEYS = ("env_vars", "requirements", "params")


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _results(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != "machine.json")


def _another_machine(root: Path, name: str, *changes: Callable[[dict[str, Any]], None]) -> None:
    """A copy of machine b named `name`, with one results file per change, each changed."""
    folder = root / name
    folder.mkdir()
    profile = {**json.loads((root / "b" / "machine.json").read_text()), "machine": name}
    (folder / "machine.json").write_text(json.dumps(profile))
    (source,) = _results(root / "b")
    for i, change in enumerate(changes):
        data = json.loads(source.read_text())
        data["params"]["machine"] = name
        data["env_name"] += f"-{i}"
        change(data)
        (folder / f"{source.stem}-{i}.json").write_text(json.dumps(data))


def hostile_store(root: Path, payload: str = TAG) -> Path:
    """Hosts a and b with `payload` in every string asv reads that may hold text (a's
    profile, parameters, requirements and variables; each benchmark's code and pretty
    name), and a machine or a benchmark of its own for each string that must be a name
    (a key, a commit, a unit, a type, a parameter name or value, a version)."""
    two_hosts(root)
    fields = {field: payload for field in ASV_MACHINE_FIELDS - {"machine"}}
    (root / "a" / "machine.json").write_text(
        json.dumps({**fields, payload: payload, "machine": "a", "version": 1})
    )
    for n, host in enumerate(("a", "b")):
        for path in _results(root / host):

            def values(data: dict[str, Any], n: int = n, host: str = host) -> None:
                data["params"].update(fields if host == "a" else {})
                data["requirements"]["orjson"] = f"{payload}{n}"
                data["params"]["orjson"] = f"{payload}{n}"
                # Two values, so that asv's pages show the variable's panel.
                data["env_vars"] = {"SERKIT_X": f"{payload}{n}"}
                data["durations"] = {payload: 1.0}  # asv's pages never read them

            _edit(path, values)
    # Each key asv shows (`env-<key>` as a panel heading), with two values for a panel.
    for what in KEYS:
        _another_machine(
            root,
            f"key-{what}",
            *(lambda d, w=what, v=v: d[w].update({payload: v}) for v in ("1", "2")),
        )
    _another_machine(root, "commit", lambda d: d.update(commit_hash=payload))
    _another_machine(root, "python", lambda d: d.update(python=payload))
    _another_machine(root, "env-name", lambda d: d.update(env_name=payload))
    _another_machine(root, "date", lambda d: d.update(date=payload))
    _another_machine(root, "profile")
    _edit(root / "profile" / "machine.json", lambda d: d.update(machine=payload))
    _another_machine(root, payload.replace("/", ""), lambda d: None)  # a folder named with it

    def benchmarks(listed: dict[str, Any]) -> None:
        for name, row in list(listed.items()):
            if isinstance(row, dict):
                row.update(code=f"def {name}(): {payload}", pretty_name=payload)
        base = listed["bench_plain.Startup.time_startup"]
        one = {"params": [["1"]], "param_names": ["p"]}
        hostile = {
            "unit": {"unit": payload},
            "type": {"type": payload},
            "param_name": {**one, "param_names": [payload]},
            "param_value": {**one, "params": [[f"'x' {payload} '"]]},
            "version": {"version": payload},
        }
        for field, change in hostile.items():
            name = f"bench_x.Hostile.time_{field}"
            listed[name] = {**base, "name": name, **change}

    _edit(root / "benchmarks.json", benchmarks)
    return root


def _strings(value: Any) -> Iterator[str]:
    """Every key and string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


# An event handler's attribute, begun inside a string that a quote could end.
ATTRIBUTE = re.compile(r"[\"'][^\"']*\bon[a-z]+\s*=", re.IGNORECASE)


def live_markup(asv_pages: Path) -> list[str]:
    """What asv's pages read that could be live: a `<` or `>`, a quote before an `on…=`
    handler, anywhere in `index.json` or a graph; a `javascript:` link where asv builds a
    link or a file's name (benchmark names, commits, machines, graph paths); markup in
    the regressions feed."""
    found = []
    for path in sorted(asv_pages.rglob("*.json")):
        for text in _strings(json.loads(path.read_text())):
            if "<" in text or ">" in text or ATTRIBUTE.search(text):
                found.append(f"{path.name}: {text[:80]!r}")
    index = json.loads((asv_pages / "index.json").read_text())
    linked = [
        *index["benchmarks"],
        *(row["name"] for row in index["benchmarks"].values()),
        *index["revision_to_hash"].values(),
        *index["machines"],
        *index["params"],
        *(str(p.relative_to(asv_pages)) for p in (asv_pages / "graphs").rglob("*")),
    ]
    found += [f"a link or path: {text!r}" for text in linked if "javascript:" in text.lower()]
    feed = asv_pages / "regressions.xml"
    if feed.is_file() and re.search(r"<(img|b|script)\b", feed.read_text()):
        found.append("regressions.xml holds markup")
    return found


def real_asv(where: Path, args: list[str]) -> int:
    from test_hostile_results import real_asv as run

    return run(where, args)


@pytest.mark.slow  # real asv
@pytest.mark.parametrize("payload", PAYLOADS, ids=["tag", "quote", "link"])
def test_asvs_pages_hold_no_live_markup_from_any_string_of_a_store(
    tmp_path: Path, payload: str
) -> None:
    pytest.importorskip("asv")
    from test_hostile_results import ROOT

    root = hostile_store(tmp_path / "results", payload)
    written = report_html.write_report(ROOT, root, tmp_path / "reports", asv_runner=real_asv)
    assert written.asv_pages, written.warnings
    asv_pages = written.folder / "asv"
    assert live_markup(asv_pages) == []
    index = json.loads((asv_pages / "index.json").read_text())
    # What was sound is published: both hosts, a's profile as text, every sound benchmark.
    assert sorted(index["machines"]) == ["a", "b"]
    assert "Intel" not in json.dumps(index["machines"]["a"])
    assert "bench_time.Dumps.time_dumps" in index["benchmarks"]
    assert not any(name.startswith("bench_x.") for name in index["benchmarks"])
    shown = {html.escape(f"{payload}{n}") for n in (0, 1)}  # as text, in its panel
    assert shown <= set(index["params"]["env-SERKIT_X"])


@pytest.mark.parametrize("payload", PAYLOADS, ids=["tag", "quote", "link"])
def test_every_record_left_out_of_asvs_pages_is_named(tmp_path: Path, payload: str) -> None:
    root = hostile_store(tmp_path / "results", payload)
    tree = read_tree(root)
    left_out = publishable_copy(tree, tmp_path / "clean")
    published = json.loads((tmp_path / "clean" / "benchmarks.json").read_text())
    assert not any(name.startswith("bench_x.") for name in published)
    fields = ["unit", "type", "param_name", "param_value", "version"]
    if "<" in payload:  # a parameter serkit's reader skips as unsafe, as it always did
        fields.remove("param_value")
    for field in fields:
        assert sum(f"benchmark bench_x.Hostile.time_{field}: " in line for line in left_out) == 1
    refused = ["commit", "python", "env-name", "date", *(f"key-{k}" for k in KEYS)]
    for machine in refused:
        files = len(_results(root / machine))
        # A date that is no moment is refused when the tree is read (serkit.results.asv_file
        # .checked_moment), before the copy: named there, once, all the same.
        named = [*left_out, *tree.warnings]
        assert sum(f"/{machine}/" in line for line in named) == files, machine
    assert sum(line.startswith("a: its machine.json's fields ") for line in left_out) == 1
    assert sum(line.startswith("machine ") for line in left_out) == 1  # the one named with it
    copied = [p.read_text() for p in (tmp_path / "clean").rglob("*.json")]
    assert not any("<" in text or ">" in text for text in copied)
    assert sorted(p.name for p in (tmp_path / "clean").iterdir() if _results(p)) == ["a", "b"]
