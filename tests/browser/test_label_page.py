"""The labelling page in Chromium: label with the keyboard and the buttons, kill the server, resume, and find every
label in the labeller's file; hostile responses are shown as text and nothing executes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.browsing import alert_text, console_errors
from tests.labelling.boards import BENCHMARK, LONG_LINE, write_board

pytestmark = pytest.mark.browser


def start(root: Path) -> tuple[subprocess.Popen, str]:
    """``dualboard label`` as a user runs it; returns the process and the address it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dualboard", "label", BENCHMARK, "--labeller", "ada", "--no-open", "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(2):
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
        if found:
            return proc, found.group(0)
    proc.kill()
    raise AssertionError(f"no address printed: {line!r} {proc.stderr.read()}")


def executed(driver) -> dict:
    """What a payload that ran would leave: the sentinel, an alert, or elements parsed from a response."""
    state = driver.execute_script(
        "return {sentinel: typeof window.__xss, scripts: document.scripts.length,"
        " parsed: document.querySelectorAll('main img, main svg, main iframe, main a, main script').length};"
    )
    return state | {"alert": alert_text(driver)}


def labels_of_mine(driver) -> int:
    text = driver.find_element(By.ID, "progress").text
    found = re.search(r"(\d+) labels of yours", text)
    return int(found.group(1)) if found else -1


def shown_item(driver) -> tuple[str, str]:
    return driver.execute_script(
        "return [document.getElementById('question-id').textContent, document.getElementById('response').textContent];"
    )


def act(driver, do, expect: int) -> None:
    do()
    WebDriverWait(driver, 10).until(lambda d: labels_of_mine(d) == expect)


def test_label_with_keys_and_buttons_kill_resume_and_find_every_label(driver, tmp_path: Path) -> None:
    root = write_board(tmp_path / "board")
    console_errors(driver)  # the browser is shared: drop what earlier tests' pages logged
    body = lambda: driver.find_element(By.TAG_NAME, "body")  # noqa: E731 (the page is reloaded)
    proc, url = start(root)
    given = []
    try:
        driver.get(url)
        WebDriverWait(driver, 10).until(
            lambda d: labels_of_mine(d) == 0 and d.find_element(By.ID, "item").is_displayed()
        )
        given.append((shown_item(driver), "pass"))
        act(driver, lambda: body().send_keys("p"), 1)
        assert driver.find_element(By.ID, "last").is_displayed()  # the graders' verdicts, once chosen
        given.append((shown_item(driver), "fail"))
        act(driver, lambda: driver.find_element(By.ID, "fail").click(), 2)
        given.append((shown_item(driver), "60"))
        body().send_keys("m")
        act(driver, lambda: driver.find_element(By.ID, "mark").send_keys("60", Keys.ENTER), 3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    proc, url = start(root)
    try:
        driver.get(url)
        WebDriverWait(driver, 10).until(lambda d: labels_of_mine(d) == 3)
        assert shown_item(driver) not in [item for item, _ in given]
        act(driver, lambda: driver.find_element(By.ID, "pass").click(), 4)
        act(driver, lambda: body().send_keys("u"), 3)  # undo: that answer comes back
        seen = set()
        while driver.find_element(By.ID, "item").is_displayed():
            item = shown_item(driver)
            seen.add(item[1])
            verdict = "pass" if len(given) % 2 else "fail"
            given.append((item, verdict))
            key = "p" if verdict == "pass" else "f"
            act(driver, lambda k=key: body().send_keys(k), len(given))
            assert executed(driver) == {"sentinel": "undefined", "scripts": 1, "parsed": 0, "alert": None}
        assert any(LONG_LINE in text for text in seen), "the 100 KB response was shown whole, as text"
        assert any("<script>" in text for text in seen), "HTML in a response is shown as text"
        assert console_errors(driver) == []
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    rows = pd.read_csv(root / "data/benchmarks" / BENCHMARK / "human_labels/ada.csv", dtype=str, keep_default_na=False)
    first = rows.drop_duplicates("time")
    assert len(first) == len(given)
    assert first["label"].tolist() == [label for _, label in given]
    assert [(q, r) for (q, r), _ in given] == [
        (q, text) for q, text in zip(first["question"], _responses(root, first), strict=True)
    ]


def _responses(root: Path, rows: pd.DataFrame) -> list[str]:
    """The response text each label row names, read from the runs."""
    import json

    texts = {}
    for folder in (root / "submissions" / BENCHMARK).iterdir():
        for line in (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts[(folder.name, row["question_id"])] = row["response"]
    return [texts[(run, question)] for run, question in zip(rows["run"], rows["question"], strict=True)]
