"""The lowering pipeline in one place: stage I → II → III, pass by pass.

``lower_sparse_buffer`` itself runs ``auto_decompose_reduction`` and ``bound_cache_extents``
first (the stage-II function may have been scheduled in between), so each entry below is a
complete, independently usable pass.
"""

from __future__ import annotations

from typing import Any, Callable

from ..ir.function import SparseFunction
from ..ir.stage2 import Stage2Function
from .auto_decompose_reduction import auto_decompose_reduction
from .bound_cache_extents import bound_cache_extents
from .lower_sparse_buffer import lower_sparse_buffer
from .lower_sparse_iter import lower_sparse_iter

#: stage I → stage II
STAGE_I_TO_II: list[Callable[[Any], Any]] = [lower_sparse_iter]
#: stage II → stage III (the last pass also re-runs the first two; they are no-ops then)
STAGE_II_TO_III: list[Callable[[Any], Any]] = [auto_decompose_reduction, bound_cache_extents, lower_sparse_buffer]


def lower(func: Any) -> Any:
    """Lower a stage-I or stage-II function to a stage-III ``tvm.tirx.PrimFunc``."""
    if isinstance(func, SparseFunction):
        for p in STAGE_I_TO_II:
            func = p(func)
    if isinstance(func, Stage2Function):
        for p in STAGE_II_TO_III:
            func = p(func)
    return func
