"""Names and the explicit state of one LowerSparseIter run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..._tvm import Span, Var, structural_map, tirx, tvm
from ...ir.function import SparseFunction
from ...trace.spans import span_texts
from .header import Header


class Names:
    """Unique names in one namespace: ``name``, or ``name_1``, ``name_2``... when taken."""

    def __init__(self, taken: Iterable[str] = ()):
        self.taken: set[str] = set(taken)

    def fresh(self, name: str) -> str:
        """``name``, or the first ``name_<k>`` not taken yet; it is taken from now on."""
        base, k = name, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


@dataclass
class Context:
    """What lowering one function reads and accumulates; every step receives it explicitly."""

    func: SparseFunction
    header: Header
    blocks: Names = field(default_factory=Names)  # block names (their own namespace in TVM)
    spans: dict[str, list[str]] = field(default_factory=dict)  # block/buffer name -> script lines
    searched: list[str] = field(default_factory=list)  # axes searched or merged: their rows must be sorted
    scratch: list[Var] = field(default_factory=list)  # search results of the blocks built so far


def i32(value: int) -> Any:
    """An int32 constant."""
    return tirx.const(value, "int32")


def dtype_of(expr: Any) -> str:
    """The dtype of an expression (``"int32"``, ``"int64"``...)."""
    return str(expr.ty.dtype)


def as_dtype(expr: Any, dtype: str) -> Any:
    """``expr`` in ``dtype``: itself when it already is, else cast.

    Positions and block vars of an axis are in its ``idtype``; a length given in another
    integer type (an int64 or uint8 scalar parameter, an int64 indptr) is cast to it.
    """
    return expr if dtype_of(expr) == dtype else tirx.Cast(dtype, expr)


def domain(extent: Any) -> Any:
    """``[0, extent)`` with its start in the extent's dtype (TVM would make a literal 0 int32)."""
    return tvm.ir.Range.from_min_extent(tirx.const(0, dtype_of(extent)), extent)


def where(span: Optional[Span]) -> str:
    """``"<script>:12:19: "``, where ``span`` is in the script, to start a message with ("" if
    none): file, line and column of a single ``Span`` (an expression's, say the load a message
    is about, or a statement's), the lines of each part of a ``SequentialSpan``."""
    if isinstance(span, Span) and int(span.column) > 0:
        name = str(span.source_name.name) if span.source_name is not None else "<script>"
        return f"{name}:{int(span.line)}:{int(span.column)}: "
    lines = span_texts(span) if span is not None else []
    return f"{', '.join(lines)}: " if lines else ""


def substitute(expr: Any, mapping: list[tuple[Var, Any]]) -> Any:
    """``expr`` with each variable of ``mapping`` replaced (by identity, not name)."""
    if not mapping:
        return expr

    def on_var(v: Var) -> Any:
        for old, new in mapping:
            if v.same_as(old):
                return new
        return v

    return structural_map(expr, [(Var, on_var)])


def seq(stmts: list[Any], span: Optional[Span] = None) -> Any:
    """The statements in order; one statement stays itself (TVM refuses a one-element SeqStmt)."""
    stmts = [s for s in stmts if s is not None]
    if len(stmts) == 1:
        return stmts[0]
    return tirx.SeqStmt(stmts, span=span)


def conjunction(conditions: list[Any]) -> Any:
    """``c0 and c1 and ...``, left-nested."""
    cond = conditions[0]
    for c in conditions[1:]:
        cond = tirx.And(cond, c)
    return cond
