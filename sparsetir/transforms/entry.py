"""The public lowering calls, ``sparsetir.lower_sparse_iter`` and ``sparsetir.lower_sparse_buffer``.

Each runs its part of the pipeline (``pipeline.py`` holds the passes and their order), so a
failure inside a pass is a ``LoweringError`` naming it, as in ``build``.
"""

from __future__ import annotations

from typing import Any

from .._tvm import tirx
from ..errors import LoweringError
from ..ir.stage2 import Stage2Function
from .pipeline import STAGE_II, lower, stage_of


def lower_sparse_iter(func: Any) -> Stage2Function:
    """Stage II (loops and blocks over position-space buffers) of a stage-I function; given a
    ``tvm.IRModule``, the module with each stage-I function lowered (``LowerSparseIter``)."""
    if hasattr(func, "functions"):
        from .module_passes import LowerSparseIter

        return LowerSparseIter()(func)
    if stage_of(func) != 1:
        raise LoweringError(f"lower_sparse_iter expects a stage-I function, got a stage-{stage_of(func)} one")
    return lower(func, until=STAGE_II)


def lower_sparse_buffer(func: Any) -> tirx.PrimFunc:
    """A plain TVM ``s_tir`` PrimFunc over the caller's arrays, from a stage-II function; given a
    ``tvm.IRModule``, the module with each stage-II function lowered (``LowerSparseBuffer``)."""
    if hasattr(func, "functions"):
        from .module_passes import LowerSparseBuffer

        return LowerSparseBuffer()(func)
    if stage_of(func) != 2:
        raise LoweringError(f"lower_sparse_buffer expects a stage-II function, got a stage-{stage_of(func)} one")
    return lower(func)
