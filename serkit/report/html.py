"""Writing serkit's report: HTML pages from `report.gather`, charts by plotly, beside asv's.

Layout under the output folder (`.asv/reports` by default):

    index.html                 opens the newest version's Overview (a redirect, and a link)
    reports.html               every report version, newest first
    <stamp>/report.json        what this version is (serkit version, commit, date, hosts,
                               when each host last ran)
    <stamp>/index.html ...     serkit's pages, with plotly.min.js beside them
    <stamp>/asv/               `asv publish`'s own pages for the same results

The stamp is `<serkit version>-<suite commit>`: a new commit gets a new folder, so an older
report stays where it was and stays readable (each folder carries its own copy of the
charting library). Publishing again at the same commit replaces that commit's report.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit import __version__, units
from serkit.checkout import (
    conformance_path,
    git_commit,
    replication_path,
)
from serkit.compare.in_words import no_noise_text
from serkit.errors import RefusedFile, SerkitError
from serkit.files import atomic_write, replacing_folder
from serkit.inputs.documents import read_record
from serkit.report.asv_pages import asv_publish
from serkit.report.charts import history_chart, hosts_chart, library_chart, python_chart
from serkit.report.history import JUDGED_STEPS
from serkit.report.hosts_table import NOT_MEASURED, worded
from serkit.report.snapshot import REFERENCE_CODEC
from serkit.report.snapshot_charts import snapshot_chart, typed_chart, verdict_chart
from serkit.report.steps import CODE_CHANGED, MEASURE_NAMES
from serkit.report.template_env import environment
from serkit.report.views import (
    ConformanceView,
    ReportData,
    conformance_view,
    gather,
)
from serkit.results.host_file import mixed_cpu_warnings
from serkit.results.hosts import describe_hosts
from serkit.results.noise import SAME_RUN, NoNoise
from serkit.results.tree import ResultsTree, read_tree
from serkit.run.matrix import COUNTS_PYTHON
from serkit.sample_speed import MEMORY_FAST_LIMIT, STATE_RULE
from serkit.suite.benchmark_names import ALLOCATIONS, PEAK, SIZE
from serkit.trust.overhead import TARGET_FLOOR_S, TARGET_RATIO

MANIFEST = "report.json"
REPORTS = "reports.html"  # beside the versions: every one of them, listed
MANIFEST_FORMAT = 1
PLOTLY_JS = "plotly.min.js"


class ReportError(SerkitError):
    """The report could not be written."""


def hosts_last_ran(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every host of every report version: when it last ran, and the newest version with it.

    `reports` newest first, as the index lists them; a manifest written before hosts'
    run times were kept has none, and its hosts show as not recorded.
    """
    hosts: dict[str, dict[str, Any]] = {}
    for report in reports:
        times = report.get("hosts_last_ran") or {}
        for host in report.get("hosts") or []:
            entry = hosts.setdefault(host, {"host": host, "last_ran": None, "report": report})
            ran = times.get(host) if isinstance(times, dict) else None
            if ran and (entry["last_ran"] is None or str(ran) > str(entry["last_ran"])):
                entry["last_ran"] = str(ran)
    return sorted(hosts.values(), key=lambda h: (h["last_ran"] or "", h["host"]), reverse=True)


@dataclass(frozen=True)
class Provenance:
    serkit_version: str
    commit: str | None  # the suite checkout's commit that wrote the report
    generated: str
    hosts: list[str]
    result_commits: list[str]
    libraries: dict[str, list[str]]

    @property
    def stamp(self) -> str:
        return f"{self.serkit_version}-{(self.commit or 'nogit')[:12]}"


def provenance(data: ReportData, root: Path) -> Provenance:
    now = datetime.datetime.now(datetime.timezone.utc)
    return Provenance(
        __version__,
        git_commit(root),
        now.strftime("%Y-%m-%d %H:%M UTC"),
        data.machines,
        data.commits,
        data.library_versions(),
    )


HOSTS_GUIDE = "results-from-n-hosts-by-hand"  # docs/comparing-hosts.md's section


def guide_link(docs: Path | None, page: str, anchor: str, place: Path) -> str | None:
    """A link from the report's folder to a section of the checkout's manual; None where the
    manual is not there (a report written outside a checkout, or moved off it)."""
    if docs is None or not (docs / page).is_file():
        return None
    return f"{Path(os.path.relpath(docs / page, place)).as_posix()}#{anchor}"


def page_name(fixture: str) -> str:
    return "fixture-" + re.sub(r"[^A-Za-z0-9_.-]", "_", fixture) + ".html"


def load_replication(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """`serkit replicate`'s saved document, when there is one; a bad one is skipped, named."""
    if not path.is_file():
        return None
    from serkit.replicate.document import load

    try:
        return load(path)
    except SerkitError as exc:
        warnings.append(f"skipped {path}: {exc}")
        return None


def load_conformance(path: Path, warnings: list[str]) -> ConformanceView | None:
    """`serkit conformance`'s saved matrix, when there is one; a bad one is skipped, named."""
    if not path.is_file():
        return None
    from serkit.checks.conformance_document import load

    try:
        return conformance_view(*load(path))
    except SerkitError as exc:
        warnings.append(f"skipped {path}: {exc}")
        return None


def write_pages(
    data: ReportData,
    folder: Path,
    prov: Provenance,
    *,
    asv_pages: bool,
    replication: dict[str, Any] | None,
    conformance: ConformanceView | None = None,
    place: Path | None = None,
    docs: Path | None = None,
) -> list[Path]:
    """The pages, written into `folder`, which will be moved to `place` (default: where it is).
    `docs`: the checkout's manual, linked where a page sends the reader to it and it exists."""
    env = environment()
    folder.mkdir(parents=True, exist_ok=True)
    from plotly.offline import get_plotlyjs

    atomic_write(folder / PLOTLY_JS, get_plotlyjs(), within=folder)
    nav = [("index.html", "Overview")]
    nav += [(page_name(f), f) for f in data.snapshots]
    # A page these results leave empty stays out of the nav; it is still written, saying
    # in one line what fills it, and the overview names it with that command.
    empty = {
        href: (label, command, when)
        for href, label, command, when, shown in (
            ("versions.html", "Library versions", "serkit bench --matrix", "", data.libraries),
            ("pythons.html", "Python versions", "serkit bench --matrix", "", data.pythons),
            ("history.html", "History", "serkit bench", " run a second time", data.history),
            ("fidelity.html", "Fidelity", "serkit bench", "", data.fidelity),
            ("overhead.html", "Adapter overhead", "serkit bench --full", "", data.overhead),
        )
        if not shown
    }
    for href, label in (
        ("versions.html", "Library versions"),
        ("pythons.html", "Python versions"),
        ("history.html", "History"),
        ("hosts.html", "Hosts"),
        ("fidelity.html", "Fidelity"),
        ("overhead.html", "Adapter overhead"),
    ):
        if href not in empty:
            nav.append((href, label))
    if conformance is not None:
        nav.append(("conformance.html", "JSON conformance"))
    if replication is not None:
        nav.append(("replication.html", "Replication"))
    common = {"prov": prov, "nav": nav, "asv_pages": asv_pages}
    common["same_run"] = SAME_RUN  # a step judged within one run; others say "two runs"

    def render(name: str, template: str, title: str, **context: Any) -> Path:
        # The warnings as they stand when the page is written: views note hosts as they go.
        warnings = page_warnings(data.tree)
        html = env.get_template(template).render(
            **common, warnings=warnings, title=title, page=name, **context
        )
        path = folder / name
        atomic_write(path, html, within=folder)
        return path

    written = [
        render(
            "index.html",
            "overview.html",
            "Overview",
            data=data,
            page_name=page_name,
            state_rule=STATE_RULE,
            memory_fast_limit=MEMORY_FAST_LIMIT,
            empty=empty,
            asv_folder=(place or folder) / "asv",
            verdict_charts={
                (fixture, j): verdict_chart(table, f"verdict-{i}-{j}")
                for i, (fixture, tables) in enumerate(data.snapshots.items())
                for j, table in enumerate(tables)
            },
        ),
    ]
    for i, (fixture, tables) in enumerate(data.snapshots.items()):
        charts = [snapshot_chart(t, f"snapshot-{i}-{j}") for j, t in enumerate(tables)]
        typed = [typed_chart(t, f"typed-{i}-{j}") for j, t in enumerate(tables)]
        written.append(
            render(
                page_name(fixture),
                "snapshot.html",
                f"Snapshot: {fixture}",
                fixture=fixture,
                tables=list(zip(tables, charts, typed)),
                reference_codec=REFERENCE_CODEC,
                # A baseline's quick run, if one of the runs composing it was one.
                plans={
                    (t.run.machine, t.run.env.label): plan
                    for t in tables
                    if (plan := data.plan_for(t.run)) is not None
                },
            )
        )
    charts = [library_chart(v, f"library-{i}") for i, v in enumerate(data.libraries)]
    written.append(
        render(
            "versions.html",
            "versions.html",
            "Library versions",
            views=list(zip(data.libraries, charts)),
            size_benchmark=SIZE,
            peak_benchmarks=tuple(PEAK.values()),
            allocation_benchmarks=tuple(ALLOCATIONS.values()),
            measure_names=MEASURE_NAMES,
            code_changed=CODE_CHANGED,
            counts_python=COUNTS_PYTHON,
        )
    )
    charts = [python_chart(v, f"pythons-{i}") for i, v in enumerate(data.pythons)]
    written.append(
        render(
            "pythons.html",
            "pythons.html",
            "Python versions",
            views=list(zip(data.pythons, charts)),
            size_benchmark=SIZE,
            measure_names=MEASURE_NAMES,
        )
    )
    charts = [history_chart(v, f"history-{i}") for i, v in enumerate(data.history)]
    written.append(
        render(
            "history.html",
            "history.html",
            "History",
            views=list(zip(data.history, charts)),
            judged_steps=JUDGED_STEPS,
            size_benchmark=SIZE,
            peak_benchmarks=tuple(PEAK.values()),
            allocation_benchmarks=tuple(ALLOCATIONS.values()),
            measure_names=MEASURE_NAMES,
            code_changed=CODE_CHANGED,
        )
    )
    hosts = worded(describe_hosts(data.tree))
    written.append(
        render(
            "hosts.html",
            "hosts.html",
            "Hosts",
            data=data,
            hosts=hosts,
            mixed_cpus=mixed_cpu_warnings(hosts),
            not_measured=NOT_MEASURED,
            chart=hosts_chart(data, "hosts-chart"),
            hosts_guide=guide_link(docs, "comparing-hosts.md", HOSTS_GUIDE, place or folder),
        )
    )
    written.append(render("fidelity.html", "fidelity.html", "Fidelity", data=data))
    written.append(
        render(
            "overhead.html",
            "overhead.html",
            "Adapter overhead",
            data=data,
            target=(
                f"{units.percent(TARGET_RATIO)} or {units.seconds(TARGET_FLOOR_S)}, "
                "whichever is larger"
            ),
        )
    )
    if conformance is not None:
        written.append(
            render("conformance.html", "conformance.html", "JSON conformance", view=conformance)
        )
    if replication is not None:
        written.append(
            render("replication.html", "replication.html", "Replication", doc=replication)
        )
    atomic_write(
        folder / MANIFEST,
        json.dumps(
            {
                "serkit_report": MANIFEST_FORMAT,
                "stamp": prov.stamp,
                "serkit_version": prov.serkit_version,
                "commit": prov.commit,
                "generated": prov.generated,
                "hosts": prov.hosts,
                # When each host last ran (its newest serkit-host.yaml entry), for the index.
                "hosts_last_ran": {h["machine"]: h["last_ran"] for h in hosts},
                "result_commits": prov.result_commits,
            },
            indent=2,
        )
        + "\n",
        within=folder,
    )
    return written


def write_index(output: Path) -> tuple[Path, Path]:
    """The folder's front door and its list: `index.html` opens the newest report version's
    Overview (a redirect, with a plain link for a browser that does not follow it), and
    REPORTS lists every version, newest first. Returns both paths."""
    reports = []
    for manifest in sorted(output.glob(f"*/{MANIFEST}")):
        if manifest.parent.name.startswith("."):  # a version being built, or set aside
            continue
        try:  # never through a link, never a FIFO: another version's folder is anyone's
            info = read_record(manifest, follow_links=False, what="a report's manifest")
        except RefusedFile:
            continue
        if isinstance(info, dict) and info.get("serkit_report") == MANIFEST_FORMAT:
            # Written when: the manifest's own time orders two versions of one minute.
            written = manifest.stat().st_mtime_ns
            reports.append({**info, "path": manifest.parent.name + "/index.html", "at": written})
    reports.sort(key=lambda r: (str(r.get("generated")), r["at"]), reverse=True)
    env = environment()
    listing = output / REPORTS
    html = env.get_template("reports.html").render(reports=reports, hosts=hosts_last_ran(reports))
    atomic_write(listing, html, within=output)
    front = output / "index.html"
    if reports:
        html = env.get_template("newest.html").render(newest=reports[0], listing=REPORTS)
    atomic_write(front, html, within=output)  # with no version, the list itself
    return front, listing


def page_warnings(tree: ResultsTree) -> list[str]:
    """What every page warns of, in words: the tree's warnings, then each host without a
    noise measurement."""
    return [*tree.warnings, *map(no_noise_text, tree.no_noise)]


@dataclass(frozen=True)
class Written:
    folder: Path
    index: Path  # the folder's front door: opens the newest version
    listing: Path  # every version
    pages: list[Path]
    asv_pages: bool
    warnings: list[str]  # the reading's and the pages', in words
    no_noise: list[NoNoise]  # the hosts whose verdicts assumed the default noise floor


def write_report(
    root: Path,
    results: Path,
    output: Path,
    *,
    asv_runner: Callable[[Path, list[str]], int] | None,
    replication: Path | None = None,
) -> Written:
    """Read `results`, write one report version under `output` and the version index.

    `asv_runner` runs asv (None: leave asv's pages out). A failure of asv's pages loses
    nothing: serkit's pages are written either way, and the failure is in the warnings.
    """
    try:
        import jinja2  # noqa: F401
        import plotly  # noqa: F401
    except ImportError as exc:
        raise ReportError(
            f"the report needs {exc.name}: pip install 'serkit[report]' (nox installs it)"
        ) from None
    if not results.is_dir():
        raise ReportError(f"no asv results folder at {results}")
    tree: ResultsTree = read_tree(results)
    data = gather(tree)
    prov = provenance(data, root)
    folder = output / prov.stamp
    doc = load_replication(replication or replication_path(results), tree.warnings)
    matrix = load_conformance(conformance_path(results), tree.warnings)
    # Built beside the report it replaces (the same commit's, published again), then
    # swapped in: an interrupted or failed build leaves the earlier report whole.
    with replacing_folder(folder) as built:
        asv_pages = False
        if asv_runner is not None:
            asv_pages = asv_publish(root, tree, built / "asv", asv_runner, tree.warnings)
            if not asv_pages:
                tree.warnings.append("asv publish failed (see its output): asv's pages are missing")
        pages = write_pages(
            data,
            built,
            prov,
            asv_pages=asv_pages,
            replication=doc,
            conformance=matrix,
            place=folder,
            docs=root / "docs",
        )
    pages = [folder / page.relative_to(built) for page in pages]
    front, listing = write_index(output)
    return Written(folder, front, listing, pages, asv_pages, tree.warnings, tree.no_noise)
