"""The local matrices of a shard that ``spmm`` and ``sddmm`` compute on, split so that
everything not needing the halo can be computed while the halo is in flight."""

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
    for the backward pass. Cast to each requested dtype once.

    ``own_entries`` marks, in the order of the shard's local CSR matrix, the entries in an owned
    column: ``own``'s entries are those, in that order, and ``halo``'s the others (every entry is
    kept, duplicates too), so a result with one value per entry (``sddmm``) is
    ``values[own_entries] = own's values``, ``values[~own_entries] = halo's values``."""

    own: sp.csr_matrix
    halo: sp.csr_matrix
    boundary: np.ndarray
    own_entries: np.ndarray
    _by_dtype: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, matrix: sp.csr_matrix) -> "LocalProducts":
        """Split a shard's local matrix (owned columns first, then halo)."""
        n_own, n_halo = matrix.shape[0], matrix.shape[1] - matrix.shape[0]
        row_ids = np.repeat(np.arange(n_own, dtype=np.int64), np.diff(matrix.indptr))
        own_entries = matrix.indices < n_own
        own_counts = np.bincount(row_ids[own_entries], minlength=n_own)
        halo_counts = np.bincount(row_ids[~own_entries], minlength=n_own)
        boundary = np.flatnonzero(halo_counts).astype(np.int64)
        own = sp.csr_matrix((matrix.data[own_entries], matrix.indices[own_entries], _indptr(own_counts)),
                            shape=(n_own, n_own))
        halo = sp.csr_matrix((matrix.data[~own_entries], matrix.indices[~own_entries] - n_own,
                              _indptr(halo_counts[boundary])), shape=(boundary.shape[0], n_halo))
        return cls(own, halo, boundary, own_entries)

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

    def entry_matrices(self, dtype: np.dtype) -> tuple:
        """``(own, halo)`` of ``dtype`` with every entry kept in local CSR order (see
        ``own_entries``): the structures ``sddmm`` computes one value per entry on."""
        key = ("entries", np.dtype(dtype))
        if key not in self._by_dtype:
            self._by_dtype[key] = tuple(sp.csr_matrix(m, dtype=key[1], copy=True) for m in (self.own, self.halo))
        return self._by_dtype[key]


def _indptr(counts: np.ndarray) -> np.ndarray:
    indptr = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def product(A: sp.csr_matrix, X: Any) -> Any:
    """``A @ X`` for a torch ``X`` with the compiled CSR kernel (zeros where there is nothing to
    multiply)."""
    import torch

    if A.nnz == 0 or A.shape[0] == 0 or X.shape[1] == 0:
        return torch.zeros((A.shape[0], X.shape[1]), dtype=X.dtype, device=X.device)
    return ops.spmm(A, X.contiguous())
