"""One fixture's charts on its snapshot page and the Overview, drawn by plotly: every codec's
times and sizes, the ranked verdict, and the typed documents' times."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from serkit import units
from serkit.checks.fidelity import EXACT, KEY_ORDER_ONLY, LOSSY
from serkit.compare.ranking import UNKNOWN, UNSAFE
from serkit.compare.verdict_words import class_words
from serkit.report.charts import figure_html
from serkit.report.snapshot import COMPRESSORS, SnapshotTable
from serkit.results.tree import Measurement


def _whiskers(values: Sequence[Measurement | None], scale: float) -> dict[str, Any]:
    """Each value's interquartile range as plotly's asymmetric error bars."""
    return {
        "type": "data",
        "symmetric": False,
        "array": _error(values, 1, scale),
        "arrayminus": _error(values, 0, scale),
    }


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
    return figure_html(snapshot_figure(table), div_id)


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
                error_x=_whiskers(values, scale),
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
_UNSAFE_COLOUR = "#6a3d9a"  # the codecs ranked apart as unsafe on untrusted bytes


def verdict_chart(table: SnapshotTable, div_id: str) -> str | None:
    """verdict_figure, drawn into the page; None where nothing was ranked."""
    figure = verdict_figure(table)
    # No tool bar: on a chart this small it covers the legend, and hover tells the times.
    return None if figure is None else figure_html(figure, div_id, {"displayModeBar": False})


def verdict_figure(table: SnapshotTable) -> Any:
    """The verdict at a glance: the round trip (dumps + loads) of its leading codecs as bars
    from zero (twice as slow looks twice as long), whiskers the interquartile range between
    processes, coloured by class; None where nothing was ranked."""
    from plotly import graph_objects as go

    shown = [
        ((fidelity, row.unsafe), row, trip, trip.between)
        for fidelity, row in table.verdict_leaders()
        if (trip := row.summed_round_trip) is not None and trip.between is not None
    ]
    if not shown:
        return None
    scale, unit = units.time_unit(trip.value for _, _, trip, _ in shown)
    figure = go.Figure()
    for fidelity, unsafe in dict.fromkeys(key for key, _, _, _ in shown):
        key = (fidelity, unsafe)
        chosen = [(row, trip, between) for k, row, trip, between in shown if k == key]
        figure.add_trace(
            go.Bar(
                # A codec unsafe on untrusted bytes is said so wherever it is named.
                name=class_words(fidelity) + (f", {UNSAFE}" if unsafe else ""),
                y=[row.codec + (" (unsafe)" if unsafe else "") for row, _, _ in chosen],
                x=[trip.value / scale for _, trip, _ in chosen],
                orientation="h",
                marker_color=_UNSAFE_COLOUR
                if unsafe
                else _CLASS_COLOURS.get(fidelity, _CLASS_COLOURS[UNKNOWN]),
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
    return None if figure is None else figure_html(figure, div_id)


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
                    error_x=_whiskers(values, scale),
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
