"""The hybrid format of the SparseTIR paper: column ranges, each an ELL bucket per width.

``Hybrid.from_csr(A, col_parts, widths)`` splits the columns into ``col_parts`` equal ranges
and, in each range, puts every row with entries there into the ELL bucket of the smallest
width that holds its entries; a row longer than the widest width ``W`` is cut into pieces of
``W`` entries and its remainder piece goes to the smallest bucket that fits it, or with
``remainder="widest"`` to the widest one, next to the row's other pieces (the rule and the
padding are ``buckets.split_rows``'s). ``widths`` are increasing powers of two.

Values live in one flat array (``data``): the buckets' slots one after the other, in
(column range, width) order; ``EllPart.take`` gives a bucket's (rows, width) view. ``row_bounds``
tells a kernel which ELL rows of every bucket belong to each of P equal-work ranges of original
rows, so that no two threads write the same output row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from ..runtime.csr_checks import fail
from .base import Format, int_sequence, positive_int
from .buckets import REMAINDERS, EllPart, bucket_bounds, entry_map, row_partition, split_rows
from .csr import canonical
from .entries import Scatter


@dataclass(frozen=True, eq=False)
class Hybrid(Format):
    """Column ranges x ELL buckets of power-of-two widths (``buckets`` in (range, width) order)."""

    col_parts: int
    widths: tuple[int, ...]
    buckets: tuple[EllPart, ...]
    #: (slots,) the column of every slot; each bucket's ``indices`` is a view of it.
    indices: np.ndarray
    #: (slots,) the values given at conversion, every bucket's slots one after the other.
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
    def from_csr(cls, A: Any, col_parts: int = 1, widths: tuple[int, ...] = (1, 2, 4, 8, 16, 32),
                 remainder: str = "smallest") -> "Hybrid":
        """``A`` (any CSR input) in hybrid format; ``remainder="widest"`` keeps all the pieces of a
        row longer than the widest width in the widest bucket (see ``buckets``)."""
        col_parts = positive_int("Hybrid.from_csr: col_parts", col_parts)
        widths = _power_of_two_widths(widths)
        if remainder not in REMAINDERS:
            fail("Hybrid.from_csr: remainder", f"must be one of {', '.join(map(repr, REMAINDERS))}, got {remainder!r}")
        csr = canonical(A, "Hybrid.from_csr: A", copy=False)
        pieces = split_rows(csr, col_parts, widths, remainder)
        data = np.zeros(pieces.slots, csr.data.dtype)
        data[pieces.slot_of_entry] = csr.data
        return cls(col_parts, widths, pieces.buckets, pieces.indices, data, pieces.pad_absent, csr.shape, csr.dtype,
                   *entry_map(csr, pieces))

    def bucket(self, partition: int, width: int) -> EllPart:
        """The bucket of column range ``partition`` and ``width``."""
        if width not in self.widths or not 0 <= partition < self.col_parts:
            fail("Hybrid.bucket", f"no bucket of width {width!r} in column range {partition!r} (widths {self.widths}, "
                                  f"{self.col_parts} column ranges)")
        return self.buckets[partition * len(self.widths) + self.widths.index(width)]

    def row_partition(self, parts: int) -> np.ndarray:
        """``parts + 1`` original-row boundaries of equal work (slots + 1 per row)."""
        return row_partition(self.buckets, self.shape[0], parts, "Hybrid.row_partition")

    def row_bounds(self, parts: Union[int, np.ndarray]) -> np.ndarray:
        """(buckets, P + 1) int32: ELL rows ``[out[b, t], out[b, t + 1])`` of bucket b are those of
        the t-th range of original rows; ``parts`` is P or the row boundaries themselves."""
        return bucket_bounds(self.buckets, self.shape[0], parts, "Hybrid.row_bounds")

    def structure(self) -> tuple[np.ndarray, ...]:
        return (self.indices,) + tuple(a for b in self.buckets for a in (b.rows, b.counts))

    def flat_data(self) -> np.ndarray:
        return self.data

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        rows = np.concatenate([np.repeat(b.rows, b.width) for b in self.buckets] or [np.zeros(0, np.int32)])
        return rows.astype(np.int64), self.indices.astype(np.int64)

    def parameters(self) -> str:
        used = sum(1 for b in self.buckets if b.rows.size)
        return f"col_parts={self.col_parts} widths={self.widths} ({used}/{len(self.buckets)} buckets used)"


def _power_of_two_widths(widths: Any) -> tuple[int, ...]:
    """``widths`` as a tuple of increasing powers of two, or ``ArgumentError`` naming ``widths``."""
    values = int_sequence("Hybrid.from_csr: widths", widths, "bucket width", lambda w: w >= 1 and not w & (w - 1),
                          "powers of two (1, 2, 4, ...)")
    for a, b in zip(values, values[1:]):
        if b <= a:
            fail("Hybrid.from_csr: widths", f"bucket widths must be strictly increasing, got {b} after {a} in {values}")
    return values
