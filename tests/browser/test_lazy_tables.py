"""Question and run pages load their answers from data files: Chromium fills the tables, sorts them,
highlights disagreements, shows hostile responses as text, and says so when the file cannot be loaded.

Runs on the demo build with the XSS run (tests/browser/conftest.py); expected values come from the
scored Parquet tables read back from disk.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from dualboard.kappa import PASS_MARK
from dualboard.render.answer_shards import shard_of
from dualboard.render.pages import run_slug
from dualboard.render.run_pages import MAX_LISTED, disagreements
from dualboard.scored_files import TABLES, ScoredFolder
from tests.browser.browsing import console_errors, open_page, xss_state
from tests.browser.conftest import Server, free_port
from tests.browser.payloads import PAYLOADS

pytestmark = pytest.mark.browser

QUESTION = "demo-001"
INDEX_PATH = "benchmarks/demo/questions/data-files.json"


def scored_tables(root):
    """The scored, answers and verdicts tables of the demo build, read back from Parquet."""
    folder = ScoredFolder.of(root / "build" / "scored", "demo")
    return (folder.published(table).to_pandas() for table in TABLES)


def answers_table(driver, heading: str = "answers-and-verdicts"):
    """The lazy table under the heading of id ``heading``."""
    section = driver.find_element(By.ID, heading)
    return section.find_element(By.XPATH, "following::div[contains(@class,'dualboard-lazy')][1]//table")


def rows(table) -> list:
    return table.find_elements(By.CSS_SELECTOR, "tbody tr")


def cells(row) -> list[str]:
    return [td.get_attribute("textContent") for td in row.find_elements(By.TAG_NAME, "td")]


def test_a_question_page_shows_every_answer_with_every_verdict(driver, demo_site):
    root, server = demo_site
    scored, answers, verdicts = scored_tables(root)
    open_page(driver, server.url + f"benchmarks/demo/questions/question/?id={QUESTION}")
    lazy = driver.find_element(By.CSS_SELECTOR, "div.dualboard-lazy")
    assert lazy.get_attribute("data-state") == "done"
    table = answers_table(driver)
    headers = [
        th.text.split(" · ")[-1] for th in table.find_elements(By.CSS_SELECTOR, "thead th")
    ]  # "Traditional · recorded"
    mine = verdicts[verdicts.question_id == QUESTION]
    graders = [h for h in headers if h in set(mine.grader)]
    assert graders and len(rows(table)) == len(scored[scored.question_id == QUESTION])

    # Each row against the Parquet tables: the response as submitted, each grader's "score: detail".
    response_at = headers.index("Response")
    texts = answers[answers.question_id == QUESTION].set_index(["run_id", "round"])["response"]
    runs = {server.url + f"benchmarks/demo/runs/run/?id={run_slug(r)}": r for r in scored.run_id.unique()}
    models = dict(zip(scored.run_id, scored.model))
    shards = []
    for row in rows(table):
        shown = cells(row)
        run_id = runs[row.find_element(By.CSS_SELECTOR, "td a").get_attribute("href")]
        shards.append(shard_of(run_id))
        assert shown[0] == models[run_id]
        assert shown[response_at] == texts.loc[(run_id, int(shown[1]))]
        for grader in graders:
            verdict = mine[(mine.run_id == run_id) & (mine["round"] == int(shown[1])) & (mine.grader == grader)]
            score = verdict.score.iloc[0] if len(verdict) else None  # people labelled some answers only
            expected = "—" if pd.isna(score) else f"{score:.0f}: {verdict.detail.iloc[0] or ''}"
            assert shown[headers.index(grader)] == expected

    # The rows come from several data files (a shard of runs each), shown one file after the other.
    index = json.loads((root / "site" / INDEX_PATH).read_text("utf-8"))
    assert len(index["files"][f"{QUESTION}#answers"]) == len(set(shards)) > 1
    assert shards == sorted(shards)

    # The highlight: graders on both sides of the pass mark, counted in the status line.
    passes = mine.dropna(subset=["score"]).assign(passed=lambda v: v.score >= PASS_MARK)
    split = passes.groupby(["run_id", "round"]).passed.nunique()
    expected = int((split > 1).sum())
    highlighted = table.find_elements(By.CSS_SELECTOR, "tbody tr.dualboard-disagree")
    assert len(highlighted) == expected > 0
    status = driver.find_element(By.CLASS_NAME, "dualboard-lazy-message").text
    assert status == f"{len(rows(table))} answers, {expected} highlighted."
    assert console_errors(driver) == []


def test_the_answers_sort_by_a_grader_column(driver, demo_site):
    root, server = demo_site
    open_page(driver, server.url + f"benchmarks/demo/questions/question/?id={QUESTION}")
    table = answers_table(driver)
    headers = table.find_elements(By.CSS_SELECTOR, "thead th")
    last = len(headers) - 1  # the last grader's verdicts
    highlighted = len(table.find_elements(By.CSS_SELECTOR, "tbody tr.dualboard-disagree"))

    def scores() -> list[float]:
        return [float(r.find_elements(By.TAG_NAME, "td")[last].get_attribute("data-sort")) for r in rows(table)]

    headers[last].click()
    first = scores()
    assert len(set(first)) > 1 and first in (sorted(first), sorted(first, reverse=True))
    headers[last].click()
    assert scores() == sorted(first, reverse=first == sorted(first))
    assert len(table.find_elements(By.CSS_SELECTOR, "tbody tr.dualboard-disagree")) == highlighted


def test_hostile_responses_are_text_on_question_and_run_pages(driver, xss_site):
    root, server = xss_site
    scored, answers, _ = scored_tables(root)
    probe = answers[answers.run_id == "xss-probe"]
    for path in (f"benchmarks/demo/questions/question/?id={QUESTION}", "benchmarks/demo/runs/run/?id=xss-probe"):
        open_page(driver, server.url + path)
        shown = [
            td.get_attribute("textContent") for td in driver.find_elements(By.CSS_SELECTOR, "td.dualboard-response")
        ]
        hostile = [text for text in shown if any(p in text for p in PAYLOADS)]
        assert hostile, path
        assert set(hostile) <= set(probe.response)
        assert xss_state(driver) == {
            "sentinel": "undefined",
            "javascript_links": 0,
            "data_links": 0,
            "injected_scripts": 0,
        }


def test_a_run_page_lists_its_disagreements_from_the_data_file(driver, xss_site):
    root, server = xss_site
    scored, answers, _ = scored_tables(root)
    found = disagreements(scored[scored.run_id == "xss-probe"])
    open_page(driver, server.url + "benchmarks/demo/runs/run/?id=xss-probe")
    table = answers_table(driver, "answers-the-gradings-disagree-on")
    assert len(rows(table)) == min(len(found), MAX_LISTED) > 0
    assert all("dualboard-disagree" in r.get_attribute("class") for r in rows(table))
    questions = [r.find_element(By.CSS_SELECTOR, "td a") for r in rows(table)]
    assert [q.text for q in questions] == list(found.question_id.head(MAX_LISTED))
    assert (
        questions[0].get_attribute("href") == server.url + f"benchmarks/demo/questions/question/?id={questions[0].text}"
    )


def _without_shared(site):
    shutil.rmtree(site / "shared")


def _without_index(site):
    (site / INDEX_PATH).unlink()


def _without_one_shard(site):
    """One of the question's data files is gone: the table stays empty rather than show part of the answers."""
    index = json.loads((site / INDEX_PATH).read_text("utf-8"))
    (site / "shared" / index["files"][f"{QUESTION}#answers"][-1]).unlink()


def _hostile_shard(site):
    """A list of data files of which one is another host's."""
    index = json.loads((site / INDEX_PATH).read_text("utf-8"))
    key = f"{QUESTION}#answers"
    index["files"][key] = [*index["files"][key], "https://attacker.example/x.json.gz"]
    (site / INDEX_PATH).write_text(json.dumps(index), "utf-8")


def _hostile_index(site):
    """An index that points elsewhere: another host's file, and shared/ made to climb out of the site."""
    index = json.loads((site / INDEX_PATH).read_text("utf-8"))
    index["files"] = {key: "https://attacker.example/x.json.gz" for key in index["files"]}
    index["shared"] = "//attacker.example/"
    (site / INDEX_PATH).write_text(json.dumps(index), "utf-8")


@pytest.mark.parametrize(
    "damage, failed, said",
    [
        (_without_shared, "item", "The question could not be shown (404"),
        (_without_index, "item", "The question could not be shown (404"),
        (_without_one_shard, "lazy", "The answers could not be loaded (404"),
        (_hostile_index, "item", "The question could not be shown (the index names no page for question demo-001)."),
        (_hostile_shard, "lazy", "The answers could not be loaded (the index names no data file for this table)."),
    ],
    ids=["no data file", "no index", "one shard missing", "hostile index", "hostile shard"],
)
def test_a_missing_data_file_is_said_in_plain_words_with_the_downloads_link(
    driver, demo_site, tmp_path, damage, failed, said
):
    root, _ = demo_site
    site = tmp_path / "site"
    port = free_port()
    shutil.copytree(root / "site", site)
    damage(site)
    server = Server(site, port)
    try:
        driver.get(server.url + f"benchmarks/demo/questions/question/?id={QUESTION}")
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.CSS_SELECTOR, f"div.dualboard-{failed}").get_attribute("data-state") == "error"
        )
        status = driver.find_element(By.CLASS_NAME, f"dualboard-{failed}-status")
        assert said in status.text
        link = status.find_elements(By.TAG_NAME, "a")[-1]
        assert link.text == "Downloads" and link.get_attribute("href") == server.url + "downloads/"
        if failed == "lazy":
            assert rows(answers_table(driver)) == []
        requested = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert not any("attacker" in url for url in requested), requested
    finally:
        console_errors(driver)  # the 404 was expected: keep it out of the next test's console
        server.close()
