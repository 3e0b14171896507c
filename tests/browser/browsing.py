"""Helpers for driving a built Dualboard site in Chromium."""

from __future__ import annotations

import json
import time

from selenium.common.exceptions import NoAlertPresentException, UnexpectedAlertPresentException
from selenium.webdriver.support.ui import WebDriverWait

PAGE_READY = """
const charts = [...document.querySelectorAll('div.dualboard-chart')];
// a chart is drawn when it comes near the screen: bring the next one there, as a reader scrolls
const next = charts.find(c => !c.querySelector('svg.main-svg') && c.dataset.drawn !== 'error');
if (next) { next.scrollIntoView({block: 'center'}); }
const tables = [...document.querySelectorAll('div.dualboard-lazy')];
const items = [...document.querySelectorAll('div.dualboard-item')];
return document.readyState === 'complete'
    && items.every(i => i.dataset.state === 'done' || i.dataset.state === 'error')
    && charts.every(c => c.querySelector('svg.main-svg') || c.dataset.drawn === 'error')
    && tables.every(t => t.dataset.state === 'done' || t.dataset.state === 'error');
"""


def wait_for_charts(driver, timeout: float = 20) -> None:
    """Wait until the page is loaded, its question or run is shown, every chart has drawn (each scrolled into view
    in turn) and every lazy table is filled (or failed); then scroll back to the top."""
    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(PAGE_READY))
    driver.execute_script("window.scrollTo(0, 0)")


def open_page(driver, url: str) -> None:
    """Load a URL in a fresh document and wait for its charts and lazy tables."""
    driver.get(url)
    wait_for_charts(driver)


def console_errors(driver) -> list[dict]:
    """Console messages of level SEVERE since the last call."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def requested_urls(driver) -> list[str]:
    """URLs the browser requested since the last call (from the performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def alert_text(driver) -> str | None:
    """The text of an open alert (dismissed), or None."""
    try:
        alert = driver.switch_to.alert
    except NoAlertPresentException:
        return None
    text = alert.text
    alert.dismiss()
    return text


def xss_state(driver) -> dict:
    """What an executed payload would leave behind on the current page."""
    try:
        return driver.execute_script("""
            const count = selector => document.querySelectorAll(selector).length;
            return {sentinel: typeof window.__xss,
                    javascript_links: count('a[href^="javascript:" i], [src^="javascript:" i]'),
                    data_links: count('a[href^="data:" i], iframe, object, embed'),
                    injected_scripts: count('article script, article [onerror], article [onload]')};
        """)
    except UnexpectedAlertPresentException as exc:  # an alert fired: that is an execution
        return {"alert": str(exc)}


def settle(seconds: float = 0.3) -> None:
    """Give delayed handlers (onerror, autofocus) a moment to fire."""
    time.sleep(seconds)
