"""Programs and arguments the tuning tests share (also imported by the child process of the
database round trip, so both processes build the very same arguments)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse

import sparsetir

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def spmm() -> sparsetir.SparseFunction:
    return sparsetir.parse_file(EXAMPLES / "csr_spmm.py")


def sddmm() -> sparsetir.SparseFunction:
    return sparsetir.parse_file(EXAMPLES / "sddmm.py")


def skewed_csr(seed: int, m: int, n: int) -> scipy.sparse.csr_matrix:
    """A matrix with empty rows, short rows and a few long ones (canonical CSR, float32)."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(1.7, m) - 1, n)
    lengths[rng.choice(m, m // 10, replace=False)] = 0
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths] or [[]]).astype(np.int32)
    data = rng.standard_normal(indptr[-1]).astype(np.float32)
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(m, n))


def spmm_args(a: scipy.sparse.csr_matrix, width: int, seed: int = 0) -> dict:
    m, n = a.shape
    x = np.random.default_rng(seed).standard_normal((n, width), dtype=np.float32)
    c = np.zeros((m, width), np.float32)
    return dict(a=a.data, b=x, c=c, indptr=a.indptr, indices=a.indices, m=m, n=n, feat_size=width, nnz=a.nnz)


def sddmm_args(a: scipy.sparse.csr_matrix, width: int, seed: int = 0) -> dict:
    m, n = a.shape
    rng = np.random.default_rng(seed)
    xa = rng.standard_normal((m, width), dtype=np.float32)
    xb = rng.standard_normal((n, width), dtype=np.float32)
    y = np.zeros(a.nnz, np.float32)
    return dict(a=xa, b=xb, x=a.data, y=y, indptr=a.indptr, indices=a.indices, m=m, n=n, feat_size=width, nnz=a.nnz)


def sddmm_reference(a: scipy.sparse.csr_matrix, args: dict) -> np.ndarray:
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    dots = np.einsum("ij,ij->i", args["a"][rows].astype(np.float64), args["b"][a.indices].astype(np.float64))
    return a.data * dots
