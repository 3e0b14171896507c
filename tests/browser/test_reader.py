"""A reader's journey in Chromium: what a model fails (run page list, search), and a leaderboard that reads
on its own (view in the URL, dark mode with the charts, metadata filters, no sideways scroll at 1,400 px).

Runs on the demo build (tests/browser/conftest.py); expected values come from the demo's own files.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from dualboard.render.run_pages import OUTCOMES
from tests.browser.browsing import console_errors, open_page, wait_for_charts

pytestmark = pytest.mark.browser

RUN = "delta-mind-34b"


def demo_questions(root: Path) -> list[dict]:
    lines = (root / "data/benchmarks/demo/questions.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def visible_rows(table) -> list:
    return [row for row in table.find_elements(By.CSS_SELECTOR, "tbody tr") if row.is_displayed()]


def column_values(table, key: str, attribute: str = "data-sort") -> list[str]:
    """The cells of the column whose header has data-key ``key``, in the rows shown, top to bottom."""
    headers = table.find_elements(By.CSS_SELECTOR, "thead th")
    index = [h.get_attribute("data-key") for h in headers].index(key)
    return [row.find_elements(By.TAG_NAME, "td")[index].get_attribute(attribute) for row in visible_rows(table)]


def question_table(driver):
    heading = driver.find_element(By.ID, "every-question")
    return heading.find_element(By.XPATH, "following::table[1]")


def filter_bar(table):
    """The filter bar tables.js put above a filterable table."""
    return table.find_element(
        By.XPATH, "ancestor::div[contains(@class,'dualboard-filterable')]/preceding-sibling::div[1]"
    )


def test_run_page_lists_every_question_sorts_and_filters(driver, demo_site):
    root, server = demo_site
    questions = demo_questions(root)
    open_page(driver, server.url + f"benchmarks/demo/runs/run/?id={RUN}")
    table = question_table(driver)
    assert len(visible_rows(table)) == len(questions)
    links = [row.find_element(By.CSS_SELECTOR, "td a").get_attribute("href") for row in visible_rows(table)]
    assert links == [server.url + f"benchmarks/demo/questions/question/?id={q['id']}" for q in questions]

    table.find_element(By.CSS_SELECTOR, "th[data-key='answer_key']").click()
    values = [float(v) for v in column_values(table, "answer_key")]
    assert values in (sorted(values), sorted(values, reverse=True))

    bar = filter_bar(table)
    Select(bar.find_element(By.CSS_SELECTOR, "select[data-key='category']")).select_by_visible_text("units")
    units = [q["id"] for q in questions if q["category"] == "units"]
    shown = visible_rows(table)
    assert sorted(r.find_element(By.CSS_SELECTOR, "td a").text for r in shown) == sorted(units)
    assert bar.find_element(By.CLASS_NAME, "dualboard-filter-count").text == f"{len(units)} of {len(questions)} rows"

    outcome = Select(bar.find_element(By.CSS_SELECTOR, "select[data-key='outcome']"))
    options = [o.text for o in outcome.options]
    assert options[0] == "all" and set(options[1:]) <= set(OUTCOMES)
    outcome.select_by_index(1)
    assert all(r.find_elements(By.TAG_NAME, "td")[6].text == options[1] for r in visible_rows(table))

    Select(bar.find_element(By.CSS_SELECTOR, "select[data-key='category']")).select_by_index(0)
    outcome.select_by_index(0)
    box = bar.find_element(By.CSS_SELECTOR, "input[type='search']")
    box.send_keys(questions[12]["id"])
    assert [r.find_element(By.CSS_SELECTOR, "td a").text for r in visible_rows(table)] == [questions[12]["id"]]
    assert console_errors(driver) == []


def test_search_finds_a_question_by_its_text(driver, demo_site):
    root, server = demo_site
    open_page(driver, server.url)
    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys("Fahrenheit")
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item a"))
    hrefs = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")]
    assert hrefs[0].split("?")[0] == server.url + "benchmarks/demo/questions/", hrefs


def _visible_table(driver):
    return next(t for t in driver.find_elements(By.CSS_SELECTOR, ".dualboard-switch-pane table") if t.is_displayed())


def test_grading_and_sort_order_live_in_the_url(driver, demo_site):
    root, server = demo_site
    board = server.url + "benchmarks/demo/"
    open_page(driver, board + "?grading=traditional&sort=p_holm&order=descending")
    assert driver.find_element(By.ID, "dualboard-rank-traditional").is_selected()
    table = _visible_table(driver)
    assert table.find_element(By.CSS_SELECTOR, "th[data-key='p_holm']").get_attribute("aria-sort") == "descending"
    p_values = [float(v) for v in column_values(table, "p_holm")]
    assert p_values == sorted(p_values, reverse=True)

    driver.find_element(By.CSS_SELECTOR, "label[for='dualboard-rank-answer_key']").click()
    table = _visible_table(driver)
    table.find_element(By.CSS_SELECTOR, "th[data-key='answer_key']").click()
    order = column_values(table, "model", "textContent")
    shared = driver.current_url
    assert "grading=answer_key" in shared and "sort=answer_key" in shared and "order=" in shared

    driver.get("about:blank")
    open_page(driver, shared)
    assert driver.find_element(By.ID, "dualboard-rank-answer_key").is_selected()
    assert column_values(_visible_table(driver), "model", "textContent") == order
    assert console_errors(driver) == []


def test_dark_mode_toggle_switches_the_chart_template(driver, demo_site):
    root, server = demo_site
    open_page(driver, server.url + "benchmarks/demo/")
    fonts = (
        "return [...document.querySelectorAll('div.dualboard-chart')]"
        ".map(c => [c.dataset.scheme, c._fullLayout.font.color])"
    )
    light = driver.execute_script(fonts)
    expected = driver.execute_script(
        "return [dualboardChartTemplates.default.layout.font.color, dualboardChartTemplates.slate.layout.font.color]"
    )
    assert expected[0] != expected[1] and light == [["default", expected[0]]] * 5
    toggle = "form[data-md-component='palette'] label:not([hidden])"
    try:
        driver.find_element(By.CSS_SELECTOR, toggle).click()
        WebDriverWait(driver, 5).until(lambda d: d.execute_script(fonts) == [["slate", expected[1]]] * 5)
        assert driver.execute_script("return document.body.getAttribute('data-md-color-scheme')") == "slate"
        open_page(driver, server.url + "benchmarks/demo/")  # a fresh page draws dark from the start
        assert driver.execute_script(fonts) == [["slate", expected[1]]] * 5
    finally:
        if driver.execute_script("return document.body.getAttribute('data-md-color-scheme')") == "slate":
            driver.find_element(By.CSS_SELECTOR, toggle).click()
    WebDriverWait(driver, 5).until(lambda d: d.execute_script(fonts) == [["default", expected[0]]] * 5)
    assert console_errors(driver) == []


@contextlib.contextmanager
def window_1400_px(driver):
    """Lay pages out at 1,400 px (the width the leaderboard must fit), then restore the window."""
    size = driver.get_window_size()
    driver.set_window_size(1400, 900)
    try:
        yield
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_no_sideways_scroll_at_1400_px(driver, demo_site):
    root, server = demo_site
    with window_1400_px(driver):
        open_page(driver, server.url + "benchmarks/demo/")
        for grading in ("answer_key", "traditional"):
            driver.find_element(By.CSS_SELECTOR, f"label[for='dualboard-rank-{grading}']").click()
            widths = driver.execute_script("""
                const pane = [...document.querySelectorAll('.dualboard-switch-pane')].find(p => p.offsetParent);
                const wrap = pane.querySelector('.md-typeset__scrollwrap');
                return [document.documentElement.scrollWidth, document.documentElement.clientWidth,
                        wrap.scrollWidth, wrap.clientWidth, innerWidth];""")
            assert widths[4] >= 1385, widths
            assert widths[0] <= widths[1] and widths[2] <= widths[3], (grading, widths)


def test_run_page_tables_fit_at_1400_px(driver, demo_site):
    """The run page's summary once put six measures side by side and scrolled sideways at 1,400 px."""
    root, server = demo_site
    with window_1400_px(driver):
        open_page(driver, server.url + "benchmarks/demo/runs/run/?id=delta-mind-34b")
        widths = driver.execute_script("""
            return [...document.querySelectorAll('article .md-typeset__scrollwrap')].slice(0, 2)
                .map(w => [w.scrollWidth, w.clientWidth]);""")
        assert len(widths) == 2, widths
        assert all(scroll <= client + 1 for scroll, client in widths), widths


@pytest.mark.parametrize(
    "path", ["benchmarks/demo/questions/question/?id=demo-001", "benchmarks/demo/runs/run/?id=delta-mind-34b"]
)
def test_question_and_run_pages_fit_1280_px_without_clipping(driver, demo_site, path):
    """The window the driver opens is 1,280 px wide: no table of the page scrolls sideways, nor the page."""
    root, server = demo_site
    open_page(driver, server.url + path)
    assert driver.get_window_size()["width"] == 1280
    widths = driver.execute_script("""
        const wraps = [...document.querySelectorAll('article .md-typeset__scrollwrap')];
        return [[document.documentElement.scrollWidth, document.documentElement.clientWidth],
                ...wraps.map(w => [w.scrollWidth, w.clientWidth])];""")
    assert len(widths) >= 3 and all(scroll <= client + 1 for scroll, client in widths), widths


def test_metadata_filters_narrow_the_board(driver, demo_site):
    root, server = demo_site
    metadata = {
        p.parent.name: yaml.safe_load(p.read_text("utf-8")) for p in (root / "submissions/demo").glob("*/metadata.yaml")
    }
    open_page(driver, server.url + "benchmarks/demo/")
    table = _visible_table(driver)
    bar = filter_bar(table)
    Select(bar.find_element(By.CSS_SELECTOR, "select[data-key='weights']")).select_by_visible_text("closed")
    closed = sorted(m["model"] for m in metadata.values() if m.get("weights") == "closed")
    assert closed and sorted(column_values(table, "model", "textContent")) == closed
    Select(bar.find_element(By.CSS_SELECTOR, "select[data-key='weights']")).select_by_visible_text("all")
    Select(bar.find_element(By.CSS_SELECTOR, "select[data-key='parameters']")).select_by_visible_text("10–100 B")
    mid = sorted(m["model"] for m in metadata.values() if 10 <= m.get("parameters_billions", 0) < 100)
    assert mid and sorted(column_values(table, "model", "textContent")) == mid
    driver.find_element(By.CSS_SELECTOR, "label[for='dualboard-rank-traditional']").click()
    other = _visible_table(driver)
    assert other != table and sorted(column_values(other, "model", "textContent")) == mid, (
        "both gradings share the filters"
    )
    licence = filter_bar(other).find_element(By.CSS_SELECTOR, "select[data-key='licence']")
    licences = [o.get_attribute("value") for o in Select(licence).options]
    assert "<img src=x onerror=window.__xss=1>" in licences, "a hostile licence is offered as text"
    assert driver.execute_script("return typeof window.__xss") == "undefined"
    wait_for_charts(driver)
    assert console_errors(driver) == []
