"""Compressed sparse columns: ``indptr`` (n + 1) over columns, ``indices`` the row of each entry.

``Csc.from_csr(A)`` moves every canonical entry to its column with a stable counting sort
(``vectorized.transpose``), so rows are increasing within each column, as SciPy's ``tocsc``
gives them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .base import Format
from .csr import canonical
from .entries import Scatter
from .vectorized import POSITION, entry_rows, transpose


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
        csr = canonical(A, "Csc.from_csr: A", copy=False)
        indptr, rows, order = transpose(csr.indptr, csr.indices, csr.shape)
        slot_of_entry = np.empty(csr.slots, POSITION)
        slot_of_entry[order] = np.arange(csr.slots, dtype=slot_of_entry.dtype)
        entry_slot = csr.compose(slot_of_entry)
        return cls(indptr, rows, csr.data[order], csr.shape, csr.dtype, entry_slot, csr.slots, csr.injective,
                   Scatter.plan(entry_slot, csr.slots, csr.injective, complete=True))

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.indptr, self.indices

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        return self.indices.astype(np.int64), entry_rows(self.indptr).astype(np.int64)
