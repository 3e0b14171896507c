"""Assemble the MkDocs project, build the static site and deploy it as a version with mike.

The docs folder is composed in ``build/docs/`` from three layers, later ones
winning: the package's default ``site_src/``, the leaderboard folder's own
``site_src/``, and the generated pages. The configuration is the package's
``mkdocs.yml`` (through MkDocs' ``INHERIT``), with the settings the folder's own
``mkdocs.yml`` may change (:mod:`dualboard.render.site_config`) and the
generated navigation written over it.

MkDocs builds every page, every time: their number does not grow with the
questions and runs (:mod:`dualboard.render.item_pages`). The data files the
pages load (``shared/``, thousands at a million answers) are left out of
MkDocs' docs (``exclude_docs``) and linked into the built site beside its
pages (:func:`build_site`); a release's go beside its version folders instead
(:func:`deploy_site`).

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
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from dualboard.atomic import atomic_write_text
from dualboard.build_cache import listing
from dualboard.errors import DualboardError, InvalidInputError
from dualboard.render import gh_pages
from dualboard.render.pages import SiteContent
from dualboard.render.shared_files import SHARED_DIR
from dualboard.render.site_config import SITE_SOURCE_DIR, checked_site_sources, effective_settings
from dualboard.render.site_content import NOT_IN_NAV
from dualboard.safe_read import read_regular

DEFAULTS = resources.files("dualboard.render").joinpath("site_default")
DEFAULT_CONFIG = "mkdocs.default.yml"
MIKE = [sys.executable, "-P", "-c", "import sys; from mike.driver import main; sys.exit(main())"]
"""mike, run as :func:`build_site` runs mkdocs: ``-P`` keeps the leaderboard folder's files from shadowing modules."""


class SiteBuildError(DualboardError):
    """mkdocs build failed; the message carries its output."""


class SiteDeployError(DualboardError):
    """mike could not deploy the built site; the message carries its output and the command to run again."""


@dataclass(frozen=True)
class ComposedDocs:
    """The docs folder and configuration :func:`compose_docs` laid out."""

    config: Path
    """The effective ``mkdocs.yml``."""
    pages: int
    """How many pages MkDocs builds from it."""


def compose_docs(root: Path, build_dir: Path, content: SiteContent, *, versioned: bool = False) -> ComposedDocs:
    """Lay out the docs folder and the effective mkdocs config.

    The folder ends up holding exactly the site's sources; a file is written
    only when its bytes changed, and a file no longer in the site is deleted.

    Raises :class:`InvalidInputError` with every :func:`~dualboard.render.site_config.site_source_findings`
    finding before anything is written. ``versioned`` turns on the mike version
    selector (only a release is served beside a ``versions.json``; elsewhere
    the selector's request would fail).
    """
    own, findings = checked_site_sources(root)
    if findings:
        raise InvalidInputError(findings)
    with resources.as_file(DEFAULTS) as defaults:
        default = _base_config(build_dir, Path(defaults) / "mkdocs.yml")
        sources = _tree_bytes(Path(defaults) / SITE_SOURCE_DIR)
    if (root / SITE_SOURCE_DIR).is_dir():
        sources |= _tree_bytes(root / SITE_SOURCE_DIR)  # checked above to hold no link; read without following one
    files = _site_files(sources, content)
    _sync(docs_folder(build_dir), files, kept=content.shared - set(files))
    config = build_dir / "mkdocs.yml"
    atomic_write_text(config, _generated_config(default, own, content, files, versioned))
    return ComposedDocs(config, sum(1 for p in files if p.endswith(".md") and not p.startswith(f"{SHARED_DIR}/")))


def docs_folder(build_dir: Path) -> Path:
    """The docs folder :func:`compose_docs` lays out in ``build_dir`` (shared data files may be written there first)."""
    return build_dir / "docs"


def _tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` by its posix path relative to it (a link or special file is refused)."""
    found = {}
    for parent, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(parent, name)
            found[path.relative_to(folder).as_posix()] = read_regular(path, root=folder)
    return found


def _site_files(sources: dict[str, bytes], content: SiteContent) -> dict[str, bytes]:
    """The docs folder's files: the site sources, the generated pages over them, appendices, then assets."""
    files = dict(sources)
    for page in content.pages:
        files[page.path] = page.content.encode("utf-8")
    for appendix in content.appendices:
        files[appendix.path] = files.get(appendix.path, b"") + appendix.content.encode("utf-8")
    for path, data in content.assets.items():
        files[path] = data if isinstance(data, bytes) else data.encode("utf-8")
    return files


def _sync(docs: Path, files: dict[str, bytes], kept: set[str]) -> None:
    """Make ``docs`` hold exactly ``files`` and ``kept`` (files written there already)."""
    for name in sorted(set(_entries(docs)) - set(files) - kept):
        (docs / name).unlink()
    _remove_empty_folders(docs)
    for name, data in sorted(files.items()):
        _write_if_changed(docs, name, data)


def _entries(folder: Path) -> list[str]:
    """Every entry under ``folder`` that is not a real folder (files, links), relative to it."""
    return [name for name, _mode, _size, _mtime in listing(str(folder))] if folder.is_dir() else []


def _remove_empty_folders(folder: Path) -> None:
    for parent, dirs, _names in os.walk(folder, topdown=False):
        for name in dirs:
            path = Path(parent, name)
            if not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()


def _write_if_changed(docs: Path, name: str, data: bytes) -> None:
    """Write ``data`` to ``docs/name`` unless the file already holds it.

    A file under ``shared/`` is named by the digest of its content, so one of the right size holds it.
    The file is written anew, never over the old one, which the published site may share (:func:`build_site`).
    """
    path = docs / name
    if path.is_file() and not path.is_symlink() and path.stat().st_size == len(data):
        if name.startswith(f"{SHARED_DIR}/") or path.read_bytes() == data:
            return
    if path.is_symlink() or path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _generated_config(default: dict, own: dict, content: SiteContent, files: dict, versioned: bool) -> str:
    """The effective config: INHERIT the default, then the folder's checked settings, the folders and the nav."""
    config: dict = {
        "INHERIT": DEFAULT_CONFIG,
        **effective_settings(own, default),
        "docs_dir": "docs",
        "not_in_nav": "\n".join(f"/{p}" for p in NOT_IN_NAV),
        # The pages' data files: linked into the site by build_site, or put beside a release's versions.
        "exclude_docs": f"/{SHARED_DIR}/",
    }
    if "nav" not in own:
        config["nav"] = content.nav + _extra_pages(files, content.nav)
    if versioned:
        config["extra"] = {**own.get("extra", {}), "version": {"provider": "mike", "default": "latest"}}
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def _extra_pages(files: dict, nav: list) -> list:
    """Top-level hand-written pages (site_src/*.md) that the generated nav does not list."""
    listed = set(_nav_paths(nav))
    return [p for p in sorted(files) if "/" not in p and p.endswith(".md") and p not in listed]


def _nav_paths(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_paths(value)]
    return [p for item in nav for p in _nav_paths(item)]


def _base_config(build_dir: Path, default: Path) -> dict:
    """Copy the package's default config beside the effective config (which names it).

    Returns the default config's settings.
    """
    build_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(default, build_dir / DEFAULT_CONFIG)
    return yaml.safe_load(default.read_text("utf-8"))


def build_site(config: Path, site_dir: Path) -> None:
    """Run ``mkdocs build --strict`` and publish to ``site_dir``; if MkDocs fails, the old site is left as it was.

    MkDocs builds into a new folder beside ``site_dir``; the docs' data files (``shared/``, which MkDocs leaves
    out) are hard-linked into it (copied where the file system has no links), and the folder then takes
    ``site_dir``'s place.
    """
    staging = _staging(site_dir)
    try:
        _mkdocs(config, staging)
        shared = _docs_dir(config) / SHARED_DIR
        if shared.is_dir():
            _link_tree(shared, staging / SHARED_DIR)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _swap_in(staging, site_dir)


def _docs_dir(config: Path) -> Path:
    """The docs folder that the effective config ``config`` names."""
    return config.parent / yaml.safe_load(config.read_text("utf-8")).get("docs_dir", "docs")


def _link_tree(source: Path, target: Path) -> None:
    """Make ``target`` a tree of hard links to the files of ``source`` (copies where links fail).

    Strings and :func:`os.scandir`, not :class:`~pathlib.Path`: a site has tens of thousands of files.
    """
    os.makedirs(target, exist_ok=True)
    with os.scandir(source) as entries:
        for entry in entries:
            there = os.path.join(target, entry.name)
            if entry.is_dir(follow_symlinks=False):
                _link_tree(entry.path, there)
            else:
                _link(entry.path, there)


def _link(source: str, target: str) -> None:
    """Make ``target`` (which must not exist) a hard link to ``source``, a copy where the file system has none."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _mkdocs(config: Path, out: Path) -> None:
    # -P: the current folder (often the leaderboard, which a pull request fills) is not put on sys.path,
    # so a committed yaml.py or markdown.py cannot stand in for the real module. No --quiet: it lifts MkDocs'
    # log level above warnings, and --strict, which counts them, then never fails.
    cmd = [sys.executable, "-P", "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mkdocs_env())
    if proc.returncode != 0:
        raise SiteBuildError(
            f"mkdocs build failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
            "Fix the page or configuration it names; the previous site/ was left unchanged."
        )


def _staging(target: Path) -> Path:
    """A new, unused path beside ``target`` (hidden)."""
    return target.with_name(f".{target.name}-{uuid.uuid4().hex}")


def _swap_in(staging: Path, target: Path) -> None:
    """Put the folder ``staging`` at ``target``: the old one is moved aside first, then deleted."""
    old = _staging(target) if target.exists() else None
    if old is not None:
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old)


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
        gh_pages.add_shared_files(root, _docs_dir(config) / SHARED_DIR, f"Shared data files of release {version}")
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
