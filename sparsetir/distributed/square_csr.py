"""The square CSR matrix a partition or shard is made of, as a SciPy CSR matrix, checked."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..runtime.csr_checks import fail, refuse_non_csr

_EXPECTED = "a square scipy.sparse CSR matrix or torch sparse CSR tensor"


def square_csr(what: str, A: Any) -> sp.csr_matrix:
    """``A`` (SciPy CSR or torch sparse CSR, 2-D and square) as a SciPy CSR matrix sharing no
    state with the caller's; ``ArgumentError`` naming ``what`` otherwise."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(A, torch.Tensor) and A.layout == torch.sparse_csr:
        if A.dim() != 2 or A.is_cuda:
            fail(what, f"expected a 2-D CPU torch sparse CSR tensor, got {A.dim()}-D on {A.device}")
        A = sp.csr_matrix(
            (A.values().detach().numpy(), A.col_indices().numpy(), A.crow_indices().numpy()),
            shape=tuple(A.shape),
        )
    elif sp.issparse(A) and A.format == "csr":
        A = sp.csr_matrix(A)
    else:
        refuse_non_csr(what, A, _EXPECTED)
    if A.shape[0] != A.shape[1]:
        fail(what, f"must be square (rows and columns are the same nodes), got shape {A.shape}")
    A.indptr = np.asarray(A.indptr, np.int64)
    A.indices = np.asarray(A.indices, np.int64)
    return A
