"""Fusing the row loops of consecutive iterations that share one row partition (a stage-II rewrite).

``partition_rows`` splits the row loop of each listed block at the same boundaries, but keeps
one loop nest per block, so SDDMM's dot product and its scaling by ``A`` run as two parallel
regions::

    for t in T.parallel(P):                         for t in T.parallel(P):
        for i in range(part[t + 1] - part[t]):          for i in range(part[t + 1] - part[t]):
            with T.sblock("sddmm0"): ...        →           with T.sblock("sddmm0"): ...
    for t in T.parallel(P):                                 with T.sblock("sddmm_scale0"): ...
        for i in range(part[t + 1] - part[t]):
            with T.sblock("sddmm_scale0"): ...

Each parallel region is a fork and a join of the thread pool; while another process holds a
core, every join can wait for a whole time slice (SDDMM on bcsstk16 measured 4-6x slower as two
regions on a loaded 2-core machine, equal on an idle one). Fused, a row is scaled right after
its dot products, while its outputs are in L1.

The rewrite is correct only when the second block, for row ``i``, reads nothing but row ``i``
of what the first writes, which the caller states by naming the blocks; it runs before
scheduling, and TVM's primitives then see each block in its own scope, as before.
"""

from __future__ import annotations

from typing import Any

from .._tvm import TensorLoad, Var, s_tir, structural_equal, structural_map, structural_walk, tirx
from ..errors import LoweringError
from ..ir.stage2 import Stage2Function


def fuse_row_loops(f2: Stage2Function, first: str, second: str) -> Stage2Function:
    """``f2`` with the loop nest above block ``second`` merged into the one above ``first``:
    loops of equal kind and extent, outermost first, become one loop running both bodies."""
    fused = []

    def on_seq(seq: "tirx.SeqStmt") -> Any:
        stmts = list(seq.seq)
        for k in range(len(stmts) - 1):
            if _leads_to(stmts[k], first) and _leads_to(stmts[k + 1], second):
                merged = _merge(stmts[k], stmts[k + 1])
                fused.append(merged)
                rest = stmts[:k] + [merged] + stmts[k + 2 :]
                return rest[0] if len(rest) == 1 else tirx.SeqStmt(rest)
        return seq

    body = structural_map(f2.prim.body, [(tirx.SeqStmt, on_seq)])
    if len(fused) != 1:
        raise LoweringError(f"fuse_row_loops: blocks '{first}' and '{second}' are not consecutive loop nests in '{f2.name}'")
    return Stage2Function(f2.prim.with_body(body), list(f2.axes), list(f2.buffers), list(f2.param_names))


def _leads_to(stmt: Any, block: str) -> bool:
    """Whether ``stmt`` is a nest of loops whose innermost body realizes ``block``."""
    while isinstance(stmt, tirx.For):
        stmt = stmt.body
    return isinstance(stmt, s_tir.SBlockRealize) and str(stmt.block.name_hint) == block


def _merge(a: Any, b: Any) -> Any:
    """One loop nest running ``a``'s body, then ``b``'s, for as many outer loops as match."""
    if not (isinstance(a, tirx.For) and isinstance(b, tirx.For) and _same_header(a, b)):
        return tirx.SeqStmt([a, b])
    renamed = _rename(b.body, b.loop_var, a.loop_var)
    return tirx.For(a.loop_var, a.min, a.extent, a.kind, _merge(a.body, renamed), a.thread_binding, a.annotations)


def _same_header(a: "tirx.For", b: "tirx.For") -> bool:
    return (
        a.kind == b.kind
        and not a.annotations
        and not b.annotations
        and structural_equal(a.min, b.min)
        and structural_equal(a.extent, b.extent)
    )


def _rename(stmt: Any, old: Var, new: Var) -> Any:
    return structural_map(stmt, [(Var, lambda var: new if var.same_as(old) else var)])


def fold_row_epilogue(f2: Stage2Function, epilogue: str, out: str) -> Stage2Function:
    """``f2`` with the pointwise row block ``epilogue`` folded into the store that writes its
    input, and removed.

    ``epilogue`` (fused into a row loop by ``fuse_row_loops``) holds one loop over the row's
    positions and one block storing ``out[vi, vj] = f(out[vi, vj], ...)`` at its own iteration
    variables. The single store of ``out`` left under the same row loop by the schedule (SDDMM's
    copy of its lane sum, ``out[vi + v0, v1] = acc[v0, v1]``) then stores ``f(acc[v0, v1], ...)``
    with ``f``'s indices taken from that store. Both visit the row's positions once, so each
    value is scaled once, in a register, with no second pass over the row.
    """
    folded = []

    def on_seq(seq: "tirx.SeqStmt") -> Any:
        stmts = list(seq.seq)
        for k, stmt in enumerate(stmts):
            if k and isinstance(stmt, s_tir.SBlockRealize) and str(stmt.block.name_hint) == epilogue:
                store, own = _epilogue_store(stmt, out)
                producer = _fold_into(stmts[k - 1], out, store, own)
                folded.append(epilogue)
                rest = stmts[: k - 1] + [producer] + stmts[k + 1 :]
                return rest[0] if len(rest) == 1 else tirx.SeqStmt(rest)
        return seq

    body = structural_map(f2.prim.body, [(tirx.SeqStmt, on_seq)])
    if len(folded) != 1:
        raise LoweringError(f"fold_row_epilogue: block '{epilogue}' does not follow a producer of '{out}' in '{f2.name}'")
    return Stage2Function(f2.prim.with_body(body), list(f2.axes), list(f2.buffers), list(f2.param_names))


def _epilogue_store(realize: "s_tir.SBlockRealize", out: str) -> tuple["tirx.BufferStore", list[Var]]:
    """The store of the epilogue's inner block and the variables its indices must be."""
    outer = realize.block
    loop = outer.body
    if not (isinstance(loop, tirx.For) and isinstance(loop.body, s_tir.SBlockRealize)):
        raise LoweringError(f"fold_row_epilogue: '{outer.name_hint}' is not one loop over a block")
    inner = loop.body.block
    store = inner.body
    own = [iv.var for iv in outer.iter_vars] + [iv.var for iv in inner.iter_vars]
    if not (isinstance(store, tirx.BufferStore) and str(store.buffer.name) == out and len(store.indices) == len(own)
            and all(isinstance(i, Var) and i.same_as(v) for i, v in zip(store.indices, own))):
        raise LoweringError(f"fold_row_epilogue: '{inner.name_hint}' does not store {out} at its own position")
    return store, own


def _fold_into(producer: Any, out: str, epilogue: "tirx.BufferStore", own: list[Var]) -> Any:
    """``producer`` with its one block storing ``out`` computing ``epilogue``'s value instead."""
    folded = []

    def on_load(value: Any) -> Any:
        def replace(load: Any) -> Any:
            return value if str(load.source.name) == out else load

        return replace

    def on_block(block: "s_tir.SBlock") -> Any:
        store = block.body
        if not (isinstance(store, tirx.BufferStore) and str(store.buffer.name) == out) or block.init is not None:
            return block
        at = list(zip(own, store.indices))

        def on_var(var: Var) -> Any:
            return next((index for v, index in at if var.same_as(v)), var)

        value = structural_map(epilogue.value, [(Var, on_var)])
        value = structural_map(value, [(TensorLoad, on_load(store.value))])
        body = tirx.BufferStore(store.buffer, value, store.indices)
        # The regions the block already reads stay first: later passes take a cache's bound
        # from the first sparse buffer next to it (``bound_cache_extents``).
        loaded = []
        structural_walk(epilogue.value, [(TensorLoad, lambda load: loaded.append(load.source))])
        new = [b for b in loaded if str(b.name) != out and not any(r.source.same_as(b) for r in block.reads)]
        added, _ = s_tir.analysis.get_sblock_read_write_region(
            s_tir.SBlock(block.iter_vars, [], [], block.name_hint, body), {b: b for b in new})
        reads = list(block.reads) + [r for r in added if any(r.source.same_as(b) for b in new)]
        folded.append(block.name_hint)
        return s_tir.SBlock(block.iter_vars, reads, block.writes, block.name_hint, body, block.init,
                            block.alloc_buffers, block.match_buffers, block.annotations, block.span)

    result = structural_map(producer, [(s_tir.SBlock, on_block)])
    if len(folded) != 1:
        raise LoweringError(f"fold_row_epilogue: expected one block storing {out} to fold into, found {len(folded)}")
    return result
