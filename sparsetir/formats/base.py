"""What every converted format has in common: ``values``, ``to_csr``, ``nbytes``, ``describe``.

Each format is a frozen dataclass mixing in ``Format``. It declares its own structure arrays,
its ``data`` (the values given at conversion, in the format's natural layout), ``shape``,
``dtype`` and the entry map (``entry_slot``, ``slots``, ``injective``; see ``entries.py``), and
answers three questions: which arrays are its structure, where its flat value array is, and
which (row, column) each slot stands for. ``to_csr`` is built from those answers alone, so it
checks the format's arrays rather than echoing the input.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

import numpy as np
import scipy.sparse

from ..runtime.csr_checks import fail
from .entries import Scatter
from .vectorized import offsets


class Format:
    """Mixin of the converted formats (frozen dataclasses): refreshing values, converting back,
    sizes."""

    # Declared by every format (as dataclass fields); listed for readers and type checkers.
    shape: tuple[int, ...]
    dtype: str
    entry_slot: np.ndarray
    slots: int
    injective: bool
    _scatter: Optional[Scatter]

    def __post_init__(self) -> None:
        # A conversion that already planned the scatter (to compute ``data``) passes it in.
        if self._scatter is None:
            object.__setattr__(self, "_scatter", Scatter.plan(self.entry_slot, self.slots, self.injective))

    # --- what each format answers -----------------------------------------------------------

    def structure(self) -> tuple[np.ndarray, ...]:
        """The format's structure arrays (index arrays; not the values, not the entry map)."""
        raise NotImplementedError

    def flat_data(self) -> np.ndarray:
        """The values given at conversion as the flat value array (a view of ``data``)."""
        return self.data.reshape(-1)  # type: ignore[attr-defined]

    def slot_coordinates(self) -> tuple[np.ndarray, ...]:
        """The coordinates each slot of the flat value array stands for, one int64 array per
        dimension (padding and fill slots included)."""
        raise NotImplementedError

    def parameters(self) -> str:
        """The conversion's parameters as ``describe`` prints them (empty when none)."""
        return ""

    # --- shared behaviour -------------------------------------------------------------------

    def values(self, data: Any, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The flat value array (length ``slots``) for new input values ``data``: the input's
        values in its own storage order, same structure and dtype as at conversion. Slots no
        entry maps to are 0; duplicates are summed. ``out`` (a C-contiguous array of ``slots``
        values of the format's dtype) is filled and returned instead of a new array, so a call
        allocates nothing."""
        where = f"{type(self).__name__}.values"
        data = value_array(f"{where}: data", data, self.input_entries, self.dtype)
        if out is not None and (not isinstance(out, np.ndarray) or out.shape != (self.slots,)
                                or out.dtype != data.dtype or not out.flags.c_contiguous or not out.flags.writeable):
            fail(f"{where}: out", f"expected a writeable C-contiguous {self.dtype} array of shape ({self.slots},), "
                                  f"got {_describe_array(out)}")
        return self._scatter(data, out)

    @property
    def input_entries(self) -> int:
        """Number of stored entries of the input (duplicates counted): the length of ``data``
        that ``values`` takes."""
        return int(self.entry_slot.shape[0])

    @property
    def entries(self) -> int:
        """Number of stored entries the format holds (distinct coordinates, duplicates merged)."""
        return self._scatter.entries

    def held(self) -> np.ndarray:
        """Boolean mask over the slots: True where an entry lands (padding and fill are False)."""
        return self._scatter.held()

    @property
    def nbytes(self) -> int:
        """Bytes of the structure arrays and the values (not the entry map)."""
        return sum(a.nbytes for a in self.structure()) + self.flat_data().nbytes

    def to_csr(self) -> scipy.sparse.csr_matrix:
        """The held entries with the values given at conversion, as a canonical SciPy CSR matrix
        (sorted, no duplicates, the input's stored zeros kept, padding and fill dropped)."""
        held = self._scatter.held_slots()
        rows, cols = (c[held] for c in self.slot_coordinates())
        return csr_from_coordinates(rows, cols, self.flat_data()[held], self.shape)

    def describe(self) -> str:
        """One line: format, parameters, shape, entries, slots, fill ratio, size."""
        name = type(self).__name__
        params = self.parameters()
        shape = "x".join(str(d) for d in self.shape)
        entries = self.entries
        fill = f"{self.slots / entries:.2f}" if entries else "-"
        return (f"{name}{f' {params}' if params else ''}: {shape}, {entries} entries in "
                f"{self.slots} slots (fill ratio {fill}), {self.nbytes / 1e6:.3f} MB")


def _describe_array(value: Any) -> str:
    if not isinstance(value, np.ndarray):
        return type(value).__name__
    flags = "" if value.flags.c_contiguous and value.flags.writeable else " (not writeable C-contiguous)"
    return f"{value.dtype} array of shape {value.shape}{flags}"


def value_array(what: str, data: Any, nnz: int, dtype: str) -> np.ndarray:
    """``data`` as a 1-D NumPy array of ``nnz`` values of ``dtype`` (a CPU torch tensor is
    viewed, never copied); ``ArgumentError`` naming ``what`` otherwise."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(data, torch.Tensor):
        if data.device.type != "cpu":
            fail(what, f"is on {data.device}; move it to the CPU")
        data = data.detach()
        if data.dtype not in (torch.float32, torch.float64):
            fail(what, f"dtype {str(data.dtype).removeprefix('torch.')} does not match the format's dtype {dtype}")
        data = data.numpy()
    elif not isinstance(data, np.ndarray):
        fail(what, f"expected a numpy array or torch tensor of values, got {type(data).__name__}")
    if data.ndim != 1 or data.shape[0] != nnz:
        fail(what, f"expected {nnz} values (shape ({nnz},), one per stored entry of the input), got shape {data.shape}")
    if data.dtype.name != dtype:
        fail(what, f"dtype {data.dtype} does not match the format's dtype {dtype}")
    return data


def csr_from_coordinates(rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                         shape: tuple[int, ...]) -> scipy.sparse.csr_matrix:
    """A canonical CSR matrix of distinct coordinates (sorted here; never summed)."""
    m, n = shape
    order = np.argsort(rows.astype(np.int64) * max(n, 1) + cols, kind="stable")
    indptr = offsets(np.bincount(rows, minlength=m)).astype(np.int32)
    return scipy.sparse.csr_matrix((values[order], cols[order].astype(np.int32), indptr), shape=(m, n))


def positive_int(what: str, value: Any) -> int:
    """``value`` as a positive int, or ``ArgumentError`` naming ``what``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        fail(what, f"must be a positive integer, got {value!r}")
    return int(value)


def int_sequence(what: str, values: Any, noun: str, valid: Callable[[int], bool], requirement: str) -> tuple[int, ...]:
    """``values`` as a non-empty tuple of ints that are each ``valid``, or ``ArgumentError`` naming
    ``what``; ``noun`` names one value ("block size") and ``requirement`` what each must be."""
    try:
        values = tuple(values)
    except TypeError:
        fail(what, f"expected a sequence of {noun}s, got {type(values).__name__}")
    if not values:
        fail(what, f"needs at least one {noun}")
    for v in values:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not valid(int(v)):
            fail(what, f"{noun}s must be {requirement}, got {v!r} in {values}")
    return tuple(int(v) for v in values)
