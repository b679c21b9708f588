"""Rule ``prefetch``: loops that gather rows of a dense operand fetch them ahead, where it pays.

A gathered row (SpMM's ``B[indices[p], :]``, SDDMM's ``Y[indices[p], :]``) sits at a column
known only at run time; when the operand is far larger than L2 and the columns are scattered,
each read waits on L3 or DRAM. The indices are in memory ahead of time, so the loop can request
the row of entry ``p + 8`` while it computes entry ``p`` (``transforms/prefetch_gathered_rows``,
a stage-III rewrite). Whether that pays depends on the matrix, so this rule decides per call,
from the operand's size and the matrix's column locality (computed once per matrix): measured
per matrix and width in ``bench/notes/cpu_schedules.md`` (0b, 0d), for the two loop shapes the
rules make:

- **never** when most columns follow the previous one (a banded matrix such as bcsstk16: the
  hardware prefetcher already streams those rows; prefetching cost 6-20 %);
- a **register tile** (``register_tile``; each tile pass reads one slice of the row): only rows
  of 129 to 512 bytes, which one pass reads whole (1.07-1.20x on the graphs at 64-128 float32;
  narrower rows 0.95-1.06x, wider ones several passes each prefetching the same lines, 0.8-1.08x);
- a **dot product** (``dot_product``; each entry reads its whole row once): rows of at most 128
  bytes when the operand exceeds 2 MiB and the columns reach far from the diagonal (a
  near-diagonal window stays cached); wider rows when the operand exceeds 1 MiB (1.05-1.35x),
  rows over 512 bytes only their first 4 lines (the stream prefetcher takes the rest).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A fraction of entries whose column follows the previous entry's at or above which nothing
#: is prefetched (the hardware prefetcher streams such rows).
MAX_RUNS = 0.5
NARROW_BYTES = 128
NARROW_MIN_BYTES = 2 << 20
MIN_REACH = 0.05
MIN_BYTES = 1 << 20
FULL_ROW_BYTES = 512
WIDE_LINES = 4

#: Loop shapes: each entry's whole row read once (``dot_product``), or a slice per tile pass.
DOT = "dot"
TILE = "tile"


def column_locality(indptr: np.ndarray, indices: np.ndarray, columns: int) -> tuple[float, float]:
    """How local the column accesses of a CSR structure are (O(nnz)): (the fraction of entries
    whose column is the previous entry's plus one: runs the hardware prefetcher follows; the mean
    |column - row| / columns: how far from the diagonal they reach)."""
    nnz = int(indices.shape[0])
    if nnz < 2 or columns == 0:
        return 1.0, 0.0
    cols = indices.astype(np.int64)
    runs = float(np.count_nonzero(np.diff(cols) == 1)) / (nnz - 1)
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr.astype(np.int64)))
    if rows.shape[0] != nnz:  # not a consistent structure: no prefetch decision can rest on it
        return 1.0, 0.0
    reach = float(np.abs(cols - rows).mean()) / columns
    return runs, reach


def prefetch_lines(shape: str, row_bytes: int, operand_bytes: int, locality: tuple[float, float],
                   whole_rows: bool = True) -> int:
    """How a loop of ``shape`` (``DOT`` or ``TILE``) gathering rows of ``row_bytes`` from an
    operand of ``operand_bytes`` prefetches: -1 not at all, 0 whole rows, k > 0 the first k lines.
    ``whole_rows``: a register tile reads each row in one pass (its width tiles in one pass)."""
    runs, reach = locality
    if runs >= MAX_RUNS:
        return -1
    if shape == TILE:
        return 0 if whole_rows and NARROW_BYTES < row_bytes <= FULL_ROW_BYTES else -1
    if row_bytes <= NARROW_BYTES:
        return 0 if operand_bytes > NARROW_MIN_BYTES and reach >= MIN_REACH else -1
    if operand_bytes <= MIN_BYTES:
        return -1
    return 0 if row_bytes <= FULL_ROW_BYTES else WIDE_LINES


def operand_bytes(array: Any) -> tuple[int, int]:
    """(bytes of one row, bytes of the whole) of a 2-D array argument."""
    shape = tuple(int(d) for d in array.shape)
    itemsize = int(getattr(array, "itemsize", 0) or np.dtype(str(array.dtype).removeprefix("torch.")).itemsize)
    row = shape[-1] * itemsize if shape else itemsize
    return row, row * (shape[0] if shape else 1)
