"""Row splitting for GPU SpMM: when to cut a CSR matrix's rows into pieces, and the pieces.

A GPU SpMM that gives each row to a group of lanes (``schedule/gpu_recipes.py``) takes as long
as its longest row: the lanes walk the row's nonzeros one after the other, each step waiting on
a gather of B. Measured on an H200 (``bench/notes/gpu.md``), one step costs about
``STEP_US`` microseconds, so a graph whose longest row has 2,500 nonzeros needs about 0.3 ms
whatever its size, four times cuSPARSE. Cutting every row into pieces of at most ``S`` nonzeros
(``ops/scripts.split_spmm_script``) bounds the walk by ``S`` and the second pass, which adds up
each row's pieces, by the most pieces of a row; it costs a second kernel and a workspace of
one row of the output per piece, written and read back.

``choose`` weighs the two with those measured costs and returns the plan (or None: keep the
one-pass kernel). Only NumPy: the GPU bundle carries this file to machines without sparsetir.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

#: One step of a row's walk (a gather of B and its multiply-add), microseconds (H200, measured).
STEP_US = 0.15
#: What the second kernel's launch adds, microseconds.
LAUNCH_US = 2.0
#: Workspace bytes written and read back per microsecond (about 3 TB/s).
BYTES_PER_US = 3.0e6
#: The piece lengths tried, shortest first.
PIECE_LENGTHS = (16, 32)
#: Rows are split only when the longest is this many times the mean: where rows are of about
#: equal length the gathers of all rows overlap the walk, and the one-pass kernel wins.
SKEW = 2.0


@dataclass(frozen=True)
class RowSplit:
    """The pieces of a CSR matrix's rows: ``pieces`` (m + 1) into ``piece_ptr`` (npieces + 1)
    into the nonzeros; ``most`` is the most pieces of one row."""

    length: int
    pieces: np.ndarray
    piece_ptr: np.ndarray
    most: int

    @property
    def count(self) -> int:
        """The number of pieces (at least one per row)."""
        return int(self.piece_ptr.shape[0]) - 1


def split_rows(indptr: np.ndarray, length: int) -> RowSplit:
    """Cut each row of ``indptr`` into consecutive pieces of at most ``length`` nonzeros (an
    empty row into one empty piece)."""
    if length < 1:
        raise ValueError(f"piece length must be positive, got {length}")
    indptr = np.asarray(indptr, dtype=np.int64)
    lengths = np.diff(indptr)
    per_row = np.maximum(1, -(-lengths // length))
    pieces = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(per_row, out=pieces[1:])
    row = np.repeat(np.arange(lengths.shape[0]), per_row)
    starts = indptr[row] + (np.arange(pieces[-1]) - pieces[row]) * length
    piece_ptr = np.append(starts, indptr[-1])
    if piece_ptr[-1] >= 2**31 or pieces[-1] >= 2**31:
        raise ValueError("too many nonzeros or pieces for int32 indices")
    return RowSplit(length, pieces.astype(np.int32), piece_ptr.astype(np.int32),
                    int(per_row.max()) if per_row.size else 0)


def estimate_us(indptr: np.ndarray, feat: int, itemsize: int, length: Optional[int]) -> float:
    """The modelled time of SpMM at width ``feat`` in one pass (``length=None``) or split into
    pieces of ``length`` (module docs); only the parts that differ between the two."""
    return _estimate(np.diff(np.asarray(indptr, dtype=np.int64)), feat, itemsize, length)


def choose(indptr: np.ndarray, feat: int, itemsize: int) -> Optional[int]:
    """The piece length to split the rows of ``indptr`` into for SpMM at width ``feat``, or None
    when the one-pass kernel is expected to be faster."""
    lengths = np.diff(np.asarray(indptr, dtype=np.int64))
    if lengths.size == 0 or lengths.max() <= PIECE_LENGTHS[0] or lengths.max() < SKEW * lengths.mean():
        return None
    best, best_us = None, _estimate(lengths, feat, itemsize, None)
    for length in PIECE_LENGTHS:
        us = _estimate(lengths, feat, itemsize, length)
        if us < best_us:
            best, best_us = length, us
    return best


def _estimate(lengths: np.ndarray, feat: int, itemsize: int, length: Optional[int]) -> float:
    longest = int(lengths.max()) if lengths.size else 0
    if length is None:
        return longest * STEP_US
    per_row = np.maximum(1, -(-lengths // length))
    workspace = 2.0 * int(per_row.sum()) * feat * itemsize
    return (min(length, longest) + int(per_row.max(initial=0))) * STEP_US + LAUNCH_US + workspace / BYTES_PER_US


__all__ = ["PIECE_LENGTHS", "RowSplit", "choose", "estimate_us", "split_rows"]
