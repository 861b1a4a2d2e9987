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
from urllib.parse import unquote, urlsplit

import pytest
from history_factory import weekly_store
from results_factory import (
    TWITTER_SCHEMA,
    python_baselines,
    quick_run_tree,
    serkit_tree,
    typed_tree,
)

from serkit.replicate import posts as replicate
from serkit.report import html as report_html
from serkit.run.quick import QUICK_FIXTURES

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


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One chromium for the module's tests: a launch costs a second or two of CPU."""
    executable = _browser()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    """The module's chromium, for one test: each page it opens is a browser context of its
    own (no cookie or storage shared), and all are closed after it, left open or not."""
    yield chromium
    for context in chromium.contexts:
        context.close()


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


def _tab(browser: Any) -> tuple[Any, list[str]]:
    """One tab for a test's visits, and what goes wrong in it (emptied at each visit): a tab
    opened for each page costs 1.8 s a page, where one reused costs 0.2-0.6 s."""
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"failed: {req.url}"))

    def console(message: Any) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"console {message.type}: {message.text}")

    page.on("console", console)
    return page, problems


def _visit(tab: tuple[Any, list[str]], url: str) -> tuple[list[str], int]:
    """Open one page in `tab`: what went wrong on it, and how many charts plotly drew."""
    page, problems = tab
    problems.clear()
    response = page.goto(url, wait_until="load")
    if response is None or response.status != 200:
        problems.append(f"HTTP {response and response.status}")
    charts = page.locator(".plotly-graph-div")  # written by the report, drawn by plotly
    for i in range(charts.count()):
        # plotly draws into an SVG, with one group per trace
        charts.nth(i).locator(".main-svg .trace").first.wait_for(timeout=15_000)
    return list(problems), charts.count()


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


def test_every_page_loads_cleanly_and_draws_its_charts(
    browser: Any, served: tuple[str, Path]
) -> None:
    base, folder = served
    pages = ["index.html"] + [f"{folder.name}/{p.name}" for p in sorted(folder.glob("*.html"))]
    tab = _tab(browser)
    charts_seen = 0
    for page_path in pages:
        # The reports folder's index.html redirects to the newest Overview: in a tab of its
        # own, so that the next visit does not cut off the Overview it goes on to load.
        visiting = _tab(browser) if page_path == "index.html" else tab
        problems, drawn = _visit(visiting, f"{base}/{page_path}")
        assert problems == [], f"{page_path}: {problems}"
        charts_seen += drawn
        if page_path.endswith("/pythons.html"):
            assert drawn == 1, "the Python-versions page draws box-py's chart"
        if page_path.endswith("/history.html"):
            assert drawn == 1, "the History page draws the weekly host's chart"
    assert _history_points(browser, f"{base}/{folder.name}/history.html") == (6, 3)
    # Each fixture page has one chart per host, the versions page one per host, hosts one,
    # the Pythons page one.
    assert charts_seen >= 2 * 2 + 2 + 1 + 1


def test_the_schema_column_and_the_typed_chart_are_drawn(browser: Any, tmp_path: Path) -> None:
    written = report_html.write_report(
        tmp_path, typed_tree(tmp_path / "results"), tmp_path / "reports", asv_runner=None
    )
    handler = functools.partial(QuietHandler, directory=str(tmp_path / "reports"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/{written.folder.name}/fixture-twitter.html"
    try:
        tab = _tab(browser)
        problems, drawn = _visit(tab, url)
        page, _ = tab
        cells = page.locator("td").all_inner_texts()
        typed_bars = page.locator(".typed-chart .plotly-graph-div .trace").count()
    finally:
        server.shutdown()
    assert problems == []
    assert drawn == 2  # the fixture's chart, and typed against untyped
    assert f"derived {TWITTER_SCHEMA}" in cells and "none" in cells
    assert typed_bars >= 2  # typed and untyped bars


def test_asvs_machine_tooltip_shows_a_profiles_markup_as_text(browser: Any, tmp_path: Path) -> None:
    """A results tree from elsewhere whose machine.json holds an <img onerror> payload:
    hovering the machine's button on asv's graph page (a Bootstrap tooltip rendered as
    HTML) and the benchmark's label shows it as text, and nothing runs."""
    pytest.importorskip("asv")
    from test_hostile_results import PAYLOAD, ROOT, _payload_tree

    server = _serve_asv_pages(_payload_tree(tmp_path / "results"), tmp_path / "reports", ROOT)
    ran: list[str] = []
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        page = _asvs_page(browser, base)
        page.on("dialog", lambda dialog: (ran.append(dialog.message), dialog.dismiss()))
        page.goto(f"{base}/#bench_time.Dumps.time_dumps", wait_until="load")
        _cdn_loaded(page)
        button = page.locator("#graphdisplay-state-params a.btn", has_text=re.compile("^a$"))
        button.wait_for(timeout=15_000)
        button.hover()
        tooltip = page.locator(".tooltip .tooltip-inner").first
        tooltip.wait_for(timeout=15_000)
        assert PAYLOAD.split(" ")[0] in tooltip.inner_text()  # shown, as text
        assert page.locator("img[src='x']").count() == 0  # no live element
        _show_code_tooltips(page)
        assert page.locator("img[src='x']").count() == 0
    finally:
        server.shutdown()
    assert ran == [], "a payload ran"


# A wide desktop window and a phone's.
WIDTHS = (1400, 400)
# What one page shows, measured in the browser: per verdict block its right edge and
# whether it scrolls itself; the verdict's lines; the page's own width; every address it
# leads to or loads (as the browser resolves it); every anchor it offers; the overflow of
# each box that holds a wide table.
MEASURE = """() => ({
    verdicts: [...document.querySelectorAll('.verdict')].map(el => [
        el.getBoundingClientRect().right, el.scrollWidth > el.clientWidth]),
    lines: [...document.querySelectorAll('.verdict li')].map(li => li.innerText),
    width: document.documentElement.scrollWidth,
    window: window.innerWidth,
    links: [...document.querySelectorAll('a[href], link[href], [src]')].map(
        el => el.href || el.src),
    anchors: [...document.querySelectorAll('[id], a[name]')].map(el => el.id || el.name),
    tables: [...document.querySelectorAll('table')].map(
        el => el.parentElement.matches('.wide') && getComputedStyle(el.parentElement).overflowX),
})"""


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The report a fresh main command writes (every registered codec, the quick run's
    fixtures and plan, one machine), built once, served from 127.0.0.1; with the folder
    holding every report version."""
    root = tmp_path_factory.mktemp("quick")
    written = report_html.write_report(
        root, quick_run_tree(root / "results"), root / "reports", asv_runner=None
    )
    handler = functools.partial(QuietHandler, directory=str(written.folder.parent))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", written.folder.parent
    finally:
        server.shutdown()


# The reports folder's index.html, and where it leads: a version's Overview.
FRONT_DOOR = "index.html"
NEWEST_OVERVIEW = re.compile(r"^https?://[^/]+/[^/]+/index\.html$")


def _walk(browser: Any, base: str, pages: list[str]) -> dict[tuple[str, int], Any]:
    """Each page opened in a window of each of WIDTHS: what went wrong on it, and MEASURE.
    One tab for all of them, so that plotly's script is parsed cold once."""
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"failed: {req.url}"))
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    seen = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for path in pages:
            response = page.goto(f"{base}/{path}", wait_until="load")
            if response is None or response.status != 200:
                problems.append(f"HTTP {response and response.status}")
            if path == FRONT_DOOR:  # it opens the newest version's Overview: measured there
                page.wait_for_url(NEWEST_OVERVIEW)
            charts = page.locator(".plotly-graph-div")  # drawn, so that a script error shows
            for i in range(charts.count()):
                charts.nth(i).locator(".main-svg .trace").first.wait_for(timeout=15_000)
            seen[path, width] = {**page.evaluate(MEASURE), "problems": list(problems)}
            problems.clear()
    page.close()
    return seen


def _unresolved(base: str, folder: Path, seen: dict[str, Any]) -> list[str]:
    """Each link of a walked page that leads nowhere: no such file under the served
    folder, or no such anchor on the page it names. The report works offline, so an
    address off this server (the static walk in test_report says the same) is broken too;
    data: addresses (the blank favicon) lead nowhere by design."""
    broken = []
    for path, found in seen.items():
        for link in found["links"]:
            url = urlsplit(link)
            if url.scheme == "data":
                continue
            if f"{url.scheme}://{url.netloc}" != base:
                broken.append(f"{path}: {link} (leaves the report)")
                continue
            target = unquote(url.path).lstrip("/") or "index.html"
            if not (folder / target).is_file():
                broken.append(f"{path}: {link} (no such file)")
            elif url.fragment and url.fragment not in seen.get(target, {}).get("anchors", ()):
                broken.append(f"{path}: {link} (no such anchor)")
    return broken


def test_every_page_of_a_main_command_report_at_a_desktops_and_a_phones_width(
    browser: Any, quick_report: tuple[str, Path]
) -> None:
    """Issue 29: every page at 1,400 px and at 400 px loads cleanly, the Overview and every
    fixture page open with the verdict, no verdict and no page is wider than the window
    (a wide table scrolls in its own box), and every link resolves."""
    base, folder = quick_report
    # Every page the report wrote (the menu's links must lead among them: checked below).
    pages = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html"))
    overview = next(p for p in pages if p.endswith("/index.html"))
    fixture_pages = [p for p in pages if "/fixture-" in p]
    assert len(pages) >= 12 and len(fixture_pages) == len(QUICK_FIXTURES)
    seen = _walk(browser, base, pages)
    for width in WIDTHS:
        at_width = {path: found for (path, w), found in seen.items() if w == width}
        assert _unresolved(base, folder, at_width) == [], width
        for path, found in at_width.items():
            where = f"{path} at {width} px"
            assert found["problems"] == [], where
            assert found["width"] <= found["window"], f"{where}: the page is wider than the window"
            for right, scrolls in found["verdicts"]:
                assert right <= found["window"] and not scrolls, f"{where}: the verdict overflows"
            assert all(box == "auto" for box in found["tables"]), f"{where}: a table cannot scroll"
            if path == overview or path in fixture_pages:
                assert found["verdicts"], f"{where} has no verdict"
        lines = at_width[overview]["lines"]
        # One line per fixture the quick run timed (each leads to its page: resolved above).
        assert sorted(line.split(":")[0] for line in lines) == sorted(QUICK_FIXTURES), width
        for line in lines:
            assert (
                "fastest exact, by round trip (dumps + loads): orjson and msgspec-json: tied"
                in line
            )
        twitter = " ".join(at_width[next(p for p in fixture_pages if "twitter" in p)]["lines"])
        assert "lossy in dict key order only: fastavro" in twitter and "lossy: bson" in twitter


# What the codec table of a fixture page shows at a width, measured in the browser: the
# box's visible width and the table's; the right edge of the columns the verdict reads
# (codec to zstd-3) against the box's; and, scrolled to its far end, whether the codec
# column is still in view.
TABLE_VIEW = """() => {
    const box = document.querySelector('.wide.codecs');
    const heads = [...box.querySelectorAll('tr:first-child th')];
    const last = heads.find(th => th.innerText.trim() === 'zstd-3');
    const read = box.getBoundingClientRect();
    const before = last.getBoundingClientRect().right;
    box.scrollLeft = box.scrollWidth;
    const codec = box.querySelector('tr:nth-child(2) th').getBoundingClientRect();
    const seen = {box: [read.left, read.right], table: [box.scrollWidth, box.clientWidth],
                  verdict_columns_end: before, codec_after_scroll: [codec.left, codec.right]};
    box.scrollLeft = 0;
    return seen;
}"""


def test_the_reports_folder_opens_the_newest_overview_with_a_chart_per_verdict(
    browser: Any, quick_report: tuple[str, Path]
) -> None:
    """Issue 57: the folder's index.html lands on the newest version's Overview (by a
    redirect that needs no script), which charts each fixture's verdict; the list of every
    version is one click from there; at 1,400 px a fixture's table shows every column, and
    where it scrolls (a narrower window) the codec column stays in view."""
    base, folder = quick_report
    (stamp,) = [p.parent.name for p in folder.glob(f"*/{report_html.MANIFEST}")]
    context = browser.new_context(java_script_enabled=False)  # the redirect is HTML
    page = context.new_page()
    page.goto(f"{base}/{FRONT_DOOR}")
    page.wait_for_url(f"{base}/{stamp}/index.html")
    context.close()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{base}/{FRONT_DOOR}")
    page.wait_for_url(f"{base}/{stamp}/index.html")
    charts = page.locator(".answer .answer-chart .plotly-graph-div")
    assert charts.count() == len(QUICK_FIXTURES)
    for i in range(charts.count()):  # drawn by plotly: one bar group per class
        charts.nth(i).locator(".main-svg .trace.bars").first.wait_for(timeout=15_000)
    answers = page.locator(".answer")
    words = answers.first.locator(".verdict").bounding_box()
    chart = answers.first.locator(".answer-chart").bounding_box()
    assert words and chart and chart["x"] >= words["x"] + words["width"]  # beside
    page.click("nav >> text=All report versions")
    page.wait_for_url(f"{base}/{report_html.REPORTS}")
    assert page.locator(f'a[href="{stamp}/index.html"]').count() >= 1
    for fixture in QUICK_FIXTURES:
        page.goto(f"{base}/{stamp}/{report_html.page_name(fixture)}")
        seen = page.evaluate(TABLE_VIEW)
        left, right = seen["box"]
        assert seen["verdict_columns_end"] <= right, f"{fixture}: {seen}"
        scrolled, shown = seen["table"]  # every column, its notes wrapped (units.unbroken)
        assert scrolled <= shown, f"{fixture}: the table is wider than 1,400 px: {seen}"
    page.set_viewport_size({"width": 400, "height": 900})
    for fixture in QUICK_FIXTURES:
        page.goto(f"{base}/{stamp}/{report_html.page_name(fixture)}")
        seen = page.evaluate(TABLE_VIEW)
        left, right = seen["box"]
        codec_left, codec_right = seen["codec_after_scroll"]
        assert left <= codec_left and codec_right <= right, f"{fixture}: {seen}"


def _serve_asv_pages(results: Path, reports: Path, root: Path) -> ThreadingHTTPServer:
    """The report of `results` with asv's own pages (real asv), served on loopback."""
    from test_hostile_results import real_asv

    written = report_html.write_report(root, results, reports, asv_runner=real_asv)
    assert written.asv_pages, written.warnings
    handler = functools.partial(QuietHandler, directory=str(written.folder / "asv"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# A folder holding the files asv's pages load from CDNs, by file name (jquery-3.3.1.min.js,
# jquery.flot.min.js, bootstrap.min.css, ...): for a machine that cannot reach them.
CDN_MIRROR = "SERKIT_ASV_CDN_MIRROR"


def _asvs_page(browser: Any, base: str) -> Any:
    """A tab for asv's pages served at `base`: their CDN files from CDN_MIRROR when set
    (asv's page then loses its integrity hashes: a mirror's flot is not the CDN's
    minified copy), else from the CDNs."""
    page = browser.new_page()
    mirror = os.environ.get(CDN_MIRROR)
    if not mirror:
        return page

    def serve(route: Any) -> None:
        url = urlsplit(route.request.url)
        if f"{url.scheme}://{url.netloc}" != base:
            route.fulfill(path=str(Path(mirror) / Path(url.path).name))
        elif url.path in ("/", "/index.html"):
            fetched = route.fetch()
            page_text = re.sub(r'\sintegrity="[^"]*"', "", fetched.text())
            route.fulfill(response=fetched, body=page_text)
        else:
            route.continue_()

    page.route("**/*", serve)
    return page


def _cdn_loaded(page: Any) -> None:
    """Skip, saying so, where asv's page could not load its CDN scripts (it then leads to
    its error page, and may be leaving for it); in CI (`CI` set) fail instead."""
    from playwright.sync_api import Error

    try:  # the scripts load before the page's load event, or never
        loaded = page.evaluate("typeof jQuery === 'function' && typeof jQuery.plot === 'function'")
    except Error:  # the page is leaving for asv's error page
        loaded = False
    if not loaded:
        message = (
            "asv's pages load jQuery, flot and Bootstrap from CDNs, unreachable here "
            f"(offline, set {CDN_MIRROR} to a folder holding them)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {message}")
        pytest.skip(message)


def _show_code_tooltips(page: Any) -> None:
    """Show the tooltip of each benchmark's code on asv's graph page (rendered as HTML), and
    wait for them. Each sits on its entry of the benchmark tree, folded away, so not hovered."""
    page.evaluate("$('#graphdisplay-navigation li:has(> a)').tooltip('show')")
    tooltips = page.locator(".tooltip .tooltip-inner", has_text="def ")
    tooltips.first.wait_for(state="attached", timeout=15_000)


def test_asvs_list_view_and_graph_page_run_nothing_from_a_hostile_store(
    browser: Any, tmp_path: Path
) -> None:
    """Issue 56: a results file's env_vars key became a panel heading of asv's pages, raw,
    and ran on the list view and every graph page. A store with a payload in every string
    field (test_publishable.hostile_store): each page shows, hovering its tooltips, and no
    marker element appears, no script renames the page, no dialog opens."""
    pytest.importorskip("asv")
    from test_hostile_results import ROOT
    from test_publishable import hostile_store

    server = _serve_asv_pages(hostile_store(tmp_path / "results"), tmp_path / "reports", ROOT)
    base = f"http://127.0.0.1:{server.server_port}"
    ran: list[str] = []
    views = {
        "#summarylist": "#summarylist-navigation",
        "#bench_time.Dumps.time_dumps": "#graphdisplay-state-params",
    }
    try:
        for view, navigation in views.items():
            page = _asvs_page(browser, base)
            page.on("dialog", lambda d: (ran.append(d.message), d.dismiss()))
            page.goto(f"{base}/{view}", wait_until="load")
            _cdn_loaded(page)
            # The variable's panel (its values differ between a and b) is drawn.
            heading = page.locator(f"{navigation} .panel-heading", has_text="env-SERKIT_X")
            heading.wait_for(timeout=15_000)
            button = page.locator(f"{navigation} a.btn", has_text=re.compile("^a$"))
            button.hover()  # the machine's profile, in a tooltip rendered as HTML
            page.locator(".tooltip .tooltip-inner").first.wait_for(timeout=15_000)
            if view != "#summarylist":
                _show_code_tooltips(page)
            page.wait_for_load_state("networkidle")  # a broken image's error is in
            marks = page.locator("#ran").count(), page.title()
            assert marks[0] == 0 and marks[1] != "ran", (view, marks)
            page.close()
    finally:
        server.shutdown()
    assert ran == [], "a payload ran"
