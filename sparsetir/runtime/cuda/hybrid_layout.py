"""The GPU's layout of the hybrid format (``ops/format_scripts.hybrid_slots_spmm_script``).

``formats.Hybrid`` puts every row in an ELL bucket, the rows longer than the widest bucket in
several pieces of it, walked one after the other by the CPU kernel. On a GPU such a walk is
what a kernel waits on (``row_split.py``), so here the widest bucket's rows of several pieces
are taken out as *long rows*, whose pieces run in parallel into a workspace and are then summed
per row. Every bucket's slots hold the values themselves, gathered per call from the matrix's
value array by one index array over all slots (``gather``), so a slot is read without first
reading where its value is; a padding slot has the column -1, which the kernel tests.

Host arrays only (NumPy); ``ops/cuda`` copies them to the device once per matrix and format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Each bucket's values start at a multiple of this many elements of the gathered array (64
#: bytes of float32), so every view the kernels get is aligned as a fresh allocation is.
ALIGN_ELEMENTS = 16


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
    (``long_rows``, their pieces' pointer ``long_ptr``, the pieces' columns ``long_cols`` and
    where their values start, ``long_offset``), the empty rows, and ``gather``: for each element
    of the gathered value array, the index of its value in the source array (0 in a padding slot
    or alignment gap, whose value is never used)."""

    buckets: tuple[Bucket, ...]
    long_rows: np.ndarray
    long_ptr: np.ndarray
    long_cols: np.ndarray
    long_offset: int
    widest: int
    empty: np.ndarray
    gather: np.ndarray

    @property
    def pieces(self) -> int:
        """Pieces of the long rows."""
        return int(self.long_cols.shape[0]) // self.widest

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
            parts.append(np.zeros(start - size, np.int64))
        parts.append(np.maximum(src.reshape(-1), 0).astype(np.int64))
        size = start + src.size
        return start

    def masked(cols: np.ndarray, src: np.ndarray) -> np.ndarray:
        src = src.reshape(-1)
        real = src >= 0
        real[real] = used[src[real]]
        return np.where(real, cols.reshape(-1), -1).astype(np.int32)

    out, long = [], None
    widest = widths[-1]
    for (rows, pieces, cols, src, *_), width in zip(buckets, widths):
        counts = np.diff(pieces)
        src = src.reshape(-1, width)
        cols = cols.reshape(-1, width)
        short = counts == 1
        first = pieces[:-1][short]  # a short row's one piece
        out.append(Bucket(width, rows[short].astype(np.int32), masked(cols[first], src[first]), place(src[first])))
        if width == widest:
            pick = np.flatnonzero(np.repeat(~short, counts))  # the long rows' pieces, in order
            long = (rows[~short].astype(np.int32), np.concatenate([[0], np.cumsum(counts[~short])]).astype(np.int32),
                    masked(cols[pick], src[pick]), place(src[pick]))
        elif not short.all():
            raise ValueError(f"bucket {width}: a row in several pieces outside the widest bucket")
    gather = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    assert long is not None
    return HybridLayout(tuple(out), long[0], long[1], long[2], long[3], widest, empty.astype(np.int32), gather)


__all__ = ["ALIGN_ELEMENTS", "Bucket", "HybridLayout", "hybrid_layout"]
