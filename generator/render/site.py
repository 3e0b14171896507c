"""Assemble the MkDocs project, build the static site and deploy it as a version with mike.

The docs folder is composed in ``build/docs/`` from three layers, later ones
winning: the package's default ``site_src/``, the leaderboard folder's own
``site_src/``, and the generated pages. The configuration is the package's
``mkdocs.yml`` (through MkDocs' ``INHERIT``), with the settings the folder's own
``mkdocs.yml`` may change (:mod:`dualboard.render.site_config`) and the
generated navigation written over it.

This module and ``site_config`` are the only ones that know about MkDocs (and
mike, its versioning tool): :func:`dualboard.pipeline.release` checks the folder with
:func:`check_deployable` before it freezes anything, and calls :func:`deploy_site` last.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from dualboard.atomic import atomic_write_text
from dualboard.errors import DualboardError, Finding, InvalidInputError
from dualboard.render import gh_pages
from dualboard.render.pages import SiteContent
from dualboard.render.shared_files import SHARED_DIR
from dualboard.render.site_config import CONFIG_NAME, SITE_SOURCES, effective_settings, read_site_config
from dualboard.render.site_content import NOT_IN_NAV
from dualboard.safe_read import untrusted_findings

DEFAULTS = resources.files("dualboard.render").joinpath("site_default")
DEFAULT_CONFIG = "mkdocs.default.yml"
MIKE = [sys.executable, "-P", "-c", "import sys; from mike.driver import main; sys.exit(main())"]
"""mike, run as :func:`build_site` runs mkdocs: ``-P`` keeps the leaderboard folder's files from shadowing modules."""


class SiteBuildError(DualboardError):
    """mkdocs build failed; the message carries its output."""


class SiteDeployError(DualboardError):
    """mike could not deploy the built site; the message carries its output and the command to run again."""


def site_source_findings(root: Path) -> list[Finding]:
    """Every problem with what the render would read from the leaderboard folder ``root``.

    A pull request can change all of it, and the build that publishes the
    site holds secrets, so:

    * No symbolic link and no special file anywhere under ``mkdocs.yml``,
      ``site_src/`` or ``releases/`` (``site_src/x.txt -> /proc/self/environ``
      would put the environment's tokens on the site; a FIFO would hang the
      build). One finding per entry, paths relative to ``root``.
    * ``mkdocs.yml`` never reaches MkDocs as written: MkDocs loads it with
      PyYAML's full loader (``!!python/object/apply`` runs code) and ``!ENV``
      (reads the environment). It is parsed with a safe loader; any tag other
      than plain data, any alias and any duplicate key is a finding.
    * Of its settings only these are taken, because they are plain text or
      data that the templates show as values: ``site_name``,
      ``site_description``, ``site_author``, ``site_url``, ``copyright``,
      ``repo_url``, ``repo_name``, ``edit_uri``, ``nav``, ``extra``,
      ``extra_css`` and ``extra_javascript`` (added after the package's own,
      which the charts and tables need), ``theme`` options ``name``
      (``material`` only), ``palette``, ``features``, ``logo``, ``favicon``,
      ``icon``, ``language``, and ``markdown_extensions`` from a list of
      extensions that only transform text (added after the package's own).
    * Everything else is refused, notably ``hooks`` and ``plugins`` (Python
      run at build time), ``INHERIT`` (reads another file, possibly outside
      the folder), ``docs_dir``/``site_dir`` (the render owns the folders),
      ``extra_templates`` and ``theme.custom_dir`` (Jinja templates reach
      Python objects and run code; theme folders are copied onto the site),
      ``theme.font`` (Google Fonts: no external requests), and the
      extensions ``pymdownx.snippets`` and ``pymdownx.b64`` (they read files
      of the build machine) or any extension not on the list (MkDocs imports
      it by name, so it could be a module of the pull request).

    ``dualboard validate`` reports these findings on a pull request;
    :func:`compose_docs` refuses to build while there is any.
    """
    return _site_sources(Path(root))[1]


def _site_sources(root: Path) -> tuple[dict[str, Any], list[Finding]]:
    """The folder's checked mkdocs settings, and every finding of :func:`site_source_findings`."""
    findings = [f for name in SITE_SOURCES for f in untrusted_findings(root / name, relative_to=root)]
    if any(f.file == CONFIG_NAME for f in findings):
        return {}, findings
    own, problems = read_site_config(root / CONFIG_NAME, CONFIG_NAME)
    return own, findings + problems


def compose_docs(root: Path, build_dir: Path, content: SiteContent, *, versioned: bool = False) -> Path:
    """Lay out the docs folder and the effective mkdocs config; return the config path.

    Raises :class:`InvalidInputError` with every :func:`site_source_findings`
    finding before anything is copied. ``versioned`` turns on the mike version
    selector (only a release is served beside a ``versions.json``; elsewhere
    the selector's request would fail).
    """
    own, findings = _site_sources(root)
    if findings:
        raise InvalidInputError(findings)
    docs = build_dir / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    with resources.as_file(DEFAULTS) as defaults:
        shutil.copytree(defaults / "site_src", docs)
        default = _base_config(build_dir, Path(defaults) / "mkdocs.yml")
    if (root / "site_src").is_dir():
        # Checked above to hold no link; symlinks=True still never reads through one.
        shutil.copytree(root / "site_src", docs, symlinks=True, dirs_exist_ok=True)
    for page in content.pages:
        _write(docs / page.path, page.content)
    for appendix in content.appendices:
        path = docs / appendix.path
        _write(path, (path.read_text("utf-8") if path.is_file() else "") + appendix.content)
    for path, data in content.assets.items():
        _write(docs / path, data)
    config = build_dir / "mkdocs.yml"
    atomic_write_text(config, _generated_config(default, own, content, docs, versioned))
    return config


def _generated_config(default: dict, own: dict, content: SiteContent, docs: Path, versioned: bool) -> str:
    """The effective config: INHERIT the default, then the folder's checked settings, the folders and the nav."""
    config: dict = {
        "INHERIT": DEFAULT_CONFIG,
        **effective_settings(own, default),
        "docs_dir": "docs",
        "not_in_nav": "\n".join(f"/{p}" for p in NOT_IN_NAV),
    }
    if "nav" not in own:
        config["nav"] = content.nav + _extra_pages(docs, content.nav)
    if versioned:
        config["extra"] = {**own.get("extra", {}), "version": {"provider": "mike", "default": "latest"}}
        # A release's shared files go beside the versions (deploy_site), not into each version folder.
        config["exclude_docs"] = f"/{SHARED_DIR}/"
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def _extra_pages(docs: Path, nav: list) -> list:
    """Top-level hand-written pages (site_src/*.md) that the generated nav does not list."""
    listed = set(_nav_paths(nav))
    return [p.name for p in sorted(docs.glob("*.md")) if p.name not in listed]


def _nav_paths(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_paths(value)]
    return [p for item in nav for p in _nav_paths(item)]


def _base_config(build_dir: Path, default: Path) -> dict:
    """Copy the package's default config into build_dir (the effective one INHERITs it); return its settings."""
    build_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(default, build_dir / DEFAULT_CONFIG)
    return yaml.safe_load(default.read_text("utf-8"))


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, "utf-8")


def build_site(config: Path, site_dir: Path) -> Path:
    """Run ``mkdocs build --strict``; the old site stays in place until the new one is complete."""
    staging = site_dir.with_name(f".{site_dir.name}-{uuid.uuid4().hex}")
    # -P: the current folder (often the leaderboard, which a pull request fills) is not put on sys.path,
    # so a committed yaml.py or markdown.py cannot stand in for the real module.
    cmd = [sys.executable, "-P", "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(config), "-d", str(staging)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mkdocs_env())
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise SiteBuildError(
            f"mkdocs build failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
            "Fix the page or configuration it names; the previous site/ was left unchanged."
        )
    if site_dir.exists():
        shutil.rmtree(site_dir)
    os.replace(staging, site_dir)
    return site_dir


def check_deployable(root: Path) -> None:
    """Refuse a leaderboard folder outside git: mike deploys the site to its ``gh-pages`` branch."""
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "--git-dir"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SiteDeployError(
            f"{root} is not in a git repository; mike deploys the site to its gh-pages branch — "
            "run `git init` there (and commit) first"
        )


def deploy_site(config: Path, root: Path, version: str, *, push: bool) -> None:
    """Deploy the site built from ``config`` as ``version`` with mike; ``latest`` moves to it and is the default.

    First the docs' ``shared/`` files that the ``gh-pages`` branch lacks are
    committed to ``gh-pages/shared/``, beside the version folders
    (:mod:`dualboard.render.gh_pages`); then mike commits the version, which
    a versioned config builds without them. The data is in place before any
    page that loads it, so a deploy that stops halfway leaves every deployed
    page whole. ``push`` then pushes the branch to ``origin``.
    """
    retry = f"then delete releases/{version}/ and run `dualboard release {version}` again"
    try:
        gh_pages.follow_upstream(root)
        docs = config.parent / yaml.safe_load(config.read_text("utf-8"))["docs_dir"]
        gh_pages.add_shared_files(root, docs / SHARED_DIR, f"Shared data files of release {version}")
    except gh_pages.GitError as e:
        raise SiteDeployError(f"{e}\nThe release folder was written; fix the problem above, {retry}") from e
    for args in (
        ["deploy", "--config-file", str(config), "--update-aliases", "-m", f"Release {version}", version, "latest"],
        ["set-default", "--config-file", str(config), "-m", "Default version: latest", "latest"],
    ):
        _mike(root, args, retry)
    if push:
        try:
            gh_pages.push(root)
        except gh_pages.GitError as e:
            raise SiteDeployError(
                f"{e}\n{version} is deployed on the local {gh_pages.BRANCH} branch; fix the problem above (the "
                f"remote, its credentials) and push it with: git push {gh_pages.REMOTE} {gh_pages.BRANCH}"
            ) from e


def _mike(root: Path, args: list[str], retry: str) -> None:
    """Run ``mike ARGS`` on the git repository at ``root``; ``retry`` says how to deploy again if it fails."""
    env = {**_mkdocs_env(), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(MIKE + args, cwd=root, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SiteDeployError(
            f"mike {args[0]} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
            "The release folder was written; fix the problem above (git identity, a gh-pages branch that "
            f"diverged from {gh_pages.REMOTE}'s), {retry}"
        )


def _mkdocs_env() -> dict[str, str]:
    """The environment for mkdocs and mike: mkdocs-material's banner about MkDocs 2.0 is silenced."""
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
