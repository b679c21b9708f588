"""Compressed sparse fibers: a tree of coordinates, one level per dimension (TACO's pos/crd).

``Csf.from_coo(coords, values, shape)`` sorts the entries lexicographically and sums
duplicates; then level ``l`` holds one node per distinct prefix ``(i_0, ..., i_l)``:
``indices[l]`` its coordinate, and ``indptr[l]`` (parents + 1) the range of each level ``l - 1``
node's children; level 0 is compressed too (only present coordinates), its ``indptr[0]`` is
``[0, len(indices[0])]``. The leaves are the entries: ``data`` has one value per leaf. A 2-D CSR
input (``Csf.from_csr``) gives two levels, like DCSR.

Example, shape (2, 3, 4) with entries (0, 1, 2), (0, 1, 3), (1, 0, 0)::

    indptr  = ([0, 2], [0, 1, 2], [0, 2, 3])
    indices = ([0, 1], [1, 0],    [2, 3, 0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import scipy.sparse

from ..runtime.csr_checks import fail
from .base import Format, csr_from_coordinates, value_array
from .csr import VALUE_DTYPES, canonical
from .entries import Scatter
from .vectorized import _INT32_MAX, entry_rows, run_ids, run_starts


@dataclass(frozen=True, eq=False)
class Csf(Format):
    """One level per dimension: ``indptr[l]`` children ranges, ``indices[l]`` coordinates (int32);
    ``data`` (leaves,)."""

    indptr: tuple[np.ndarray, ...]
    indices: tuple[np.ndarray, ...]
    data: np.ndarray
    shape: tuple[int, ...]
    dtype: str
    entry_slot: np.ndarray
    slots: int
    injective: bool
    _scatter: Optional[Scatter] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_coo(cls, coords: Any, values: Any, shape: Any) -> "Csf":
        """A sparse tensor from COO ``coords`` (ndim, nnz), ``values`` (nnz,) and ``shape``; entries in
        any order, duplicates summed."""
        shape = _shape(shape)
        coords = _coords(coords, shape)
        nnz = coords.shape[1]
        values = value_array("Csf.from_coo: values", values, nnz, _value_dtype(values))
        if math.prod(shape) < 2 ** 63:
            key = np.ravel_multi_index(tuple(coords), shape) if nnz else np.zeros(0, np.int64)
            order = np.argsort(key, kind="stable")
            starts = run_starts(key[order])
        else:
            order = np.lexsort(coords[::-1])
            starts = run_starts(*coords[:, order])
        ids = run_ids(starts)
        slots = int(ids[-1]) + 1 if nnz else 0
        entry_slot = np.empty(nnz, ids.dtype)
        entry_slot[order] = ids
        scatter = Scatter.plan(entry_slot, slots, injective=slots == nnz)
        indptr, indices = _levels(coords[:, order[starts]])
        return cls(indptr, indices, scatter(values), shape, str(values.dtype), entry_slot, slots, slots == nnz,
                   _scatter=scatter)

    @classmethod
    def from_csr(cls, A: Any) -> "Csf":
        """A 2-D CSR input (any) as two levels: its non-empty rows, then their columns."""
        csr = canonical(A, "Csf.from_csr: A")
        coords = np.stack([entry_rows(csr.indptr), csr.indices])
        indptr, indices = _levels(coords)
        return cls(indptr, indices, csr.data, csr.shape, csr.dtype, csr.entry_slot, csr.slots, csr.injective,
                   _scatter=csr._scatter)

    @property
    def ndim(self) -> int:
        """Number of dimensions (levels)."""
        return len(self.shape)

    def to_coo(self) -> tuple[np.ndarray, np.ndarray]:
        """(coords (ndim, nnz) int64, values): the entries sorted lexicographically, duplicates
        summed, with the values given at conversion."""
        return np.stack(self.slot_coordinates()) if self.ndim else np.zeros((0, 0), np.int64), self.data.copy()

    def to_csr(self) -> scipy.sparse.csr_matrix:
        """A 2-D tensor as a canonical SciPy CSR matrix."""
        if self.ndim != 2:
            fail("Csf.to_csr", f"a {self.ndim}-D tensor has no CSR form; use to_coo()")
        rows, cols = self.slot_coordinates()
        return csr_from_coordinates(rows, cols, self.data.copy(), self.shape)

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.indptr + self.indices

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        # Walk up from the leaves: the node of each leaf at level l, then its parent.
        node = np.arange(self.slots)
        coords = [None] * self.ndim
        for level in reversed(range(self.ndim)):
            coords[level] = self.indices[level][node].astype(np.int64)
            node = entry_rows(self.indptr[level])[node]
        return tuple(coords)

    def parameters(self) -> str:
        return "(" + ", ".join(f"{a.shape[0]}" for a in self.indices) + " nodes per level)"


def _levels(coords: np.ndarray) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """(indptr, indices) of every level for sorted distinct ``coords`` (ndim, nnz)."""
    ndim, nnz = coords.shape
    indptr, indices = [], []
    parent_starts = np.zeros(nnz, bool)
    parent_starts[:1] = True
    for level in range(ndim):
        starts = run_starts(coords[level]) | parent_starts
        ids = run_ids(starts)
        count = int(ids[-1]) + 1 if nnz else 0
        indptr.append(np.append(ids[parent_starts], count).astype(np.int32))
        indices.append(np.ascontiguousarray(coords[level][starts], np.int32))
        parent_starts = starts
    return tuple(indptr), tuple(indices)


def _shape(shape: Any) -> tuple[int, ...]:
    if (not isinstance(shape, tuple) or not shape
            or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and 0 <= d <= _INT32_MAX
                       for d in shape)):
        fail("Csf.from_coo: shape", f"must be a non-empty tuple of non-negative integers that fit int32, got {shape!r}")
    return tuple(int(d) for d in shape)


def _coords(coords: Any, shape: tuple[int, ...]) -> np.ndarray:
    coords = np.asarray(coords)
    if coords.dtype.kind not in "iu" and coords.size:  # an empty list is float64 to NumPy
        fail("Csf.from_coo: coords", f"must be an integer array, got dtype {coords.dtype}")
    if coords.ndim != 2 or coords.shape[0] != len(shape):
        fail("Csf.from_coo: coords", f"must have shape ({len(shape)}, nnz) (one row per dimension of shape {shape}), "
                       f"got {coords.shape}")
    for d, size in enumerate(shape):
        if coords.shape[1]:
            low, high = int(coords[d].min()), int(coords[d].max())
            if low < 0 or high >= size:
                fail("Csf.from_coo: coords", f"coordinate {low if low < 0 else high} of dimension {d} is out of range "
                               f"for size {size}")
    return coords.astype(np.int64)


def _value_dtype(values: Any) -> str:
    dtype = str(getattr(values, "dtype", type(values).__name__)).removeprefix("torch.")
    if dtype not in VALUE_DTYPES:
        fail("Csf.from_coo: values", f"must be float32 or float64, got {dtype}")
    return dtype
