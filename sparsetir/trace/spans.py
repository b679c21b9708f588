"""Source spans: reading them, merging them, and the block → script-line table.

A statement's span is a TVM ``Span`` (one place in the script) or a ``SequentialSpan`` (several
places that merged into it). TVM drops spans on loops and blocks (tvm027.md §6), so
LowerSparseIter also records, in the ``sparsetir.spans`` PrimFunc attribute, the script lines of
every block it creates; stage III keeps the attribute, and ``fill.fill_spans`` turns it back
into statement spans after every pass.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from .._tvm import SequentialSpan, SourceName, Span
from ..ir.stage2 import SPANS_ATTR

#: block-name endings TVM's primitives and our passes add to a block they derive from another
DERIVED_SUFFIXES = ("_init", "_update", "_rf", "_local", "_shared", "_global")


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


def block_lines(table: dict[str, list[Any]], block: str) -> list[Any]:
    """A block's entry in the table; a block a primitive derived from another (``X_init``,
    ``X_update``, ``X_rf``, ``X_local``...) gets the entry of the block it came from."""
    name = block
    while name:
        if name in table:
            return table[name]
        for suffix in DERIVED_SUFFIXES:
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        else:
            return []
    return []


def buffer_lines(table: dict[str, list[str]], buffer: str) -> list[str]:
    """Lines of a root allocation: its own entry, else the block whose name prefixes it."""
    if buffer in table:
        return table[buffer]
    owners = [k for k in table if buffer.startswith(k + "_")]
    return table[max(owners, key=len)] if owners else []


def text_span(text: str) -> Optional[Span]:
    """The ``Span`` of one ``file:line`` table entry (column 1: the table keeps lines only)."""
    name, _, line = text.rpartition(":")
    if not name or not line.isdigit():
        return None
    return Span(SourceName(name), int(line), int(line), 1, 1)


def merge_spans(spans: Iterable[Any]) -> Any:
    """One span for what several sources merged into: ``None``, a ``Span``, or a ``SequentialSpan``
    of every distinct line, in order of first appearance (parts of ``SequentialSpan``s flattened)."""
    parts: list[Span] = []
    seen: set[tuple[str, int]] = set()
    for span in spans:
        for part in _parts(span):
            key = span_locations(part)[0]
            if key not in seen:
                seen.add(key)
                parts.append(part)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else SequentialSpan(parts)


def last_span(span: Any) -> Optional[Span]:
    """The most specific part of a span: itself, or the last part of a ``SequentialSpan``."""
    parts = _parts(span)
    return parts[-1] if parts else None


def where_text(locations: Iterable[tuple[str, int]], home: Optional[str]) -> str:
    """``lines 25, 28`` for locations in ``home``; other files as ``file:line``."""
    locations = list(locations)
    local = [str(line) for line in sorted({line for name, line in locations if name == home})]
    other = list(dict.fromkeys(f"{name}:{line}" for name, line in locations if name != home))
    parts = [("line " if len(local) == 1 else "lines ") + ", ".join(local)] if local else []
    return ", ".join(parts + other)


def _parts(span: Any) -> list[Span]:
    if span is None:
        return []
    parts = list(span.spans) if isinstance(span, SequentialSpan) else [span]
    return [p for p in parts if isinstance(p, Span) and p.source_name is not None]

