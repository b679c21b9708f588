"""The CUDA kernels of ``sparsetir.ops``: the same stage-I scripts as the CPU kernels
(``ops/scripts.py``), scheduled by the GPU recipes (``schedule/gpu_recipes.py``).

Each maker returns the schedule of the program (stage II, or stage III for SDDMM, whose loop over the
nonzeros is scheduled on flattened indices) for a ``KernelKey`` with
``target="cuda"``. The CPU kernels' nnz-balanced row partition (``partition_rows``) is not
used: a GPU balances rows over warps by running many of them at once (SpMM cuts the longest
rows into pieces, ``runtime/cuda/row_split.py``), and SDDMM is balanced over the nonzeros by
construction. The CPU's main-plus-tail split of awkward widths is not
needed either: a lane layout covers any width (``feature_layout``).

Arguments of the kernels, in order (what ``ops/cuda/__init__.py`` passes):

- spmm, spmv: ``values, X, C, indptr, indices, m, n, nnz``
- split_spmm: ``values, X, C, W, pieces, piece_ptr, indices, m, n, nnz, npieces, most``
- sddmm: ``values, X, Y, out, rows, indices, m, n, nnz`` (``rows``: each nonzero's row)
- segment_sum: ``values, out, offsets, segments, max_len, nnz``
- bsr_spmm: ``blocks, X, C, indptr, indices, mb, nb, nnzb``
- ell_spmm: ``values, X, C, indices, m, n, width``
- softmax: ``values, out, indptr, indices, m, n, nnz``
- hybrid_spmm: ``X, C, empty, nempty``; per bucket ``rows, one, cols, mask, values, nrows``
  (``mask`` is ``cols`` as a (rows, width) view); then ``long_rows, long_ptr, one_long,
  cols_long, mask_long, values_long, workspace, long_start, nlong, maxp, npieces, m, n``
  (``format_scripts.hybrid_slots_spmm_script``; ``DeviceBuckets.arguments`` makes them)
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ...driver import build
from ...runtime.cache import KernelCache
from ...runtime.kernel import Kernel
from ...runtime.target import cuda_target
from ...schedule import gpu_recipes as recipes
from ...schedule.schedule import Schedule
from ...transforms import pipeline
from .. import format_scripts, scripts

#: The architecture the kernels' CUDA source is generated for; the launcher compiles that
#: source for the GPU it runs on.
ARCH = "sm_90"


def _at_stage2(script: Any) -> Schedule:
    return Schedule(pipeline.lower(script, until=pipeline.STAGE_II), round_trip=False)


def make_spmm(key: Any) -> Any:
    """CSR SpMM: a warp per row, features across the lanes; one column (SpMV): the row's
    nonzeros across the lanes and a warp reduction."""
    sch = _at_stage2(scripts.spmm_script(key.feat, key.dtype))
    if key.feat == 1:
        recipes.schedule_spmv(sch, "spmm0", "spmm1")
    else:
        recipes.schedule_spmm(sch, "spmm0", "spmm1", key.feat, key.dtype)
    return sch


def make_split_spmm(key: Any) -> Any:
    """CSR SpMM with rows cut into pieces (``runtime/cuda/row_split.py``): the pieces' loop over
    the rows and their pieces fused at stage I (a piece per group of lanes, like a row of
    ``make_spmm``), then each row's pieces summed by a second kernel of the same shape."""
    sch = Schedule(scripts.split_spmm_script(key.feat, key.dtype), round_trip=False)
    sch.sparse_fuse("pieces", ["I", "P"])
    sch.lower_sparse_iter()
    recipes.schedule_spmm(sch, "pieces0", "pieces1", key.feat, key.dtype)
    recipes.schedule_spmm(sch, "rows0", "rows1", key.feat, key.dtype)
    return sch


def make_sddmm(key: Any) -> Any:
    """SDDMM over the nonzeros in COO order (each one's row read, not searched for): each
    nonzero's dot product by a group of lanes."""
    sch = Schedule(scripts.coo_sddmm_script(key.feat, key.dtype), round_trip=False)
    sch.lower_sparse_iter()
    sch.lower_sparse_buffer()
    recipes.schedule_sddmm(sch, "sddmm0", "sddmm_scale0", key.feat)
    return sch


def make_segment_sum(key: Any) -> Any:
    """Segment sum: SpMM's warp per segment."""
    sch = _at_stage2(scripts.segment_sum_script(key.feat, key.dtype))
    recipes.schedule_spmm(sch, "segment_sum0", "segment_sum1", key.feat, key.dtype)
    return sch


def make_bsr_spmm(key: Any) -> Any:
    """BSR SpMM: a warp per row of the matrix (block row and row inside the block fused)."""
    br, bc = key.block
    sch = _at_stage2(scripts.bsr_spmm_script(br, bc, key.feat, key.dtype))
    recipes.schedule_spmm(sch, "bsr_spmm0", "bsr_spmm1", key.feat, key.dtype)
    return sch


def make_ell_spmm(key: Any) -> Any:
    """ELL SpMM: a warp per row, features across the lanes."""
    sch = _at_stage2(scripts.ell_spmm_script(key.feat, key.dtype))
    recipes.schedule_ell_spmm(sch, "ell_spmm0", key.feat, key.dtype)
    return sch


def make_hybrid_spmm(key: Any) -> Any:
    """SpMM on the hybrid format's ELL buckets of widths ``key.widths``, the values in the slot
    layout (``format_scripts.hybrid_slots_spmm_script``): a kernel zeroing the empty rows, a
    kernel per bucket, one over the long rows' pieces and one summing them per row."""
    if not key.widths:
        raise ValueError("hybrid_spmm needs at least one bucket width")
    sch = _at_stage2(format_scripts.hybrid_slots_spmm_script(key.widths, key.feat, key.dtype))
    recipes.schedule_hybrid_spmm(sch, key.widths, key.feat, key.dtype)
    return sch


def make_softmax(key: Any) -> Any:
    """Sparse softmax: a thread per row, its maximum and sum in registers."""
    sch = _at_stage2(scripts.softmax_script(key.dtype))
    recipes.schedule_rows_per_thread(sch, "softmax0", ("ROW_MAX", "ROW_SUM"))
    return sch


#: Each op's maker: the ``Schedule`` its CUDA kernel is scheduled with (``.func`` the program).
MAKERS: dict[str, Callable[[Any], Schedule]] = {
    "spmm": make_spmm,
    "split_spmm": make_split_spmm,
    "sddmm": make_sddmm,
    "segment_sum": make_segment_sum,
    "bsr_spmm": make_bsr_spmm,
    "ell_spmm": make_ell_spmm,
    "hybrid_spmm": make_hybrid_spmm,
    "softmax": make_softmax,
}


def build_cuda_kernel(key: Any, cache: Optional[KernelCache] = None) -> Kernel:
    """Schedule and compile the CUDA kernel of ``key`` (a ``KernelKey`` with ``target="cuda"``)."""
    return build(schedule_of(key).func, target=cuda_target(ARCH), cache=cache)


def schedule_of(key: Any) -> Schedule:
    """The ``sparsetir.Schedule`` of the CUDA kernel of ``key``, its ``history`` the recipe's
    steps (scheduled again, not compiled), for ``sparsetir.explore``."""
    if key.op not in MAKERS:
        raise ValueError(f"no CUDA ops kernel '{key.op}'; the operations are {', '.join(sorted(MAKERS))}")
    return MAKERS[key.op](key)


__all__ = ["ARCH", "MAKERS", "build_cuda_kernel", "schedule_of"]
