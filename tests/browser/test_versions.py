"""Two `dualboard release` runs, served from the gh-pages branch: the version selector lists both."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from tests.browser.browsing import console_errors, open_page
from tests.browser.conftest import Server, dualboard, free_port
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.browser

GIT_ENV = {"GIT_AUTHOR_NAME": "Dualboard tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
           "GIT_COMMITTER_NAME": "Dualboard tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid"}


def git(root: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          env={**os.environ, **GIT_ENV}, **kwargs)


@pytest.fixture(scope="module")
def versions_site(demo_site, tmp_path_factory):
    """Release 1.0 and 1.1 of the demo build, then serve the gh-pages branch as GitHub Pages would."""
    port = free_port()
    built, _ = demo_site
    root = tmp_path_factory.mktemp("versioned") / "leaderboard"
    shutil.copytree(built, root, symlinks=True, ignore=shutil.ignore_patterns("site"))
    own = yaml.safe_load((root / "mkdocs.yml").read_text("utf-8"))
    (root / "mkdocs.yml").write_text(yaml.safe_dump({**own, "site_url": f"http://127.0.0.1:{port}/"}), "utf-8")
    git(root, "init", "-q")
    git(root, "add", "data", "submissions", "site_src", "mkdocs.yml")
    git(root, "commit", "-qm", "leaderboard")
    os.environ.update({k: os.environ.get(k, v) for k, v in GIT_ENV.items()})
    for version in ("1.0", "1.1"):
        dualboard("release", version, "--root", str(root), "--date", "2026-11-29")
    pages = tmp_path_factory.mktemp("gh-pages")
    archive = git(root, "archive", "--format=tar", "gh-pages").stdout
    (pages / "gh-pages.tar").write_bytes(archive)
    with tarfile.open(pages / "gh-pages.tar") as tar:
        tar.extractall(pages / "site", filter="fully_trusted")
    server = Server(pages / "site", port)
    yield server
    server.close()


def test_version_selector_lists_every_release(driver, versions_site):
    console_errors(driver)
    open_page(driver, versions_site.url)  # the root redirects to the default version, latest
    WebDriverWait(driver, 10).until(lambda d: "/latest/" in d.current_url or "/1.1/" in d.current_url)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".md-version__list .md-version__link"))
    listed = [a.get_attribute("textContent").strip() for a in driver.find_elements(By.CSS_SELECTOR, ".md-version__list .md-version__link")]
    assert any(v.startswith("1.1") for v in listed) and any(v.startswith("1.0") for v in listed), listed
    current = driver.find_element(By.CSS_SELECTOR, ".md-version__current").get_attribute("textContent")
    assert current.strip().startswith("1.1")
    assert console_errors(driver) == []


def test_older_version_still_draws_its_charts(driver, versions_site):
    open_page(driver, versions_site.url + "1.0/benchmarks/demo/")
    charts = driver.find_elements(By.CSS_SELECTOR, "div.dualboard-chart")
    assert charts and all(c.find_elements(By.CSS_SELECTOR, "svg.main-svg") for c in charts)
    assert console_errors(driver) == []
