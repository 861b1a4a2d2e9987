"""The report's charts, drawn by plotly into each page (the library is the report's own copy)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from serkit import units
from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY
from serkit.compare.ranking import UNKNOWN, class_words
from serkit.report.history import HistoryStep, HistoryView, moment_iso
from serkit.report.pythons import PythonView
from serkit.report.snapshot import COMPRESSORS, SnapshotTable
from serkit.report.steps import INSTRUCTION_NAMES, MEASURE_NAMES, Point
from serkit.report.versions import LibraryView
from serkit.report.views import ReportData
from serkit.results.tree import Measurement
from serkit.suite.benchmark_names import ALLOCATIONS, DUMPS, INSTRUCTIONS, LOADS, PEAK, SIZE

# How the library chart's hover shows each measure's absolute value (times: seconds).
_LIBRARY_UNITS = {
    SIZE: units.bytes_exact,
    **{name: units.bytes_binary for name in PEAK.values()},
    **{name: units.whole for name in ALLOCATIONS.values()},
    **{name: units.whole for name in INSTRUCTIONS.values()},
}


def _figure_html(figure: Any, div_id: str, config: dict[str, Any] | None = None) -> str:
    # The library is loaded once per page from the report's own copy: no CDN.
    return str(
        figure.to_html(
            full_html=False,
            include_plotlyjs=False,
            div_id=div_id,
            config={"displaylogo": False, "responsive": True, **(config or {})},
        )
    )


def _error(
    values: Sequence[Measurement | None], side: int, scale: float = 1.0
) -> list[float | None]:
    out: list[float | None] = []
    for m in values:
        if m is None or m.value is None or m.iqr is None:
            out.append(None)
        else:
            out.append(abs(m.iqr[side] - m.value) / scale)
    return out


def _scaled(values: Sequence[float | None], scale: float) -> list[float | None]:
    return [None if v is None else v / scale for v in values]


def _value(m: Measurement | None) -> float | None:
    return None if m is None else m.value


# Every axis reads in one unit, written out in full: never plotly's SI prefixes (10µ,
# 100µ, 0.001 on one axis), and thousands separated.
_PLAIN_TICKS = {"exponentformat": "none", "separatethousands": True}


def snapshot_chart(table: SnapshotTable, div_id: str) -> str:
    """snapshot_figure, drawn into the page."""
    return _figure_html(snapshot_figure(table), div_id)


def snapshot_figure(table: SnapshotTable) -> Any:
    """Per codec: the times as dots on a log axis (they span orders of magnitude; a bar on
    a log axis would start nowhere), and the encoded and compressed sizes as bars from zero."""
    from plotly import graph_objects as go
    from plotly.subplots import make_subplots

    rows = [r for r in table.rows_in_verdict_order if r.measured]  # the fastest on top
    codecs = [r.codec for r in rows]
    times = [_value(getattr(r, name)) for r in rows for name in ("dumps", "loads")]
    scale, unit = units.time_unit(times)
    sizes = [r.size for r in rows] + [v for r in rows for v in r.compressed.values()]
    byte_scale, byte_unit = units.size_unit(sizes)
    titles = [
        "time per call: dots on a log scale, lines the interquartile range",
        "encoded size, and compressed (bars from zero)",
    ]
    if table.has_memory:
        titles.append("peak memory ÷ encoded size: dots on a log scale")
    figure = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.1)
    for name, symbol in (("dumps", "circle"), ("loads", "diamond")):
        values: list[Measurement | None] = [getattr(r, name) for r in rows]
        figure.add_trace(
            go.Scatter(
                name=name,
                y=codecs,
                x=_scaled([_value(m) for m in values], scale),
                mode="markers",
                marker={"symbol": symbol, "size": 9},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": _error(values, 1, scale),
                    "arrayminus": _error(values, 0, scale),
                },
                customdata=[units.seconds(_value(m)) for m in values],
                hovertemplate="%{y} " + name + ": %{customdata}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    for label, sized in (
        ("encoded", [r.size for r in rows]),
        *((name, [r.compressed.get(name) for r in rows]) for name in COMPRESSORS),
    ):
        figure.add_trace(
            go.Bar(
                name=f"size: {label}",
                y=codecs,
                x=_scaled(sized, byte_scale),
                orientation="h",
                customdata=[units.bytes_exact(v) for v in sized],
                hovertemplate="%{y} " + label + ": %{customdata}<extra></extra>",
            ),
            row=1,
            col=2,
        )
    if table.has_memory:
        for operation, symbol in (("dumps", "circle"), ("loads", "diamond")):
            figure.add_trace(
                go.Scatter(
                    name=f"{operation} peak",
                    y=codecs,
                    x=[r.peak_per_byte(operation) for r in rows],
                    mode="markers",
                    marker={"symbol": symbol, "size": 9},
                    customdata=[units.bytes_binary(r.peak.get(operation)) for r in rows],
                    hovertemplate="%{y} " + operation + ": %{x:.3g}x the encoded size "
                    "(peak %{customdata})<extra></extra>",
                ),
                row=1,
                col=3,
            )
        figure.update_xaxes(
            type="log", title_text="x the encoded size (log scale)", row=1, col=3, **_PLAIN_TICKS
        )
    figure.update_xaxes(
        type="log", title_text=f"{unit} per call (log scale)", row=1, col=1, **_PLAIN_TICKS
    )
    size_title = "bytes" if byte_unit == "B" else byte_unit
    figure.update_xaxes(title_text=size_title, rangemode="tozero", row=1, col=2, **_PLAIN_TICKS)
    figure.update_yaxes(autorange="reversed")
    figure.update_layout(
        barmode="group", height=140 + 40 * len(rows), margin={"t": 40, "l": 10, "r": 10}
    )
    return figure


# The Overview's chart colours a codec by its round trip's class, as its legend names it.
_CLASS_COLOURS = {EXACT: "#1f77b4", KEY_ORDER_ONLY: "#e3a21a", LOSSY: "#a4161a", UNKNOWN: "#8c8c8c"}


def verdict_chart(table: SnapshotTable, div_id: str) -> str | None:
    """verdict_figure, drawn into the page; None where nothing was ranked."""
    figure = verdict_figure(table)
    # No tool bar: on a chart this small it covers the legend, and hover tells the times.
    return None if figure is None else _figure_html(figure, div_id, {"displayModeBar": False})


def verdict_figure(table: SnapshotTable) -> Any:
    """The verdict at a glance: the round trip (dumps + loads) of its leading codecs as bars
    from zero (twice as slow looks twice as long), whiskers the interquartile range between
    processes, coloured by class; None where nothing was ranked."""
    from plotly import graph_objects as go

    shown = [
        (fidelity, row, trip, trip.between)
        for fidelity, row in table.verdict_leaders()
        if (trip := row.summed_round_trip) is not None and trip.between is not None
    ]
    if not shown:
        return None
    scale, unit = units.time_unit(trip.value for _, _, trip, _ in shown)
    figure = go.Figure()
    for fidelity in dict.fromkeys(fidelity for fidelity, _, _, _ in shown):
        chosen = [(row, trip, between) for f, row, trip, between in shown if f == fidelity]
        figure.add_trace(
            go.Bar(
                name=class_words(fidelity),
                y=[row.codec for row, _, _ in chosen],
                x=[trip.value / scale for _, trip, _ in chosen],
                orientation="h",
                marker_color=_CLASS_COLOURS.get(fidelity, _CLASS_COLOURS[UNKNOWN]),
                error_x={
                    "type": "data",
                    "symmetric": False,
                    # The centre is of the typical processes: it may lie outside the
                    # quartiles of them all, and a whisker is never drawn inward.
                    "array": [max(b.q3 - trip.value, 0) / scale for _, trip, b in chosen],
                    "arrayminus": [max(trip.value - b.q1, 0) / scale for _, trip, b in chosen],
                },
                customdata=[units.seconds(trip.value) for _, trip, _ in chosen],
                hovertemplate="%{y}: %{customdata} per round trip<extra></extra>",
            )
        )
    figure.update_xaxes(
        title_text=f"round trip, dumps + loads ({unit} per call)",
        rangemode="tozero",
        **_PLAIN_TICKS,
    )
    figure.update_yaxes(autorange="reversed", automargin=True)
    figure.update_layout(
        height=110 + 24 * len(shown),
        margin={"t": 30, "b": 10, "l": 10, "r": 10},
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        barmode="overlay",
        showlegend=True,
    )
    return figure


def typed_chart(table: SnapshotTable, div_id: str) -> str | None:
    """typed_figure, drawn into the page; None where it has nothing to draw."""
    figure = typed_figure(table)
    return None if figure is None else _figure_html(figure, div_id)


def typed_figure(table: SnapshotTable) -> Any:
    """Decode time of the schema codecs beside the schemaless ones of the same format: what
    decoding into typed, validated objects costs against decoding plain data, as bars from
    zero (a 2.6x difference looks 2.6x). None when no format has both measured here."""
    from plotly import graph_objects as go
    from plotly.subplots import make_subplots

    if not table.has_typed:
        return None
    rows = [r for r in table.rows if r.loads is not None and r.format]
    formats = sorted({r.format for r in rows if r.typed} & {r.format for r in rows if not r.typed})
    figure = make_subplots(
        rows=1,
        cols=len(formats),
        subplot_titles=[f"{f}: loads, typed against untyped" for f in formats],
        horizontal_spacing=0.15,
    )
    for col, fmt in enumerate(formats, start=1):
        shown = [r for r in rows if r.format == fmt]
        scale, unit = units.time_unit(_value(r.loads) for r in shown)
        for typed, label, colour in (
            (False, "untyped (plain data)", "#8c8c8c"),
            (True, "typed (schema derived)", "#d62728"),
        ):
            chosen = [r for r in shown if r.typed == typed]
            chosen.sort(key=lambda r: r.loads.value if r.loads and r.loads.value else 0.0)
            values: list[Measurement | None] = [r.loads for r in chosen]
            figure.add_trace(
                go.Bar(
                    name=label,
                    legendgroup=label,
                    showlegend=col == 1,
                    marker_color=colour,
                    y=[r.codec for r in chosen],
                    x=_scaled([_value(m) for m in values], scale),
                    orientation="h",
                    error_x={
                        "type": "data",
                        "symmetric": False,
                        "array": _error(values, 1, scale),
                        "arrayminus": _error(values, 0, scale),
                    },
                    customdata=[units.seconds(_value(m)) for m in values],
                    hovertemplate="%{y} loads: %{customdata}<extra></extra>",
                ),
                row=1,
                col=col,
            )
        figure.update_xaxes(
            title_text=f"{unit} per call", rangemode="tozero", row=1, col=col, **_PLAIN_TICKS
        )
    figure.update_yaxes(autorange="reversed")
    height = 140 + 30 * max(sum(r.format == f for r in rows) for f in formats)
    figure.update_layout(height=height, margin={"t": 40, "l": 10, "r": 10})
    return figure


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
    return _figure_html(figure, div_id)


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
    return _figure_html(figure, div_id)


# How each kind of change between two runs is marked on the time axis.
_MARKS = {
    "release": {"color": "#1b7a3a", "dash": "dash"},
    "host": {"color": "#a4161a", "dash": "dot"},
    "suite": {"color": "#6b7385", "dash": "dashdot"},
    "runner drift": {"color": "#b35c00", "dash": "longdash"},
}


def history_chart(view: HistoryView, div_id: str) -> str:
    """history_figure, drawn into the page."""
    return _figure_html(history_figure(view), div_id)


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
