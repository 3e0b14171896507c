"""In Chromium: a run of an earlier benchmark version is marked on the leaderboard and its run page, its
never-run questions are counted and sort as numbers, and a deleted run shows on the changelog."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
import yaml
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.browsing import console_errors, open_page
from tests.browser.conftest import Server, dualboard, free_port
from tests.stats.test_older_version_runs import (
    BENCHMARK,
    N_ADDED,
    N_OLD,
    RIGHT_NEW,
    RIGHT_OLD,
    _write_benchmark,
    _write_run,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def moving_site(tmp_path_factory) -> Iterator[Server]:
    """old-run (v1) and new-run (v2) on the board; gone-run built once, then deleted from submissions/."""
    port = free_port()
    root = tmp_path_factory.mktemp("moving-site")
    _write_benchmark(root, BENCHMARK)
    _write_run(root, "old-run", "1", N_OLD, RIGHT_OLD)
    _write_run(root, "new-run", "2", N_OLD + N_ADDED, RIGHT_NEW)
    _write_run(root, "gone-run", "2", N_OLD + N_ADDED, RIGHT_NEW)
    (root / "mkdocs.yml").write_text(yaml.safe_dump({"site_name": "Moving", "site_url": f"http://127.0.0.1:{port}/"}))
    dualboard("build", "--root", str(root), "--no-progress")
    shutil.rmtree(root / "submissions" / "moving" / "gone-run")
    dualboard("build", "--root", str(root), "--no-progress")
    server = Server(root / "site", port)
    yield server
    server.close()


def _row(driver, run_model: str):
    table = next(t for t in driver.find_elements(By.CSS_SELECTOR, ".dualboard-sortable table") if t.is_displayed())
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    return table, next(r for r in rows if r.find_elements(By.TAG_NAME, "td")[1].text.startswith(run_model))


def test_the_leaderboard_marks_the_older_run_and_counts_its_never_run_questions(driver, moving_site):
    console_errors(driver)
    open_page(driver, moving_site.url + "benchmarks/moving/")
    table, old = _row(driver, "old-run")
    headers = [th.text for th in table.find_elements(By.TAG_NAME, "th")]
    cells = old.find_elements(By.TAG_NAME, "td")
    assert cells[1].find_element(By.CSS_SELECTOR, ".dualboard-badge").text == "answered v1"
    questions = headers.index("Questions")
    assert cells[questions].text.splitlines()[0] == f"{N_OLD} ({N_ADDED} never run)"  # the answers follow below
    _, new = _row(driver, "new-run")
    assert not new.find_elements(By.CSS_SELECTOR, ".dualboard-badge") or "answered" not in new.text
    header = table.find_elements(By.TAG_NAME, "th")[questions]
    header.click()
    WebDriverWait(driver, 5).until(lambda d: header.get_attribute("aria-sort") in ("ascending", "descending"))
    counts = [
        int(r.find_elements(By.TAG_NAME, "td")[questions].get_attribute("data-sort").split(".")[0])
        for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    ]
    assert counts in (sorted(counts), sorted(counts, reverse=True))
    assert "answered an earlier benchmark version" in driver.find_element(By.CSS_SELECTOR, "article").text
    assert console_errors(driver) == []


def test_the_run_page_says_which_version_the_run_answered(driver, moving_site):
    open_page(driver, moving_site.url + "benchmarks/moving/runs/run/?id=old-run")
    text = driver.find_element(By.CSS_SELECTOR, "article").text
    assert "This run answered benchmark version 1 (current: 2)" in text
    assert f"the {N_ADDED} question(s) added since were never run" in text
    listed = driver.find_elements(By.XPATH, "//*[@id='every-question']/following::table[1]/tbody/tr")
    outcomes = [row.find_elements(By.TAG_NAME, "td")[-1].text for row in listed]
    assert len(listed) == N_OLD + N_ADDED and outcomes.count("never run") == N_ADDED, outcomes


def test_the_changelog_lists_the_deleted_run(driver, moving_site):
    open_page(driver, moving_site.url + "changelog/")
    text = driver.find_element(By.CSS_SELECTOR, "article").text
    assert "Since the last release" in text
    assert "Removed moving/gone-run: removed on" in text and "(no reason given)" in text
