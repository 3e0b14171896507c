"""Two `dualboard release` runs, served from the gh-pages branch (``versions_site``): the version selector
lists both, and every version loads its data from the one shared/ folder beside the versions."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.browsing import console_errors, open_page
from tests.conftest import PROBE_PAGE

pytestmark = pytest.mark.browser


def test_version_selector_lists_every_release(driver, versions_site):
    console_errors(driver)
    open_page(driver, versions_site.url)  # the root redirects to the default version, latest
    WebDriverWait(driver, 10).until(lambda d: "/latest/" in d.current_url or "/1.1/" in d.current_url)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".md-version__list .md-version__link"))
    listed = [
        a.get_attribute("textContent").strip()
        for a in driver.find_elements(By.CSS_SELECTOR, ".md-version__list .md-version__link")
    ]
    assert any(v.startswith("1.1") for v in listed) and any(v.startswith("1.0") for v in listed), listed
    current = driver.find_element(By.CSS_SELECTOR, ".md-version__current").get_attribute("textContent")
    assert current.strip().startswith("1.1")
    assert console_errors(driver) == []


def test_older_version_still_draws_its_charts(driver, versions_site):
    open_page(driver, versions_site.url + "1.0/benchmarks/demo/")
    charts = driver.find_elements(By.CSS_SELECTOR, "div.dualboard-chart")
    assert charts and all(c.find_elements(By.CSS_SELECTOR, "svg.main-svg") for c in charts)
    assert console_errors(driver) == []


PROBES = "[...document.querySelectorAll('img.shared-probe')]"


@pytest.mark.parametrize("version", ["1.0", "1.1", "latest"])
def test_every_version_loads_its_shared_files_from_beside_the_versions(driver, versions_site, version):
    console_errors(driver)
    open_page(driver, f"{versions_site.url}{version}/{PROBE_PAGE.removesuffix('.md')}/")
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(f"return {PROBES}.every(i => i.complete)"))
    loaded = driver.execute_script(f"return {PROBES}.map(i => [i.currentSrc, i.naturalWidth])")
    shared = versions_site.shared["1.0" if version == "1.0" else "1.1"]
    assert [urlparse(src).path for src, _ in loaded] == [f"/{name}" for name in shared]  # gh-pages/shared/
    assert [width for _, width in loaded] == [3, 5][: len(shared)]  # each file arrived whole
    assert console_errors(driver) == []
