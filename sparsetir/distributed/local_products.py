"""The local matrices of a shard that ``spmm`` multiplies with, split so that everything not
needing the halo can be computed while the halo is in flight."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import ops


@dataclass(frozen=True, eq=False)
class LocalProducts:
    """``own``: the shard's rows times its owned columns; ``halo``: its boundary rows (those
    reading a halo row, ``boundary`` in local ids) times the halo columns; and their transposes
    for the backward pass. Cast to each requested dtype once."""

    own: sp.csr_matrix
    halo: sp.csr_matrix
    boundary: np.ndarray
    _by_dtype: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, matrix: sp.csr_matrix) -> "LocalProducts":
        """Split a shard's local matrix (owned columns first, then halo)."""
        n_own = matrix.shape[0]
        own = matrix[:, :n_own].tocsr()
        halo_all = matrix[:, n_own:].tocsr()
        boundary = np.flatnonzero(np.diff(halo_all.indptr)).astype(np.int64)
        return cls(own, halo_all[boundary].tocsr(), boundary)

    def matrices(self, dtype: np.dtype) -> tuple:
        """``(own, halo, ownᵀ, haloᵀ)`` as canonical CSR matrices of ``dtype``."""
        key = np.dtype(dtype)
        if key not in self._by_dtype:
            made = []
            for m in (self.own, self.halo, self.own.T, self.halo.T):
                m = sp.csr_matrix(m, dtype=key, copy=True)
                m.sum_duplicates()
                m.sort_indices()
                made.append(m)
            self._by_dtype[key] = tuple(made)
        return self._by_dtype[key]


def product(A: sp.csr_matrix, X: Any) -> Any:
    """``A @ X`` for a torch ``X`` with the compiled CSR kernel (zeros where there is nothing to
    multiply)."""
    import torch

    if A.nnz == 0 or A.shape[0] == 0 or X.shape[1] == 0:
        return torch.zeros((A.shape[0], X.shape[1]), dtype=X.dtype, device=X.device)
    return ops.spmm(A, X.contiguous())
