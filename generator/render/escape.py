"""Make untrusted text inert inside Markdown pages.

Model responses, model names and every other submitted string go into raw
HTML blocks with *every* character that is not a letter, digit or space
written as a numeric character reference. Markdown then has nothing to
interpret (no ``[x](javascript:...)``, no ``*``, no ``--8<--``, no ``{{ }}``),
the HTML parser sees no tags, and newlines become ``&#10;`` so a response can
never end the raw HTML block with a blank line.
"""

from __future__ import annotations

from dualboard.names import slug as escape_slug  # one definition: validation refuses ids that share a slug

__all__ = ["escape_slug", "escape_text"]

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")


def escape_text(value: object) -> str:
    """Return ``value`` as text in which only [A-Za-z0-9 ] stay literal.

    Examples
    --------
    >>> escape_text('<script>alert(1)</script>')
    '&#60;script&#62;alert&#40;1&#41;&#60;&#47;script&#62;'
    >>> escape_text("a\\n\\nb")
    'a&#10;&#10;b'
    """
    text = "" if value is None else str(value)
    return "".join(ch if ch in _SAFE else f"&#{ord(ch)};" for ch in text)
