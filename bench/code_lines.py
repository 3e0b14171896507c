"""Lines of code in ``generator/``: not blank, not a comment, not part of a docstring.

A module's, class's or function's docstring and the string that documents a constant (a bare string
statement) are documentation, not code. Prints the total and the largest modules.

Usage::

    python bench/code_lines.py [FOLDER] [--top 15]
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def code_lines(source: str) -> int:
    """The lines of ``source`` that hold a token of code (docstrings and comments are not code)."""
    documented = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            documented.update(range(node.lineno, node.end_lineno + 1))
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skipped:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in documented)
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, default=REPO / "generator")
    parser.add_argument("--top", type=int, default=15, help="how many of the largest modules to list")
    args = parser.parse_args()
    counts = {p: code_lines(p.read_text("utf-8")) for p in sorted(args.folder.rglob("*.py"))}
    print(f"{sum(counts.values()):,} code lines in {len(counts)} modules of {args.folder}")
    for path, lines in sorted(counts.items(), key=lambda item: -item[1])[: args.top]:
        print(f"{lines:6,}  {path.relative_to(args.folder).as_posix()}")


if __name__ == "__main__":
    main()
