"""The report in a real browser, as a person opens it: served on 127.0.0.1 only.

Debian's chromium, driven by playwright. Every page must load with no console error, no
failed request and no script error, and every chart must be drawn by plotly. Without a
browser the test skips, saying so; CI installs one (.ci/run), and there it must run.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from history_factory import weekly_store
from results_factory import TWITTER_SCHEMA, python_baselines, serkit_tree, typed_tree, verdict_tree

from serkit.replicate import posts as replicate
from serkit.report import html as report_html

pytestmark = pytest.mark.slow  # a real browser

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        message = f"no browser found ({', '.join(BROWSERS)}); apt-get install chromium"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {message}")
        pytest.skip(message)
    return found


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A report of two hosts, a third with baselines on three Pythons (so the
    Python-versions page has a chart), and a fourth with six weekly runs, three of them of
    one commit (so the History page has a chart), served from 127.0.0.1 (never every
    interface)."""
    root = tmp_path_factory.mktemp("report")
    # A real replication document (one post, few rounds), so its page is opened too.
    replication = root / "replication.json"
    replicate.save(replicate.run(["002"], replicate.Options(rounds=3)), replication)
    results = weekly_store(python_baselines(serkit_tree(root / "results")))
    written = report_html.write_report(
        root,
        results,
        root / "reports",
        asv_runner=None,
        replication=replication,
    )
    assert (written.folder / "replication.html").is_file()
    handler = functools.partial(QuietHandler, directory=str(root / "reports"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", written.folder
    finally:
        server.shutdown()


def _visit(browser: Any, url: str) -> tuple[list[str], int]:
    """Open one page: what went wrong on it, and how many charts plotly drew."""
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"failed: {req.url}"))

    def console(message: Any) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"console {message.type}: {message.text}")

    page.on("console", console)
    response = page.goto(url, wait_until="load")
    if response is None or response.status != 200:
        problems.append(f"HTTP {response and response.status}")
    charts = page.locator(".plotly-graph-div")  # written by the report, drawn by plotly
    for i in range(charts.count()):
        # plotly draws into an SVG, with one group per trace
        charts.nth(i).locator(".main-svg .trace").first.wait_for(timeout=15_000)
    drawn = charts.count()
    page.close()
    return problems, drawn


def _history_points(browser: Any, url: str) -> tuple[int, int]:
    """What the History chart drew: the points of one line, and the changes marked."""
    page = browser.new_page()
    page.goto(url, wait_until="load")
    chart = page.locator(".plotly-graph-div").first
    chart.locator(".main-svg .trace").first.wait_for(timeout=15_000)
    # One marker per run in the first line of the dumps panel, as plotly drew them.
    points = chart.locator(".main-svg .scatterlayer .trace").first.locator(".point").count()
    marks = chart.locator(".annotation-text", has_text="release").count()
    marks += chart.locator(".annotation-text", has_text="host").count()
    page.close()
    return points, marks


def test_every_page_loads_cleanly_and_draws_its_charts(served: tuple[str, Path]) -> None:
    executable = _browser()
    sync_api = pytest.importorskip("playwright.sync_api")
    base, folder = served
    pages = ["index.html"] + [f"{folder.name}/{p.name}" for p in sorted(folder.glob("*.html"))]
    charts_seen = 0
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            for page_path in pages:
                problems, drawn = _visit(browser, f"{base}/{page_path}")
                assert problems == [], f"{page_path}: {problems}"
                charts_seen += drawn
                if page_path.endswith("/pythons.html"):
                    assert drawn == 1, "the Python-versions page draws box-py's chart"
                if page_path.endswith("/history.html"):
                    assert drawn == 1, "the History page draws the weekly host's chart"
            assert _history_points(browser, f"{base}/{folder.name}/history.html") == (6, 3)
        finally:
            browser.close()
    # Each fixture page has one chart per host, the versions page one per host, hosts one,
    # the Pythons page one.
    assert charts_seen >= 2 * 2 + 2 + 1 + 1


def test_the_schema_column_and_the_typed_chart_are_drawn(tmp_path: Path) -> None:
    executable = _browser()
    sync_api = pytest.importorskip("playwright.sync_api")
    written = report_html.write_report(
        tmp_path, typed_tree(tmp_path / "results"), tmp_path / "reports", asv_runner=None
    )
    handler = functools.partial(QuietHandler, directory=str(tmp_path / "reports"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/{written.folder.name}/fixture-twitter.html"
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            try:
                problems, drawn = _visit(browser, url)
                page = browser.new_page()
                page.goto(url, wait_until="load")
                cells = page.locator("td").all_inner_texts()
                typed_bars = page.locator(".typed-chart .plotly-graph-div .trace").count()
                page.close()
            finally:
                browser.close()
    finally:
        server.shutdown()
    assert problems == []
    assert drawn == 2  # the fixture's chart, and typed against untyped
    assert f"derived {TWITTER_SCHEMA}" in cells and "none" in cells
    assert typed_bars >= 2  # typed and untyped bars


def test_asvs_machine_tooltip_shows_a_profiles_markup_as_text(tmp_path: Path) -> None:
    """A results tree from elsewhere whose machine.json holds an <img onerror> payload:
    hovering the machine's button on asv's graph page (a Bootstrap tooltip rendered as
    HTML) and the benchmark's label shows it as text, and nothing runs."""
    executable = _browser()
    sync_api = pytest.importorskip("playwright.sync_api")
    pytest.importorskip("asv")
    from test_hostile_results import PAYLOAD, ROOT, _payload_tree, real_asv

    results = _payload_tree(tmp_path / "results")
    written = report_html.write_report(ROOT, results, tmp_path / "reports", asv_runner=real_asv)
    assert written.asv_pages, written.warnings
    handler = functools.partial(QuietHandler, directory=str(written.folder / "asv"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ran: list[str] = []
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            try:
                page = browser.new_page()
                page.on("dialog", lambda dialog: (ran.append(dialog.message), dialog.dismiss()))
                url = f"http://127.0.0.1:{server.server_port}/#bench_time.Dumps.time_dumps"
                page.goto(url, wait_until="load")
                if "error" in page.title():  # asv's page that says its scripts did not load
                    pytest.skip("asv's pages load jQuery and Bootstrap from CDNs, unreachable here")
                button = page.locator(
                    "#graphdisplay-state-params a.btn", has_text=re.compile("^a$")
                )
                button.wait_for(timeout=15_000)
                button.hover()
                tooltip = page.locator(".tooltip .tooltip-inner").first
                tooltip.wait_for(timeout=15_000)
                assert PAYLOAD.split(" ")[0] in tooltip.inner_text()  # shown, as text
                assert page.locator("img[src='x']").count() == 0  # no live element
                page.locator("#graphdisplay-navigation li a").first.hover()  # the code's tooltip
                page.locator(".tooltip .tooltip-inner").first.wait_for(timeout=15_000)
                assert page.locator("img[src='x']").count() == 0
            finally:
                browser.close()
    finally:
        server.shutdown()
    assert ran == [], "a payload ran"


# A wide desktop window and a phone's.
WIDTHS = (1400, 400)


def test_the_verdict_lines_fit_the_window_and_the_wide_table_scrolls(tmp_path: Path) -> None:
    executable = _browser()
    sync_api = pytest.importorskip("playwright.sync_api")
    written = report_html.write_report(
        tmp_path, verdict_tree(tmp_path / "results"), tmp_path / "reports", asv_runner=None
    )
    handler = functools.partial(QuietHandler, directory=str(tmp_path / "reports"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/{written.folder.name}"
    # Per verdict block: its right edge, the window's width, and whether it scrolls itself.
    measure = """() => [...document.querySelectorAll('.verdict')].map(el => [
        el.getBoundingClientRect().right, window.innerWidth, el.scrollWidth > el.clientWidth])"""
    seen: dict[tuple[str, int], Any] = {}
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            try:
                for width in WIDTHS:
                    page = browser.new_page(viewport={"width": width, "height": 900})
                    for name in ("index.html", "fixture-twitter.html"):
                        page.goto(f"{base}/{name}", wait_until="load")
                        lines = page.locator(".verdict li").all_inner_texts()
                        wide = page.locator(".wide").evaluate_all(
                            "els => els.map(el => getComputedStyle(el).overflowX)"
                        )
                        seen[name, width] = (lines, page.evaluate(measure), wide)
                    page.close()
            finally:
                browser.close()
    finally:
        server.shutdown()
    for (name, width), (lines, blocks, wide) in seen.items():
        assert blocks, f"{name} at {width} px has no verdict"
        for right, window, scrolls in blocks:
            assert right <= window and not scrolls, f"{name} at {width} px: the verdict overflows"
        if name == "index.html":
            assert [line.split(":")[0] for line in lines] == ["small-dict", "twitter"]
            assert all("fastest exact, by round trip (dumps + loads)" in line for line in lines)
        else:
            assert wide == ["auto"]  # the fixture table scrolls in its box
            assert "lossy in dict key order only: msgspec-struct-json" in " ".join(lines)
