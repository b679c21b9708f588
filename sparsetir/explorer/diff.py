"""Diffs of two listings, as the explorer shows them: unified hunks of highlighted lines.

``difflib`` finds the hunks; each row keeps the highlighted HTML and the script lines of the
line it shows, so a diff row is shaded and linked like a line of any other pane.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

from .pane import Pane

CONTEXT = 3


def diff_rows(before: Pane, after: Pane, line_id: Callable[[str], int]) -> list[list[Any]]:
    """Rows ``[op, line, script lines]``: op ``"@"`` starts a hunk (``line`` is its header text),
    ``" "`` is common, ``"-"`` only in ``before``, ``"+"`` only in ``after`` (``line`` is
    ``line_id`` of the highlighted line). No rows when the texts are equal."""
    old, new = before.text.splitlines(), after.text.splitlines()
    rows: list[list[Any]] = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        rows.append(["@", f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@", []])
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend([" ", line_id(after.html[j]), list(after.origins[j])] for j in range(j1, j2))
                continue
            if tag in ("replace", "delete"):
                rows.extend(["-", line_id(before.html[i]), list(before.origins[i])] for i in range(i1, i2))
            if tag in ("replace", "insert"):
                rows.extend(["+", line_id(after.html[j]), list(after.origins[j])] for j in range(j1, j2))
    return rows
