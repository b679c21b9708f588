"""Loads of read-only arrays hoisted out of the loops they do not depend on (a stage-III rewrite).

A lowered sparse loop reads its structure arrays inside the innermost loop::

    for j in range(indptr[vi + 1] - indptr[vi]):
        b[indptr[vi] + j] = a[indptr[vi] + j] * 2.0 + 1.0

TVM 0.27 gives every buffer access the same alias class, and a parallel loop's body reads its
arrays from a closure, so LLVM cannot tell that the store to ``b`` leaves ``indptr`` alone: it
loads ``indptr[vi]`` again for every element, which also keeps the loop from vectorizing. The
arrays a kernel never writes are known here, so::

    if indptr[vi + 1] - indptr[vi] > 0:
        row = indptr[vi]
        for j in range(indptr[vi + 1] - indptr[vi]):
            b[row + j] = a[row + j] * 2.0 + 1.0

A load moves only when it is of an array parameter that nothing in the function writes (no
store, no block writing it, no view or address of it; parameters do not alias, ``tir.noalias``),
its indices use no variable bound inside the loop, and one iteration of the loop's body
evaluates it whatever the data (not under an ``if``, a lazy ``if_then_else``/``select`` branch,
the right side of ``and``/``or``, a block's ``init`` or predicate, a ``while`` or a nested
loop's body). The hoisted load then runs once where the loop would have run it at least once:
the guard ``extent > 0`` keeps an empty loop from reading it. Nested loops are rewritten
innermost first, so a load invariant in several levels climbs them one at a time. Only what the
statements compute changes: loop bounds, block bindings, predicates and access regions keep
their loads (``_in_statements`` says why).

With it the CSR elementwise example's row loop vectorizes (it did not); what the CPU rewrites
gained together is measured in ``runtime/cpu_form.py``.
"""

from __future__ import annotations

from typing import Any

from .._tvm import BufferType, TensorLoad, Var, s_tir, structural_equal, structural_map, structural_walk, tirx, tvm, tvm_ffi
from ..ir.analysis import bound_within, uses_any

_SKIP = tvm_ffi.WalkResult.SKIP


def hoist_invariant_loads(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` with the loop-invariant loads of its read-only array parameters hoisted."""
    attrs = func.attrs if func.attrs is not None else {}
    if not bool(attrs.get("tir.noalias", False)):
        return func
    readonly = _read_only_params(func)
    if not readonly:
        return func
    count = [0]

    def on_for(loop: Any) -> Any:
        return _hoist(loop, readonly, count)

    return func.with_body(structural_map(func.body, [(tirx.For, on_for)], order="post"))


def _hoist(loop: Any, readonly: list, count: list) -> Any:
    if loop.thread_binding is not None:
        return loop
    candidates = [(load, span) for load, span in _unconditional_loads(loop.body)
                  if any(load.source.same_as(p) for p in readonly) and "x" not in str(load.ty.dtype)]
    if not candidates:
        return loop
    inside = [loop.loop_var, *bound_within(loop.body)]  # everything the loop binds
    found: list[tuple[Any, Any]] = []  # (load, the span of the statement that reads it)
    for load, span in candidates:
        if not uses_any(list(load.indices), inside) and not any(structural_equal(load, f) for f, _ in found):
            found.append((load, span))
    if not found:
        return loop
    # a load inside another's indices first: the outer one then uses its variable
    found.sort(key=lambda entry: _size(entry[0]))
    bound: list[tuple[Any, Var]] = []
    binds = []
    for load, span in found:
        value = _replace(load, bound)
        count[0] += 1
        var = Var(f"{load.source.name}_{count[0]}", str(load.ty.dtype))
        bound.append((value, var))
        binds.append(tirx.Bind(var, value, span=span))  # the statement's line, which the explorer links
    body = _in_statements(loop.body, bound)
    moved = tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding, loop.annotations,
                     loop.step, loop.span)
    stmt = tirx.SeqStmt([*binds, moved], span=loop.span)
    extent = loop.extent
    if isinstance(extent, tirx.IntImm) and int(extent.value) > 0:
        return stmt
    return tirx.IfThenElse(extent > tirx.const(0, str(extent.ty.dtype)), stmt, None, span=loop.span)


def _replace(node: Any, bound: list[tuple[Any, Var]]) -> Any:
    """``node`` with every load equal to a hoisted one (its own loads replaced first) read from
    the hoisted variable."""
    if not bound:
        return node

    def on_load(load: Any) -> Any:
        for value, var in bound:
            if load.source.same_as(value.source) and structural_equal(load, value):
                return var
        return load

    return structural_map(node, [(TensorLoad, on_load)], order="post")


def _in_statements(stmt: Any, bound: list[tuple[Any, Var]]) -> Any:
    """``stmt`` with the hoisted loads replaced in what its statements compute (stored values
    and indices, conditions, bound values), but not in loop bounds, block bindings, predicates
    or access regions: TVM's buffer compaction reasons about those, and a variable bound inside
    an allocation's scope would cost it the constant offset that lets LLVM keep a register tile
    in registers (measured: SDDMM's lane accumulators stayed in memory, 1.5x slower)."""

    def expr(e: Any) -> Any:
        return _replace(e, bound)

    def visit(s: Any) -> Any:
        if isinstance(s, tirx.SeqStmt):
            return tirx.SeqStmt([visit(c) for c in s.seq], span=s.span)
        if isinstance(s, tirx.For):
            return tirx.For(s.loop_var, s.min, s.extent, s.kind, visit(s.body), s.thread_binding, s.annotations,
                            s.step, s.span)
        if isinstance(s, s_tir.SBlockRealize):
            b = s.block
            block = s_tir.SBlock(b.iter_vars, b.reads, b.writes, b.name_hint, visit(b.body),
                                 visit(b.init) if b.init is not None else None, b.alloc_buffers, b.match_buffers,
                                 b.annotations, b.span)
            return s_tir.SBlockRealize(s.iter_values, s.predicate, block, span=s.span)
        if isinstance(s, tirx.BufferStore):
            return tirx.BufferStore(s.buffer, expr(s.value), [expr(i) for i in s.indices], span=s.span)
        if isinstance(s, tirx.IfThenElse):
            return tirx.IfThenElse(expr(s.condition), visit(s.then_case),
                                   visit(s.else_case) if s.else_case is not None else None, span=s.span)
        if isinstance(s, tirx.Bind):
            return tirx.Bind(s.var, expr(s.value), span=s.span)
        if isinstance(s, tirx.Evaluate):
            return tirx.Evaluate(expr(s.value), span=s.span)
        if isinstance(s, tirx.While):
            return tirx.While(expr(s.condition), visit(s.body), span=s.span)
        return s  # anything else keeps its loads: correct, only not hoisted

    return visit(stmt)


def _size(node: Any) -> int:
    n = [0]

    def count(_: Any) -> None:
        n[0] += 1

    structural_walk(node, count)
    return n[0]


def _read_only_params(func: "tirx.PrimFunc") -> list:
    """The array parameters that nothing in ``func`` writes, views, or takes the address of."""
    params = [p for p in func.params if isinstance(p.ty, BufferType)]
    written: list = []

    def note(buf: Any) -> None:
        written.append(buf)

    def on_node(node: Any) -> Any:
        if isinstance(node, tirx.BufferStore):
            note(node.buffer)
        elif isinstance(node, s_tir.SBlock):
            for region in node.writes:
                note(region.source)
            for match in node.match_buffers:
                note(match.source.source)
        elif isinstance(node, tirx.DeclBuffer):
            structural_walk(node, lambda n: note(n) if isinstance(n, Var) else None)
        elif isinstance(node, tvm.ir.Call) and node.op.name in ("tirx.address_of", "tirx.tvm_access_ptr"):
            structural_walk(node, lambda n: note(n) if isinstance(n, Var) else None)
        return None

    structural_walk(func.body, on_node)
    return [p for p in params if not any(p.same_as(w) for w in written)]


def _unconditional_loads(stmt: Any) -> list[tuple[Any, Any]]:
    """The loads that one execution of ``stmt`` evaluates whatever the data, each with the span
    of the statement that reads it."""
    loads: list[tuple[Any, Any]] = []
    at: list = [None]

    def expr(e: Any) -> None:
        if e is not None:
            structural_walk(e, on_expr, order="pre")

    def on_expr(node: Any) -> Any:
        if isinstance(node, TensorLoad):
            loads.append((node, at[0]))
        elif isinstance(node, tvm.ir.Call) and node.op.name == "prim.if_then_else":
            expr(node.args[0])
            return _SKIP
        elif isinstance(node, (tirx.And, tirx.Or)):
            expr(node.a)
            return _SKIP
        elif isinstance(node, tirx.Select):
            expr(node.condition)
            return _SKIP
        elif isinstance(node, tirx.Let):
            return _SKIP
        return None

    def visit(s: Any) -> None:
        at[0] = s.span
        if isinstance(s, tirx.SeqStmt):
            for child in s.seq:
                visit(child)
        elif isinstance(s, tirx.BufferStore):
            expr(s.value)
            for index in s.indices:
                expr(index)
        elif isinstance(s, tirx.Evaluate):
            expr(s.value)
        elif isinstance(s, tirx.Bind):
            expr(s.value)
        elif isinstance(s, tirx.IfThenElse):
            expr(s.condition)
        elif isinstance(s, s_tir.SBlockRealize):
            if isinstance(s.predicate, tirx.IntImm) and int(s.predicate.value) == 1:
                visit(s.block.body)
        # loop bounds and block bindings stay as they are (``_in_statements``); While,
        # AttrStmt, AssertStmt, allocations: nothing taken from them

    visit(stmt)
    return loads
