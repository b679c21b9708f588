"""Doubly compressed sparse rows: CSR over the non-empty rows only.

``Dcsr.from_csr(A)`` keeps the canonical CSR's entries (same order, same entry map) and
replaces the row dimension by ``row_indices``, the rows that hold entries, so a matrix with many
empty rows costs nothing for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .base import Format
from .csr import canonical
from .entries import Scatter
from .vectorized import entry_rows


@dataclass(frozen=True, eq=False)
class Dcsr(Format):
    """``row_indices`` (r,) the non-empty rows, increasing; ``indptr`` (r + 1) over them;
    ``indices`` and ``data`` (nnz) as in canonical CSR."""

    row_indices: np.ndarray
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
    def from_csr(cls, A: Any) -> "Dcsr":
        """``A`` (any CSR input) with its empty rows dropped."""
        csr = canonical(A, "Dcsr.from_csr: A")
        row_indices = np.flatnonzero(np.diff(csr.indptr)).astype(np.int32)
        indptr = np.append(csr.indptr[row_indices], csr.indptr[-1]).astype(np.int32)
        return cls(row_indices, indptr, csr.indices, csr.data, csr.shape, csr.dtype, csr.entry_slot, csr.slots,
                   csr.injective, _scatter=csr._scatter)

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.row_indices, self.indptr, self.indices

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        return self.row_indices[entry_rows(self.indptr)].astype(np.int64), self.indices.astype(np.int64)

    def parameters(self) -> str:
        return f"({self.row_indices.shape[0]} non-empty rows)"
