"""The report's charts of change, drawn by plotly into each page (the library is the report's
own copy): each release and each Python against the newest, each host against the reference
host, and each machine's baseline over time. One fixture's charts are in
serkit.report.snapshot_charts."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from serkit import units
from serkit.report.history import HistoryStep, HistoryView, moment_iso
from serkit.report.pythons import PythonView
from serkit.report.steps import INSTRUCTION_NAMES, MEASURE_NAMES, Point
from serkit.report.versions import LibraryView
from serkit.report.views import ReportData
from serkit.suite.benchmark_names import ALLOCATIONS, DUMPS, INSTRUCTIONS, LOADS, PEAK, SIZE

# How the library chart's hover shows each measure's absolute value (times: seconds).
_LIBRARY_UNITS = {
    SIZE: units.bytes_exact,
    **{name: units.bytes_binary for name in PEAK.values()},
    **{name: units.whole for name in ALLOCATIONS.values()},
    **{name: units.whole for name in INSTRUCTIONS.values()},
}


def figure_html(figure: Any, div_id: str, config: dict[str, Any] | None = None) -> str:
    """A plotly figure as a page's `<div>`, without the library."""
    # The library is loaded once per page from the report's own copy: no CDN.
    return str(
        figure.to_html(
            full_html=False,
            include_plotlyjs=False,
            div_id=div_id,
            config={"displaylogo": False, "responsive": True, **(config or {})},
        )
    )


def library_chart(view: LibraryView, div_id: str) -> str:
    """Per release, each measurement relative to the newest release: a change stands out."""
    return steps_chart(
        view.points,
        view.codecs,
        view.fixtures,
        div_id,
        axis=f"{view.library} release",
        newest=view.points[-1].version,
        scale="x newest release",
    )


def python_chart(view: PythonView, div_id: str) -> str:
    """Per Python, each measurement relative to the newest Python's."""
    return steps_chart(
        view.points,
        view.codecs,
        view.fixtures,
        div_id,
        axis="Python",
        newest=f"Python {view.points[-1].version}",
        scale="x newest Python",
        counted=tuple(INSTRUCTIONS.values()),  # the table's measures, without memory
    )


def steps_chart(
    points: Sequence[Point],
    codecs: Sequence[str],
    fixtures: Sequence[str],
    div_id: str,
    *,
    axis: str,
    newest: str,
    scale: str,
    counted: Sequence[str] = (*PEAK.values(), *ALLOCATIONS.values(), *INSTRUCTIONS.values()),
) -> str:
    """Each measurement at every point of an axis, relative to the last point's; the
    `counted` measures get a panel each where any point measured them."""
    figure = steps_figure(
        points, codecs, fixtures, axis=axis, newest=newest, scale=scale, counted=counted
    )
    return figure_html(figure, div_id)


def steps_figure(
    points: Sequence[Point],
    codecs: Sequence[str],
    fixtures: Sequence[str],
    *,
    axis: str,
    newest: str,
    scale: str,
    counted: Sequence[str] = (*PEAK.values(), *ALLOCATIONS.values(), *INSTRUCTIONS.values()),
) -> Any:
    """steps_chart's plotly figure: one line per codec and fixture, one colour in every panel."""
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    panels = [(DUMPS, "dumps time"), (LOADS, "loads time"), (SIZE, "encoded size")]
    names = {**MEASURE_NAMES, **INSTRUCTION_NAMES}
    for name in counted:
        if any(  # where the points measured them
            p.run.get(name, c, f) for p in points for c in codecs for f in fixtures
        ):
            panels.append((name, names[name]))
    figure = make_subplots(
        rows=(len(panels) + 2) // 3,
        cols=3,
        subplot_titles=[f"{t}, relative to {newest}" for _, t in panels],
    )
    versions = [p.version for p in points]
    # Plotly colours each trace anew: a line's colour is fixed here, so that one codec and
    # fixture reads the same in every panel, as the one legend entry says.
    palette = qualitative.Dark24
    series = [(codec, fixture) for codec in codecs for fixture in fixtures]
    colours = {s: palette[i % len(palette)] for i, s in enumerate(series)}
    in_legend: set[tuple[str, str]] = set()
    for index, (benchmark, _) in enumerate(panels):
        row, col = index // 3 + 1, index % 3 + 1
        for codec, fixture in series:
            values = [p.run.get(benchmark, codec, fixture) for p in points]
            last = values[-1]
            if last is None or not last.value or all(v is None for v in values):
                continue
            shown = _LIBRARY_UNITS.get(benchmark, units.seconds)
            absolute = [units.MISSING if m is None else shown(m.value) for m in values]
            figure.add_trace(
                _relative_line(
                    versions, values, last.value, (codec, fixture), colours, in_legend, absolute
                ),
                row=row,
                col=col,
            )
            in_legend.add((codec, fixture))
    figure.update_xaxes(type="category", title_text=axis)
    figure.update_yaxes(title_text=scale, col=1)
    figure.update_layout(height=420 * ((len(panels) + 2) // 3), margin={"t": 40, "l": 10, "r": 10})
    return figure


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
    return figure_html(figure, div_id)


# How each kind of change between two runs is marked on the time axis.
_MARKS = {
    "release": {"color": "#1b7a3a", "dash": "dash"},
    "host": {"color": "#a4161a", "dash": "dot"},
    "suite": {"color": "#6b7385", "dash": "dashdot"},
    "runner drift": {"color": "#b35c00", "dash": "longdash"},
}


def history_chart(view: HistoryView, div_id: str) -> str:
    """history_figure, drawn into the page."""
    return figure_html(history_figure(view), div_id)


def history_figure(view: HistoryView) -> Any:
    """Each codec and fixture's dumps and loads time and encoded size at every run, over
    calendar time, relative to the newest run's; each release, host and suite change
    between two runs marked on the time axis, its details in the mark's hover."""
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    panels = [(DUMPS, "dumps time"), (LOADS, "loads time"), (SIZE, "encoded size")]
    figure = make_subplots(rows=1, cols=3, subplot_titles=[title for _, title in panels])
    when = [moment_iso(p.run.moment) for p in view.points]
    palette = qualitative.Dark24
    series = [(codec, fixture) for codec in view.codecs for fixture in view.fixtures]
    colours = {s: palette[i % len(palette)] for i, s in enumerate(series)}
    in_legend: set[tuple[str, str]] = set()
    for col, (benchmark, _) in enumerate(panels, start=1):
        shown = _LIBRARY_UNITS.get(benchmark, units.seconds)
        for codec, fixture in series:
            values = [p.run.get(benchmark, codec, fixture) for p in view.points]
            last = next((m for m in reversed(values) if m is not None and m.value), None)
            if last is None or last.value is None:
                continue
            # Releases and commits come from results files: escaped, as plotly reads HTML.
            hover = [
                html.escape(
                    f"{units.MISSING if m is None or m.value is None else shown(m.value)}, "
                    f"{view.release(codec, p)}, commit {p.run.commit[:8]}"
                )
                for m, p in zip(values, view.points)
            ]
            figure.add_trace(
                _relative_line(
                    when,
                    values,
                    last.value,
                    (codec, fixture),
                    colours,
                    in_legend,
                    hover,
                    x_format="|%Y-%m-%d %H:%M",
                ),
                row=1,
                col=col,
            )
            in_legend.add((codec, fixture))
    # What two runs of the same code differ by here: a point inside the band is noise.
    # Times only: sizes are counts, the same in every run.
    for col in (1, 2):
        figure.add_hrect(
            y0=1 - view.floor,
            y1=1 + view.floor,
            fillcolor="#6b7385",
            opacity=0.15,
            line_width=0,
            row=1,
            col=col,
        )
    figure.add_annotation(
        x=0,
        xref="x domain",
        y=1 - view.floor,
        yref="y",
        yanchor="top",
        xanchor="left",
        text=f"band: noise floor ±{units.percent(view.floor)} (differences within it are noise)",
        showarrow=False,
        font={"size": 10, "color": "#6b7385"},
    )
    for step in view.steps:
        _mark(figure, moment_iso(step.after.run.moment), step)
    figure.update_xaxes(type="date", title_text="run (UTC)")
    figure.update_yaxes(title_text=f"x the newest run ({view.points[-1].label})", col=1)
    figure.update_layout(height=460, margin={"t": 40, "l": 10, "r": 10})
    return figure


def _relative_line(
    x: list[Any],
    values: list[Any],
    newest: float,
    series: tuple[str, str],
    colours: dict[tuple[str, str], str],
    in_legend: set[tuple[str, str]],
    hover: list[str],
    x_format: str = "",
) -> Any:
    """One codec and fixture's line of values relative to `newest`, its colour the same in
    every panel and its legend entry shown once; `hover` holds each point's own words."""
    from plotly import graph_objects as go  # slow to import: only when a chart is drawn

    codec, fixture = series
    return go.Scatter(
        x=x,
        y=[None if m is None or m.value is None else m.value / newest for m in values],
        mode="lines+markers",
        line={"color": colours[series]},
        name=f"{codec} / {fixture}",
        legendgroup=f"{codec}/{fixture}",
        showlegend=series not in in_legend,
        customdata=hover,
        hovertemplate=f"{codec} / {fixture} %{{x{x_format}}}: %{{y:.3f}}x "
        "(%{customdata})<extra></extra>",
    )


def _mark(figure: Any, when: str, step: HistoryStep) -> None:
    """A vertical line in every panel where something changed, named once, above the first."""
    kinds = step.marks
    if not kinds:
        return
    style = _MARKS[kinds[0]]
    figure.add_vline(x=when, line_width=1, line_dash=style["dash"], line_color=style["color"])
    details = [*step.releases, *step.host]
    if step.code:
        details.append(f"benchmark code changed: {units.plural(len(step.code), 'benchmark')}")
    if step.drift_percent is not None:
        details.append(f"the sentinel moved {step.drift_percent:+.1f} % (median)")
    # plotly reads a hover text as HTML: a host's facts come from files, never trusted as it.
    details = [html.escape(d) for d in details]
    figure.add_annotation(
        x=when,
        xref="x",
        y=1,
        yref="y domain",
        yanchor="top",
        text=" + ".join(kinds),
        hovertext="<br>".join(details),
        showarrow=False,
        font={"size": 10, "color": style["color"]},
        bgcolor="rgba(255,255,255,0.8)",
    )
