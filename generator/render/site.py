"""Assemble the MkDocs project and build the static site.

The docs folder is composed in ``build/docs/`` from three layers, later ones
winning: the package's default ``site_src/``, the leaderboard folder's own
``site_src/``, and the generated pages. The configuration is the package's
``mkdocs.yml``, overridden by the folder's own ``mkdocs.yml`` through MkDocs'
``INHERIT`` (so custom YAML tags in it keep working).

This is the only module that knows about MkDocs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from importlib import resources
from pathlib import Path

import yaml

from generator.atomic import atomic_write_text
from generator.errors import DualboardError
from generator.render.pages import SiteContent
from generator.render.site_content import NOT_IN_NAV

DEFAULTS = resources.files("generator.render").joinpath("site_default")


class SiteBuildError(DualboardError):
    """mkdocs build failed; the message carries its output."""


def compose_docs(root: Path, build_dir: Path, content: SiteContent, *, versioned: bool = False) -> Path:
    """Lay out the docs folder and the effective mkdocs config; return the config path.

    ``versioned`` turns on the mike version selector (only a release is
    served beside a ``versions.json``; elsewhere the selector's request would fail).
    """
    docs = build_dir / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    with resources.as_file(DEFAULTS) as defaults:
        shutil.copytree(defaults / "site_src", docs)
        base_config = _base_config(root, build_dir, Path(defaults) / "mkdocs.yml")
    if (root / "site_src").is_dir():
        shutil.copytree(root / "site_src", docs, dirs_exist_ok=True)
    for page in content.pages:
        _write(docs / page.path, page.content)
    for appendix in content.appendices:
        path = docs / appendix.path
        _write(path, (path.read_text("utf-8") if path.is_file() else "") + appendix.content)
    for path, data in content.assets.items():
        _write(docs / path, data)
    config = build_dir / "mkdocs.yml"
    atomic_write_text(config, _generated_config(base_config, content, docs, root, versioned))
    return config


def _generated_config(base_config: Path, content: SiteContent, docs: Path, root: Path, versioned: bool) -> str:
    """The effective config: INHERIT the base, then the nav (unless the folder sets its own)."""
    config: dict = {"docs_dir": "docs", "not_in_nav": "\n".join(f"/{p}" for p in NOT_IN_NAV)}
    own = root / "mkdocs.yml"
    if not (own.is_file() and any(line.startswith("nav:") for line in own.read_text("utf-8").splitlines())):
        config["nav"] = content.nav + _extra_pages(docs, content.nav)
    if versioned:
        config["extra"] = {"version": {"provider": "mike", "default": "latest"}}
    return f"INHERIT: {base_config.name}\n" + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


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


def _base_config(root: Path, build_dir: Path, default: Path) -> Path:
    """Copy the default config (and the folder's own on top of it) into build_dir."""
    build_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(default, build_dir / "mkdocs.default.yml")
    own = root / "mkdocs.yml"
    if not own.is_file():
        return build_dir / "mkdocs.default.yml"
    text = own.read_text("utf-8")
    if not any(line.startswith("INHERIT:") for line in text.splitlines()):
        text = "INHERIT: mkdocs.default.yml\n" + text
    atomic_write_text(build_dir / "mkdocs.own.yml", text)
    return build_dir / "mkdocs.own.yml"


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, "utf-8")


def build_site(config: Path, site_dir: Path) -> Path:
    """Run ``mkdocs build --strict``; the old site stays in place until the new one is complete."""
    staging = site_dir.with_name(f".{site_dir.name}-{uuid.uuid4().hex}")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(config), "-d", str(staging)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise SiteBuildError(f"mkdocs build failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
                             "Fix the page or configuration it names; the previous site/ was left unchanged.")
    if site_dir.exists():
        shutil.rmtree(site_dir)
    os.replace(staging, site_dir)
    return site_dir
