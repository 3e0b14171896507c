"""What the render reads from a leaderboard folder: no link is followed, mkdocs.yml runs no code and reads no file.

A pull request controls ``site_src/``, ``mkdocs.yml`` and ``releases/``, and
the build that publishes the site holds the tokens.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from dualboard.errors import Finding, InvalidInputError
from dualboard.release_files import ReleaseError, load_releases
from dualboard.render.pages import SiteContent
from dualboard.render.shared_files import shared_name
from dualboard.render.site import build_site, compose_docs
from dualboard.render.site_config import ALLOWED as ALLOWED_SETTINGS
from dualboard.render.site_config import REFUSED, THEME_KEYS, site_source_findings
from dualboard.safe_read import UnsafeFileError, read_regular

LINK = ("path", "is a symbolic link", "commit the real file or folder, not a link")


def link_findings(root: Path) -> list[tuple]:
    return [(f.file, f.line, f.field, f.problem, f.fix) for f in site_source_findings(root)]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A leaderboard folder with a hand-written page and a secret beside it (as .git/config would be)."""
    (tmp_path / "board" / "site_src").mkdir(parents=True)
    (tmp_path / "board" / "site_src" / "about.md").write_text("# About\n", "utf-8")
    (tmp_path / "secret.txt").write_text("HF_TOKEN=hf_secret", "utf-8")
    return tmp_path / "board"


def test_clean_folder_has_no_finding_and_copies_its_pages(root: Path) -> None:
    (root / "mkdocs.yml").write_text("site_name: Board\n", "utf-8")
    assert site_source_findings(root) == []
    compose_docs(root, root / "build", SiteContent())
    assert (root / "build" / "docs" / "about.md").read_text("utf-8") == "# About\n"


@pytest.mark.parametrize(
    "link, target",
    [
        ("site_src/x.txt", "/proc/self/environ"),
        ("site_src/config.txt", "../../secret.txt"),
        ("site_src/stylesheets", ".."),
        ("mkdocs.yml", "../secret.txt"),
        ("releases/0.1/stats/models.csv", "/proc/self/environ"),
    ],
)
def test_each_link_is_a_finding_and_nothing_is_copied(root: Path, link: str, target: str) -> None:
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(target)
    assert link_findings(root) == [(link, None, *LINK)]
    with pytest.raises(InvalidInputError) as caught:
        compose_docs(root, root / "build", SiteContent())
    assert caught.value.findings == [Finding(link, None, *LINK)]
    assert not (root / "build").exists()


def test_a_site_src_shared_file_not_named_by_its_content_is_refused_so_no_page_data_file_can_be_replaced(
    root: Path,
) -> None:
    shared = root / "site_src" / "shared"
    (shared / ("f" * 64)).mkdir(parents=True)
    (shared / f"{'0' * 64}.json.gz").write_bytes(b"forged answers")
    (shared / ("f" * 64) / "demo.csv").write_bytes(b"forged download")
    (shared / shared_name(b"<svg/>", ".svg").split("/", 1)[1]).write_bytes(b"<svg/>")  # named by its bytes: kept
    expected = [
        Finding(
            f"site_src/shared/{name}",
            None,
            "path",
            "a file in shared/ must be named by the SHA-256 of its bytes "
            "(shared/<sha256><suffix> or shared/<sha256>/<name>): the pages find their data files there",
            "move it out of site_src/shared/",
        )
        for name in (f"{'0' * 64}.json.gz", f"{'f' * 64}/demo.csv")
    ]
    assert site_source_findings(root) == expected
    with pytest.raises(InvalidInputError) as caught:
        compose_docs(root, root / "build", SiteContent())
    assert caught.value.findings == expected
    assert not (root / "build").exists()


def test_a_file_named_shared_in_site_src_is_refused(root: Path) -> None:
    (root / "site_src" / "shared").write_bytes(b"not a folder")
    assert [f.file for f in site_source_findings(root)] == ["site_src/shared"]


def test_linked_site_src_and_every_link_inside_are_reported(root: Path, tmp_path: Path) -> None:
    (root / "site_src" / "a.txt").symlink_to("/proc/self/environ")
    (root / "site_src" / "b.txt").symlink_to("/etc/hostname")
    assert [f[0] for f in link_findings(root)] == ["site_src/a.txt", "site_src/b.txt"]
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "site_src").symlink_to(root / "site_src", target_is_directory=True)
    assert link_findings(linked) == [("site_src", None, *LINK)]


def test_special_file_is_a_finding_without_hanging(root: Path) -> None:
    os.mkfifo(root / "site_src" / "pipe.md")
    assert link_findings(root) == [("site_src/pipe.md", None, "path", "is a special file", "commit a regular file")]


def test_releases_with_a_link_are_never_read(root: Path) -> None:
    release = root / "releases" / "0.1"
    release.mkdir(parents=True)
    (release / "manifest.json").write_text(json.dumps({"version": "0.1"}), "utf-8")
    (release / "SHA256SUMS").write_text("00  stats/x.csv\n", "utf-8")
    (release / "stats").mkdir()
    (release / "stats" / "x.csv").symlink_to("/proc/self/environ")
    with pytest.raises(ReleaseError, match=r"x\.csv: is a symbolic link"):
        load_releases(root)


@pytest.mark.parametrize(
    "folder, manifest, sums, match",
    [
        ("0.1", {"version": "../../javascripts"}, "", "does not describe release '0.1'"),
        ("0.1", {"version": "0.1"}, "00  ../../../secret.txt\n", "is not a path inside the release"),
        ("0.1", {"version": "0.1"}, "00  /etc/passwd\n", "is not a path inside the release"),
        (".hidden", {}, "", "is not a release version"),
    ],
)
def test_release_paths_stay_inside_the_release(root: Path, folder: str, manifest: dict, sums: str, match: str) -> None:
    """Versions and listed names become paths on the site: none may climb out of its folder."""
    release = root / "releases" / folder
    release.mkdir(parents=True)
    (release / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    (release / "SHA256SUMS").write_text(sums, "utf-8")
    with pytest.raises(ReleaseError, match=match):
        load_releases(root)


def test_safe_reader_refuses_dot_dot(root: Path) -> None:
    with pytest.raises(UnsafeFileError, match="climbs out"):
        read_regular(root / "site_src" / ".." / ".." / "secret.txt", root=root)


SCRIPT_CONFIGS = [
    # Settings that ran script or loaded from another origin (issue 25, item 6): restricted, or refused.
    (
        "extra:\n  social:\n    - icon: fontawesome/brands/github\n      link: javascript:alert(document.domain)\n",
        "extra.social[0].link",
        "is a javascript: link",
    ),
    ("extra:\n  homepage: JavaScript:alert(1)\n", "extra.homepage", "is a JavaScript: link"),
    ("repo_url: data:text/html,<script>alert(1)</script>\n", "repo_url", "which can end the link"),
    ("repo_url: 'https://x.org/\" onmouseover=\"alert(1)'\n", "repo_url", "which can end the link"),
    ("site_url: '&#106;avascript:alert(1)'\n", "site_url", "HTML character reference"),
    ('edit_uri: "java\\tscript:alert(1)"\n', "edit_uri", "which can end the link"),
    ("nav:\n  - Evil: javascript:alert(1)\n", "nav[0].Evil", "is a javascript: link"),
    (
        "nav:\n  - </title><img src=x onerror=alert(1)>: about.md\n",
        "nav[0].</title><img src=x onerror=alert(1)>",
        "striptags",
    ),
    ("extra_javascript:\n  - https://evil.example/x.js\n", "extra_javascript[0]", "from another origin"),
    ("extra_javascript:\n  - path: //evil.example/x.js\n    type: module\n", "extra_javascript[0].path", "origin"),
    ("extra_javascript:\n  - path: x.js\n    onload: alert(1)\n", "extra_javascript[0].onload", "cannot be set"),
    ("extra_css:\n  - https://evil.example/x.css\n", "extra_css[0]", "from another origin"),
    ("theme:\n  logo: https://evil.example/logo.png\n", "theme.logo", "from another origin"),
    ("theme:\n  favicon: 'data:image/svg+xml,<svg onload=alert(1)>'\n", "theme.favicon", "another origin"),
    ("theme:\n  palette:\n    primary: 'indigo\" onmouseover=\"alert(1)'\n", "theme.palette.primary", "not a name"),
    ("theme:\n  icon:\n    logo: ../../../../etc/passwd\n", "theme.icon.logo", "is not a name"),
    ("theme:\n  logo: images/../../../../etc/hostname\n", "theme.logo", "not a path inside the site"),
    ("extra_javascript:\n  - javascripts/../../etc/passwd\n", "extra_javascript[0]", "not a path inside the site"),
    (
        "markdown_extensions:\n  - wikilinks:\n      base_url: 'javascript:alert(document.domain)//'\n",
        "markdown_extensions[0].wikilinks.base_url",
        "is a javascript: link",
    ),
    ("extra:\n  analytics:\n    provider: google\n    property: G-X\n", "extra.analytics", "loads a tracker"),
    ("extra:\n  consent:\n    description: <img src=x onerror=alert(1)>\n", "extra.consent", "as HTML"),
    ("extra:\n  social:\n    - link: https://x.org\n      onclick: alert(1)\n", "extra.social[0].onclick", "set"),
    ("markdown_extensions:\n  - pymdownx.emoji\n", "markdown_extensions[0]", "load from a CDN"),
    (
        "markdown_extensions:\n  - pymdownx.highlight:\n      css_class: 'x\" onmouseover=\"alert(1)'\n",
        "markdown_extensions[0].pymdownx.highlight.css_class",
        "holds markup",
    ),
    (
        "markdown_extensions:\n  - pymdownx.keys:\n      key_map: {x: <b>}\n",
        "markdown_extensions[0].pymdownx.keys.key_map",
        "is a mapping or nested list",
    ),
]

REFUSED_CONFIGS = [
    ("hooks:\n  - submissions/evil.py\n", "hooks", "runs these Python files"),
    ("plugins:\n  - macros\n", "plugins", "runs plugins"),
    ("INHERIT: ../../secret.yml\n", "INHERIT", "read another YAML file"),
    ("docs_dir: /\n", "docs_dir", "lays out the docs folder"),
    ("site_dir: /tmp/x\n", "site_dir", "chooses where the site is written"),
    ("extra_templates:\n  - about.md\n", "extra_templates", "Jinja templates"),
    ("theme:\n  custom_dir: /proc/self\n", "theme.custom_dir", "Jinja"),
    ("theme:\n  font:\n    text: Roboto\n", "theme.font", "external requests"),
    ("theme:\n  name: readthedocs\n", "theme.name", "need the material theme"),
    (
        "markdown_extensions:\n  - tables\n  - pymdownx.snippets:\n      base_path: /\n",
        "markdown_extensions[1]",
        "includes files of the build machine",
    ),
    ("markdown_extensions:\n  - tables\n  - pymdownx.b64\n", "markdown_extensions[1]", "embeds files"),
    (
        "markdown_extensions:\n  - tables\n  - submissions.evil\n",
        "markdown_extensions[1]",
        "imports an extension by name",
    ),
    ("watch:\n  - /etc\n", "watch", "only settings known to run no code"),
    ("site_name: !ENV HF_TOKEN\n", "site_name", "uses the YAML tag !ENV"),
    ("site_name: !relative $config_dir\n", "site_name", "uses the YAML tag !relative"),
    (
        "site_name: !!python/object/apply:os.system [touch pwned]\n",
        "site_name",
        "uses the YAML tag !!python/object/apply:os.system",
    ),
    ("extra:\n  x: !!python/name:os.system\n", "extra.x", "uses the YAML tag !!python/name:os.system"),
    ("site_name: a\nsite_name: b\n", "site_name", "is set twice"),
    ("extra: &a {generator: false}\nnav: [*a]\n", "nav[0]", "alias"),
    ("site_name: [1, 2]\n", "site_name", "must be text"),
    ("- just a list\n", "-", "holds no key: value settings"),
    ("site_name: 'unclosed\n", "-", "is not valid YAML"),
    *SCRIPT_CONFIGS,
]


@pytest.mark.parametrize("text, field, problem", REFUSED_CONFIGS, ids=[c[1] + ":" + c[2][:20] for c in REFUSED_CONFIGS])
def test_dangerous_mkdocs_settings_are_findings(root: Path, text: str, field: str, problem: str) -> None:
    """Every setting that runs code, reads a file of the build machine or escapes the folder is refused,
    with its line."""
    (root / "mkdocs.yml").write_text("site_name: Board\n" * (not text.startswith(("site_name", "-"))) + text, "utf-8")
    findings = site_source_findings(root)
    assert [f.field for f in findings] == [field], findings
    assert problem in findings[0].problem and findings[0].file == "mkdocs.yml" and findings[0].fix
    assert findings[0].line is not None or problem == "is not valid YAML"
    with pytest.raises(InvalidInputError):
        compose_docs(root, root / "build", SiteContent())
    assert not (root / "build").exists() and not (Path.cwd() / "pwned").exists()


def test_every_problem_of_mkdocs_yml_is_reported_at_once(root: Path) -> None:
    (root / "mkdocs.yml").write_text(
        "site_name: !ENV HF_TOKEN\nhooks: [x.py]\nextra: !!python/name:os.system\n", "utf-8"
    )
    assert [(f.line, f.field) for f in site_source_findings(root)] == [(1, "site_name"), (3, "extra"), (2, "hooks")]


def test_the_policy_docstring_names_every_allowed_and_refused_setting() -> None:
    """``dualboard validate`` users read the docstring: it must not drift from the tables the check uses."""
    doc = " ".join(site_source_findings.__doc__.split())
    for name in [*ALLOWED_SETTINGS, *THEME_KEYS, *REFUSED]:
        assert f"``{name}``" in doc, name


def test_oversized_mkdocs_yml_is_a_finding(root: Path) -> None:
    (root / "mkdocs.yml").write_text("site_name: Board\n" + "# padding\n" * 200_000, "utf-8")
    [finding] = site_source_findings(root)
    assert finding.problem.endswith("over the 1048576-byte limit"), finding


ALLOWED = """
site_name: "!ENV HF_TOKEN"
site_url: https://example.org/board/
copyright: Example
nav:
  - Home: index.md
  - About: about.md
extra:
  social:
    - icon: fontawesome/brands/github
      link: https://github.com/example
theme:
  name: material
  palette:
    primary: teal
  features: [navigation.instant]
extra_css: [stylesheets/extra.css]
markdown_extensions:
  - pymdownx.details
  - markdown.extensions.footnotes
  - toc:
      permalink: "#"
"""


def test_allowed_settings_reach_mkdocs_as_plain_values(root: Path) -> None:
    """Allowed settings are taken; lists extend the package's own; a quoted tag-like string stays text."""
    from mkdocs.config import load_config

    (root / "mkdocs.yml").write_text(ALLOWED, "utf-8")
    assert site_source_findings(root) == []
    config = load_config(str(compose_docs(root, root / "build", SiteContent(), versioned=True).config))
    assert config.site_name == "!ENV HF_TOKEN" and config.site_url == "https://example.org/board/"
    assert config.theme["palette"] == {"primary": "teal"} and config.theme["font"] is False
    assert config.nav == [{"Home": "index.md"}, {"About": "about.md"}]
    assert {"tables", "attr_list", "pymdownx.details", "markdown.extensions.footnotes"} <= set(
        config.markdown_extensions
    )
    assert config.mdx_configs["toc"] == {"permalink": "#"}
    assert [str(p) for p in config.extra_css] == ["stylesheets/dualboard.css", "stylesheets/extra.css"]
    assert "javascripts/charts.js" in [str(p) for p in config.extra_javascript]
    assert config.extra["social"][0]["link"] == "https://github.com/example"
    assert config.extra["version"] == {"provider": "mike", "default": "latest"}
    assert set(config.plugins) <= {"search", "material/search"}
    assert not config.hooks, "no code of the folder's, nor any hooks of ours"


def test_mkdocs_ignores_modules_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build runs from the leaderboard folder: a committed yaml.py must not replace PyYAML in mkdocs."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Hi\n", "utf-8")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({"site_name": "x", "theme": {"name": "mkdocs"}}), "utf-8")
    (tmp_path / "yaml.py").write_text(f"open({str(tmp_path / 'pwned')!r}, 'w').close()\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    build_site(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert (tmp_path / "site" / "index.html").is_file()
    assert not (tmp_path / "pwned").exists(), sys.executable


TEXT_PAYLOAD = "<img src=x onerror=window.__xss=1>"
HOSTILE_TEXT = {
    "site_name": f'Board "{TEXT_PAYLOAD}',
    "site_description": f'"><script>window.__xss=1</script>{TEXT_PAYLOAD}',
    "site_author": f'"{TEXT_PAYLOAD}',
    "copyright": f"© Board {TEXT_PAYLOAD}",
    "repo_name": TEXT_PAYLOAD,
    "repo_url": "https://example.org/board",
    "nav": [{'About & "more"': "about.md"}],
    "extra": {"social": [{"icon": "fontawesome/brands/github", "link": "https://example.org", "name": "GitHub"}]},
}
"""Text settings with markup (issue 25, item 6: the copyright's ran on every page): taken, and escaped."""


def test_markup_in_text_settings_is_shown_as_text_on_a_real_build(root: Path) -> None:
    (root / "mkdocs.yml").write_text(yaml.safe_dump(HOSTILE_TEXT, allow_unicode=True), "utf-8")
    assert site_source_findings(root) == []
    build_site(compose_docs(root, root / "build", SiteContent()).config, root / "site")
    page = (root / "site" / "about" / "index.html").read_text("utf-8")
    assert "<img src=x" not in page and "<script>window.__xss" not in page
    assert "© Board &lt;img src=x onerror=window.__xss=1&gt;" in page  # the footer shows it as written
    assert "About &amp; &quot;more&quot;" in page and '<meta name="author" content="&#34;&lt;img' in page.replace(
        "&quot;", "&#34;"
    )


def test_a_hostile_mkdocs_yml_replayed_through_validate_names_each_setting_and_its_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from dualboard.cli import main
    from tests.conftest import write_tiny_board

    root = write_tiny_board(tmp_path)
    hostile = {
        "site_name": "Board",
        "copyright": f"© Board {TEXT_PAYLOAD}",
        "extra": {"social": [{"icon": "fontawesome/brands/github", "link": "javascript:window.__xss=1"}]},
        "extra_javascript": ["https://evil.example/steal.js"],
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(hostile, sort_keys=False), "utf-8")
    result = CliRunner().invoke(main, ["validate", "--root", str(root)])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("mkdocs.yml")]
    assert [line.split(": ")[0:2] for line in lines] == [
        ["mkdocs.yml:6", "extra.social[0].link"],
        ["mkdocs.yml:8", "extra_javascript[0]"],
    ], result.output
    assert "javascript: link" in lines[0] and "another origin" in lines[1]
