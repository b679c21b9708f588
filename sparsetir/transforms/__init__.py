"""Lowering passes, one per file; ``pipeline`` lists them in order and runs them."""

from .auto_decompose_reduction import auto_decompose_reduction
from .bound_cache_extents import bound_cache_extents
from .flatten_sparse_buffers import flatten_sparse_buffers
from .entry import lower_sparse_buffer, lower_sparse_iter
from .pipeline import PASSES, lower, stage_of, steps

__all__ = [
    "PASSES",
    "auto_decompose_reduction",
    "bound_cache_extents",
    "flatten_sparse_buffers",
    "lower",
    "lower_sparse_buffer",
    "lower_sparse_iter",
    "stage_of",
    "steps",
]
