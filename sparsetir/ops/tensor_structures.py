"""CSR structures given as index tensors, prepared once per structure (``CsrTensors`` and the
custom ops of ``torch_library.py``).

A custom op receives a matrix as its component tensors, new tensor objects on many calls (a
compiled graph's inputs, ``A.crow_indices()`` aliases). The preparation (validation, int32 index
arrays, row partition) and the transposed structure the backward passes need are therefore
keyed by what identifies the index *memory*: each index tensor's storage (a weak reference:
the entry goes away with the storage, and a new storage at a reused address is not mistaken
for the old one), data pointer, shape, strides and dtype. The tensors' ``_version``, which an
in-place torch edit increments, is compared on every lookup and a changed structure is prepared
again. (A write through a NumPy view of an index tensor does not increment it.)

An entry owns copies of the index arrays and never refers to the tensors themselves, so it
keeps no user memory alive; nothing is ever written into the tensors.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Optional

import numpy as np

from ..runtime.arrays import kernel_view
from .inputs import CsrInput, check_structure, fail, memory_key, own_int32, plain, row_partition, version


def _own_int32(what: str, name: str, t: Any) -> np.ndarray:
    """Index tensor ``t`` as an int32 array that does not share ``t``'s memory."""
    array = plain(t).contiguous().numpy()
    if array.ndim != 1:
        fail(what, f"{name} must be 1-D, got shape {array.shape}")
    return own_int32(what, name, array)


def prepare_structure(what: str, crow: Any, col: Any, shape: tuple[int, int], dtype: str, parts: int) -> CsrInput:
    """Validate a CSR structure given as tensors and build its ``CsrInput`` for values of
    ``dtype``; the values themselves are passed to each call (its ``data`` is a zero-stride
    placeholder with the right length)."""
    indptr = _own_int32(what, "crow_indices", crow)
    indices = _own_int32(what, "col_indices", col)
    m, n = shape
    nnz = int(indices.shape[0])
    check_structure(what, indptr, indices, m, n, nnz)
    longest = int(np.diff(indptr).max()) if m else 0
    placeholder = np.broadcast_to(np.zeros((), dtype), (nnz,))
    return CsrInput(placeholder, indptr, indices, (m, n), dtype, row_partition(indptr, parts), True, longest)


class Structure:
    """One prepared structure: ``csr`` for the forward kernels and, built on first use,
    ``transposed`` (Aᵀ's structure, from a stable sort of the entries by column) with the
    permutation that lists A's values in Aᵀ's order."""

    def __init__(self, csr: CsrInput, parts: int) -> None:
        self.csr = csr
        self._parts = parts
        self._transposed: Optional[tuple[CsrInput, np.ndarray]] = None
        self._lock = threading.Lock()

    @property
    def transposed(self) -> CsrInput:
        """The prepared structure of Aᵀ."""
        return self._transpose()[0]

    @property
    def transposed_src(self) -> Any:
        """Where each of Aᵀ's entries is in A's value array (int32, a kernel view): the gather
        map of ``ops.spmm_gathered``."""
        self._transpose()
        return self._src

    def transposed_values(self, values: np.ndarray) -> np.ndarray:
        """A's ``values`` in the entry order of Aᵀ (a new array)."""
        return np.take(values, self._transpose()[1])

    def _transpose(self) -> tuple[CsrInput, np.ndarray]:
        found = self._transposed
        if found is not None:
            return found
        with self._lock:
            if self._transposed is None:
                a = self.csr
                m, n = a.shape
                rows = np.repeat(np.arange(m, dtype=np.int32), np.diff(a.indptr))
                # Stable: duplicates stay separate entries, each row of Aᵀ in A's row order.
                perm = np.argsort(a.indices, kind="stable")
                t_indptr = np.zeros(n + 1, np.int32)
                np.cumsum(np.bincount(a.indices, minlength=n), out=t_indptr[1:])
                t_longest = int(np.diff(t_indptr).max()) if n else 0
                t = CsrInput(a.data, t_indptr, rows[perm], (n, m), a.dtype, row_partition(t_indptr, self._parts),
                             True, t_longest)
                self._src = kernel_view(perm.astype(np.int32))
                self._transposed = (t, perm)
            return self._transposed


def _same_contents(csr: CsrInput, crow: Any, col: Any) -> bool:
    """Whether index tensors without a version counter (inference tensors, which an in-place
    edit inside ``torch.inference_mode()`` changes unseen) still hold the prepared structure:
    an O(nnz) comparison, in place of the O(1) version check."""
    return np.array_equal(csr.indptr, plain(crow).contiguous().numpy()) and \
        np.array_equal(csr.indices, plain(col).contiguous().numpy())


class TensorStructures:
    """Prepared CSR structures keyed by the memory of their index tensors (see the module doc)."""

    def __init__(self) -> None:
        # key -> (weak references to the two storages, (crow, col) versions, Structure)
        self._entries: dict[tuple, tuple[tuple[Any, Any], tuple[int, int], Structure]] = {}
        # Re-entrant, and entries are released after it: freeing one may run weak-reference
        # callbacks that drop others, on this thread (``sparse_sparse.IdentityCache``).
        self._lock = threading.RLock()
        self.preparations = 0

    def get(self, what: str, crow: Any, col: Any, shape: tuple[int, int], dtype: str, parts: int) -> Structure:
        """The prepared structure of ``(crow, col)`` with ``shape`` for values of ``dtype``."""
        key = (memory_key(crow), memory_key(col), shape, dtype)
        versions = (version(crow), version(col))
        entry = self._entries.get(key)
        if entry is not None:
            refs, seen, structure = entry
            if seen == versions and refs[0]() is crow.untyped_storage() and refs[1]() is col.untyped_storage() \
                    and (-1 not in versions or _same_contents(structure.csr, crow, col)):
                return structure
        structure = Structure(prepare_structure(what, crow, col, shape, dtype, parts), parts)
        drop = lambda _ref, key=key: self._drop(key, _ref)  # noqa: E731
        refs = (weakref.ref(crow.untyped_storage(), drop), weakref.ref(col.untyped_storage(), drop))
        with self._lock:
            replaced = self._entries.get(key)  # noqa: F841 (released after the lock)
            self._entries[key] = (refs, versions, structure)
            self.preparations += 1
        return structure

    def forget(self, crow: Any, col: Any) -> None:
        """Drop the structures prepared for these index tensors (after editing them through a
        NumPy view, which their ``_version`` does not see)."""
        storages = {id(crow.untyped_storage()), id(col.untyped_storage())}
        with self._lock:
            keys = [k for k in self._entries if k[0][0] in storages or k[1][0] in storages]
            gone = [self._entries.pop(k, None) for k in keys]  # noqa: F841 (released after the lock)

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            gone, self._entries = self._entries, {}  # noqa: F841 (released after the lock)

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: tuple, ref: Any) -> None:
        gone = None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and any(r is ref for r in entry[0]):
                gone = self._entries.pop(key)  # noqa: F841 (released after the lock)
