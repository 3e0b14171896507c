"""The built demo site in headless Chromium: pages load cleanly, charts draw, tables sort, instant navigation works."""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from dualboard.render.serve import SiteServer
from tests.browser.browsing import console_errors, open_page, requested_urls, wait_for_charts
from tests.browser.conftest import site_pages
from tests.browser.linkcheck import broken_data_links, broken_links

pytestmark = pytest.mark.browser

PAGE_TYPES = {
    "home": "",
    "leaderboard": "benchmarks/demo/",
    "run list": "benchmarks/demo/runs/",
    "run": "benchmarks/demo/runs/run/?id=aurora-lm-70b",
    "question list": "benchmarks/demo/questions/",
    "question": "benchmarks/demo/questions/question/?id=demo-001",
    "graders": "benchmarks/demo/graders/",
    "methodology": "methodology/",
    "how to submit": "submit/",
    "downloads": "downloads/",
    "changelog": "changelog/",
    "hand-written (site_src)": "about/",
}


@pytest.mark.parametrize("kind", PAGE_TYPES)
def test_every_page_type_loads_without_console_errors(driver, demo_site, kind):
    root, server = demo_site
    console_errors(driver)
    open_page(driver, server.url + PAGE_TYPES[kind])
    assert driver.find_element(By.CSS_SELECTOR, "article h1").text.strip()
    assert console_errors(driver) == []


def test_no_request_leaves_the_site(driver, demo_site):
    """theme.font false, no CDN: every request of every page type goes to the local server."""
    root, server = demo_site
    requested_urls(driver)
    for path in PAGE_TYPES.values():
        open_page(driver, server.url + path)
    urls = requested_urls(driver)
    assert urls, "the performance log recorded no requests"
    outside = [u for u in urls if not u.startswith(server.url) and not u.startswith(("data:", "blob:"))]
    assert outside == []


def test_only_pages_with_a_chart_load_the_chart_library(driver, demo_site):
    """plotly.js (1.5 MB gzipped) is fetched by a page with a chart, once one comes near the screen; never by
    the others."""
    root, server = demo_site
    for kind, path in PAGE_TYPES.items():
        requested_urls(driver)
        driver.get("about:blank")  # a fresh document: instant navigation keeps the libraries a page loaded
        open_page(driver, server.url + path)
        charts = driver.execute_script("return document.querySelectorAll('div.dualboard-chart').length")
        loaded = any(url.endswith(("/plotly.min.js", "/chart-templates.js")) for url in requested_urls(driver))
        assert loaded == (charts > 0), (kind, charts)


STROKES = """
const svg = [...document.querySelectorAll('div.dualboard-chart svg.main-svg')];
const strokes = svg.flatMap(s => [...s.querySelectorAll('g.errorbar path, .shapelayer path')])
  .map(p => getComputedStyle(p).stroke).filter(c => c && c !== 'none');
const schemes = svg.map(s => s.closest('div.dualboard-chart').dataset.scheme);
return [getComputedStyle(document.body).backgroundColor, strokes, schemes];
"""


def _luminance(css: str) -> float:
    """Relative luminance (WCAG) of a CSS ``rgb()``/``rgba()`` colour."""
    red, green, blue = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    return sum(
        w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        for w, c in zip((0.2126, 0.7152, 0.0722), (red, green, blue))
    )


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_chart_lines_stand_out_in_both_palettes(driver, demo_site, scheme):
    """Error bars and the line of no difference contrast 3:1 or more with the page, light or dark (WCAG's
    non-text contrast); charts are redrawn in the palette the reader switches to."""
    root, server = demo_site
    open_page(driver, server.url + "benchmarks/demo/")
    driver.execute_script("document.body.setAttribute('data-md-color-scheme', arguments[0])", scheme)
    WebDriverWait(driver, 10).until(lambda d: set(d.execute_script(STROKES)[2]) == {scheme})
    background, strokes, _ = driver.execute_script(STROKES)
    assert strokes, "no error bar or line drawn"
    assert background == {"default": "rgb(255, 255, 255)", "slate": "rgb(30, 33, 41)"}[scheme]
    page = _luminance(background)
    for stroke in set(strokes):
        light, dark = sorted((_luminance(stroke), page), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 3, (scheme, stroke, background)
    driver.execute_script(  # the chart with the line of no difference, for a person to look at
        "[...document.querySelectorAll('div.dualboard-chart')].find(c => c.querySelector('.shapelayer path'))"
        ".scrollIntoView({block: 'center'})"
    )
    driver.save_screenshot(str(root / f"charts-{scheme}.png"))  # kept beside the board


def test_every_chart_draws(driver, demo_site):
    root, server = demo_site
    open_page(driver, server.url + "benchmarks/demo/")
    charts = driver.find_elements(By.CSS_SELECTOR, "div.dualboard-chart")
    assert len(charts) == 5
    for chart in charts:
        assert chart.find_elements(By.CSS_SELECTOR, "svg.main-svg"), chart.get_attribute("data-src")
        caption = chart.find_element(By.XPATH, "following-sibling::figcaption")
        assert len(caption.text) > 80


def _column(driver, table, index: int) -> list[str]:
    return [
        row.find_elements(By.TAG_NAME, "td")[index].get_attribute("data-sort")
        for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]


def test_clicking_a_column_header_resorts(driver, demo_site):
    root, server = demo_site
    open_page(driver, server.url + "benchmarks/demo/")
    table = next(t for t in driver.find_elements(By.CSS_SELECTOR, ".dualboard-sortable table") if t.is_displayed())
    header = next(th for th in table.find_elements(By.TAG_NAME, "th") if th.text.startswith("Traditional"))
    index = [th.text for th in table.find_elements(By.TAG_NAME, "th")].index(header.text)
    before = _column(driver, table, index)
    header.click()
    WebDriverWait(driver, 5).until(lambda d: _column(d, table, index) != before)
    after = [float(v) for v in _column(driver, table, index)]
    assert after in (sorted(after), sorted(after, reverse=True))
    assert header.get_attribute("aria-sort") in ("ascending", "descending")


def test_rank_switch_shows_the_other_grading(driver, demo_site):
    root, server = demo_site
    open_page(driver, server.url + "benchmarks/demo/")
    visible = [t for t in driver.find_elements(By.CSS_SELECTOR, ".dualboard-switch-pane") if t.is_displayed()]
    assert len(visible) == 1
    driver.find_element(By.CSS_SELECTOR, "label[for='dualboard-rank-traditional']").click()
    now = [t for t in driver.find_elements(By.CSS_SELECTOR, ".dualboard-switch-pane") if t.is_displayed()]
    assert len(now) == 1 and now[0] != visible[0]


def test_instant_navigation_keeps_charts_and_sorting(driver, demo_site):
    """Navigate by clicking links (no page reload): charts draw and tables sort on the new page."""
    root, server = demo_site
    open_page(driver, server.url)
    driver.execute_script("window.__same_document = true;")
    driver.find_element(By.CSS_SELECTOR, "article a[href*='benchmarks/demo/']").click()
    WebDriverWait(driver, 10).until(lambda d: d.current_url.rstrip("/").endswith("benchmarks/demo"))
    wait_for_charts(driver)
    assert driver.execute_script("return window.__same_document === true"), (
        "the click reloaded the page: instant navigation is off"
    )
    charts = driver.find_elements(By.CSS_SELECTOR, "div.dualboard-chart")
    assert charts and all(c.find_elements(By.CSS_SELECTOR, "svg.main-svg") for c in charts)
    assert driver.execute_script("return document.querySelectorAll('th[role=columnheader]').length") > 0
    driver.find_element(By.CSS_SELECTOR, "nav a[href$='methodology/']").click()
    WebDriverWait(driver, 10).until(lambda d: d.current_url.rstrip("/").endswith("methodology"))
    driver.back()
    WebDriverWait(driver, 10).until(lambda d: d.current_url.rstrip("/").endswith("benchmarks/demo"))
    wait_for_charts(driver)
    assert driver.execute_script("return window.__same_document === true")
    assert console_errors(driver) == []


ITEM_SHOWN = """
const item = document.querySelector('div.dualboard-item');
const shown = item && ['done', 'error'].includes(item.dataset.state) && item.dataset.id === arguments[0];
return shown ? document.querySelector('article h1').innerText : null;
"""


def shown_item(driver, slug: str) -> str:
    """The title the item page shows once the page document of ``slug`` is in (read in one script: instant
    navigation replaces the page's elements under a test that holds them)."""
    title = WebDriverWait(driver, 10).until(lambda d: d.execute_script(ITEM_SHOWN, slug))
    wait_for_charts(driver)
    return title.strip()


def test_an_item_s_address_is_a_stable_link_and_back_and_forward_work(driver, demo_site):
    """Leaderboard → run → question → another run, by clicks (instant navigation); then back, back, forward."""
    root, server = demo_site
    open_page(driver, server.url + "benchmarks/demo/")
    driver.execute_script("window.__same_document = true;")
    driver.find_element(By.CSS_SELECTOR, "article a[href$='runs/run/?id=aurora-lm-70b']").click()
    assert shown_item(driver, "aurora-lm-70b") == "aurora-lm-70b"
    driver.find_element(By.CSS_SELECTOR, "article a[href$='questions/question/?id=demo-006']").click()
    assert shown_item(driver, "demo-006") == "Question demo-006"
    assert driver.current_url == server.url + "benchmarks/demo/questions/question/?id=demo-006"
    other = driver.find_element(By.CSS_SELECTOR, "article td a[href*='runs/run/?id=']:not([href$='aurora-lm-70b'])")
    model, slug = other.text, other.get_attribute("href").split("?id=")[1]
    other.click()
    assert shown_item(driver, slug) == model
    driver.back()
    assert shown_item(driver, "demo-006") == "Question demo-006"
    driver.back()
    assert shown_item(driver, "aurora-lm-70b") == "aurora-lm-70b"
    driver.forward()
    assert shown_item(driver, "demo-006") == "Question demo-006"
    assert driver.execute_script("return window.__same_document === true"), "a click reloaded the page"
    open_page(driver, server.url + "benchmarks/demo/questions/question/?id=demo-006")  # the link, opened anew
    assert shown_item(driver, "demo-006") == "Question demo-006"
    open_page(driver, server.url + "benchmarks/demo/questions/question/?id=no-such-question")
    assert shown_item(driver, "no-such-question") == "Question"
    message = driver.find_element(By.CLASS_NAME, "dualboard-item-message").text
    assert message == "The question could not be shown (the index names no page for question no-such-question)."
    assert console_errors(driver) == []


def test_an_old_address_of_an_item_leads_to_it_and_a_section_link_scrolls_to_it(driver, demo_site):
    """Served as GitHub Pages and ``dualboard serve`` serve it (a missing page is the site's 404 page), the
    address of a page this site once built per run or question goes to the item on its page now."""
    root, _ = demo_site
    server = SiteServer(root / "site", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for old, new, title in (
            ("benchmarks/demo/runs/aurora-lm-70b/", "benchmarks/demo/runs/run/?id=aurora-lm-70b", "aurora-lm-70b"),
            (
                "benchmarks/demo/questions/demo-006/",
                "benchmarks/demo/questions/question/?id=demo-006",
                "Question demo-006",
            ),
        ):
            driver.get(server.url + old)
            WebDriverWait(driver, 10).until(lambda d, new=new: d.current_url == server.url + new)
            assert shown_item(driver, new.split("=")[1]) == title
        driver.get(server.url + "benchmarks/demo/runs/run/?id=aurora-lm-70b#submission")
        WebDriverWait(driver, 10).until(lambda d: d.execute_script(ITEM_SHOWN, "aurora-lm-70b"))  # no scroll
        WebDriverWait(driver, 5).until(
            lambda d: d.execute_script(
                "return Math.abs(document.getElementById('submission').getBoundingClientRect().top) < 120"
            )
        )
    finally:
        console_errors(driver)  # the old addresses' 404s were expected: keep them out of the next test's console
        server.shutdown()
        server.server_close()


def test_mkdocs_builds_a_fixed_set_of_pages_and_search_finds_every_item(demo_site):
    """One question page and one run page per benchmark, out of the search index; the lists' headings are in it."""
    root, server = demo_site
    site = root / "site"
    assert len(site_pages(site)) == 12, site_pages(site)
    entries = json.loads((site / "search/search_index.json").read_text("utf-8"))["docs"]
    locations = {e["location"] for e in entries}
    assert not [
        loc for loc in locations if loc.startswith(("benchmarks/demo/questions/question/", "benchmarks/demo/runs/run/"))
    ]
    questions = [json.loads(line)["id"] for line in (root / "data/benchmarks/demo/questions.jsonl").open()]
    assert {f"benchmarks/demo/questions/#q-{q}" for q in questions} <= locations
    runs = json.loads((site / "benchmarks/demo/runs/data-files.json").read_text("utf-8"))["files"]
    slugs = {key.removesuffix("#page") for key in runs if key.endswith("#page")}
    runs_stored = {p.name for p in (root / "submissions/demo").iterdir() if p.is_dir()}
    assert slugs == runs_stored and {f"benchmarks/demo/runs/#run-{s}" for s in slugs} <= locations


RESULTS = """
return [...document.querySelectorAll('.md-search-result__item a')].map(a => [a.href, a.innerText]);
"""


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("demo-014", "benchmarks/demo/questions/#q-demo-014"),
        ("photosynthesis", "benchmarks/demo/questions/#q-"),
        ("aurora-lm-70b", "benchmarks/demo/runs/#run-aurora-lm-70b"),
    ],
)
def test_the_site_search_finds_a_question_by_id_and_prompt_and_a_run_by_model(driver, demo_site, query, found):
    root, server = demo_site
    open_page(driver, server.url)
    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys(query)

    def hits(d) -> list | None:
        """The results, address and text, once one is what is sought (read in one script: the list is redrawn as
        the query is typed; a result's address carries ?h=, the words to highlight)."""
        shown = d.execute_script(RESULTS)
        return (
            shown
            if any(f"{urlsplit(h).path}#{urlsplit(h).fragment}".startswith("/" + found) for h, _ in shown)
            else None
        )

    shown = WebDriverWait(driver, 10).until(hits)
    assert "QuestionCategory" not in shown[0][1].replace("\n", ""), "a hit's preview reads as text"


def test_no_broken_internal_link(demo_site):
    """Every href, src and chart data-src of every page resolves to a file of the site, every #fragment to an id,
    every ?id= to an item of the page's folder; so does every link of the data files the pages load."""
    root, server = demo_site
    broken = broken_links(root / "site")
    assert broken == [], broken[:20]
    assert broken_data_links(root / "site") == []


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="a/">ok</a><a href="a/#top">ok</a><a href="b/">missing</a>'
        '<a href="a/#nowhere">bad fragment</a><a href="https://example.org/">external</a>'
    )
    (tmp_path / "a" / "index.html").write_text('<h1 id="top">A</h1><script src="../x.js"></script>')
    assert broken_links(tmp_path) == [
        ("/a/index.html", "../x.js"),
        ("/index.html", "b/"),
        ("/index.html", "a/#nowhere"),
    ]
