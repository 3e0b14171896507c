"""The built demo site in headless Chromium: pages load cleanly, charts draw, tables sort, instant navigation works."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.browsing import console_errors, open_page, requested_urls, wait_for_charts
from tests.browser.conftest import site_pages
from tests.browser.linkcheck import broken_links

pytestmark = pytest.mark.browser

PAGE_TYPES = {
    "home": "",
    "leaderboard": "benchmarks/demo/",
    "run": "benchmarks/demo/runs/aurora-lm-70b/",
    "question list": "benchmarks/demo/questions/",
    "question": "benchmarks/demo/questions/demo-001/",
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


def test_question_pages_stay_out_of_nav_and_search(demo_site):
    root, server = demo_site
    site = root / "site"
    question = (site / "benchmarks/demo/questions/demo-001/index.html").read_text("utf-8")
    home = (site / "index.html").read_text("utf-8")
    assert "questions/demo-001/" not in home, "question pages must not be in the navigation"
    index = (site / "search/search_index.json").read_text("utf-8")
    assert "questions/demo-001/" not in index
    assert "runs/aurora-lm-70b/" in index, "run pages stay searchable"
    assert "Answers and verdicts" in question
    assert len(site_pages(site)) == len(list(site.rglob("index.html")))


def test_no_broken_internal_link(demo_site):
    """Every href, src and chart data-src of every page resolves to a file of the site, every #fragment to an id."""
    root, server = demo_site
    broken = broken_links(root / "site")
    assert broken == [], broken[:20]


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
