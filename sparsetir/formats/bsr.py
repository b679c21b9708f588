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
from .base import Format
from .csr import Csr, canonical
from .entries import Scatter
from .vectorized import divmod_pow2, entry_rows, index_dtype, offsets, run_ids, run_starts


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
        csr = canonical(A)
        rows = entry_rows(csr.indptr)
        block_row, block_col, entry_block = _blocks(rows, csr.indices, br, bc, csr.shape[1])
        return _assemble(csr, rows, csr.indices, None, block_row, block_col, entry_block, br, bc)

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
        fail("min_density", f"must be a number from 0 to 1 (the fraction of a block's cells that hold entries), "
                            f"got {min_density!r}")
    csr = canonical(A)
    rows, cols = entry_rows(csr.indptr), csr.indices
    remaining = np.arange(csr.slots, dtype=index_dtype(csr.slots))  # canonical entries not yet taken
    parts = []
    for i, b in enumerate(sizes):
        sub_rows, sub_cols = rows[remaining], cols[remaining]
        block_row, block_col, entry_block = _blocks(sub_rows, sub_cols, b, b, csr.shape[1])
        if i + 1 < len(sizes):
            taken = np.bincount(entry_block, minlength=block_row.shape[0]) >= float(min_density) * (b * b)
            held = taken[entry_block]
            renumber = run_ids(taken)  # new index of each taken block
            parts.append(_assemble(csr, sub_rows[held], sub_cols[held], remaining[held], block_row[taken],
                                   block_col[taken], renumber[entry_block[held]], b, b))
            remaining = remaining[~held]
        else:
            parts.append(_assemble(csr, sub_rows, sub_cols, remaining, block_row, block_col, entry_block, b, b))
    return tuple(parts)


def _blocks(rows: np.ndarray, cols: np.ndarray, br: int, bc: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blocks holding entries at (rows, cols), in CSR order (rows non-decreasing, columns
    increasing within a row): (block row, block column) of each block sorted by both, and the
    block of each entry."""
    block_row, _ = divmod_pow2(rows, br)
    block_col, _ = divmod_pow2(cols, bc)
    if br == 1:  # entries are already in block order
        starts = run_starts(block_row, block_col)
        return block_row[starts], block_col[starts], run_ids(starts)
    # Consecutive entries of a row in one block form a segment; only segments are sorted,
    # by (block row, block column), the stable sort merging the br rows of each block row.
    seg = run_starts(rows, block_col)
    seg_start = np.flatnonzero(seg)
    seg_len = np.diff(np.append(seg_start, rows.shape[0]))
    nb = -(-n // bc)
    key = block_row[seg_start].astype(np.int64) * nb + block_col[seg_start]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    starts = run_starts(sorted_key)
    seg_block = np.empty(seg_start.shape[0], index_dtype(seg_start.shape[0]))
    seg_block[order] = run_ids(starts)
    block_key = sorted_key[starts]
    return (block_key // nb).astype(np.int32), (block_key % nb).astype(np.int32), np.repeat(seg_block, seg_len)


def _assemble(csr: Csr, rows: np.ndarray, cols: np.ndarray, entries: Optional[np.ndarray], block_row: np.ndarray,
              block_col: np.ndarray, entry_block: np.ndarray, br: int, bc: int) -> Bsr:
    """The ``Bsr`` holding canonical entries ``entries`` (None: all) at (rows, cols) in the given
    blocks."""
    m, n = csr.shape
    mb = -(-m // br)
    nnzb = block_row.shape[0]
    slots = nnzb * br * bc
    slot = entry_block.astype(index_dtype(slots)) * (br * bc)
    slot += divmod_pow2(rows, br)[1] * bc
    slot += divmod_pow2(cols, bc)[1]
    data = np.zeros(slots, csr.data.dtype)
    if entries is None:
        data[slot] = csr.data
        slot_of_entry = slot
    else:
        data[slot] = csr.data[entries]
        slot_of_entry = np.full(csr.slots, -1, slot.dtype)
        slot_of_entry[entries] = slot
    indptr = offsets(np.bincount(block_row, minlength=mb)).astype(np.int32)
    return Bsr((br, bc), indptr, np.ascontiguousarray(block_col, np.int32), data.reshape(nnzb, br, bc), (m, n),
               csr.dtype, csr.compose(slot_of_entry), slots, csr.injective)


def _blocksize(blocksize: Any) -> tuple[int, int]:
    """``blocksize`` as two positive ints, or ``ArgumentError`` naming ``blocksize``."""
    try:
        br, bc = blocksize
    except (TypeError, ValueError):
        fail("blocksize", f"expected (rows, columns) of a block, got {blocksize!r}")
    for d in (br, bc):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
            fail("blocksize", f"block dimensions must be positive integers, got {blocksize!r}")
    return int(br), int(bc)


def _sizes(sizes: Any) -> tuple[int, ...]:
    """``sizes`` as positive ints, largest first, each dividing the next larger one."""
    try:
        values = tuple(sizes)
    except TypeError:
        fail("sizes", f"expected a sequence of block sizes, got {type(sizes).__name__}")
    if not values:
        fail("sizes", "needs at least one block size")
    for b in values:
        if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or b < 1:
            fail("sizes", f"block sizes must be positive integers, got {b!r} in {values}")
    ordered = sorted({int(b) for b in values}, reverse=True)
    if len(ordered) != len(values):
        fail("sizes", f"block sizes must be distinct, got {values}")
    for big, small in zip(ordered, ordered[1:]):
        if big % small:
            fail("sizes", f"block size {small} does not divide {big}: each size must divide the next larger "
                          f"one so that blocks of different sizes never overlap")
    return tuple(ordered)
