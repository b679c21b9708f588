"""Lowering passes, one per file; ``pipeline`` lists them in order and runs them."""

from .assemble import symbolic_function
from .auto_decompose_reduction import auto_decompose_reduction
from .bound_cache_extents import bound_cache_extents
from .flatten_sparse_buffers import flatten_sparse_buffers
from .entry import lower_sparse_buffer, lower_sparse_iter
from .extract_preprocess import extract_preprocess
from .format_decompose import FormatRewriteRule, format_decompose
from .atomic_updates import lower_atomic_updates
from .horizontal_fusion import horizontal_fusion
from .partition import partition_rows
from .pipeline import PASSES, lower, stage_of, steps
from .module_passes import FormatDecompose, LowerSparseBuffer, LowerSparseIter, stage_pass

__all__ = [
    "FormatDecompose",
    "FormatRewriteRule",
    "LowerSparseBuffer",
    "LowerSparseIter",
    "PASSES",
    "auto_decompose_reduction",
    "bound_cache_extents",
    "extract_preprocess",
    "flatten_sparse_buffers",
    "format_decompose",
    "horizontal_fusion",
    "lower_atomic_updates",
    "lower",
    "lower_sparse_buffer",
    "lower_sparse_iter",
    "partition_rows",
    "stage_of",
    "stage_pass",
    "steps",
    "symbolic_function",
]
