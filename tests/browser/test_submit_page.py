"""The How-to-submit page in Chromium: headings in order, the example run readable, the graders' table drawn."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.browser.browsing import console_errors, open_page

pytestmark = pytest.mark.browser


def test_submit_page_reads_example_first_then_graders_then_reference(driver, demo_site):
    _, server = demo_site
    console_errors(driver)
    open_page(driver, server.url + "submit/")
    headings = [h.text.strip() for h in driver.find_elements(By.CSS_SELECTOR, "article h2")]
    assert headings[:4] == [
        "An example run to copy",
        "Ran Inspect AI or lm-evaluation-harness? One command writes the run folder",
        "What the graders read",
        "Reference: the files and their fields",
    ]
    blocks = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "article pre code")]
    assert blocks[0].startswith("model: my-model-7b-instruct") and "benchmark: demo" in blocks[0]
    assert blocks[1].count("\n") == 2 and '"question_id": "demo-001"' in blocks[1]
    mc, open_ = driver.find_elements(By.XPATH, "//article//table[.//th[text()='Format']]")
    assert [th.text for th in mc.find_elements(By.CSS_SELECTOR, "th")] == ["Format", "Response", "mc_letter", "rules"]
    assert [th.text for th in open_.find_elements(By.CSS_SELECTOR, "th")] == ["Format", "Response", "rules"]
    cells = [td.text for td in open_.find_elements(By.CSS_SELECTOR, "td")]
    assert "pass" in cells and "no verdict" in cells
    for table in (mc, open_):  # the examples fit the page: no sideways scrolling
        assert driver.execute_script(
            "const w = arguments[0].closest('.md-typeset__scrollwrap');return w.scrollWidth <= w.clientWidth + 1;",
            table,
        )
    graders_row = driver.find_element(By.XPATH, "//article//table//tr[td[1][text()='graders']]")
    assert "traditional" in graders_row.text and "answer_key" in graders_row.text
    assert console_errors(driver) == []
