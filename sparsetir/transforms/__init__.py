"""Lowering passes, one per file; ``pipeline`` lists them in order and runs them."""

from .auto_decompose_reduction import auto_decompose_reduction
from .bound_cache_extents import bound_cache_extents
from .flatten_sparse_buffers import flatten_sparse_buffers
from .entry import lower_sparse_buffer, lower_sparse_iter
from .extract_preprocess import extract_preprocess
from .format_decompose import FormatRewriteRule, format_decompose
from .pipeline import PASSES, lower, stage_of, steps

__all__ = [
    "FormatRewriteRule",
    "PASSES",
    "auto_decompose_reduction",
    "bound_cache_extents",
    "extract_preprocess",
    "flatten_sparse_buffers",
    "format_decompose",
    "lower",
    "lower_sparse_buffer",
    "lower_sparse_iter",
    "stage_of",
    "steps",
]
