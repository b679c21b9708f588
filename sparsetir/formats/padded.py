"""Padded CSR: every row's entries in chunks of ``pad`` slots, the last chunk of a row padded.

``PaddedCsr.from_csr(A, pad)`` stores, for each row, ``ceil(length / pad)`` chunks: ``indptr``
(m + 1) counts chunks, chunk k's columns are ``indices[k * pad:(k + 1) * pad]``. The chunks are
``Ell.from_csr(A, pad)``'s ELL rows (the same ``buckets.split_rows``), indexed by row instead of
listing each chunk's row. Padding slots follow ELL's rule (a column the row does not store,
``pad_absent``). Instead of a count per chunk, ``lengths`` (m,) gives each row's real entries
(the canonical CSR's row lengths): only a row's last chunk is partial, holding
``lengths[i] - (chunks - 1) * pad`` entries; a kernel that runs whole chunks needs no count at all,
since padding contributes 0 at a valid column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .base import Format, positive_int
from .buckets import entry_map, split_rows
from .csr import canonical
from .entries import Scatter
from .vectorized import entry_rows, offsets


@dataclass(frozen=True, eq=False)
class PaddedCsr(Format):
    """CSR over chunks of ``pad`` slots: ``indptr`` (m + 1) in chunks, ``indices`` and ``data``
    (chunks * pad,), ``lengths`` (m,) real entries per row."""

    pad: int
    indptr: np.ndarray
    indices: np.ndarray
    lengths: np.ndarray
    data: np.ndarray
    #: True when every padding slot's column is one its row does not store (see ``buckets``).
    pad_absent: bool
    shape: tuple[int, int]
    dtype: str
    entry_slot: np.ndarray
    slots: int
    injective: bool
    _scatter: Optional[Scatter] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_csr(cls, A: Any, pad: int) -> "PaddedCsr":
        """``A`` (any CSR input) with each row padded to a multiple of ``pad`` slots."""
        pad = positive_int("PaddedCsr.from_csr: pad", pad)
        csr = canonical(A, "PaddedCsr.from_csr: A", copy=False)
        pieces = split_rows(csr, 1, (pad,))
        (part,) = pieces.buckets
        m = csr.shape[0]
        indptr = offsets(np.bincount(part.rows, minlength=m)).astype(np.int32)
        data = np.zeros(pieces.slots, csr.data.dtype)
        data[pieces.slot_of_entry] = csr.data
        return cls(pad, indptr, pieces.indices, np.diff(csr.indptr).astype(np.int32), data, pieces.pad_absent,
                   csr.shape, csr.dtype, *entry_map(csr, pieces))

    @property
    def chunks(self) -> int:
        """Number of chunks (all rows)."""
        return int(self.indptr[-1])

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.indptr, self.indices, self.lengths

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        return np.repeat(entry_rows(self.indptr).astype(np.int64), self.pad), self.indices.astype(np.int64)

    def parameters(self) -> str:
        return f"pad={self.pad} ({self.chunks} chunks)"
