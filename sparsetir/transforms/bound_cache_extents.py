"""Bound data-dependent allocation extents (stage2.md §3, condition 3).

A cache of a sparse buffer placed per row gets a shape like ``(1, J_indptr[vi + 1] - J_indptr[vi])``;
TVM 0.27 cannot lower allocations whose extents load from buffers. Replace every such extent by
the matching position-space extent of the sparse buffer the cache copies (taken from the read
or write region of the block that fills or drains the cache), i.e. the axis's maximum length.
"""

from __future__ import annotations

from typing import Any

from .._tvm import Var, s_tir, structural_map, structural_walk, tirx
from ..errors import LoweringError
from ..ir.analysis import reads_data
from ..ir.stage2 import Stage2Function


def _blocks(stmt: Any) -> list:
    out: list = []

    def visit(node: Any) -> bool:
        if isinstance(node, s_tir.SBlock):
            out.append(node)
        return True

    structural_walk(stmt, visit)
    return out


def bound_cache_extents(f2: Stage2Function) -> Stage2Function:
    """Give every allocation whose shape loads from a buffer the sparse buffer's bound instead."""
    blocks = _blocks(f2.prim.body)
    sparse = [m.buffer for m in f2.buffers]
    replace: list[tuple[Var, Var]] = []
    for block in blocks:
        for buf in block.alloc_buffers:
            shape = list(buf.ty.shape)
            if not any(reads_data(d) for d in shape):
                continue
            source = _source_of(buf, blocks, sparse)
            if source is None or len(source.ty.shape) != len(shape):
                raise LoweringError(f"allocation '{buf.name}' has a data-dependent shape that cannot be bounded")
            bound = [s if reads_data(d) else d for d, s in zip(shape, source.ty.shape)]
            new = tirx.decl_buffer(bound, str(buf.ty.dtype), name=buf.name, scope=buf.ty.storage_scope, layout=None)
            replace.append((buf, new))
    if not replace:
        return f2

    def on_var(v: Var) -> Any:
        for old, new in replace:
            if v.same_as(old):
                return new
        return v

    body = structural_map(f2.prim.body, [(Var, on_var)])
    return Stage2Function(f2.prim.with_body(body), f2.axes, f2.buffers, f2.param_names)


def _source_of(buf: Var, blocks: list, sparse: list) -> Any:
    for block in blocks:
        regions = list(block.reads) + list(block.writes)
        if not any(r.source.same_as(buf) for r in regions):
            continue
        for r in regions:
            if any(r.source.same_as(s) for s in sparse):
                return r.source
    return None
