"""Block CSR: dense ``br x bc`` blocks, and the decomposition of a matrix into block sizes.

``Bsr.from_csr(A, (br, bc))`` stores every block that holds an entry: ``indptr`` (mb + 1) over
block rows, ``indices`` (nnzb) block columns sorted within each block row, ``data``
(nnzb, br, bc), with ``mb = ceil(m / br)``, ``nb = ceil(n / bc)``. Unlike SciPy, the shape need
not be a multiple of the block size: cells of edge blocks past row m or column n are fill
(value 0, never held). The flat value array is ``data.reshape(-1)``: slot
``(block * br + i) * bc + j`` is cell (i, j) of a block.

``decompose(A, sizes, min_density)`` splits a matrix into ``Bsr`` parts of square block sizes,
largest first, that together hold every entry once (see its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..runtime.csr_checks import fail
from .base import Format, int_sequence
from .csr import Csr, canonical
from .entries import Scatter
from .vectorized import POSITION, divmod_pow2, entry_rows, offsets, run_ids, run_starts


@dataclass(frozen=True, eq=False)
class Bsr(Format):
    """Blocks of ``blocksize``: ``indptr`` (mb + 1), ``indices`` (nnzb) block columns sorted in
    each block row, ``data`` (nnzb, br, bc); edge blocks zero-filled past the shape."""

    blocksize: tuple[int, int]
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
    def from_csr(cls, A: Any, blocksize: tuple[int, int]) -> "Bsr":
        """``A`` (any CSR input) in blocks of ``blocksize = (br, bc)``."""
        br, bc = _blocksize(blocksize)
        csr = canonical(A, "Bsr.from_csr: A", copy=False)
        return _assemble(csr, None, csr.indices, _blocks(csr.indptr, csr.indices, br, bc, csr.shape[1]), br, bc)

    @property
    def nnzb(self) -> int:
        """Number of stored blocks."""
        return int(self.indices.shape[0])

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.indptr, self.indices

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        br, bc = self.blocksize
        shape = (self.nnzb, br, bc)
        block_rows = entry_rows(self.indptr).astype(np.int64)
        rows = block_rows[:, None, None] * br + np.arange(br)[None, :, None]
        cols = self.indices.astype(np.int64)[:, None, None] * bc + np.arange(bc)[None, None, :]
        return np.broadcast_to(rows, shape).reshape(-1), np.broadcast_to(cols, shape).reshape(-1)

    def parameters(self) -> str:
        br, bc = self.blocksize
        return f"{br}x{bc} ({self.nnzb} blocks)"


def decompose(A: Any, sizes: Sequence[int] = (32, 16, 4), min_density: float = 0.5) -> tuple[Bsr, ...]:
    """``A`` (any CSR input) as ``Bsr`` parts of square block sizes, largest first, holding every
    entry exactly once.

    Greedily from the largest size, a block is taken when at least ``min_density`` of its
    ``b * b`` cells hold entries no larger block took; the smallest size takes every entry left.
    Each size must divide the next larger one, so a smaller block lies inside one larger block
    or outside all of them: blocks of different sizes never overlap.

    Each part is a complete ``Bsr`` of shape ``A.shape`` whose entry map covers all of ``A``'s
    entries: ``entry_slot[k]`` is -1 for an entry another part holds. So
    ``part.values(data)`` takes the input's full value array, and the parts' ``to_csr()`` add up
    to ``A``'s canonical form.
    """
    sizes = _sizes(sizes)
    if (isinstance(min_density, bool) or not isinstance(min_density, (int, float, np.floating, np.integer))
            or not 0.0 <= float(min_density) <= 1.0):
        fail("bsr.decompose: min_density", f"must be a number from 0 to 1 (the fraction of a block's cells that hold entries), "
                            f"got {min_density!r}")
    csr = canonical(A, "bsr.decompose: A", copy=False)
    m, n = csr.shape
    rows = entry_rows(csr.indptr)
    remaining = None  # canonical entries no larger block took (None: all of them)
    parts = []
    for i, b in enumerate(sizes):
        left_rows = rows if remaining is None else rows[remaining]
        if i + 1 == len(sizes):
            chosen, cols = remaining, _take(csr.indices, remaining)
            indptr = offsets(np.bincount(left_rows, minlength=m))
            parts.append(_assemble(csr, chosen, cols, _blocks(indptr, cols, b, b, n), b, b))
            break
        need = float(min_density) * (b * b)
        # A block can only be taken in a block row holding at least ``need`` entries: only
        # those are grouped into blocks (on a graph, few or none at large sizes).
        block_row = divmod_pow2(left_rows, b)[0]
        dense_enough = (np.bincount(block_row, minlength=-(-m // b)) >= need)[block_row]
        candidate = np.flatnonzero(dense_enough) if remaining is None else remaining[dense_enough]
        indptr = offsets(np.bincount(rows[candidate], minlength=m))
        cols = csr.indices[candidate]
        segments = _blocks(indptr, cols, b, b, n)
        taken = np.bincount(segments.block, weights=segments.length, minlength=segments.block_row.shape[0]) >= need
        seg_taken = taken[segments.block]
        held = np.repeat(seg_taken, segments.length)
        chosen = _Segments(segments.length[seg_taken], segments.row[seg_taken], run_ids(taken)[segments.block[seg_taken]],
                           segments.block_row[taken], segments.block_col[taken])
        parts.append(_assemble(csr, candidate[held], cols[held], chosen, b, b))
        if held.any():
            gone = np.zeros(csr.slots, bool)
            gone[candidate[held]] = True
            remaining = np.flatnonzero(~gone) if remaining is None else remaining[~gone[remaining]]
    return tuple(parts)


def _take(array: np.ndarray, index: Optional[np.ndarray]) -> np.ndarray:
    return array if index is None else array[index]


#: ``_blocks`` uses a bitmap of all blocks instead of a sort when there are at most this many
#: blocks per segment (measured: 2-4 times faster than the sort on bcsstk16 at 4 x 4 and 8 x 8,
#: where there are 15 and 6; slower from about 30).
_BITMAP_CELLS_PER_SEGMENT = 16


@dataclass(frozen=True, eq=False)
class _Segments:
    """Runs of consecutive entries of one row in one block column, and the blocks they fill."""

    #: (S,) entries in each segment; the segments tile the entries in order.
    length: np.ndarray
    #: (S,) the row of each segment.
    row: np.ndarray
    #: (S,) the block of each segment (an index into ``block_row``/``block_col``).
    block: np.ndarray
    #: (nnzb,) block row and block column of each block, sorted by both.
    block_row: np.ndarray
    block_col: np.ndarray


def _blocks(indptr: np.ndarray, cols: np.ndarray, br: int, bc: int, n: int) -> _Segments:
    """The blocks holding the entries of a CSR (columns increasing within rows), found from its
    segments: only segments are sorted, by (block row, block column), a stable sort that merges
    the ``br`` rows of each block row (or, when blocks are few, marked in a bitmap of blocks)."""
    nnz = cols.shape[0]
    block_col = divmod_pow2(cols, bc)[0] if bc > 1 else cols
    nonempty = np.flatnonzero(indptr[1:] > indptr[:-1])
    row_starts = np.zeros(nnz, bool)
    row_starts[indptr[nonempty]] = True
    flags = row_starts.copy()  # each row starts a segment, and so does each new block column
    if nnz:
        flags[1:] |= block_col[1:] != block_col[:-1]
    start = np.flatnonzero(flags)
    length = np.diff(np.append(start, nnz))
    # The row of each segment: count the row starts among the segments (no per-entry rows).
    row = nonempty[np.cumsum(row_starts[start], dtype=np.int32) - 1].astype(np.int32)
    seg_col = block_col[start]
    if br == 1:  # segments are already in block order, one per block
        return _Segments(length, row, np.arange(start.shape[0], dtype=POSITION), row,
                         np.ascontiguousarray(seg_col, np.int32))
    nb = -(-n // bc)
    seg_block_row = divmod_pow2(row, br)[0]
    key = seg_block_row.astype(np.int64) * nb + seg_col
    cells = -(-(indptr.shape[0] - 1) // br) * nb
    if cells <= _BITMAP_CELLS_PER_SEGMENT * start.shape[0]:
        # Few possible blocks per segment (a block-structured matrix): a bitmap of every block
        # marks the present ones, already in sorted order; no sort needed.
        present = np.zeros(cells, bool)
        present[key] = True
        block_key = np.flatnonzero(present)
        number = np.empty(cells, POSITION)  # only present blocks' pages are touched
        number[block_key] = np.arange(block_key.shape[0], dtype=number.dtype)
        return _Segments(length, row, number[key], (block_key // nb).astype(np.int32),
                         (block_key % nb).astype(np.int32))
    order = np.argsort(key, kind="stable")
    starts = run_starts(key[order])
    block = np.empty(start.shape[0], POSITION)
    block[order] = run_ids(starts)
    first = order[starts]  # the first segment of each block
    return _Segments(length, row, block, seg_block_row[first], np.ascontiguousarray(seg_col[first], np.int32))


def _assemble(csr: Csr, entries: Optional[np.ndarray], cols: np.ndarray, segments: _Segments, br: int, bc: int) -> Bsr:
    """The ``Bsr`` of the canonical entries ``entries`` (None: all), whose columns are ``cols``,
    tiled by ``segments``."""
    m, n = csr.shape
    nnzb = segments.block_row.shape[0]
    slots = nnzb * br * bc
    # Slot of an entry: its block's first slot + its row in the block * bc + its column in the
    # block, which is its column minus the block's first column (the same for a whole segment).
    base = segments.block.astype(POSITION) * (br * bc)
    base += divmod_pow2(segments.row, br)[1] * bc
    base -= segments.block_col[segments.block].astype(POSITION) * bc
    slot = np.repeat(base, segments.length)
    slot += cols
    data = np.zeros(slots, csr.data.dtype)
    if entries is None:
        data[slot] = csr.data
        slot_of_entry = slot
    else:
        data[slot] = csr.data[entries]
        slot_of_entry = np.full(csr.slots, -1, slot.dtype)
        slot_of_entry[entries] = slot
    entry_slot = csr.compose(slot_of_entry)
    indptr = offsets(np.bincount(segments.block_row, minlength=-(-m // br))).astype(np.int32)
    return Bsr((br, bc), indptr, segments.block_col, data.reshape(nnzb, br, bc), (m, n), csr.dtype, entry_slot, slots,
               csr.injective, _scatter=Scatter.plan(entry_slot, slots, csr.injective, complete=entries is None))


def _blocksize(blocksize: Any) -> tuple[int, int]:
    """``blocksize`` as two positive ints, or ``ArgumentError`` naming ``blocksize``."""
    try:
        br, bc = blocksize
    except (TypeError, ValueError):
        fail("Bsr.from_csr: blocksize", f"expected (rows, columns) of a block, got {blocksize!r}")
    for d in (br, bc):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
            fail("Bsr.from_csr: blocksize", f"block dimensions must be positive integers, got {blocksize!r}")
    return int(br), int(bc)


def _sizes(sizes: Any) -> tuple[int, ...]:
    """``sizes`` as positive ints, largest first, each dividing the next larger one."""
    values = int_sequence("bsr.decompose: sizes", sizes, "block size", lambda b: b >= 1, "positive integers")
    ordered = sorted(set(values), reverse=True)
    if len(ordered) != len(values):
        fail("bsr.decompose: sizes", f"block sizes must be distinct, got {values}")
    for big, small in zip(ordered, ordered[1:]):
        if big % small:
            fail("bsr.decompose: sizes", f"block size {small} does not divide {big}: each size must divide the next larger "
                          f"one so that blocks of different sizes never overlap")
    return tuple(ordered)
