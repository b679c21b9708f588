"""The GPU's layout of the hybrid format (``ops/format_scripts.hybrid_slots_spmm_script``).

``formats.Hybrid`` puts every row in an ELL bucket, the rows longer than the widest bucket in
several pieces of it, walked one after the other by the CPU kernel. On a GPU such a walk is
what a kernel waits on (``row_split.py``), so here the widest bucket's rows of several pieces
are taken out as *long rows*, cut again into pieces of ``long_width(widths)`` entries (at least
``LONG_PIECE``, so that narrow buckets do not make a workspace row per few entries), whose
pieces run in parallel into a workspace and are then summed per row. Every bucket's slots hold
the values themselves, gathered per call from the matrix's value array by one index array over
all slots (``gather``), so a slot is read without first reading where its value is; a padding
slot has the column -1, which the kernel tests.

Host arrays only (NumPy); ``ops/cuda`` copies them to the device once per matrix and format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Each bucket's values start at a multiple of this many elements of the gathered array (64
#: bytes of float32), so every view the kernels get is aligned as a fresh allocation is.
ALIGN_ELEMENTS = 16
#: The fewest entries of a long row's piece: the CSR row split's longer piece (``row_split.py``).
#: A piece costs a workspace row of the output's width, written and read once.
LONG_PIECE = 32
#: Index arithmetic in the kernels is int32.
_INT32_MAX = 2**31 - 1


def long_width(widths: tuple[int, ...]) -> int:
    """The entries of a long row's piece for bucket ``widths``: the widest, at least ``LONG_PIECE``."""
    return max(int(widths[-1]), LONG_PIECE)


@dataclass(frozen=True)
class Bucket:
    """One bucket of rows of at most ``width`` entries: the rows, their columns (``-1`` in a
    padding slot), and where their values start in the gathered array."""

    width: int
    rows: np.ndarray  # (count,) int32
    cols: np.ndarray  # (count * width,) int32
    offset: int

    @property
    def count(self) -> int:
        """Rows in the bucket."""
        return int(self.rows.shape[0])


@dataclass(frozen=True)
class HybridLayout:
    """The kernel's layout of a matrix: ``buckets`` (one per width), the long rows
    (``long_rows``, their pieces' pointer ``long_ptr``, the pieces' columns ``long_cols``, where
    their values start, ``long_offset``, and the entries of a piece, ``piece_width``), the empty
    rows, and ``gather``: for each element of the gathered value array, the index of its value
    in the source array (int32; 0 in a padding slot or alignment gap, whose value is never
    used)."""

    buckets: tuple[Bucket, ...]
    long_rows: np.ndarray
    long_ptr: np.ndarray
    long_cols: np.ndarray
    long_offset: int
    piece_width: int
    empty: np.ndarray
    gather: np.ndarray

    @property
    def pieces(self) -> int:
        """Pieces of the long rows."""
        return int(self.long_cols.shape[0]) // self.piece_width

    @property
    def most_pieces(self) -> int:
        """The most pieces of one long row (1 when there are none)."""
        return int(np.diff(self.long_ptr).max()) if self.long_rows.shape[0] else 1


def hybrid_layout(buckets: list, widths: tuple[int, ...], used: np.ndarray, empty: np.ndarray) -> HybridLayout:
    """The layout of ``formatted.bucket_arrays``' ``buckets`` (per width: rows, piece pointer,
    columns, source index per slot, ...) with ``used`` telling, per source index, whether any entry
    lands there (a slot whose source index is -1 or unused is padding)."""
    parts: list[np.ndarray] = []
    size = 0

    def place(src: np.ndarray) -> int:
        nonlocal size
        start = -(-size // ALIGN_ELEMENTS) * ALIGN_ELEMENTS
        if start > size:
            parts.append(np.zeros(start - size, np.int32))
        parts.append(np.maximum(src.reshape(-1), 0).astype(np.int32))
        size = start + src.size
        if size > _INT32_MAX:
            raise ValueError(f"the hybrid layout has {size} slots, more than int32 indices reach")
        return start

    def real(src: np.ndarray) -> np.ndarray:
        src = src.reshape(-1)
        keep = src >= 0
        keep[keep] = used[src[keep]]
        return keep

    out, long = [], None
    for (rows, pieces, cols, src, *_), width in zip(buckets, widths):
        counts = np.diff(pieces)
        src = src.reshape(-1, width)
        cols = cols.reshape(-1, width)
        short = counts == 1
        first = pieces[:-1][short]  # a short row's one piece
        masked = np.where(real(src[first]), cols[first].reshape(-1), -1).astype(np.int32)
        out.append(Bucket(width, rows[short].astype(np.int32), masked, place(src[first])))
        if width == widths[-1]:
            in_long = np.repeat(~short, counts)  # the long rows' pieces
            long = _long_rows(rows[~short], cols[in_long], src[in_long], counts[~short], real, long_width(widths))
        elif not short.all():
            raise ValueError(f"bucket {width}: a row in several pieces outside the widest bucket")
    assert long is not None
    long_rows, long_ptr, long_cols, long_src = long
    long_offset = place(long_src)
    gather = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    return HybridLayout(tuple(out), long_rows, long_ptr, long_cols, long_offset, long_width(widths),
                        empty.astype(np.int32), gather)


def _long_rows(rows: np.ndarray, cols: np.ndarray, src: np.ndarray, pieces: np.ndarray, real: Any,
               width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Long ``rows`` given as the bucket's pieces (``cols`` and ``src``, (pieces, bucket width): a
    row's ``pieces[r]`` pieces one after the other) as pieces of ``width`` entries: (rows, piece
    pointer, columns with -1 padding, source index per slot, -1 padding)."""
    slot_row = np.repeat(np.arange(rows.shape[0]), pieces * cols.shape[1])
    cols, src = cols.reshape(-1), src.reshape(-1)
    keep = real(src)
    slot_row = slot_row[keep]
    cols, src = cols[keep], src[keep]  # each long row's entries, in order
    counts = np.bincount(slot_row, minlength=rows.shape[0])
    ptr = np.concatenate([[0], np.cumsum(-(-counts // width))]).astype(np.int64)
    if ptr[-1] * width > _INT32_MAX:
        raise ValueError("the hybrid layout's long rows need more slots than int32 indices reach")
    first = np.concatenate([[0], np.cumsum(counts)])[:-1]
    slot = ptr[slot_row] * width + (np.arange(cols.shape[0]) - first[slot_row])
    out_cols = np.full(int(ptr[-1]) * width, -1, np.int32)
    out_src = np.full(int(ptr[-1]) * width, -1, np.int64)
    out_cols[slot] = cols
    out_src[slot] = src
    return rows.astype(np.int32), ptr.astype(np.int32), out_cols, out_src


__all__ = ["ALIGN_ELEMENTS", "Bucket", "HybridLayout", "LONG_PIECE", "hybrid_layout", "long_width"]
