"""Hostile responses in the answers' data files: kept exactly as submitted, as JSON strings, never as HTML.

No page holds any of them, nor does a question's page document; the browser writes them with textContent
(tests/browser/test_lazy_tables.py and test_xss.py open them in Chromium).
"""

from __future__ import annotations

import html
import json

import yaml

from dualboard import pipeline
from dualboard.project import Project
from dualboard.release_files import load_releases
from dualboard.render.site_content import site_content
from dualboard.store import LocalStore
from tests.browser.payloads import PAYLOADS
from tests.conftest import TINY_BENCHMARK, TINY_QUESTIONS, tiny_metadata, write_run
from tests.render.html_tables import item_page, lazy_table_after

QUESTION_PAGE = "benchmarks/tiny/questions/question.md"


def test_every_payload_reaches_the_data_file_unchanged_and_no_page(tmp_path):
    bench = tmp_path / "data" / "benchmarks" / "tiny"
    bench.mkdir(parents=True)
    (bench / "benchmark.yaml").write_text(yaml.safe_dump(TINY_BENCHMARK), "utf-8")
    (bench / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS), "utf-8")
    rounds = len(PAYLOADS)
    predictions = [
        {"question_id": q["id"], "round": r, "response": payload, "recorded": {"judge": 100 * (r % 2)}}
        for q in TINY_QUESTIONS
        for r, payload in enumerate(PAYLOADS)
    ]
    write_run(tmp_path, "hostile", predictions, tiny_metadata(model="<b>m</b>", rounds=rounds))
    project = Project(tmp_path)
    store = LocalStore(project.store_dir)
    pipeline.ingest(project, store)
    pipeline.grade(project, store, progress=False)
    pipeline.stats(project)
    content = site_content(pipeline.analysed_results(project, store), load_releases(tmp_path))
    for question in TINY_QUESTIONS:
        text = item_page(content.assets, "benchmarks/tiny/questions", question["id"])
        table, data = lazy_table_after(QUESTION_PAGE, text, "## Answers and verdicts", content.assets)
        response = [h.text for h in table.headers].index("Response")
        assert [row[response].text for row in table.rows] == PAYLOADS
        assert data["links"] == [["<b>m</b>", "../../runs/run/?id=hostile"]], "names are data, shown as text"
        assert not any(payload in html.unescape(text) for payload in PAYLOADS if len(payload) > 12), question
    for page in content.pages:
        assert not any(payload in html.unescape(page.content) for payload in PAYLOADS if len(payload) > 12), page.path
