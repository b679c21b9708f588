"""Block read/write regions as TVM's analysis computes them, data-dependent ranges widened."""

from __future__ import annotations

from typing import Any

from ..._tvm import TensorLoad, Var, s_tir, tirx, tvm
from ...ir.analysis import contains
from .context import as_dtype, domain, dtype_of

Range = tvm.ir.Range


def block_regions(block: Any, buffers: list[Var]) -> Any:
    """``block`` with the read/write regions TVM's analysis computes (as the parser would)."""
    own = list(block.alloc_buffers)
    visible = [b for b in buffers if not any(b.same_as(o) for o in own)]
    reads, writes = s_tir.analysis.get_sblock_read_write_region(block, {b: b for b in visible})
    reads = [bound_region(r) for r in reads if not any(r.source.same_as(o) for o in own)]
    writes = [bound_region(w) for w in writes if not any(w.source.same_as(o) for o in own)]
    return s_tir.SBlock(
        block.iter_vars, reads, writes, block.name_hint, block.body, block.init,
        block.alloc_buffers, block.match_buffers, block.annotations, block.span,
    )


def bound_region(region: Any) -> Any:
    """Widen data-dependent ranges (``0:J_indptr[vi + 1] - J_indptr[vi]``) to the buffer's bound.

    TVM's dependence analysis cannot bound a range whose extent loads from a buffer (it fails
    with ``relaxed.HasUpperBound()`` once two blocks share the buffer), so stage II states the
    upper bound, as the RFC's stage II does (``A[vi, 0:mb, vbi, vbj]``). Points stay points.
    """
    ranges = []
    changed = False
    for r, dim in zip(region.region, region.source.ty.shape):
        one = isinstance(r.extent, tirx.IntImm) and int(r.extent.value) == 1
        if contains(r.extent, _is_load) or (not one and contains(r.min, _is_load)):
            ranges.append(domain(dim))
            changed = True
        elif dtype_of(r.min) != dtype_of(r.extent):
            # TVM's analysis may start a range at an int32 0 before an int64 extent; the
            # stage-II reader (like TVM's) wants both ends in one dtype.
            dtype = dtype_of(r.extent)
            lo = tirx.const(int(r.min.value), dtype) if isinstance(r.min, tirx.IntImm) else as_dtype(r.min, dtype)
            ranges.append(Range.from_min_extent(lo, r.extent))
            changed = True
        else:
            ranges.append(r)
    return tirx.BufferRegion(region.source, ranges) if changed else region


def _is_load(node: Any) -> bool:
    return isinstance(node, TensorLoad)
