"""Software prefetch of the dense rows a sparse kernel gathers (a stage-III rewrite).

SDDMM reads one row of the dense operand ``Y`` per nonzero, at a column index known only at
run time. When ``Y`` is far larger than L2 and the columns are scattered, each of those reads
waits on L3 or DRAM, and the out-of-order window covers only a few nonzeros. The indices
are in memory ahead of time, though, so the row that nonzero ``p + distance`` will need can be
requested while nonzero ``p`` is computed::

    for j in range(indptr[vi + 1] - indptr[vi]):          # a row's nonzeros
        prefetch(&y[indices[min(indptr[vi] + j + distance, nnz - 1)], 0])     # one per line
        prefetch(&y[indices[...], 16]) ...
        <body>

A prefetch never faults, and the index read is clamped into the array. It costs a few
instructions per nonzero, which is a loss when ``Y`` stays in L2 (measured in
``bench/notes/cpu_schedules.md``), so ``sparsetir.ops`` uses it only for large operands.
No TVM schedule primitive inserts prefetches, and the stage-I language has none, hence this
rewrite of the stage-III function (plain TIR, after LowerSparseBuffer).
"""

from __future__ import annotations

from typing import Any

from .._tvm import TensorLoad, structural_map, structural_walk, tirx

CACHE_LINE_BYTES = 64


def prefetch_gathered_rows(f3: "tirx.PrimFunc", dense: str, indptr: str, indices: str, nnz: str,
                           distance: int = 8, max_lines: int = 0) -> "tirx.PrimFunc":
    """``f3`` with every row-of-nonzeros loop that reads ``dense`` prefetching
    ``dense[indices[p + distance], :]`` (a loop over the row that does not gather, such as
    SDDMM's scaling by ``A``, is left alone).

    ``dense`` names the gathered 2-D array parameter, ``indptr``/``indices`` the CSR structure
    parameters and ``nnz`` the scalar with the number of stored entries. A row-of-nonzeros loop
    is one whose extent is ``indptr[r + 1] - indptr[r]``. ``max_lines`` > 0 prefetches only
    the first lines of each row (the hardware's stream prefetcher can take the rest).
    """
    params = {str(p.name): p for p in f3.params}
    rows, ptr, idx, count = params[dense], params[indptr], params[indices], params[nnz]
    width = int(rows.ty.shape[1])
    per_line = max(CACHE_LINE_BYTES // _itemsize(str(rows.ty.dtype)), 1)

    def row_start(extent: Any) -> Any:
        """``indptr[r]`` when ``extent`` is ``indptr[r + 1] - indptr[r]``, else None."""
        if not isinstance(extent, tirx.Sub):
            return None
        a, b = extent.a, extent.b
        if isinstance(a, TensorLoad) and isinstance(b, TensorLoad) and a.source.same_as(ptr) and b.source.same_as(ptr):
            return b
        return None

    def gathers(body: Any) -> bool:
        found = []

        def on_load(node: Any) -> bool:
            if isinstance(node, TensorLoad) and node.source.same_as(rows):
                found.append(node)
            return not found

        structural_walk(body, on_load)
        return bool(found)

    def on_for(loop: "tirx.For") -> "tirx.For":
        start = row_start(loop.extent)
        if start is None or not gathers(loop.body):
            return loop
        ahead = tirx.min(start + loop.loop_var + distance, count - 1)
        column = tirx.BufferLoad(idx, [ahead])
        fetches = []
        offsets = list(range(0, width, per_line))
        for offset in offsets[:max_lines] if max_lines > 0 else offsets:
            address = tirx.call_intrin("handle", "tirx.address_of", tirx.BufferLoad(rows, [column, offset]))
            fetches.append(tirx.Evaluate(tirx.call_llvm_intrin(
                "void", "llvm.prefetch", address, tirx.const(0, "int32"), tirx.const(3, "int32"), tirx.const(1, "int32"))))
        body = tirx.SeqStmt(fetches + [loop.body])
        return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding, loop.annotations)

    return structural_map(f3, [(tirx.For, on_for)])


def _itemsize(dtype: str) -> int:
    return max(int("".join(ch for ch in dtype if ch.isdigit()) or 32) // 8, 1)
