"""The span-filling helper: every statement of a program carries the script spans it came from.

Passes and schedule primitives build statements without spans (TVM's ``decompose_reduction``
makes an init block, ``split`` makes loops, and neither is given one), and a block that several
script constructs were lowered into has only the span of one. The pipeline runs
``fill_spans`` after every pass, so that what any pass produces carries its sources:

- a block (``SBlockRealize`` and its ``SBlock``) carries its own span and the script lines the
  block table (``sparsetir.spans``) records for its name — a ``SequentialSpan`` where several
  sources merged: the iteration and the statements lowered into its loops, a ``T.init()`` and
  its iteration, the blocks a primitive derived (``X_init``, ``X_rf``: ``spans.block_lines``);
- a loop or a statement sequence without a span carries the spans of the statements in it;
- a leaf statement (store, evaluate, branch, loop condition) without a span carries the most
  specific part of its block's span: always a single ``Span``, because TVM's LLVM code
  generator writes debug line information only for those.

Stage-I iterations and statements without spans get them the same way (an iteration from the
statements in it). A program that already carries every span comes back as the same object.
"""

from __future__ import annotations

from typing import Any

from .._tvm import s_tir, tirx, tvm_ffi
from ..ir.function import SparseFunction
from ..ir.iteration import SparseIteration
from ..ir.stage2 import SPANS_ATTR, Stage2Function
from .spans import block_lines, last_span, merge_spans, span_locations, span_table, text_span


def keeps_spans(program: Any) -> bool:
    """Whether ``program`` came from a script parsed with spans (``parse(..., spans=False)``
    gives none): a stage-I function with a span, a stage-II/III one with a block table."""
    if isinstance(program, SparseFunction):
        return program.span is not None
    if isinstance(program, Stage2Function):
        program = program.prim
    attrs = getattr(program, "attrs", None)
    return attrs is not None and SPANS_ATTR in attrs


def fill_spans(program: Any) -> Any:
    """``program`` (stage I, II or III) with a span on every statement; unchanged if it had them."""
    if isinstance(program, SparseFunction):
        old = list(program.body)
        body = [_Stage1Filler().stmt(s, program.span) for s in old]
        return program if _same(body, old) else _replace(program, body=body)
    if isinstance(program, Stage2Function):
        old = program.prim
        prim = fill_spans(old)
        if prim is old:
            return program
        return Stage2Function(prim, list(program.axes), list(program.buffers), list(program.param_names))
    if isinstance(program, tirx.PrimFunc):
        table = {name: [s for s in map(text_span, lines) if s is not None] for name, lines in span_table(program).items()}
        old = program.body
        body = _Filler(table).stmt(old, None)
        return program if body is old else program.with_body(body)
    return program


class _Filler:
    """Rebuilds the statements of a stage-II/III body that lack spans (the rules above).

    Each method returns the statement it was given (the same object) when nothing changed.
    """

    def __init__(self, table: dict[str, list[Any]]):
        self.table = table

    def stmt(self, s: Any, outer: Any) -> Any:
        """``s`` with spans filled; ``outer`` is the span of the enclosing block or loop."""
        if isinstance(s, tirx.SeqStmt):
            old = list(s.seq)
            seq = [self.stmt(c, outer) for c in old]
            span = s.span or merge_spans(c.span for c in seq) or outer
            return s if _same(seq, old) and _same_span(span, s.span) else tirx.SeqStmt(seq, span=span)
        if isinstance(s, tirx.For):
            own, old = s.span, s.body
            body = self.stmt(old, own or outer)
            span = own or body.span or outer
            if body is old and _same_span(span, own):
                return s
            return tirx.For(s.loop_var, s.min, s.extent, s.kind, body, s.thread_binding, s.annotations, s.step, span)
        if isinstance(s, s_tir.SBlockRealize):
            return self.block(s, outer)
        if isinstance(s, tirx.IfThenElse):
            own, old_then, old_else = s.span, s.then_case, s.else_case
            span = own or last_span(outer)
            then = self.stmt(old_then, span)
            other = self.stmt(old_else, span) if old_else is not None else None
            if then is old_then and other is old_else and _same_span(span, own):
                return s
            return tirx.IfThenElse(s.condition, then, other, span=span)
        if isinstance(s, tirx.While):
            own, old = s.span, s.body
            span = own or last_span(outer)
            body = self.stmt(old, span)
            return s if body is old and _same_span(span, own) else tirx.While(s.condition, body, span=span)
        if isinstance(s, tirx.BufferStore) and s.span is None and outer is not None:
            return tirx.BufferStore(s.buffer, s.value, s.indices, span=last_span(outer))
        if isinstance(s, tirx.Evaluate) and s.span is None and outer is not None:
            return tirx.Evaluate(s.value, span=last_span(outer))
        return s  # has its span, or a kind of statement stages II and III do not hold

    def block(self, realize: Any, outer: Any) -> Any:
        b = realize.block
        own = realize.span or b.span
        span = _keep(own, merge_spans([own, *block_lines(self.table, str(b.name_hint))])) or outer
        old_init, old_body = b.init, b.body
        init = self.stmt(old_init, span) if old_init is not None else None
        body = self.stmt(old_body, span)
        if init is old_init and body is old_body and _same_span(span, realize.span) and _same_span(span, b.span):
            return realize
        block = s_tir.SBlock(b.iter_vars, b.reads, b.writes, b.name_hint, body, init, b.alloc_buffers,
                             b.match_buffers, b.annotations, span)
        return s_tir.SBlockRealize(realize.iter_values, realize.predicate, block, span=span)


class _Stage1Filler:
    """Gives stage-I iterations and statements without spans the spans of what encloses them."""

    def stmt(self, s: Any, outer: Any) -> Any:
        if isinstance(s, SparseIteration):
            own = s.span
            old_init = list(s.init) if s.init is not None else None
            old_body = list(s.body)
            init = [self.stmt(x, own or outer) for x in old_init] if old_init is not None else None
            body = [self.stmt(x, own or outer) for x in old_body]
            span = own or merge_spans(x.span for x in [*(init or []), *body]) or outer
            if _same(body, old_body) and (init is None or _same(init, old_init)) and _same_span(span, own):
                return s
            return _replace(s, init=init, body=body, span=span)
        if isinstance(s, tirx.BufferStore) and s.span is None and outer is not None:
            return tirx.BufferStore(s.buffer, s.value, s.indices, span=last_span(outer))
        if isinstance(s, tirx.Evaluate) and s.span is None and outer is not None:
            return tirx.Evaluate(s.value, span=last_span(outer))
        return s


def _keep(own: Any, merged: Any) -> Any:
    """``own`` when ``merged`` names the same places (so that a filled program is not rebuilt)."""
    if own is not None and span_locations(own) == span_locations(merged):
        return own
    return merged


def _same(new: list[Any], old: list[Any]) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


def _same_span(new: Any, old: Any) -> bool:
    return new is old or (new is not None and old is not None and new.same_as(old))


def _replace(obj: Any, **changes: Any) -> Any:
    return tvm_ffi.dataclasses.replace(obj, **changes)
