"""Source spans across stages: the block → script-line table and line annotation.

TVM drops spans on loops and blocks (tvm027.md §6), so LowerSparseIter records, in the
``sparsetir.spans`` PrimFunc attribute, the script lines of every block it creates; stage III
keeps the attribute. ``annotate`` uses it to tag each printed stage-II/III line.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from .._tvm import SequentialSpan, Span
from ..ir.stage2 import SPANS_ATTR
_BLOCK = re.compile(r"""T\.s?block\(\s*["']([^"']+)["']""")
_ALLOC = re.compile(r"^\s*(\w+) = T\.(?:sblock_)?alloc_buffer\(")


def span_locations(span: Any) -> list[tuple[str, int]]:
    """(file, line) of a ``Span`` or every part of a ``SequentialSpan``."""
    if span is None:
        return []
    parts = list(span.spans) if isinstance(span, SequentialSpan) else [span]
    out = []
    for s in parts:
        if isinstance(s, Span):
            name = str(s.source_name.name) if s.source_name is not None else "<script>"
            out.append((name, int(s.line)))
    return out


def span_texts(span: Any) -> list[str]:
    """``file:line`` of a ``Span`` or every part of a ``SequentialSpan``: the table's entries."""
    return [f"{name}:{line}" for name, line in span_locations(span)]


def span_table(func: Any) -> dict[str, list[str]]:
    """Block name → ``file:line`` strings, from a stage-II wrapper or a stage-II/III PrimFunc."""
    prim = getattr(func, "prim", func)
    attrs = prim.attrs
    if attrs is None or SPANS_ATTR not in attrs:
        return {}
    return {str(k): [str(x) for x in v] for k, v in attrs[SPANS_ATTR].items()}


def _lookup(table: dict[str, list[str]], block: str) -> list[str]:
    name = block
    while name:
        if name in table:
            return table[name]
        for suffix in ("_init", "_update", "_rf", "_local", "_shared", "_global"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        else:
            return []
    return []


def _owner(table: dict[str, list[str]], buffer: str) -> list[str]:
    """Lines of a root allocation: its own entry, else the block whose name prefixes it."""
    if buffer in table:
        return table[buffer]
    owners = [k for k in table if buffer.startswith(k + "_")]
    return table[max(owners, key=len)] if owners else []


def annotate(text: str, func: Any, home: Optional[str] = None) -> str:
    """Append ``# <- file:line`` to each line of a printed stage-II/III function.

    A block line and every line inside it get the block's script lines (the lines of a
    ``T.init()`` body get the init's own, when recorded); a loop line gets the lines of the
    first block below it. Locations in ``home`` (the script being shown) print as bare line
    numbers: ``# <- lines 26, 29``.
    """
    table = span_table(func)
    lines = text.splitlines()
    stack: list[tuple[int, str]] = []
    out = []
    for k, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        while stack and indent <= stack[-1][0] and stripped:
            stack.pop()
        where: list[str] = []
        m = _BLOCK.search(line)
        if m:
            stack.append((indent, m.group(1)))
            where = _lookup(table, m.group(1))
        elif stripped.startswith("for "):
            for nxt in lines[k + 1 :]:
                m2 = _BLOCK.search(nxt)
                if m2:
                    where = _lookup(table, m2.group(1))
                    break
        elif stripped.startswith("with T.init()") and stack:
            stack.append((indent, stack[-1][1] + "_init"))
            where = _lookup(table, stack[-1][1])
        elif stack and stripped and not stripped.startswith("#"):
            where = _lookup(table, stack[-1][1])
        elif _ALLOC.match(line):
            where = _owner(table, _ALLOC.match(line).group(1))
        out.append(f"{line}  # <- {_where_text(where, home)}" if where else line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _where_text(where: list[str], home: Optional[str]) -> str:
    if home is None:
        return ", ".join(where)
    prefix = home + ":"
    local = [w[len(prefix) :] for w in where if w.startswith(prefix)]
    other = [w for w in where if not w.startswith(prefix)]
    parts = []
    if local:
        parts.append(("line " if len(local) == 1 else "lines ") + ", ".join(local))
    return ", ".join(parts + other)
