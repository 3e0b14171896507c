"""``RawHtmlFirst`` gives every page the HTML, table of contents and anchor ids that MkDocs gives it without.

Two ways: every page of the tiny board's built docs, rendered by MkDocs with and without the extension; and
Markdown texts made to hit each case ``whole_block`` and ``take_blocks`` must refuse (two elements on a line, a
tag left open, comments, scripts, a raw block or comment around the line, ``md_in_html``...), rendered with
MkDocs' own anchor look registered as MkDocs registers it.
"""

from __future__ import annotations

import subprocess
import sys

import markdown
import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import get_files
from mkdocs.structure.pages import Page, _RawHTMLPreprocessor

from dualboard.render import raw_html_blocks
from dualboard.render.raw_html_blocks import RawHtmlFirst, whole_block
from tests.render import test_dirty_site

built = test_dirty_site.built


def mkdocs_render(config, files, file, *, ours: bool) -> tuple:
    """What MkDocs makes of the page ``file``: its HTML, table of contents, title and anchor ids."""
    anchors: set = set()
    plain = [e for e in config.markdown_extensions if not isinstance(e, RawHtmlFirst)]
    config.markdown_extensions[:] = [*plain, RawHtmlFirst(anchors)] if ours else plain
    page = Page(None, file, config)
    page.read_source(config)
    page.render(config, files)
    return page.content, str(page.toc), page.title, page.present_anchor_ids | anchors


@pytest.mark.slow
def test_every_page_of_a_built_board_renders_the_same(built, monkeypatch):
    config = load_config(str(built / "build" / "mkdocs.yml"))
    files = get_files(config)
    pages = list(files.documentation_pages())
    taken, original = [], raw_html_blocks.take_blocks

    def take_blocks(md, lines):
        taken.append(original(md, lines))
        return taken[-1]

    monkeypatch.setattr(raw_html_blocks, "take_blocks", take_blocks)
    assert len(pages) > 10
    for file in pages:
        assert mkdocs_render(config, files, file, ours=True) == mkdocs_render(config, files, file, ours=False), file
    assert sum(len(whole) for _lines, whole in filter(None, taken)) > len(pages), "most tables are taken whole"


TEXTS = {
    "one element": '<div class="a"><p>x</p><table><tr><td id="c1">1&#46;</td></tr></table></div>',
    "two elements": "<div>a</div><div>b</div>",
    "a tag left open": "<div><p>open</div>",
    "a stray end tag": "<div>x</span></div>",
    "an end tag first": "</div><div>x</div>",
    "hr": "<div><hr></div>",
    "script": "<div><script>if (a < b) {}</script></div>",
    "style": "<div><style>p {}</style></div>",
    "comment": "<div><!-- c --></div>",
    "entity without semicolon": "<div>AT&T &amp x</div>",
    "text after the element": "<div>a</div> tail",
    "inline first": '<span class="x">inline</span>',
    "> in a value": '<div title="a>b">x</div>',
    "capitals": '<DIV ID="Up">x</DIV>',
    "a name": '<div><a name="n">x</a></div>',
    "single quotes": "<div data-x='q'>x</div>",
    "bare id": "<div id>x</div>",
    "self-closing": "<div><br/></div>",
    "backtick": "<div>`code`</div>",
    "paragraph": "<p>para <em>x</em></p>",
    "markdown attribute": '<div markdown="1">*x*</div>',
    "blank in a tag": '<div class="a" >x</div>',
}
AROUND = {
    "between paragraphs": "Some *text*.\n\n{}\n\nMore text.\n",
    "first line": "{}\n\nMore text.\n",
    "last line": "Text.\n\n{}",
    "after a paragraph line": "Text.\n{}\n\nMore.\n",
    "inside a raw block": "<div>\n\n{}\n\n</div>\n\nAfter.\n",
    "inside a comment": "<!-- open\n\n{}\n\n-->\n\nAfter.\n",
    "after an open inline tag": "Para <span>open\n\n{}\n\nclose</span> here.\n",
    "in fenced code": "```\n\n{}\n\n```\n\nAfter.\n",
    "twice": "# Title\n\n{0}\n\n## Part {{#p}}\n\n{0}\n\nEnd.\n",
    # What follows the last line taken whole, left unfinished, must not be read apart from the page.
    "before an open CDATA": "Text.\n\n{}\n\n</n>\n<![CDATA[\n><div\n>",
    "before an open comment": "Text.\n\n{}\n\n<!-- never closed\n\nEnd.\n",
    "before an open tag": 'Text.\n\n{}\n\n<a href="x"\n\nEnd.\n',
    "before an open instruction": "Text.\n\n{}\n\n<?php open\n\nEnd.\n",
}
EXTENSIONS = {
    "default": ["tables", "attr_list", "admonition", "toc"],
    "md_in_html": ["tables", "attr_list", "toc", "md_in_html"],
    "fenced_code": ["fenced_code", "attr_list", "toc"],
}


def markdown_render(text: str, extensions: list[str], *, ours: bool) -> tuple:
    """The HTML Markdown makes of ``text``, and the anchor ids MkDocs' look (registered as MkDocs does) finds."""
    anchors: set = set()
    md = markdown.Markdown(extensions=[*extensions, *([RawHtmlFirst(anchors)] if ours else [])])
    look = _RawHTMLPreprocessor()
    look._register(md)
    return md.convert(text), look.present_anchor_ids | anchors


@pytest.mark.parametrize("extensions", EXTENSIONS.values(), ids=EXTENSIONS.keys())
@pytest.mark.parametrize("around", AROUND.values(), ids=AROUND.keys())
@pytest.mark.parametrize("block", TEXTS.values(), ids=TEXTS.keys())
def test_every_case_renders_the_same(block, around, extensions):
    text = around.format(block)
    assert markdown_render(text, extensions, ours=True) == markdown_render(text, extensions, ours=False)


@pytest.mark.parametrize(
    ("line", "whole"),
    [
        (TEXTS["one element"], True),
        (TEXTS["capitals"], True),
        (TEXTS["a name"], True),
        (TEXTS["bare id"], True),
        (TEXTS["a stray end tag"], True),  # the parser pops nothing for it either
        (TEXTS["a tag left open"], True),  # the end tag of the element pops it too
        (TEXTS["paragraph"], True),
        *((TEXTS[case], False) for case in ("two elements", "an end tag first", "hr", "script")),
        *((TEXTS[case], False) for case in ("comment", "entity without semicolon", "text after the element")),
        *((TEXTS[case], False) for case in ("inline first", "> in a value", "single quotes", "self-closing")),
        *((TEXTS[case], False) for case in ("backtick", "blank in a tag")),
    ],
)
def test_whole_block_takes_only_lines_in_the_one_form(line, whole):
    assert whole_block(line, markdown.Markdown()) is whole


def test_a_line_taken_whole_is_stashed_and_its_ids_kept():
    """The one-element line is taken without the parser (take_blocks says so) and its id still reaches MkDocs."""
    md = markdown.Markdown()
    taken = raw_html_blocks.take_blocks(md, AROUND["between paragraphs"].format(TEXTS["one element"]).split("\n"))
    assert taken is not None and len(taken[1]) == 1
    assert "c1" in markdown_render(AROUND["between paragraphs"].format(TEXTS["one element"]), [], ours=True)[1]


def test_a_line_that_almost_takes_the_one_form_is_refused_at_once():
    """A long run of text, then what the one form lacks (a backtick, a bare ``&``): TOKENS, which repeats texts, is
    RE2, so refusing costs one pass; under ``re`` it tried every split of the run (a minute at 30 characters, and
    site_src/ pages come by pull request). A child process with a deadline, so a backtracking engine fails the
    test instead of hanging it."""
    code = (
        "import markdown; from dualboard.render.raw_html_blocks import whole_block\n"
        "for tail in ('`', '&', '<'):\n"
        "    assert not whole_block('<p>' + 'a' * 100_000 + tail, markdown.Markdown())\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
