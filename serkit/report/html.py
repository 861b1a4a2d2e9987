"""Writing serkit's report: HTML pages from `report.gather`, charts by plotly, beside asv's.

Layout under the output folder (`.asv/reports` by default):

    index.html                 every report version, newest first
    <stamp>/report.json        what this version is (serkit version, commit, date, hosts)
    <stamp>/index.html ...     serkit's pages, with plotly.min.js beside them
    <stamp>/asv/               `asv publish`'s own pages for the same results

The stamp is `<serkit version>-<suite commit>`: a new commit gets a new folder, so an older
report stays where it was and stays readable (each folder carries its own copy of the
charting library). Publishing again at the same commit replaces that commit's report.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serkit import __version__
from serkit.checkout import ENV_DIR, git_commit, replication_path
from serkit.errors import SerkitError
from serkit.report.views import (
    CODE_CHANGED,
    MEASURE_NAMES,
    LibraryView,
    ReportData,
    SnapshotTable,
    gather,
)
from serkit.results.hosts import describe_hosts
from serkit.results.tree import Measurement, ResultsTree, read_tree
from serkit.suite.benchmark_names import DUMPS, LOADS, SIZE
from serkit.trust.overhead import TARGET_FLOOR_S, TARGET_RATIO

MANIFEST = "report.json"
MANIFEST_FORMAT = 1
PLOTLY_JS = "plotly.min.js"


class ReportError(SerkitError):
    """The report could not be written."""


# --- numbers with units -----------------------------------------------------------------


def fmt_time(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_bytes(count: float | None) -> str:
    return "n/a" if count is None else f"{count:,.0f} B"


def fmt_memory(count: float | None) -> str:
    if count is None:
        return "n/a"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count:,.0f} B"


def fmt_ratio(ratio: float | None) -> str:
    # Three significant digits, kept when they are zeros: 1.00x, not 1x.
    return "n/a" if ratio is None else f"{ratio:#.3g}".rstrip(".") + "x"


def spread_text(m: Measurement | None) -> str:
    """The interquartile range asv recorded, as ± percent of the median."""
    if m is None or m.value is None:
        return ""
    if m.iqr is None:
        return "no spread recorded"
    low, high = m.iqr
    return f"±{(high - low) / 2 / m.value * 100:.1f} %" if m.value else ""


def spread_title(m: Measurement | None) -> str:
    if m is None or m.iqr is None:
        return ""
    low, high = m.iqr
    return f"interquartile range {fmt_time(low)} to {fmt_time(high)}"


def date_text(millis: int) -> str:
    if not millis:
        return "unknown"
    moment = datetime.datetime.fromtimestamp(millis / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


# --- charts -------------------------------------------------------------------------------


def _figure_html(figure: Any, div_id: str) -> str:
    # The library is loaded once per page from the report's own copy: no CDN.
    return str(
        figure.to_html(
            full_html=False,
            include_plotlyjs=False,
            div_id=div_id,
            config={"displaylogo": False, "responsive": True},
        )
    )


def _error(values: Sequence[Measurement | None], side: int) -> list[float | None]:
    out: list[float | None] = []
    for m in values:
        if m is None or m.value is None or m.iqr is None:
            out.append(None)
        else:
            out.append(abs(m.iqr[side] - m.value))
    return out


def snapshot_chart(table: SnapshotTable, div_id: str) -> str:
    from plotly import graph_objects as go
    from plotly.subplots import make_subplots

    rows = [r for r in table.rows if r.measured]
    codecs = [r.codec for r in rows]
    figure = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("time per call (log scale; bars: interquartile range)", "encoded size"),
        horizontal_spacing=0.14,
    )
    for name in ("dumps", "loads"):
        values: list[Measurement | None] = [getattr(r, name) for r in rows]
        figure.add_trace(
            go.Bar(
                name=name,
                y=codecs,
                x=[None if m is None else m.value for m in values],
                orientation="h",
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": _error(values, 1),
                    "arrayminus": _error(values, 0),
                },
                hovertemplate="%{y} " + name + ": %{x:.3s}s<extra></extra>",
            ),
            row=1,
            col=1,
        )
    figure.add_trace(
        go.Bar(
            name="size",
            y=codecs,
            x=[r.size for r in rows],
            orientation="h",
            hovertemplate="%{y}: %{x:,} B<extra></extra>",
        ),
        row=1,
        col=2,
    )
    figure.update_xaxes(type="log", title_text="seconds per call", row=1, col=1)
    figure.update_xaxes(title_text="bytes", row=1, col=2)
    figure.update_yaxes(autorange="reversed")
    figure.update_layout(
        barmode="group", height=140 + 34 * len(rows), margin={"t": 40, "l": 10, "r": 10}
    )
    return _figure_html(figure, div_id)


def library_chart(view: LibraryView, div_id: str) -> str:
    """Per release, each measurement relative to the newest release: a change stands out."""
    from plotly import graph_objects as go
    from plotly.subplots import make_subplots

    panels = ((DUMPS, "dumps time"), (LOADS, "loads time"), (SIZE, "encoded size"))
    figure = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=[f"{t}, relative to {view.points[-1].version}" for _, t in panels],
    )
    versions = [p.version for p in view.points]
    for col, (benchmark, _) in enumerate(panels, start=1):
        for codec in view.codecs:
            for fixture in view.fixtures:
                values = [p.run.get(benchmark, codec, fixture) for p in view.points]
                newest = values[-1]
                if newest is None or not newest.value or all(v is None for v in values):
                    continue
                scale = newest.value
                absolute = [
                    "n/a"
                    if m is None
                    else (fmt_bytes(m.value) if benchmark == SIZE else fmt_time(m.value))
                    for m in values
                ]
                figure.add_trace(
                    go.Scatter(
                        x=versions,
                        y=[
                            None if m is None or m.value is None else m.value / scale
                            for m in values
                        ],
                        mode="lines+markers",
                        name=f"{codec} / {fixture}",
                        legendgroup=f"{codec}/{fixture}",
                        showlegend=col == 1,
                        customdata=absolute,
                        hovertemplate=f"{codec} / {fixture} %{{x}}: %{{y:.3f}}x "
                        "(%{customdata})<extra></extra>",
                    ),
                    row=1,
                    col=col,
                )
    figure.update_xaxes(type="category", title_text=f"{view.library} release")
    figure.update_yaxes(title_text="x newest release", row=1, col=1)
    figure.update_layout(height=420, margin={"t": 40, "l": 10, "r": 10})
    return _figure_html(figure, div_id)


def hosts_chart(data: ReportData, div_id: str) -> str | None:
    from plotly import graph_objects as go

    shown = [h for h in data.hosts if h.comparison is not None]
    if not shown:
        return None
    figure = go.Figure()
    for host in shown:
        assert host.comparison is not None
        groups, overall = host.comparison.summary()
        figure.add_trace(
            go.Bar(
                name=f"{host.other} / {host.reference}",
                x=[g.group for g in groups] + ["overall"],
                y=[g.geomean for g in groups] + [overall.geomean],
                hovertemplate="%{x}: %{y:.3f}x<extra></extra>",
            )
        )
    figure.add_hline(y=1.0, line_dash="dot")
    figure.update_layout(
        barmode="group",
        height=420,
        yaxis_title="geometric mean of time ratios (x reference host)",
        margin={"t": 30},
    )
    return _figure_html(figure, div_id)


# --- provenance and pages --------------------------------------------------------------


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


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("serkit.report", "templates"),
        autoescape=True,  # every name comes from results files: never trusted as HTML
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        time=fmt_time,
        bytes=fmt_bytes,
        memory=fmt_memory,
        ratio=fmt_ratio,
        spread=spread_text,
        spread_title=spread_title,
        date=date_text,
    )
    return env


def page_name(fixture: str) -> str:
    return "fixture-" + re.sub(r"[^A-Za-z0-9_.-]", "_", fixture) + ".html"


def load_replication(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """`serkit replicate`'s saved document, when there is one; a bad one is skipped, named."""
    if not path.is_file():
        return None
    from serkit.replicate.posts import load

    try:
        return load(path)
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
) -> list[Path]:
    env = _environment()
    folder.mkdir(parents=True, exist_ok=True)
    from plotly.offline import get_plotlyjs

    (folder / PLOTLY_JS).write_text(get_plotlyjs(), encoding="utf-8")
    nav = [("index.html", "Overview")]
    nav += [(page_name(f), f) for f in data.snapshots]
    nav += [("versions.html", "Library versions"), ("hosts.html", "Hosts")]
    nav += [("fidelity.html", "Fidelity"), ("overhead.html", "Adapter overhead")]
    if replication is not None:
        nav.append(("replication.html", "Replication"))
    common = {"prov": prov, "nav": nav, "asv_pages": asv_pages, "warnings": data.tree.warnings}

    def render(name: str, template: str, title: str, **context: Any) -> Path:
        html = env.get_template(template).render(**common, title=title, page=name, **context)
        path = folder / name
        path.write_text(html, encoding="utf-8")
        return path

    written = [
        render("index.html", "overview.html", "Overview", data=data, page_name=page_name),
    ]
    for i, (fixture, tables) in enumerate(data.snapshots.items()):
        charts = [snapshot_chart(t, f"snapshot-{i}-{j}") for j, t in enumerate(tables)]
        written.append(
            render(
                page_name(fixture),
                "snapshot.html",
                f"Snapshot: {fixture}",
                fixture=fixture,
                tables=list(zip(tables, charts)),
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
            measure_names=MEASURE_NAMES,
            code_changed=CODE_CHANGED,
        )
    )
    written.append(
        render(
            "hosts.html",
            "hosts.html",
            "Hosts",
            data=data,
            hosts=describe_hosts(data.tree),
            chart=hosts_chart(data, "hosts-chart"),
        )
    )
    written.append(render("fidelity.html", "fidelity.html", "Fidelity", data=data))
    written.append(
        render(
            "overhead.html",
            "overhead.html",
            "Adapter overhead",
            data=data,
            target=f"{TARGET_RATIO:.0%} or {TARGET_FLOOR_S * 1e9:.0f} ns, whichever is larger",
        )
    )
    if replication is not None:
        written.append(
            render("replication.html", "replication.html", "Replication", doc=replication)
        )
    (folder / MANIFEST).write_text(
        json.dumps(
            {
                "serkit_report": MANIFEST_FORMAT,
                "stamp": prov.stamp,
                "serkit_version": prov.serkit_version,
                "commit": prov.commit,
                "generated": prov.generated,
                "hosts": prov.hosts,
                "result_commits": prov.result_commits,
            },
            indent=2,
        )
        + "\n"
    )
    return written


def write_index(output: Path) -> Path:
    """The list of every report version under `output`, newest first."""
    reports = []
    for manifest in sorted(output.glob(f"*/{MANIFEST}")):
        try:
            info = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and info.get("serkit_report") == MANIFEST_FORMAT:
            reports.append({**info, "path": manifest.parent.name + "/index.html"})
    reports.sort(key=lambda r: str(r.get("generated")), reverse=True)
    html = _environment().get_template("versions_index.html").render(reports=reports)
    path = output / "index.html"
    path.write_text(html, encoding="utf-8")
    return path


# --- asv's own pages -----------------------------------------------------------------------


def asv_publish(
    root: Path,
    results: Path,
    html_dir: Path,
    runner: Callable[[Path, list[str]], int],
) -> bool:
    """`asv publish` of `results` into `html_dir`, through a config naming both."""
    from serkit.run.matrix import asv_config

    config = asv_config()
    root = root.resolve()
    config.update(
        repo=str(root),
        benchmark_dir=str(root / "benchmarks"),
        env_dir=str(root / ENV_DIR),
        results_dir=str(results.resolve()),
        html_dir=str(html_dir.resolve()),
    )
    with tempfile.TemporaryDirectory(prefix="serkit-publish-") as scratch:
        path = Path(scratch) / "asv.conf.json"
        path.write_text(json.dumps(config))
        return runner(root, ["publish", "--config", str(path)]) == 0


@dataclass(frozen=True)
class Written:
    folder: Path
    index: Path
    pages: list[Path]
    asv_pages: bool
    warnings: list[str]


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
    if folder.exists():
        shutil.rmtree(folder)  # the same commit's report, published again
    folder.mkdir(parents=True)
    asv_pages = False
    if asv_runner is not None:
        asv_pages = asv_publish(root, results, folder / "asv", asv_runner)
        if not asv_pages:
            tree.warnings.append("asv publish failed (see its output): asv's pages are missing")
    doc = load_replication(replication or replication_path(results), tree.warnings)
    pages = write_pages(data, folder, prov, asv_pages=asv_pages, replication=doc)
    return Written(folder, write_index(output), pages, asv_pages, tree.warnings)
