"""CSR input and canonical CSR, the base every conversion starts from.

A conversion accepts a SciPy CSR matrix or array, a torch sparse CSR tensor on the CPU, a
``CsrArrays`` from ``from_arrays(indptr, indices, data, shape)``, or a ``Csr``. ``read``
validates it with the checks and messages of ``sparsetir.ops`` (``runtime.csr_checks``):
indptr from 0 to nnz and non-decreasing, column indices in range, float32/float64 values,
integer index arrays that fit int32. The input is never modified.

``canonical`` sorts every row's columns and sums duplicate entries (as SciPy does; the input's
stored zeros stay stored). Its entry map says where each input entry went; when the input is
already canonical that map is the identity and nothing is sorted.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import scipy.sparse

from ..runtime.csr_checks import as_int32, check_structure, check_torch_csr, fail, refuse_non_csr
from .base import Format
from .entries import Scatter
from .vectorized import _INT32_MAX, POSITION, entry_rows, offsets, run_ids, run_starts

VALUE_DTYPES = ("float32", "float64")


@dataclass(frozen=True, eq=False)
class CsrArrays:
    """A validated CSR input as given: int32 ``indptr`` and ``indices`` (columns possibly
    unsorted or repeated within a row) and the values in storage order."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]
    dtype: str

    @property
    def nnz(self) -> int:
        """Number of stored entries (duplicates counted)."""
        return int(self.data.shape[0])


def from_arrays(indptr: Any, indices: Any, data: Any, shape: tuple[int, int]) -> CsrArrays:
    """A CSR input from raw arrays (any integer index dtype that fits int32), validated."""
    what = "from_arrays"
    if (not isinstance(shape, tuple) or len(shape) != 2
            or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in shape)):
        fail(what, f"shape must be a tuple of two non-negative integers (rows, columns), got {shape!r}")
    return _validated(what, np.asarray(data), np.asarray(indptr), np.asarray(indices), (int(shape[0]), int(shape[1])))


def read(what: str, A: Any) -> CsrArrays:
    """The validated arrays of a conversion's input ``A`` (the argument called ``what``)."""
    if isinstance(A, CsrArrays):
        return A
    if isinstance(A, Csr):
        return CsrArrays(A.indptr, A.indices, A.data, A.shape, A.dtype)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(A, torch.Tensor):
        check_torch_csr(what, A, "sparsetir.formats converts on the CPU")
        A = A.detach()
        data = A.values()
        if data.dtype in (torch.float32, torch.float64):
            data = data.numpy()
        return _validated(what, data, A.crow_indices().numpy(), A.col_indices().numpy(), tuple(A.shape))
    if getattr(A, "format", None) != "csr" or not hasattr(A, "indptr"):
        refuse_non_csr(what, A, "a scipy.sparse CSR matrix, a torch sparse CSR tensor or "
                                "sparsetir.formats.csr.from_arrays(...)")
    return _validated(what, A.data, np.asarray(A.indptr), np.asarray(A.indices), tuple(A.shape))


def _validated(what: str, data: Any, indptr: np.ndarray, indices: np.ndarray, shape: tuple) -> CsrArrays:
    """``CsrArrays`` after the checks ``sparsetir.ops`` makes, with the same messages."""
    if not isinstance(data, np.ndarray) or str(data.dtype) not in VALUE_DTYPES:
        dtype = getattr(data, "dtype", type(data).__name__)
        fail(what, f"values must be float32 or float64, got {dtype}")
    m, n = shape
    if max(m, n, data.shape[0] if data.ndim else 0) > _INT32_MAX:
        fail(what, f"shape {shape} with {data.shape[0]} stored values exceeds the int32 index range")
    if data.ndim != 1:
        fail(what, f"values must be 1-D, got shape {data.shape}")
    indptr = as_int32(what, "indptr", indptr)
    indices = as_int32(what, "indices", indices)
    check_structure(what, indptr, indices, m, n, data.shape[0])
    return CsrArrays(indptr, indices, data, (m, n), str(data.dtype))


@dataclass(frozen=True, eq=False)
class Csr(Format):
    """Canonical CSR: every row's columns strictly increasing (duplicates summed), int32
    ``indptr`` (m + 1) and ``indices`` (nnz), ``data`` (nnz)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]
    dtype: str
    #: The entry map; None when ``identity`` (then made on first use of ``entry_slot``).
    _entry_slot: Optional[np.ndarray]
    slots: int
    injective: bool
    #: The input was already canonical: ``entry_slot`` is 0, 1, 2, ... and nothing was sorted.
    identity: bool = False
    _scatter: Optional[Scatter] = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.identity and self._scatter is None:
            object.__setattr__(self, "_scatter", Scatter.identity(self.slots))
        super().__post_init__()

    @property
    def entry_slot(self) -> np.ndarray:
        """The entry map: the slot (canonical position) of each input entry."""
        if self._entry_slot is None:  # identity: conversions never need it, so it is made late
            object.__setattr__(self, "_entry_slot", np.arange(self.slots, dtype=POSITION))
        return self._entry_slot

    @property
    def input_entries(self) -> int:
        return self.slots if self.identity else self._entry_slot.shape[0]

    @classmethod
    def from_csr(cls, A: Any) -> "Csr":
        """``canonical(A)``."""
        return canonical(A, "Csr.from_csr: A")

    def structure(self) -> tuple[np.ndarray, ...]:
        return self.indptr, self.indices

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        return entry_rows(self.indptr), self.indices

    def to_csr(self) -> scipy.sparse.csr_matrix:
        """A SciPy CSR matrix with copies of this one's arrays."""
        return scipy.sparse.csr_matrix((self.data.copy(), self.indices.copy(), self.indptr.copy()), shape=self.shape)

    def compose(self, slot_of_entry: np.ndarray) -> np.ndarray:
        """The input's entry map of a format built from this CSR, given where that format put
        each canonical entry (``slot_of_entry``, one per entry of this CSR, -1 if not held)."""
        return slot_of_entry if self.identity else slot_of_entry[self.entry_slot]


def canonical(A: Any, what: str = "canonical: A", copy: bool = True) -> Csr:
    """``A`` (any CSR input) as canonical CSR with its entry map; the input is not modified.

    ``copy=False`` (for conversions that only read the result) lets an already canonical input
    share its arrays with the result instead of copying them.
    """
    source = read(what, A)
    indptr, indices, data = source.indptr, source.indices, source.data
    nnz = source.nnz
    m, n = source.shape
    state = _order_state(indptr, indices)
    if state == "increasing":
        if copy:  # a frozen Csr must not change when the caller later edits its own arrays
            indptr, indices, data = indptr.copy(), indices.copy(), data.copy()
        return Csr(indptr, indices, data, (m, n), source.dtype, None, nnz, True, identity=True)
    rows = entry_rows(indptr)
    if state == "unsorted":
        key = rows.astype(np.int64) * n + indices
        order = np.argsort(key, kind="stable")
        rows, cols, starts = rows[order], indices[order], run_starts(key[order])
    else:  # sorted, with repeats only: no sort needed
        order, cols, starts = None, indices, run_starts(rows, indices)
    ids = run_ids(starts)
    slots = int(ids[-1]) + 1
    if order is None:
        entry_slot = ids
    else:
        entry_slot = np.empty(nnz, ids.dtype)
        entry_slot[order] = ids
    counts = np.bincount(rows[starts], minlength=m)
    csr_indptr = offsets(counts).astype(np.int32)
    # The plan groups duplicates in storage order, as every format's ``values`` does.
    scatter = Scatter.plan(entry_slot, slots, injective=slots == nnz, complete=True)
    return Csr(csr_indptr, np.ascontiguousarray(cols[starts], np.int32), scatter(data), (m, n), source.dtype,
               entry_slot, slots, slots == nnz, _scatter=scatter)


def is_canonical(source: CsrArrays) -> bool:
    """Whether every row's columns strictly increase (sorted, no duplicates): O(nnz)."""
    return _order_state(source.indptr, source.indices) == "increasing"


def _order_state(indptr: np.ndarray, indices: np.ndarray) -> str:
    """How the columns run within rows: "increasing" (canonical), "repeats" (non-decreasing,
    with duplicates) or "unsorted"."""
    nnz = indices.shape[0]
    if nnz < 2:
        return "increasing"
    down = indices[1:] <= indices[:-1]  # down[k - 1]: position k does not increase on k - 1
    starts = indptr[1:-1]
    down[starts[(starts > 0) & (starts < nnz)] - 1] = False  # a row start may go down
    if not down.any():
        return "increasing"
    where = np.flatnonzero(down) + 1
    return "unsorted" if np.any(indices[where] < indices[where - 1]) else "repeats"
