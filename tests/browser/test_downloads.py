"""Every download link of every released version, served from gh-pages, fetches a file that matches SHA256SUMS."""

from __future__ import annotations

import base64
import hashlib

import pytest
from selenium.webdriver.common.by import By

from tests.browser.browsing import console_errors, open_page

pytestmark = pytest.mark.browser

FETCH = """
const done = arguments[arguments.length - 1];
fetch(arguments[0]).then(async r => {
  const bytes = new Uint8Array(await r.arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  done({status: r.status, body: btoa(text)});
}).catch(e => done({status: 0, body: String(e)}));
"""


def fetch(driver, url: str) -> bytes:
    """GET ``url`` from the page, as a reader's browser would; the bytes, after checking the status."""
    answer = driver.execute_async_script(FETCH, url)
    assert answer["status"] == 200, (url, answer)
    return base64.b64decode(answer["body"])


def download_rows(driver) -> dict[str, tuple[str | None, str, str]]:
    """File → (link, where, SHA-256) for each row of the Downloads page's release table."""
    table = next(
        t
        for t in driver.find_elements(By.CSS_SELECTOR, "article table")
        if [h.text for h in t.find_elements(By.CSS_SELECTOR, "th")] == ["File", "Bytes", "Where", "SHA-256"]
    )
    rows = {}
    for row in table.find_elements(By.CSS_SELECTOR, "tbody tr"):
        cells = row.find_elements(By.CSS_SELECTOR, "td")
        links = cells[0].find_elements(By.CSS_SELECTOR, "a")
        rows[cells[0].text] = (links[0].get_property("href") if links else None, cells[2].text, cells[3].text)
    return rows


@pytest.mark.parametrize("version, release", [("1.0", "1.0"), ("1.1", "1.1"), ("latest", "1.1")])
def test_every_download_link_fetches_its_checksummed_file(driver, versions_site, version, release):
    console_errors(driver)
    open_page(driver, f"{versions_site.url}{version}/downloads/")
    heading = driver.find_element(By.CSS_SELECTOR, "article h2").text
    assert heading.startswith(f"Release {release}"), heading
    rows = download_rows(driver)
    frozen = versions_site.releases / release
    sums = dict(reversed(line.split("  ", 1)) for line in (frozen / "SHA256SUMS").read_text("utf-8").splitlines())
    assert set(rows) == set(sums) | {"SHA256SUMS"}, "every file of the release is listed"
    checked = []
    for name, (href, where, digest) in sorted(rows.items()):
        assert href is not None and where == "this site", (name, where)  # the demo's files are all small
        # every version links the one copy beside the versions, under its own file name
        assert href.startswith(f"{versions_site.url}shared/{digest}/"), href
        assert href.endswith(name + (".txt" if name.endswith(".md") else "")), href
        body = fetch(driver, href)
        assert hashlib.sha256(body).hexdigest() == digest, name
        if name != "SHA256SUMS":
            assert digest == sums[name], name
        assert body == (frozen / name).read_bytes(), name
        checked.append(name)
    served_sums = fetch(driver, rows["SHA256SUMS"][0]).decode("utf-8")
    assert served_sums == (frozen / "SHA256SUMS").read_text("utf-8")
    print(f"{version}: checked {len(checked)} links: {', '.join(checked)}")
    assert console_errors(driver) == []


def test_other_releases_lead_to_their_own_downloads(driver, versions_site):
    open_page(driver, f"{versions_site.url}latest/downloads/")
    older = driver.find_element(By.LINK_TEXT, "its downloads")
    older.click()
    assert driver.current_url == f"{versions_site.url}1.0/downloads/"
    assert driver.find_element(By.CSS_SELECTOR, "article h2").text.startswith("Release 1.0")
