"""Validating CSR-like structure arrays at the call boundary, naming the argument and the problem.

Shared by ``sparsetir.ops`` (its operands) and ``sparsetir.formats`` (conversion inputs), which
must not depend on each other: every message reads ``"<argument>: <problem>"`` and is raised as
``sparsetir.ArgumentError``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..errors import ArgumentError
from .structure import in_range, indptr_problem

_INT32_MAX = np.iinfo(np.int32).max


def fail(what: str, message: str) -> None:
    """Raise ``ArgumentError`` about the argument ``what``."""
    raise ArgumentError(f"{what}: {message}")


def refuse_non_csr(what: str, A: Any, expected: str) -> None:
    """Refuse ``A``, which is not one of the CSR inputs listed in ``expected``: the message says
    what ``A`` is and, when there is one, the call that makes a CSR matrix of it."""
    if A is None:
        fail(what, f"is None; expected {expected}")
    fail(what, f"expected {expected}, got {_what_it_is_and_how_to_convert(A)}")


def _what_it_is_and_how_to_convert(A: Any) -> str:
    if isinstance(A, np.ndarray):
        return f"a dense numpy array of shape {A.shape}; make it sparse with scipy.sparse.csr_matrix(a)"
    torch = sys.modules.get("torch")  # A can only be a tensor if torch is imported
    if torch is not None and isinstance(A, torch.Tensor):
        if A.layout == torch.strided:
            return "a dense torch tensor (layout torch.strided); convert it with .to_sparse_csr()"
        if A.layout == torch.sparse_coo:
            return "a torch sparse COO tensor (layout torch.sparse_coo); convert it with .to_sparse_csr()"
        if A.layout == torch.sparse_csc:
            return "a torch sparse CSC tensor (layout torch.sparse_csc); convert it with .to_sparse_csr()"
        # torch converts block layouts to CSR only through COO.
        return f"a torch tensor of layout {A.layout}; convert it with .to_sparse_coo().to_sparse_csr()"
    scipy_sparse = sys.modules.get("scipy.sparse")
    if scipy_sparse is not None and scipy_sparse.issparse(A):
        return f"a scipy.sparse '{A.format}' matrix; convert it with .tocsr()"
    return type(A).__name__


def check_torch_csr(what: str, A: Any, where: str) -> None:
    """Check that the torch tensor ``A`` is a 2-D sparse CSR tensor on the CPU; ``where`` names
    the part of sparsetir that refuses other devices ("sparsetir.ops runs on the CPU")."""
    import torch  # A is a torch tensor: torch is imported already

    if A.layout != torch.sparse_csr:
        refuse_non_csr(what, A, "a torch sparse CSR tensor (layout torch.sparse_csr)")
    if A.device.type != "cpu":
        fail(what, f"is on {A.device}; {where}")
    if A.dim() != 2:
        fail(what, f"expected a 2-D sparse CSR tensor, got {A.dim()} dimensions")


def check_offsets(what: str, name: str, indptr: np.ndarray, rows: int, nnz: int) -> None:
    """Validate a CSR-like ``indptr`` (called ``name``) of ``rows`` rows over ``nnz`` entries with
    the kernels' own validator (``runtime.structure.indptr_problem``), naming the first problem."""
    if indptr.ndim != 1:
        fail(what, f"{name}: must be 1-D, got shape {indptr.shape}")
    problem = indptr_problem(name, indptr, rows, nnz, f"{rows} rows", f"the number of stored values {nnz}")
    if problem is not None:
        fail(what, f"{name}: {problem}")


def check_structure(what: str, indptr: np.ndarray, indices: np.ndarray, rows: int, cols: int, nnz: int,
                    check_range: bool = True) -> None:
    """Validate CSR-like structure arrays, naming the first problem (the column indices' range
    too unless ``check_range`` is false)."""
    if rows < 0 or cols < 0:
        fail(what, f"shape ({rows}, {cols}) has a negative dimension")
    check_offsets(what, "indptr", indptr, rows, nnz)
    if indices.ndim != 1 or indices.shape[0] != nnz:
        fail(what, f"indices must have shape ({nnz},) (one per stored value), got {indices.shape}")
    if nnz and check_range and not in_range(indices, cols):  # one pass; two name the problem
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= cols:
            bad = low if low < 0 else high
            fail(what, f"column index {bad} is out of range for {cols} columns")


def as_int32(what: str, name: str, array: np.ndarray) -> np.ndarray:
    """``array`` as a contiguous int32 array (a copy when it is another integer type)."""
    if array.dtype.kind not in "iu":
        fail(what, f"{name} must be an integer array, got dtype {array.dtype}")
    if array.dtype != np.int32:
        if array.size:
            low = int(array.min())
            if low < 0:
                fail(what, f"{name} has a negative value ({low}); indices and offsets are non-negative")
            if int(array.max()) > _INT32_MAX:
                fail(what, f"{name} has values that do not fit in int32")
        array = array.astype(np.int32)
    if not array.flags.writeable:
        # TVM refuses read-only arrays (DLPack cannot mark them): copy once here rather than on
        # every call. The kernels never write index arrays.
        return np.array(array, order="C")
    return np.ascontiguousarray(array)
