"""Checking and preparing the arguments of ``sparsetir.ops``.

A sparse matrix's structure is checked and prepared once: its index arrays are copied into
int32 arrays of the preparation's own, those copies are validated (O(nnz)), and nnz-balanced
row partition points are computed. The result is cached per matrix object in a
``PreparedCache``, keyed by a weak reference to the matrix plus the identity of its arrays,
its shape and its last row pointer: replacing an array of the matrix (``A.indices = ...``),
changing ``A.indptr[-1]`` or passing a different matrix prepares again, and the entry goes
away with the matrix.

Values are never cached: a call reads the matrix's own values array, or, when that array is
not C-contiguous or is read-only (which a kernel cannot take), a copy made for that call, so
``A.data *= 10`` between calls is always seen. The kernels read only the preparation's copies
of the index arrays, never the caller's: editing ``A.indices`` or ``A.indptr`` in place after a
call can never make a kernel read out of bounds, but (unless it changes ``A.indptr[-1]``) the
result is for the structure as it was when first prepared; call ``sparsetir.ops.forget(A)``
after such an edit.

Dense operands are checked on every call (O(1): dtype, rank, shape), never modified; a
non-contiguous one is copied.
"""

from __future__ import annotations

import math
from functools import cached_property
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..runtime import output_pool
from ..runtime.arrays import kernel_view
from ..runtime.partition import row_partition  # noqa: F401 (re-exported)
from ..schedule.default.prefetch import column_locality
from ..runtime.csr_checks import (  # noqa: F401 (re-exported)
    as_int32, check_offsets, check_structure, check_torch_csr, fail, refuse_non_csr,
)

VALUE_DTYPES = ("float32", "float64")
_INT32_MAX = np.iinfo(np.int32).max


def torch_module() -> Any:
    """The torch module when it is already imported (ops never import it themselves)."""
    return sys.modules.get("torch")


def is_torch_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor."""
    torch = torch_module()
    return torch is not None and isinstance(value, torch.Tensor)


def plain(t: Any) -> Any:
    """Torch tensor ``t`` as a kernel may read its memory: without autograd history, and with a
    lazy negation applied (a tensor with torch's negative bit, ``x._neg_view()``, holds the
    negation of its values; only complex tensors, which no op takes, have a conjugate bit)."""
    if t.requires_grad:
        t = t.detach()
    return t.resolve_neg() if t.is_neg() else t


def aligned_empty(shape: tuple[int, ...], dtype: Any, align: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on an ``align``-byte boundary.

    Vector loads and stores of a row then do not straddle cache lines. A large one comes from
    ``runtime.output_pool`` (its pages are reused once the caller drops the array).
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes >= output_pool.MIN_BYTES:  # page-aligned, on memory reused across calls
        return output_pool.empty(shape, dtype)
    if nbytes < 4096:  # a few rows: not worth the extra slicing
        return np.empty(shape, dtype)
    raw = np.empty(nbytes + align, np.uint8)
    return np.ndarray(shape, dtype, raw, (-raw.ctypes.data) % align)


@dataclass(frozen=True)
class CsrInput:
    """A CSR matrix ready for the kernels: int32 structure, partition points, and the matrix's own
    values array (``values()`` gives it to a call)."""

    data: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    shape: tuple[int, int]
    dtype: str
    part: np.ndarray
    is_torch: bool
    max_row_length: int
    #: ``data`` as a kernel takes it without converting it (``runtime.arrays.kernel_view``), a
    #: view of the same memory; None when ``data`` is not C-contiguous or is read-only.
    data_arg: Any = field(init=False, repr=False, compare=False)
    #: The arguments every CSR kernel takes after its dense operands, in order:
    #: ``(indptr, indices, m, n, nnz, part, parts)``; built once (the arrays as kernel views) so
    #: a call only splices them in.
    tail: tuple = field(init=False, repr=False, compare=False)
    #: The kernels this matrix used, by ``(op, feat)``, each with the library it came from:
    #: a call then resolves its kernel with one dict lookup (``sparsetir.ops._kernel``).
    kernels: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        m, n = self.shape
        flags = self.data.flags
        object.__setattr__(self, "data_arg", kernel_view(self.data) if flags.c_contiguous and flags.writeable else None)
        object.__setattr__(self, "tail", (kernel_view(self.indptr), kernel_view(self.indices), m, n,
                                          int(self.data.shape[0]), kernel_view(self.part),
                                          int(self.part.shape[0]) - 1))

    def values(self) -> Any:
        """The values for a call now: the view of the matrix's own array, or a contiguous copy of
        its current contents (never a copy kept from an earlier call, which could be stale)."""
        arg = self.data_arg
        return arg if arg is not None else np.array(self.data, order="C")

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.data.shape[0])

    @cached_property
    def column_locality(self) -> tuple[float, float]:
        """How local the column accesses are, computed once (O(nnz)) when a kernel asks:
        (fraction of entries whose column is the previous entry's plus one: runs the hardware
        prefetcher follows; mean |column - row| / columns: how far from the diagonal they reach)."""
        return column_locality(self.indptr, self.indices, self.shape[1])


def own_int32(what: str, name: str, array: np.ndarray) -> np.ndarray:
    """``array`` as a contiguous int32 array that shares no memory with it: what a preparation
    validates and hands to the kernels, which an in-place edit of the caller's array cannot
    change afterwards (O(n) once per matrix)."""
    converted = as_int32(what, name, array)
    return converted.copy() if np.may_share_memory(converted, array) else converted


def _csr_arrays(what: str, A: Any) -> tuple[Any, Any, Any, tuple[int, int]]:
    """(data, indptr, indices, shape) of a scipy CSR matrix."""
    if getattr(A, "format", None) != "csr" or not hasattr(A, "indptr"):
        refuse_non_csr(what, A, "a scipy.sparse CSR matrix or a torch sparse CSR tensor")
    return A.data, A.indptr, A.indices, tuple(A.shape)


def prepare_csr(what: str, A: Any, parts: int) -> CsrInput:
    """Check ``A`` and build its ``CsrInput`` (no caching; see ``PreparedCache``).

    A torch sparse CSR tensor is prepared from its index tensors alone (copies of them, a
    placeholder for the values): its values are read on every call (``current_values``), so one
    preparation serves every tensor that shares those index tensors."""
    if is_torch_tensor(A):
        return _prepare_torch_csr(what, A, parts)
    data, indptr, indices, shape = _csr_arrays(what, A)
    dtype = value_dtype_name(data) if isinstance(data, np.ndarray) else None
    if dtype not in VALUE_DTYPES:
        fail(what, f"values must be float32 or float64, got {getattr(data, 'dtype', type(data).__name__)}")
    m, n = shape
    if max(m, n, data.shape[0]) > _INT32_MAX:
        fail(what, f"shape {shape} with {data.shape[0]} stored values exceeds the int32 index range")
    if data.ndim != 1:
        fail(what, f"values must be 1-D, got shape {data.shape}")
    indptr = own_int32(what, "indptr", np.asarray(indptr))
    indices = own_int32(what, "indices", np.asarray(indices))
    check_structure(what, indptr, indices, m, n, data.shape[0])
    longest = int(np.diff(indptr).max()) if m else 0
    return CsrInput(data, indptr, indices, (m, n), dtype, row_partition(indptr, parts), False, longest)


def _prepare_torch_csr(what: str, A: Any, parts: int) -> CsrInput:
    from .tensor_structures import prepare_structure  # it imports this module

    torch = torch_module()
    check_torch_csr(what, A, "sparsetir.ops runs on the CPU")
    if A.dtype not in (torch.float32, torch.float64):
        fail(what, f"values must be float32 or float64, got {str(A.dtype).removeprefix('torch.')}")
    m, n = (int(d) for d in A.shape)
    nnz = int(A.col_indices().shape[0])
    if max(m, n, nnz) > _INT32_MAX:
        fail(what, f"shape {(m, n)} with {nnz} stored values exceeds the int32 index range")
    return prepare_structure(what, A.crow_indices(), A.col_indices(), (m, n), str(A.dtype).removeprefix("torch."),
                             parts)


def current_values(A: Any, a: CsrInput) -> Any:
    """The values of ``A`` (prepared as ``a``) for a kernel call now: the view of a SciPy
    matrix's own array, or a torch tensor's current values (copied only when not contiguous)."""
    if not a.is_torch:
        return a.values()
    return plain(A.values()).contiguous().numpy()


def version(t: Any) -> int:
    """``t._version``, or -1 for an inference tensor, which has no version counter (callers
    compare its contents instead: it can still be edited inside inference mode)."""
    return -1 if t.is_inference() else t._version


def memory_key(t: Any) -> tuple:
    """What identifies a tensor's memory: its storage object, data pointer, shape, strides, dtype."""
    return (id(t.untyped_storage()), t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


def _fingerprint(A: Any) -> tuple[tuple, tuple]:
    """Identity of the arrays inside a SciPy-like ``A``, which changes when one of them is
    replaced, and what keeps that identity valid: (fingerprint, objects to hold while the
    fingerprint is kept). SciPy matrices hold their arrays as attributes: the ids of the array
    objects identify them, and holding the arrays keeps those ids from being reused. The last
    row pointer (O(1) to read) is part of it, so the commonest in-place edit of a structure,
    one that changes its number of entries, prepares again (and is validated)."""
    arrays = (getattr(A, "data", None), getattr(A, "indptr", None), getattr(A, "indices", None))
    try:
        last = arrays[1].item(-1)
    except (AttributeError, IndexError, TypeError, ValueError):  # no or an empty indptr: refused when prepared
        last = None
    # SciPy's in-place A.sort_indices() reorders indices and data without a new array or a new
    # count; it sets the matrix's sorted flag (kept in _has_sorted_indices), which is read here.
    return (id(arrays[0]), id(arrays[1]), id(arrays[2]), last, repr(getattr(A, "shape", None)),
            repr(getattr(A, "blocksize", None)), getattr(A, "_has_sorted_indices", None)), arrays


def _is_torch_csr(A: Any) -> bool:
    torch = torch_module()
    return torch is not None and isinstance(A, torch.Tensor) and A.layout == torch.sparse_csr


class PreparedCache:
    """Per-matrix preparations, keyed by a weak reference to the matrix and, for a SciPy matrix,
    its arrays' identity (a torch tensor's arrays cannot be replaced, and its preparation holds
    no values: they are read on every call)."""

    def __init__(self) -> None:
        # (kind, id(A)) -> (weak reference to A, fingerprint, objects it relies on, preparation)
        self._entries: dict[tuple[str, int], tuple[Any, tuple, tuple, Any]] = {}
        # Re-entrant, and entries are released after it: freeing one may run weak-reference
        # callbacks that drop others, on this thread (``sparse_sparse.IdentityCache``).
        self._lock = threading.RLock()
        self.preparations = 0

    def get(self, kind: str, A: Any, make: Callable[[], Any]) -> Any:
        """The cached preparation of ``A`` for ``kind``, made with ``make()`` when missing or stale."""
        return self._get(kind, A, make, count=True)

    def share(self, kind: str, A: Any, prepared: Any) -> Any:
        """Give ``A`` the preparation ``prepared`` of another matrix with the same structure (a
        result built on copies of the other's index arrays), unless it has one; ``A``'s own."""
        return self._get(kind, A, lambda: prepared, count=False)

    def _get(self, kind: str, A: Any, make: Callable[[], Any], count: bool) -> Any:
        key = (kind, id(A))
        fingerprint, held = ((), ()) if _is_torch_csr(A) else _fingerprint(A)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is A and entry[1] == fingerprint:
            return entry[3]
        prepared = make()
        try:
            ref = weakref.ref(A, lambda _r, key=key: self._drop(key, _r))
        except TypeError:  # not weak-referenceable: do not cache
            return prepared
        with self._lock:
            replaced = self._entries.get(key)  # noqa: F841 (released after the lock)
            self._entries[key] = (ref, fingerprint, held, prepared)
            self.preparations += count
        return prepared

    def forget(self, A: Any) -> None:
        """Drop every cached preparation of ``A``."""
        with self._lock:
            gone = [self._entries.pop(k, None) for k in [k for k in self._entries if k[1] == id(A)]]  # noqa: F841

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            gone, self._entries = self._entries, {}  # noqa: F841 (released after the lock)

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: tuple[str, int], ref: Any) -> None:
        gone = None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                gone = self._entries.pop(key)  # noqa: F841 (released after the lock)


def dense_operand(what: str, X: Any, dtype: str, rows: Optional[int], ndim: int = 2) -> Any:
    """``X`` checked (dtype, rank, rows) and made C-contiguous; numpy or torch as given."""
    if type(X) is np.ndarray:
        # The common case, kept cheap: it runs on every call.
        if X.ndim == ndim and X.dtype == _NP_DTYPES[dtype] and (rows is None or X.shape[0] == rows):
            flags = X.flags
            # A read-only array is copied: TVM refuses to take one (the kernels only read it).
            return X if flags.c_contiguous and flags.writeable else np.array(X, order="C")
        got, shape = str(X.dtype), X.shape
    elif is_torch_tensor(X):
        if X.layout != torch_module().strided:
            fail(what, f"expected a dense tensor, got layout {X.layout}")
        if X.device.type != "cpu":
            fail(what, f"is on {X.device}; sparsetir.ops runs on the CPU")
        got = str(X.dtype).removeprefix("torch.")
        shape = tuple(X.shape)
    elif isinstance(X, np.ndarray):
        got, shape = str(X.dtype), X.shape
    else:
        fail(what, f"expected a numpy array or torch tensor, got {type(X).__name__}")
    if len(shape) != ndim:
        fail(what, f"expected a {ndim}-D array, got shape {tuple(shape)}")
    if got != dtype:
        fail(what, f"dtype {got} does not match the sparse matrix's dtype {dtype}; convert one of them")
    if rows is not None and shape[0] != rows:
        fail(what, f"expected {rows} rows to match the sparse matrix, got shape {tuple(shape)}")
    if is_torch_tensor(X):
        return plain(X).contiguous()
    X = np.ascontiguousarray(X)
    return X if X.flags.writeable else X.copy()


_NP_DTYPES = {name: np.dtype(name) for name in VALUE_DTYPES}
_DTYPE_NAMES = {np.dtype(name): name for name in VALUE_DTYPES}


def value_dtype_name(values: Any) -> Optional[str]:
    """The dtype name of an array or tensor (``"float32"``), None for objects without a dtype;
    a dict lookup for numpy's value dtypes (``str(dtype)`` costs microseconds)."""
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        return None
    name = _DTYPE_NAMES.get(dtype) if isinstance(dtype, np.dtype) else None
    return name or str(dtype).removeprefix("torch.")
