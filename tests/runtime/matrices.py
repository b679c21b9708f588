"""Test matrices (cora, random with empty/skewed rows) and argument sets for ``csrmm``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

CORA = Path("/work/shared/data/cora.npz")


def load_cora() -> sp.csr_matrix:
    """The cora citation graph as float32 CSR (callers skip when the file is absent)."""
    return sp.load_npz(CORA).tocsr().astype(np.float32)


def random_csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    """A random float32 CSR matrix with some empty rows and one long row."""
    rng = np.random.default_rng(seed)
    a = sp.random(m, n, density=density, format="lil", dtype=np.float32, random_state=rng)
    for row in rng.choice(m, size=max(1, m // 10), replace=False):
        a[row, :] = 0
    a[rng.integers(m), :] = rng.random(n).astype(np.float32) + 0.5
    return a.tocsr()


def csrmm_arguments(a: sp.csr_matrix, feat: int, seed: int = 0) -> dict:
    """Keyword arguments for ``csrmm`` computing ``a @ b``; the output is prefilled with NaN."""
    m, n = a.shape
    b = np.random.default_rng(seed).random((n, feat), dtype=np.float32)
    return {
        "a": a.data.astype(np.float32),
        "b": b,
        "c": np.full((m, feat), np.nan, dtype=np.float32),
        "indptr": a.indptr.astype(np.int32),
        "indices": a.indices.astype(np.int32),
        "m": m,
        "n": n,
        "feat_size": feat,
        "nnz": int(a.nnz),
    }


def expected_product(args: dict) -> np.ndarray:
    """The reference ``a @ b`` computed by scipy in float64."""
    a = sp.csr_matrix((args["a"], args["indices"], args["indptr"]), shape=(args["m"], args["n"]))
    return (a.astype(np.float64) @ args["b"].astype(np.float64)).astype(np.float32)
