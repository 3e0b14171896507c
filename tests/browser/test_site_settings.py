"""mkdocs.yml's settings with script in them, built and opened in Chromium: nothing executes (issue 25, item 6).

Before, ``copyright: '… <img src=x onerror=…>'`` ran on every page, and an ``extra.social`` link with
``javascript:`` ran when clicked. Text settings are now escaped, and such a link is refused before any build.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from selenium.webdriver.common.by import By

from dualboard.errors import InvalidInputError
from dualboard.render.pages import SiteContent
from dualboard.render.site import build_site, compose_docs
from tests.browser.browsing import alert_text, open_page, settle, xss_state
from tests.browser.conftest import Server, free_port, site_pages
from tests.hostile.test_site_sources import HOSTILE_TEXT, TEXT_PAYLOAD

pytestmark = pytest.mark.browser

CLEAN = {"sentinel": "undefined", "javascript_links": 0, "data_links": 0, "injected_scripts": 0}


@pytest.fixture
def hostile_settings_site(tmp_path: Path):
    """A leaderboard folder whose mkdocs.yml carries script in every text setting, built and served."""
    root = tmp_path / "board"
    (root / "site_src").mkdir(parents=True)
    (root / "site_src" / "about.md").write_text("# About\n\nA page.\n", "utf-8")
    (root / "mkdocs.yml").write_text(yaml.safe_dump(HOSTILE_TEXT, allow_unicode=True), "utf-8")
    build_site(compose_docs(root, root / "build", SiteContent()).config, root / "site")
    server = Server(root / "site", free_port())
    yield root, server
    server.close()


def test_script_in_site_settings_never_runs_and_shows_as_text(driver, hostile_settings_site) -> None:
    root, server = hostile_settings_site
    pages = site_pages(root / "site")
    assert "about/" in pages
    for path in pages:
        open_page(driver, server.url + path)
        settle(0.05)
        assert (xss_state(driver), alert_text(driver)) == (CLEAN, None), path
        footer = driver.find_element(By.CSS_SELECTOR, ".md-copyright").text
        assert TEXT_PAYLOAD in footer, "the copyright is shown as written"
        links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "a.md-social__link")]
        assert links == ["https://example.org/"], links


def test_a_javascript_social_link_never_reaches_a_page(tmp_path: Path) -> None:
    root = tmp_path / "board"
    root.mkdir()
    social = {"icon": "fontawesome/brands/github", "link": "javascript:window.__xss=1"}
    (root / "mkdocs.yml").write_text(yaml.safe_dump({**HOSTILE_TEXT, "extra": {"social": [social]}}), "utf-8")
    with pytest.raises(InvalidInputError) as refused:
        compose_docs(root, root / "build", SiteContent())
    assert [f.field for f in refused.value.findings] == ["extra.social[0].link"]
