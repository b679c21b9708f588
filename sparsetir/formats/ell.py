"""ELL: every non-empty row as ELL rows of ``width`` slots, long rows split.

``Ell.from_csr(A, width)`` is ``Hybrid.from_csr(A, 1, (width,))`` with its single bucket laid
out as its own arrays (the same ``buckets.split_rows``): a row with up to ``width`` entries is one
ELL row, a longer one several consecutive ELL rows of ``width`` entries and a padded remainder;
rows with no entries are not stored. ``width`` need not be a power of two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from .base import Format, positive_int
from .buckets import EllPart, bucket_bounds, entry_map, row_partition, split_rows
from .csr import canonical
from .entries import Scatter


@dataclass(frozen=True, eq=False)
class Ell(Format):
    """ELL rows of ``width`` slots: ``rows`` (r,) their original rows, non-decreasing;
    ``indices`` and ``data`` (r, width); ``counts`` (r,) real entries, padding after them."""

    width: int
    rows: np.ndarray
    indices: np.ndarray
    counts: np.ndarray
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
    def from_csr(cls, A: Any, width: int) -> "Ell":
        """``A`` (any CSR input) as ELL rows of ``width`` slots."""
        width = positive_int("Ell.from_csr: width", width)
        csr = canonical(A, "Ell.from_csr: A", copy=False)
        pieces = split_rows(csr, 1, (width,))
        (part,) = pieces.buckets
        data = np.zeros(pieces.slots, csr.data.dtype)
        data[pieces.slot_of_entry] = csr.data
        return cls(width, part.rows, part.indices, part.counts, data.reshape(part.indices.shape), pieces.pad_absent,
                   csr.shape, csr.dtype, *entry_map(csr, pieces))

    @property
    def part(self) -> EllPart:
        """This ELL as the single bucket of a hybrid (offset 0)."""
        return EllPart(0, self.width, self.rows, self.indices, self.counts, 0)

    def row_partition(self, parts: int) -> np.ndarray:
        """``parts + 1`` original-row boundaries of equal work (slots + 1 per row)."""
        return row_partition((self.part,), self.shape[0], parts, "Ell.row_partition")

    def row_bounds(self, parts: Union[int, np.ndarray]) -> np.ndarray:
        """(P + 1,) int32: ELL rows ``[out[t], out[t + 1])`` are those of the t-th range of
        original rows; ``parts`` is P or the row boundaries themselves."""
        return bucket_bounds((self.part,), self.shape[0], parts, "Ell.row_bounds")[0]

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.rows, self.indices, self.counts

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        return np.repeat(self.rows.astype(np.int64), self.width), self.indices.reshape(-1).astype(np.int64)

    def parameters(self) -> str:
        return f"width={self.width} ({self.rows.shape[0]} ELL rows)"
