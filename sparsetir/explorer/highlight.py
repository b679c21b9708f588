"""Syntax highlighting with Pygments: a program's text as one HTML fragment per line.

The explorer shows programs line by line (each line is shaded and linked on its own), so the
highlighted HTML is split at line ends; Pygments closes and reopens its spans at every line end,
so each line is valid HTML by itself. The colours are CSS classes; ``stylesheet`` gives them.
"""

from __future__ import annotations

import functools
import re

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer, GasLexer, LlvmLexer, PythonLexer, TextLexer

#: the lexer of each kind of text a pane shows
LEXERS = {"python": PythonLexer, "ll": LlvmLexer, "asm": GasLexer, "cuda": CudaLexer, "text": TextLexer}
STYLE = "friendly"
_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')
_QUOTED_CLASS = re.compile(r'<span class="([\w-]+)">')
#: the CSS class the highlighted lines sit under (``stylesheet`` scopes its rules to it)
SCOPE = ".hl"


def highlight_lines(text: str, lang: str) -> list[str]:
    """One HTML fragment per line of ``text`` (``text.splitlines()``), coloured as ``lang``."""
    lexer = LEXERS[lang](stripnl=False, ensurenl=True)
    html = highlight(text, lexer, HtmlFormatter(nowrap=True)) if text else ""
    # Tokens the style leaves uncoloured (whitespace, punctuation, plain names) need no span,
    # and class names need no quotes: a page holds thousands of lines of generated code, and
    # this cuts their size by more than half.
    coloured = _coloured_classes()
    html = _SPAN.sub(lambda m: m.group(0) if m.group(1) in coloured else m.group(2), html)
    html = _QUOTED_CLASS.sub(r"<span class=\1>", html)
    lines = html.split("\n")
    count = len(text.splitlines())
    return (lines + [""] * count)[:count]


@functools.cache
def _coloured_classes() -> frozenset[str]:
    """The token classes the style gives a colour or a font. Whitespace shows as itself, and a
    token the lexer does not know (LLVM's newer ``#dbg_value`` records) as plain text, not boxed
    in red as an error."""
    return frozenset(re.findall(r"^\.hl \.([\w-]+) \{", stylesheet(), re.M)) - {"w", "err"}


def stylesheet() -> str:
    """The CSS rules of the token colours, under ``SCOPE`` (the page sets its own background)."""
    rules = HtmlFormatter(style=STYLE).get_style_defs(SCOPE).splitlines()
    return "\n".join(rule for rule in rules if rule.startswith(SCOPE + " ."))
