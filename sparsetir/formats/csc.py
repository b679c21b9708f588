"""Compressed sparse columns: ``indptr`` (n + 1) over columns, ``indices`` the row of each entry.

``Csc.from_csr(A)`` moves every canonical entry to its column with a stable counting sort
(``vectorized.stable_counting_order``), so rows are increasing within each column, as SciPy's
``tocsc`` gives them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .base import Format
from .csr import canonical
from .entries import Scatter
from .vectorized import entry_rows, index_dtype, offsets, stable_counting_order


@dataclass(frozen=True, eq=False)
class Csc(Format):
    """Columns compressed: ``indptr`` (n + 1), ``indices`` (nnz) rows increasing within each
    column, ``data`` (nnz)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]
    dtype: str
    entry_slot: np.ndarray
    slots: int
    injective: bool
    _scatter: Optional[Scatter] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_csr(cls, A: Any) -> "Csc":
        """``A`` (any CSR input) in compressed sparse columns."""
        csr = canonical(A)
        n = csr.shape[1]
        order = stable_counting_order(csr.indices, n)  # canonical entry at each CSC position
        slot_of_entry = np.empty(csr.slots, index_dtype(csr.slots))
        slot_of_entry[order] = np.arange(csr.slots, dtype=slot_of_entry.dtype)
        indptr = offsets(np.bincount(csr.indices, minlength=n)).astype(np.int32)
        return cls(indptr, entry_rows(csr.indptr)[order], csr.data[order], csr.shape, csr.dtype,
                   csr.compose(slot_of_entry), csr.slots, csr.injective)

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.indptr, self.indices

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        return self.indices.astype(np.int64), entry_rows(self.indptr).astype(np.int64)
