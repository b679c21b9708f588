"""LowerSparseBuffer: stage II → stage III, the pipeline's passes after LowerSparseIter.

A convenience for callers holding a (possibly scheduled) stage-II function; the passes and
their order are in ``pipeline.py``.
"""

from __future__ import annotations

from typing import Any

from .._tvm import tirx
from ..errors import LoweringError
from .pipeline import lower, stage_of


def lower_sparse_buffer(func: Any) -> tirx.PrimFunc:
    """A plain TVM ``s_tir`` PrimFunc over the caller's arrays, from a stage-II function."""
    if stage_of(func) != 2:
        raise LoweringError(f"lower_sparse_buffer expects a stage-II function, got a stage-{stage_of(func)} one")
    return lower(func)
