"""A run whose responses and metadata are XSS payloads: every page is opened in Chromium and nothing executes."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By

from tests.browser.browsing import alert_text, console_errors, open_page, settle, xss_state
from tests.browser.conftest import site_pages
from tests.browser.payloads import PAYLOADS

pytestmark = pytest.mark.browser


def test_there_are_enough_payloads():
    assert len(PAYLOADS) >= 30


def test_no_payload_executes_on_any_page(driver, xss_site):
    root, server = xss_site
    pages = site_pages(root / "site")
    index = json.loads((root / "site/benchmarks/demo/runs/data-files.json").read_text("utf-8"))["files"]
    assert "xss-probe#page" in index
    questions = json.loads((root / "site/benchmarks/demo/questions/data-files.json").read_text("utf-8"))["files"]
    # every page of the site, and the one run page and one question page showing each run and question
    pages += [f"benchmarks/demo/runs/run/?id={key[:-5]}" for key in index if key.endswith("#page")]
    pages += [f"benchmarks/demo/questions/question/?id={key[:-5]}" for key in questions if key.endswith("#page")]
    failures = {}
    for path in pages:
        open_page(driver, server.url + path)
        settle(0.05)
        state = xss_state(driver)
        alert = alert_text(driver)
        if alert is not None or state != {
            "sentinel": "undefined",
            "javascript_links": 0,
            "data_links": 0,
            "injected_scripts": 0,
        }:
            failures[path] = (state, alert)
    assert failures == {}
    assert console_errors(driver) == []


def test_payloads_are_shown_as_text(driver, xss_site):
    """Escaping keeps the text visible: the reader sees the payload, the browser never parses it."""
    root, server = xss_site
    open_page(driver, server.url + "benchmarks/demo/questions/question/?id=demo-001")
    article = driver.find_element(By.CSS_SELECTOR, "article").text
    assert "<script>window.__xss=1</script>" in article
    open_page(driver, server.url + "benchmarks/demo/")
    assert "<img src=x onerror=window.__xss=1>" in driver.find_element(By.CSS_SELECTOR, "article").text
    open_page(driver, server.url + "benchmarks/demo/runs/run/?id=xss-probe")
    text = driver.find_element(By.CSS_SELECTOR, "article").text
    assert "{{ config }}" in text and "--8<--" in text, "templates and snippets must not run on model text"


def test_no_snippet_or_template_was_expanded(xss_site):
    root, server = xss_site
    site = root / "site"
    for page in site.rglob("*.html"):
        text = page.read_text("utf-8")
        assert "root:x:0:0" not in text, f"{page}: --8<-- included a file from the build machine"


def test_the_check_sees_an_executed_payload(driver):
    """Positive control: a page where a payload does run is caught."""
    driver.get("data:text/html,<p>x</p><script>window.__xss=1</script><a href='javascript:void(0)'>j</a>")
    state = xss_state(driver)
    assert state["sentinel"] == "number" and state["javascript_links"] == 1
