"""The script lines no IR node carries: ``with T.init():``, linked to what its body became.

A reduction's ``with T.init():`` is no statement of its own once parsed: the iteration keeps
the statement inside it as its init, with that statement's span. So nothing lowered names the
``with`` line, and the explorer would leave it unlinked. Here each line that came from an init's
body also gets the ``with`` line (the stage-III init block and its store, the generated code's
init stores), and the ``with T.init():`` that stage I and II print gets it as its most specific
line instead of the iteration's. Only the script's syntax tree is read (``ast.parse``); nothing
is evaluated.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import replace

from .pane import Pane

INIT_LINE = "with T.init():"


def init_lines(script: str) -> dict[int, frozenset[int]]:
    """The line of each ``with T.init():`` in ``script`` and the lines of its body; nothing when
    the script does not parse."""
    try:
        with warnings.catch_warnings():  # Python's own warnings about odd literals: the text is data here
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(script)
    except (SyntaxError, ValueError):
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and len(node.items) == 1 and _is_init(node.items[0].context_expr):
            found[node.lineno] = frozenset(range(node.body[0].lineno, node.body[-1].end_lineno + 1))
    return found


def link_inits(pane: Pane, inits: dict[int, frozenset[int]]) -> Pane:
    """``pane`` with the ``with T.init():`` lines of ``inits`` added where their bodies went
    (the same object when there is nothing to add)."""
    if not inits or not pane.origins:
        return pane
    texts = pane.text.splitlines()
    origins = []
    for k, line in enumerate(pane.origins):
        linked = set(line)
        following = set(pane.origins[k + 1]) if k + 1 < len(pane.origins) else set()
        for at, body in inits.items():
            if k < len(texts) and texts[k].strip() == INIT_LINE and body & following:
                linked = {n for n in line if n < at} | {at}  # the printed init: the iteration around it, and itself
            elif body & set(line):
                linked.add(at)
        origins.append(tuple(sorted(linked)))
    origins = tuple(origins)
    return pane if origins == pane.origins else replace(pane, origins=origins)


def _is_init(expr: ast.expr) -> bool:
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "init"
            and isinstance(expr.func.value, ast.Name) and not expr.args and not expr.keywords)
