"""Lowering passes, one per file; ``pipeline`` lists them in order."""

from .auto_decompose_reduction import auto_decompose_reduction
from .bound_cache_extents import bound_cache_extents
from .lower_sparse_buffer import lower_sparse_buffer
from .lower_sparse_iter import lower_sparse_iter
from .pipeline import lower

__all__ = [
    "auto_decompose_reduction",
    "bound_cache_extents",
    "lower",
    "lower_sparse_buffer",
    "lower_sparse_iter",
]
