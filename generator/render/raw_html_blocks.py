"""A Python-Markdown extension that takes a page's raw HTML blocks out as ``html_block`` does, sooner and faster.

MkDocs parses every page's Markdown for the ids in its raw HTML (to check links to anchors), then Python-Markdown's
``html_block`` preprocessor parses it again to take the raw HTML blocks out (into its stash, leaving placeholders
for the rest of Markdown); on a generated page that is nearly all of it, 600 KB of table on a questions list, each
tag a Python call, twice. :class:`RawHtmlFirst` runs ``html_block`` before MkDocs' look, which then reads
placeholders (it changes no line, so the HTML is the same), and reads the ids of the blocks taken out itself.

And a line on its own that :func:`whole_block` shows to be one HTML element, read as ``html_block`` reads it,
is taken out whole, with one regular expression instead of the HTML parser: the text between such lines still goes
through ``html_block``'s parser, each piece alone, and only when the parser ends each piece at rest, as it would
reach the line reading the page at once (:func:`_at_rest`); otherwise the page is read at once as before.
"""

from __future__ import annotations

import re

from markdown.extensions import Extension
from markdown.htmlparser import HTMLExtractor
from markdown.preprocessors import HtmlBlockPreprocessor, Preprocessor
from mkdocs.structure.pages import _HTMLHandler  # the parser MkDocs reads anchors with

from dualboard.linear_regex import compile_linear

RAW_HTML_FIRST = 21.5
"""Where :class:`RawHtmlFirst` puts ``html_block`` (20) among the preprocessors: just above MkDocs' look for
anchors in raw HTML (21, ``mkdocs/structure/pages.py``), below every other one that runs before ``html_block``
anyway (``fenced_code_block`` 25, ``normalize_whitespace`` 30)."""
ANCHOR_ATTRIBUTE = re.compile(r"(?i)(?<![^\s'\"/])(?:id|name)(?![^\s/=>])")
"""Found in every raw HTML block with an ``id`` (or ``name``) attribute as MkDocs' HTML parser reads one: a name
after a blank, quote or slash, up to a blank, slash, ``=`` or ``>``, lowercased; it may be found in others too."""

_START = r"<([a-zA-Z][a-zA-Z0-9]*)(?: +[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:=\"[^\"<>`]*\")?)*>"
_END = r"</([a-zA-Z][a-zA-Z0-9]*)>"
_TEXT = r"[^<&`]+|&#[0-9]+;|&#[xX][0-9a-fA-F]+;|&[a-zA-Z][a-zA-Z0-9]*;"
# The repeated alternatives run under RE2, in time linear in the line: a page's text comes partly from pull
# requests (site_src/, escaped submissions), and under re a run of text then a stray backtick made TOKENS try every
# split of the run (1 s at 24 characters, doubling with each more). TAG repeats nothing that can match the same
# text two ways, and re finds its 36,000 tags on a questions list ten times faster than RE2.
TOKENS = compile_linear(f"(?:{_START}|{_END}|{_TEXT})*")
"""Start tags, end tags and texts, each in a form the HTML parser reads one way only and gives back unchanged."""
TAG = re.compile(f"{_START}|{_END}")
NO_LOOKAHEAD = compile_linear(f"(?:{_START}|{_END}|[^<])*")
"""Text whose every ``<`` opens a whole tag of :data:`TOKENS`' form: no tag, comment or declaration in it makes
the parser look for its end beyond it."""
WHOLE_BLOCK_ANCHOR = re.compile(r"(?i)<[^<>]* (?:id|name)[ =>]")
"""Found in every line :func:`whole_block` accepts that has an ``id`` or ``name`` attribute (a tag is all its
``<...>``, attributes after a space); it may be found in others too."""
NOT_NESTED = frozenset(
    {"hr", "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}
)
"""Tags ``html_block`` does not simply nest (``hr`` it takes as empty) or whose content the parser reads as text."""


class RawHtmlFirst(Extension):
    """Run the core ``html_block`` before MkDocs' look for anchors, faster, and put the ids it hides in ``anchors``.

    ``anchors`` is filled at each page read with the anchor ids of the raw HTML blocks taken out, each block read
    alone (MkDocs reads the page at once, so around a comment left open the two may differ: only MkDocs' check of
    links to anchors reads them, never the page); the caller adds them to the page's and empties the set.
    Another ``html_block`` (``md_in_html``'s) is run first as it is, and the page's ids are then read from its
    whole text, as MkDocs reads them.
    """

    def __init__(self, anchors: set) -> None:
        super().__init__()
        self.anchors = anchors

    def extendMarkdown(self, md) -> None:
        if "html_block" in md.preprocessors:
            blocks = _BlocksFirst(md, md.preprocessors["html_block"], self)
            md.preprocessors.register(blocks, "html_block", RAW_HTML_FIRST)


class _BlocksFirst(Preprocessor):
    """``html_block``, keeping the anchor ids of the raw HTML it takes out."""

    def __init__(self, md, blocks: Preprocessor, extension: RawHtmlFirst) -> None:
        super().__init__(md)
        self.blocks, self.extension = blocks, extension

    def run(self, lines: list[str]) -> list[str]:
        stash = self.md.htmlStash
        stashed = len(stash.rawHtmlBlocks)
        core = type(self.blocks) is HtmlBlockPreprocessor
        taken = take_blocks(self.md, lines) if core else None
        result, whole = taken if taken else (self.blocks.run(lines), set())
        self.extension.anchors.clear()
        if core:
            for i in range(stashed, len(stash.rawHtmlBlocks)):
                block = stash.rawHtmlBlocks[i]
                if (WHOLE_BLOCK_ANCHOR if i in whole else ANCHOR_ATTRIBUTE).search(block):
                    self.extension.anchors.update(_anchors(block))
        else:  # elements too, whose text is gone: read the page as MkDocs would have
            self.extension.anchors.update(_anchors("\n".join(lines)))
        return result


def _anchors(html: str) -> set[str | None]:
    """The anchor ids MkDocs finds in ``html``."""
    parser = _HTMLHandler()
    parser.feed(html)
    parser.close()
    return parser.present_anchor_ids


def take_blocks(md, lines: list[str]) -> tuple[list[str], set[int]] | None:
    """The lines the core ``html_block`` makes of ``lines``, stashing the same blocks, and the stash indices of
    the blocks taken whole; None if none is.

    A line between blank lines that :func:`whole_block` accepts is stashed
    as the parser would stash it; the text around goes through the parser piece by piece. None (and the stash
    as it was) when no line is taken whole, a piece before one leaves the parser within something
    (:func:`_at_rest`) or holds what makes the parser look past its end (:func:`_self_contained`), or the parser
    cannot finish the piece after the last one.
    """
    stash = md.htmlStash
    before = (len(stash.rawHtmlBlocks), stash.html_counter)
    source, cleandoc, start, offset, whole = "\n".join(lines), [], 0, 0, set()
    for i, line in enumerate(lines):
        if 0 < i < len(lines) - 2 and lines[i - 1] == lines[i + 1] == "" and line.startswith("<"):
            if whole_block(line, md):
                parser = HTMLExtractor(md)
                parser.feed(source[start:offset])
                if not _at_rest(parser) or not _self_contained(source[start:offset]):
                    return _unstash(stash, before)
                # What the parser does with a block followed by a blank line (HTMLExtractor.handle_endtag).
                whole.add(len(stash.rawHtmlBlocks))
                cleandoc += [*parser.cleandoc, "\n", stash.store(line + "\n"), "\n\n"]
                start = offset + len(line)
        offset += len(line) + 1
    if not start:
        return None
    parser = HTMLExtractor(md)
    parser.feed(source[start:])
    if parser.rawdata:  # left unfinished (a comment, CDATA, a tag): what close() makes of it hangs on the offsets
        return _unstash(stash, before)
    parser.close()
    return "".join([*cleandoc, *parser.cleandoc]).split("\n"), whole


def _unstash(stash, before: tuple[int, int]) -> None:
    """Put the stash back as it was (``before``: its blocks and counter) when the page is read at once after all."""
    del stash.rawHtmlBlocks[before[0] :]
    stash.html_counter = before[1]


def whole_block(line: str, md) -> bool:
    """Whether ``html_block``, at rest at the start of ``line``, reads all of it as one raw HTML block.

    It must begin with the start tag of a block-level element and end with the end tag that empties the
    parser's stack of open tags, and nowhere before; every tag and text in between must have the one form
    :data:`TOKENS` allows (no comment, no tag the parser treats otherwise: :data:`NOT_NESTED`). The stack is kept
    as ``HTMLExtractor`` keeps it: every start tag pushed, an end tag popping down to its own if it is there.
    """
    if not line.startswith("<") or not TOKENS.fullmatch(line):
        return False
    tags = TAG.findall(line)  # text holds no "<": these are the tags of the tokens, in order
    stack: list[str] = []
    for i, (opened, closed) in enumerate(tags):
        if opened:
            tag = opened.lower()
            if tag in NOT_NESTED or (not stack and not md.is_block_level(tag)):
                return False
            stack.append(tag)
        elif not stack:
            return False  # an end tag first
        else:
            tag = closed.lower()
            if tag in stack:
                while stack.pop() != tag:
                    pass
            if not stack:
                return i == len(tags) - 1 and line.endswith(f"</{closed}>")
    return False


def _self_contained(text: str) -> bool:
    """Whether the parser read ``text`` as it reads it followed by more: nothing in it looks beyond it."""
    return bool(NO_LOOKAHEAD.fullmatch(text)) and not any(
        (opened or closed).lower() in NOT_NESTED for opened, closed in TAG.findall(text)
    )


def _at_rest(parser: HTMLExtractor) -> bool:
    """Whether the parser took in all it was fed and is within nothing: no block, tag, raw text or comment."""
    return (
        not parser.rawdata
        and not (parser.inraw or parser.intail or parser.stack or parser._cache or parser.inline_stack)
        and parser.cdata_elem is None
    )
