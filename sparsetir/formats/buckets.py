"""Splitting rows into padded ELL pieces: the one bucketing routine behind ``Hybrid``, ``Ell``
and ``PaddedCsr``.

The columns are split into ``col_parts`` equal ranges of ``ceil(n / col_parts)`` columns (the
last shorter). Within a range, a row's entries (contiguous, since canonical rows are sorted)
form a *segment*. A segment of L entries becomes ``L // W`` pieces of ``W = widths[-1]`` entries
and, when ``L % W`` entries remain, one remainder piece; every piece goes to the bucket of the
smallest width that holds it, in its column range. With ``remainder="widest"`` the remainder
piece of a segment longer than ``W`` goes to the widest bucket instead, so that all the pieces
of a long row lie next to each other in one bucket. A bucket is an ELL array: one row of
``width`` slots per piece, the piece's entries first, then padding.

Padding slots hold value 0 and a column the original row does not store, so that reading the
matrix at a padding coordinate gives 0: the smallest such column inside the piece's column range
(with one range, the smallest column the row does not store). When the row stores every column
of the range there is none; the piece's last real column is used and ``pad_absent`` is False.

Slots are numbered bucket after bucket in (column range, width) order, pieces in order within a
bucket (rows non-decreasing, the pieces of one row in column order), ``width`` slots per piece.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

from ..runtime.csr_checks import fail
from .base import positive_int
from .csr import Csr
from .entries import Scatter
from .vectorized import POSITION, divmod_pow2, entry_rows, offsets, stable_counting_order


@dataclass(frozen=True, eq=False)
class EllPart:
    """One ELL bucket: the pieces of ``width`` slots of column range ``partition``."""

    #: Index of the column range (0 when columns are not split).
    partition: int
    #: Slots per ELL row.
    width: int
    #: (r,) the original row of each ELL row, non-decreasing.
    rows: np.ndarray
    #: (r, width) the column of each slot; padding slots after ``counts[i]`` (see the module).
    indices: np.ndarray
    #: (r,) the real entries of each ELL row.
    counts: np.ndarray
    #: The bucket's first slot in the owner's flat value array.
    offset: int

    @property
    def slots(self) -> int:
        """Number of slots (ELL rows times width)."""
        return self.rows.shape[0] * self.width

    def take(self, flat: np.ndarray) -> np.ndarray:
        """This bucket's (r, width) view of the owner's flat value array ``flat``."""
        return flat[self.offset:self.offset + self.slots].reshape(self.rows.shape[0], self.width)

    def row_bounds(self, boundaries: np.ndarray) -> np.ndarray:
        """Where each of the row-id ``boundaries`` starts in ``rows``: ELL rows
        ``[out[t], out[t + 1])`` are those of original rows ``[boundaries[t], boundaries[t + 1])``."""
        return np.searchsorted(self.rows, boundaries, side="left").astype(np.int32)


@dataclass(frozen=True, eq=False)
class Pieces:
    """The result of ``split_rows``: buckets, where each canonical entry went, padding flag."""

    buckets: tuple[EllPart, ...]
    #: (nnz,) the slot of each entry of the canonical CSR.
    slot_of_entry: np.ndarray
    #: The column of every slot (the buckets' ``indices`` are views of it).
    indices: np.ndarray
    slots: int
    pad_absent: bool


#: Where the remainder piece of a segment longer than the widest width goes (see the module).
REMAINDERS = ("smallest", "widest")


def split_rows(csr: Csr, col_parts: int, widths: tuple[int, ...], remainder: str = "smallest") -> Pieces:
    """The ELL pieces of canonical ``csr`` (see the module), ``widths`` increasing."""
    m, n = csr.shape
    nnz = csr.slots
    cols = csr.indices
    nw = len(widths)
    span = -(-n // col_parts) if n else 0  # columns per range
    seg_start, seg_len, seg_row, seg_part = _segments(csr.indptr, cols, col_parts, span)
    seg_first = seg_part.astype(np.int64) * span  # first column of the segment's range
    absent = _absent_columns(cols, seg_start, seg_len, seg_first)
    seg_full = absent >= np.minimum(seg_first + span, n)

    widest = widths[-1]
    full_pieces, left_over = np.divmod(seg_len, widest)
    piece_count = full_pieces + (left_over > 0)
    piece_seg = np.repeat(np.arange(seg_start.shape[0]), piece_count)
    k = np.arange(piece_seg.shape[0]) - np.repeat(offsets(piece_count)[:-1], piece_count)
    piece_start = seg_start[piece_seg] + k * widest
    piece_len = np.minimum(widest, seg_len[piece_seg] - k * widest)
    width_of = np.asarray(widths, np.int64)
    piece_width_index = np.searchsorted(width_of, piece_len, side="left")
    if remainder == "widest":
        piece_width_index[seg_len[piece_seg] > widest] = nw - 1
    bucket = seg_part[piece_seg].astype(np.int64) * nw + piece_width_index

    # Pieces are made in (row, range, column) order, which tiles the canonical entries; a
    # stable counting sort by bucket lays them out (rows stay non-decreasing in each bucket).
    bucket_count = col_parts * nw
    order = stable_counting_order(bucket, bucket_count)
    piece_width = width_of[piece_width_index]
    sorted_width = piece_width[order]
    slot_base = np.zeros(order.shape[0], np.int64)
    if order.size:
        np.cumsum(sorted_width[:-1], out=slot_base[1:])
    base = np.empty_like(slot_base)
    base[order] = slot_base
    slots = int(slot_base[-1] + sorted_width[-1]) if order.size else 0
    slot_of_entry = np.repeat(base - piece_start, piece_len)
    slot_of_entry += np.arange(nnz, dtype=POSITION)

    full = seg_full[piece_seg]
    pad = np.where(full, cols[piece_start + piece_len - 1], absent[piece_seg]).astype(np.int32)
    pad_absent = not bool(np.any(full & (piece_len < piece_width)))
    indices = np.repeat(pad[order], sorted_width)
    indices[slot_of_entry] = cols

    first_piece = offsets(np.bincount(bucket, minlength=bucket_count))
    piece_rows = seg_row[piece_seg][order]
    piece_counts = piece_len[order].astype(np.int32)
    buckets = []
    offset = 0
    for b in range(bucket_count):  # a handful of buckets, each a slice
        lo, hi = int(first_piece[b]), int(first_piece[b + 1])
        width = widths[b % nw]
        size = (hi - lo) * width
        buckets.append(EllPart(b // nw, width, piece_rows[lo:hi], indices[offset:offset + size].reshape(hi - lo, width),
                               piece_counts[lo:hi], offset))
        offset += size
    return Pieces(tuple(buckets), slot_of_entry, indices, slots, pad_absent)


def _segments(indptr: np.ndarray, cols: np.ndarray, col_parts: int,
              span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, length, row, column range) of every segment: the entries of one row in one range."""
    lengths = np.diff(indptr)
    if col_parts == 1:  # a segment is a non-empty row
        row = np.flatnonzero(lengths).astype(np.int32)
        return indptr[row].astype(np.int64), lengths[row].astype(np.int64), row, np.zeros(row.shape[0], np.int32)
    nnz = cols.shape[0]
    if not nnz:  # (also when there are no columns, so span may be 0)
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros(0, np.int32), np.zeros(0, np.int32)
    part = divmod_pow2(cols, span)[0]
    flags = np.empty(nnz, bool)
    np.not_equal(part[1:], part[:-1], out=flags[1:])
    flags[indptr[:-1][lengths > 0]] = True  # each row starts a segment (position 0 included)
    start = np.flatnonzero(flags)
    return start, np.diff(np.append(start, nnz)), entry_rows(indptr)[start], part[start]


def _absent_columns(cols: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, seg_first: np.ndarray) -> np.ndarray:
    """The smallest column from ``seg_first`` on that each segment does not store. A segment's
    columns strictly increase, so its entries storing first, first + 1, ... are a prefix; only
    segments storing ``first`` itself (usually few) are looked at entry by entry."""
    absent = seg_first.copy()
    look = np.flatnonzero(cols[seg_start] == seg_first) if seg_start.size else seg_start
    if look.size:
        lengths = seg_len[look]
        within = np.arange(int(lengths.sum())) - np.repeat(offsets(lengths)[:-1], lengths)
        entry = np.repeat(seg_start[look], lengths) + within
        stored = cols[entry] == np.repeat(seg_first[look], lengths) + within
        prefix = np.zeros(stored.shape[0] + 1, np.int64)
        prefix[1:] = np.cumsum(stored, dtype=np.int32)  # (bool -> int64 directly is NumPy's slow path)
        ends = offsets(lengths)
        # The matches form a prefix of each segment: their count is the first absent offset.
        absent[look] += prefix[ends[1:]] - prefix[ends[:-1]]
    return absent


def entry_map(csr: Csr, pieces: Pieces) -> tuple:
    """(entry_slot, slots, injective, _scatter=...) of a format holding ``pieces`` of ``csr``:
    the trailing constructor arguments every bucketed format takes."""
    entry_slot = csr.compose(pieces.slot_of_entry)
    return entry_slot, pieces.slots, csr.injective, Scatter.plan(entry_slot, pieces.slots, csr.injective, complete=True)


def row_partition(buckets: tuple[EllPart, ...], rows: int, parts: int, where: str = "row_partition") -> np.ndarray:
    """``parts + 1`` original-row boundaries splitting the rows into ranges of equal work, a
    row's work being its slots in every bucket plus one (its output row is written even when
    it is empty): boundary t is the first row whose work before it reaches ``total * t / parts``."""
    parts = positive_int(f"{where}: parts", parts)
    work = np.ones(rows, np.int64)
    for b in buckets:
        if b.rows.size:
            work += np.bincount(b.rows, minlength=rows) * b.width
    prefix = offsets(work)
    total = int(prefix[-1])
    goals = -(-total * np.arange(parts + 1, dtype=np.int64) // parts)
    return np.searchsorted(prefix, goals, side="left").astype(np.int32)


def bucket_bounds(buckets: tuple[EllPart, ...], rows: int, parts: Union[int, np.ndarray],
                  where: str = "row_bounds") -> np.ndarray:
    """(buckets, P + 1): where each of P row ranges starts in each bucket's ``rows``; ``parts``
    is P (ranges of equal work, ``row_partition``) or the P + 1 row-id boundaries themselves."""
    if isinstance(parts, np.ndarray):
        boundaries = parts
        if boundaries.ndim != 1 or boundaries.size < 2 or np.any(boundaries[1:] < boundaries[:-1]) \
                or boundaries[0] != 0 or boundaries[-1] != rows:
            fail(f"{where}: parts", f"row boundaries must be a non-decreasing 1-D array from 0 to {rows}")
    else:
        boundaries = row_partition(buckets, rows, parts, where)
    return np.stack([b.row_bounds(boundaries) for b in buckets]) if buckets else np.zeros((0, boundaries.size), np.int32)
