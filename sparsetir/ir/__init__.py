"""Stage-I IR: sparse axes, sparse buffers, sparse iterations and functions."""

from .axis import AttachedAxis, Axis, FusedAxis, MergedAxis
from .buffer import SparseBuffer
from .equality import assert_structural_equal, structural_equal, structural_hash
from .function import SparseFunction
from .iteration import SparseIteration
from .verifier import verify

__all__ = [
    "AttachedAxis",
    "Axis",
    "FusedAxis",
    "MergedAxis",
    "SparseBuffer",
    "SparseFunction",
    "SparseIteration",
    "assert_structural_equal",
    "structural_equal",
    "structural_hash",
    "verify",
]
