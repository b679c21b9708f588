"""Operations on two sparse operands: ``add``, ``multiply`` (elementwise) and ``spgemm``.

Each runs in two phases (``sparse_sparse_scripts.py`` has the TVM kernels):

- symbolic: the output's structure (row pointer, sorted column indices, and for ``add`` and
  ``multiply`` where each output entry comes from), computed once per pair of input structures
  and cached (``symbolic``): a second call on the same structures with new values runs only
- numeric: the values, on every call.

A structure is known by the identity of its index arrays, as ``inputs.PreparedCache`` knows a
matrix: a SciPy matrix's ``indptr`` and ``indices`` objects (with its shape, last row pointer and
sorted flag as the cheap check that they still hold what was prepared), a torch tensor's index
tensors (their memory and version, ``tensor_structures.py``). Replacing ``A.data`` or building a
new matrix or tensor around the same index arrays keeps the structure; editing the index arrays
in place is not seen (call ``sparsetir.ops.forget(A)`` for that matrix or tensor, or ``forget()``).

The output's indices are sorted and its index arrays are the output's own. Entries that cancel
to 0 are kept (SciPy drops them from ``A @ B`` and ``A + B``): the pattern is the structural one.
``spgemm`` takes unsorted rows and repeated columns (they add up, as in SciPy); ``add``,
``multiply`` and a mask merge sorted rows without repeats: a SciPy operand with others is
sorted into a copy first (``compute``), a torch one is refused, naming the row.
"""

from __future__ import annotations

import functools
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..errors import ArgumentError
from ..runtime import output_pool
from ..runtime.build import build_stage3
from ..runtime.kernel import Kernel
from ..runtime.launch import launch
from ..runtime.partition import row_partition
from ..runtime.parallel import num_threads
from ..runtime.target import host_target
from . import sparse_sparse_scripts as scripts
from .csr_tensors import CsrTensors
from .inputs import (
    VALUE_DTYPES, as_int32, check_structure, check_torch_csr, fail, is_torch_tensor, own_int32, plain, prepare_csr,
    refuse_non_csr, torch_module, value_dtype_name,
)

_INT32_MAX = np.iinfo(np.int32).max
#: ``merge_count`` counts rows through a dense row of marks per chunk (``n`` int32) when there
#: are at most this many columns and the marks' initialization (``n`` per chunk) is at most
#: ``MARK_COST`` times the operands' entries: on rows whose merge branches mispredict, it took
#: 0.2 of the merge's time (bcsstk16 plus a pattern half its own), and as long where they do not.
MARKED_COLUMNS = 1 << 20
MARK_COST = 4


# --- caches -------------------------------------------------------------------------------------


class IdentityCache:
    """Values keyed by the identity of some objects, each held by a weak reference (an entry goes
    with the first of them), plus a cheap ``check`` that must still hold.

    Dropping an entry can free the last reference to another cache's (or this cache's) key
    objects, whose weak-reference callbacks then drop entries in turn, on the same thread and
    while the first drop runs. So entries leave under a re-entrant lock, and their values are
    released only after it (dropping a structure used to deadlock on its own lock when a value
    freed inside it held the key of another entry)."""

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple[tuple, Any, Any]] = {}
        self._lock = threading.RLock()
        #: How many values were made (a miss): the symbolic phases run, for tests.
        self.made = 0

    def get(self, tag: str, objects: tuple, make: Callable[[], Any], check: Any = None) -> Any:
        """The value for ``objects`` (and ``check``), made with ``make()`` when missing or stale."""
        key = (tag, *map(id, objects))
        entry = self._entries.get(key)
        if entry is not None and entry[1] == check:
            for ref, obj in zip(entry[0], objects):
                if ref() is not obj:
                    break
            else:
                return entry[2]
        value = make()
        drop = functools.partial(self._drop, key)
        refs = tuple([weakref.ref(o, drop) for o in objects])
        with self._lock:
            replaced = self._entries.get(key)  # noqa: F841 (released after the lock)
            self._entries[key] = (refs, check, value)
            self.made += 1
        return value

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            gone, self._entries = self._entries, {}  # noqa: F841 (released after the lock)

    def drop(self, obj: Any) -> None:
        """Drop the values made for ``obj`` (one of their objects)."""
        with self._lock:
            keys = [key for key, entry in self._entries.items() if any(r() is obj for r in entry[0])]
            gone = [self._entries.pop(key, None) for key in keys]  # noqa: F841 (released after the lock)

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: tuple, ref: Any) -> None:
        gone = None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and any(r is ref for r in entry[0]):
                gone = self._entries.pop(key)  # noqa: F841 (released after the lock)


#: Prepared SciPy structures, by their index arrays.
structures = IdentityCache()
#: Symbolic phases (output patterns) by operation and pair of prepared structures, and the
#: per-structure facts derived once (sortedness, transposes).
symbolic = IdentityCache()


def forget(*matrices: Any) -> None:
    """Drop the cached structures of the SciPy ``matrices`` and the symbolic phases made from
    them, or with none given every cached structure and symbolic phase (after editing index
    arrays in place; the bench times a first call this way)."""
    if not matrices:
        structures.clear()
        symbolic.clear()
    for A in matrices:
        # Their symbolic phases go with the prepared structure (held only by this cache).
        structures.drop(A.indptr)


# --- kernels ------------------------------------------------------------------------------------


_kernels: dict[tuple, Kernel] = {}
_kernels_lock = threading.Lock()


def kernel(name: str, *config: Any) -> Kernel:
    """The compiled kernel ``sparse_sparse_scripts.<name>(*config)``, built on first use (TVM
    through ``runtime.build_stage3``, whose cache keeps the compiled code on disk)."""
    key = (name,) + config
    found = _kernels.get(key)
    if found is None:
        with _kernels_lock:
            found = _kernels.get(key)
            if found is None:
                found = _kernels[key] = build_stage3(getattr(scripts, name)(*config), [], target=host_target())
    return found


def _parts() -> int:
    return max(num_threads(), 1)


# --- operands -----------------------------------------------------------------------------------


@dataclass(eq=False, slots=True, weakref_slot=True)
class Pattern:
    """An output structure: int32 ``indptr``/``indices``, the row chunks its kernels run over,
    and (``add``/``multiply``) the entry of each operand every output entry comes from; also an
    operand's structure for a merge (``merge_structure``)."""

    indptr: np.ndarray
    indices: np.ndarray
    shape: tuple[int, int]
    part: Optional[np.ndarray]  # None where no kernel runs over this structure's own chunks
    src_a: Optional[np.ndarray] = None
    src_b: Optional[np.ndarray] = None
    #: Whether ``indices`` was made for one call alone, not kept in a cache (its result may take it).
    own_indices: bool = False
    #: ``add``/``multiply``: every output entry comes from the entry at its own position in both
    #: operands (they have this pattern): no ``src_a``/``src_b``.
    aligned: bool = False
    #: Whether each row's columns are in ascending order (``spgemm(..., sorted=False)`` leaves
    #: them in the order the products reach them).
    ordered: bool = True
    #: torch index tensors handed out with results: (crow, col, their versions), per index dtype.
    tensors: dict = field(default_factory=dict, repr=False)

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.indices.shape[0])

    def sources(self) -> tuple[np.ndarray, np.ndarray]:
        """(``src_a``, ``src_b``), also for an ``aligned`` pattern."""
        if self.aligned:
            positions = np.arange(self.nnz, dtype=np.int32)
            return positions, positions
        return self.src_a, self.src_b


@dataclass(eq=False, slots=True, weakref_slot=True)
class Operand:
    """One sparse operand of a call: its prepared structure and its values now."""

    source: Any
    csr: Any  # a ``CsrInput`` or a ``Pattern`` (indptr, indices, shape, part, nnz)
    values: np.ndarray
    index_dtype: np.dtype
    is_torch: bool

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns)."""
        return self.csr.shape


def operand(what: str, A: Any, values: bool = True, merge: bool = False) -> Operand:
    """``A`` (SciPy CSR or torch sparse CSR on the CPU) checked, its structure prepared (cached)
    and its current values read (``values=False``: a mask, whose values are not read).
    ``merge``: for ``add``/``multiply``, whose kernels check the column indices as they read
    them and never address memory with them: a SciPy matrix's own column indices, unchecked, in
    a structure of their own (``merge_structure``; a product's holds checked copies)."""
    if is_torch_tensor(A):
        return _torch_operand(what, A, values)
    if getattr(A, "format", None) != "csr" or not hasattr(A, "indptr"):
        refuse_non_csr(what, A, "a scipy.sparse CSR matrix or a torch sparse CSR tensor")
    data = A.data
    dtype = value_dtype_name(data) if isinstance(data, np.ndarray) else None
    if dtype not in VALUE_DTYPES:
        fail(what, f"values must be float32 or float64, got {getattr(data, 'dtype', type(data).__name__)}")
    indptr, indices = A.indptr, A.indices
    try:
        last = indptr.item(-1)
    except (AttributeError, IndexError, TypeError, ValueError):
        last = None  # refused when prepared
    check = (A.shape, last, dtype, getattr(A, "_has_sorted_indices", None))
    if merge:
        csr = structures.get("scipy merge", (indptr, indices), lambda: merge_structure(what, A), check)
    else:
        csr = structures.get("scipy", (indptr, indices), lambda: prepare_csr(what, A, _parts()), check)
    if data.shape != (csr.nnz,):
        fail(what, f"values must have shape ({csr.nnz},) (one per column index), got {data.shape}")
    current = data
    if not values:
        current = np.empty(0, data.dtype)
    elif not (data.flags.c_contiguous and data.flags.writeable):
        current = np.array(data, order="C")
    return Operand(A, csr, current, indptr.dtype, False)


def merge_structure(what: str, A: Any) -> Pattern:
    """The structure of SciPy CSR ``A`` for a merge: a checked copy of its row pointer (the
    kernels address with it) and its own int32 column indices, unchecked (``merge_count``
    checks them as it reads them, and a merge never addresses memory with them, so an in-place
    edit of them afterwards gives a wrong answer, never a read elsewhere)."""
    (m, n), nnz = A.shape, A.data.shape[0]
    if max(m, n, nnz) > _INT32_MAX:
        fail(what, f"shape {(m, n)} with {nnz} stored values exceeds the int32 index range")
    ptr = A.indptr
    if type(ptr) is np.ndarray and ptr.dtype == np.int32:  # SciPy's usual case, in one copy
        indptr = np.array(ptr, order="C")
    else:
        indptr = own_int32(what, "indptr", np.asarray(ptr))
    indices = as_int32(what, "indices", np.asarray(A.indices))
    check_structure(what, indptr, indices, m, n, nnz, check_range=False)
    return Pattern(indptr, indices, (m, n), None)  # a pair's merge makes its own chunks


def _torch_operand(what: str, A: Any, values: bool) -> Operand:
    from . import torch_library  # imports torch: only for torch operands

    torch = torch_module()
    check_torch_csr(what, A, "sparsetir.ops runs on the CPU")
    dtype = str(A.dtype).removeprefix("torch.")
    if dtype not in VALUE_DTYPES:
        fail(what, f"values must be float32 or float64, got {dtype}")
    crow, col = A.crow_indices(), A.col_indices()
    if crow.dtype != col.dtype or crow.dtype not in (torch.int32, torch.int64):
        fail(what, f"crow_indices and col_indices must both be int32 or int64, got {crow.dtype} and {col.dtype}")
    m, n = (int(d) for d in A.shape)
    csr = torch_library.structures.get(what, crow, col, (m, n), dtype, _parts()).csr
    current = plain(A.values()).contiguous().numpy() if values else np.empty(0, dtype)
    return Operand(A, csr, current, np.dtype(str(crow.dtype).removeprefix("torch.")), True)


def _same_kind(op: str, a: Operand, b: Operand) -> None:
    if a.is_torch != b.is_torch:
        kinds = {True: "a torch sparse CSR tensor", False: "a SciPy CSR matrix"}
        fail(f"{op}: B", f"is {kinds[b.is_torch]} but A is {kinds[a.is_torch]}; pass both as the same kind")
    if a.values.dtype != b.values.dtype:
        fail(f"{op}: B", f"dtype {b.values.dtype} does not match A's dtype {a.values.dtype}; convert one of them")


def sorted_rows(what: str, csr: Any) -> None:
    """Refuse a structure with a row whose column indices are not strictly increasing (out of
    order or repeated), naming the first such row (``UnsortedRows``); checked once per
    structure (O(nnz))."""
    problem = symbolic.get("sorted", (csr,), lambda: _unsorted_row(csr))
    if problem is not None:
        raise UnsortedRows(f"{what}: {problem}", what.rsplit(": ", 1)[-1])


def _unsorted_row(csr: Any) -> Optional[str]:
    indices, indptr = csr.indices, csr.indptr
    if indices.shape[0] < 2:
        return None
    bad = np.diff(indices) <= 0  # no overflow: both columns lie in [0, n)
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.shape[0])]
    bad[starts - 1] = False  # pairs that cross from one row to the next
    if not bad.any():
        return None
    p = int(np.argmax(bad))
    row = int(np.searchsorted(indptr, p, side="right")) - 1
    how = "is repeated" if indices[p] == indices[p + 1] else f"comes after column {int(indices[p])}"
    return (f"row {row} is not sorted: column {int(indices[p + 1])} {how}; this operation needs sorted rows "
            "without repeated columns (SciPy: A.sum_duplicates(), which also sorts; torch: "
            "A.to_sparse_coo().coalesce().to_sparse_csr())")


# --- the symbolic phases ------------------------------------------------------------------------


@dataclass(eq=False, slots=True, weakref_slot=True)
class Product:
    """A pair of structures' product ``A @ B``, cached: its row pointer, each row's least and
    greatest column and the fill's chunks once counted; the whole pattern once the pair is met
    again (the first call hands its columns to its result without a copy, as ``Merge``)."""

    indptr: np.ndarray
    longest: int  # the most entries a row of the product has
    lows: Optional[np.ndarray]  # dropped once the pattern is kept
    highs: Optional[np.ndarray]
    fill_part: Optional[np.ndarray]
    pattern: Optional[Pattern] = None
    #: The pattern an unsorted fill made (``sorted=False``), kept as ``pattern`` is; a sorted
    #: ``pattern`` serves unsorted calls too.
    unordered: Optional[Pattern] = None


def spgemm_product(a: Any, a_values: np.ndarray, b: Any, b_values: np.ndarray) -> tuple[Pattern, np.ndarray]:
    """``A @ B``'s structure (sorted rows) and values, the first time a pair of structures
    meets: ``spgemm_count`` sizes the rows, ``spgemm_fill`` writes columns and values in one
    pass (the numeric phase alone, ``spgemm_values``, runs on later calls)."""
    entry = _spgemm_count(a, b)
    indices, values = _spgemm_fill(entry, a, a_values, b, b_values)
    return Pattern(entry.indptr, indices, (a.shape[0], b.shape[1]), row_partition(entry.indptr, a.part.shape[0] - 1)), values


def product_pattern(a: Operand, b: Operand, keep: bool, ordered: bool = True) -> tuple[Pattern, np.ndarray]:
    """``A @ B``'s pattern and values: from the cached pattern when the pair has one
    (``spgemm_values``), else by a fill (``spgemm_fill``, or ``spgemm_fill_unsorted`` when not
    ``ordered``) after the count, which runs once per pair. The pattern is kept from the second
    meeting of a pair on, or the first when ``keep`` (torch results share their index tensors;
    gradients read the pattern). A sorted pattern serves an unsorted call; an unsorted one is
    kept apart, and the count's row bounds with it, for a later sorted fill."""
    made: list[bool] = []

    def count() -> Product:
        made.append(True)
        return _spgemm_count(a.csr, b.csr)

    entry = symbolic.get("spgemm", (a.csr, b.csr), count)
    known = entry.pattern  # sorted: it serves either way
    if known is None and not ordered:
        known = entry.unordered
    if known is not None:
        return known, spgemm_values(a.csr, a.values, b.csr, b.values, known)
    indices, values = _spgemm_fill(entry, a.csr, a.values, b.csr, b.values, ordered)
    shape = (a.shape[0], b.shape[1])
    if made and not keep:
        return Pattern(entry.indptr, indices, shape, None, own_indices=True, ordered=ordered), values
    kept = Pattern(entry.indptr, indices, shape, row_partition(entry.indptr, a.csr.part.shape[0] - 1), ordered=ordered)
    if ordered:
        entry.pattern, entry.unordered = kept, None
        entry.lows = entry.highs = entry.fill_part = None
    else:
        entry.unordered = kept
    return kept, values


def _spgemm_count(a: Any, b: Any) -> Product:
    """``spgemm_count`` on structures ``a`` and ``b``: the product's row pointer, its rows'
    least and greatest columns, and the fill's chunks (equal work: each row's products and
    entries; on email_enron the result's entries alone split it 58/42)."""
    m, n, k = a.shape[0], b.shape[1], a.shape[1]
    parts = a.part.shape[0] - 1
    indptr, work = np.zeros(m + 1, np.int32), np.zeros(m + 1, np.int64)
    lows, highs = np.empty(m, np.int32), np.empty(m, np.int32)  # read only for a product with entries
    longest = 0
    if m and a.nnz and b.nnz:
        b_lows, b_highs = np.empty(k, np.int32), np.empty(k, np.int32)
        launch(kernel("row_bounds"), (b.indptr, b.indices, b_lows, b_highs, b.part, k, n, b.nnz,
                                      b.part.shape[0] - 1), b.nnz + k)
        marker = np.empty((parts, max(n, 1)), np.int32)
        sizes, work_sizes = np.empty(parts + 1, np.int64), np.empty(parts + 1, np.int64)
        longest_rows = np.empty(parts, np.int32)
        launch(kernel("spgemm_count"), (a.indptr, a.indices, b.indptr, b.indices, indptr, work, sizes, work_sizes,
                                        longest_rows, lows, highs, b_lows, b_highs, marker, a.part, m, n, k, a.nnz,
                                        b.nnz, parts), a.nnz + b.nnz + m)
        if sizes[-1] > _INT32_MAX:
            fail("spgemm", f"the result has {int(sizes[-1])} stored entries, more than the int32 index range holds")
        longest = int(longest_rows.max())
    return Product(indptr, longest, lows, highs, row_partition(work, parts))


def _spgemm_fill(entry: Product, a: Any, a_values: np.ndarray, b: Any, b_values: np.ndarray, ordered: bool = True
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``spgemm_fill``: the sorted columns and the values of the counted product ``entry``
    (``spgemm_fill_unsorted`` when not ``ordered``: the columns in the order they are reached)."""
    m, n, k = a.shape[0], b.shape[1], a.shape[1]
    parts = entry.fill_part.shape[0] - 1
    nnz = int(entry.indptr[-1])
    indices = output_pool.empty((nnz,), np.int32)
    values = output_pool.empty((nnz,), a_values.dtype)
    if not nnz:
        return indices, values
    marker = np.empty((parts, n), np.int32)
    acc = np.empty((parts, n), a_values.dtype)
    if not ordered:
        launch(kernel("spgemm_fill_unsorted", value_dtype_name(a_values)),
               (a_values, b_values, values, a.indptr, a.indices, b.indptr, b.indices, entry.indptr, indices,
                marker, acc, entry.fill_part, m, n, k, a.nnz, b.nnz, nnz, parts),
               a.nnz + b.nnz + m + nnz)
    else:
        width = entry.longest + 1  # a chunk's row of ``tmp``: the longest row and a spare place
        tmp = np.empty(parts * width, np.int32)
        hist = np.empty((parts, scripts.BUCKETS), np.int32)
        words = (n + 63) // 64
        bits = np.zeros((parts, words), np.uint64)  # all clear: the fill clears what it sets
        launch(kernel("spgemm_fill", value_dtype_name(a_values)),
               (a_values, b_values, values, a.indptr, a.indices, b.indptr, b.indices, entry.indptr, indices,
                entry.lows, entry.highs, marker, acc, bits, tmp, hist, entry.fill_part, m, n, k, a.nnz, b.nnz, nnz,
                width, words, parts),
               a.nnz + b.nnz + m + nnz)
    return indices, values


@dataclass(eq=False, slots=True, weakref_slot=True)
class Merge:
    """A pair of structures' union or intersection, cached: its row pointer and the merge's row
    chunks once counted; the whole pattern (columns and each entry's sources) once the pair is
    met again (the first call makes no sources: a call on new matrices then writes as little as
    SciPy's ``A + B``, and hands its columns to its result without a copy)."""

    indptr: np.ndarray
    part: np.ndarray  # the merge's chunks: equal numbers of both operands' entries
    pattern: Optional[Pattern] = None


def merge_product(op: str, a: Operand, b: Operand, sources: bool = False) -> tuple[Pattern, np.ndarray]:
    """The union (``add``) or intersection (``multiply``) of two structures of one shape and its
    values: from the cached pattern when the pair has one (``merge_values``), else by a merge
    (``merge_fill``). The pattern is kept from the second meeting of a pair on, or the first
    when ``sources`` are asked for (``gradients`` reads them): with each entry's sources, or
    none when the operands are ``aligned`` (the same columns in every row, so the same entry
    order in both and in the result)."""
    made: list[bool] = []

    def count() -> Merge:
        made.append(True)
        return _merge_count(op, a, b)

    entry = symbolic.get(op, (a.csr, b.csr), count)
    if entry.pattern is not None:
        return entry.pattern, merge_values(op == "add", entry.pattern, a.values, b.values)
    x, y = a.csr, b.csr
    m, nnz, x_nnz, y_nnz = x.shape[0], entry.indptr.item(-1), x.nnz, y.nnz
    keep = sources or not made
    aligned = nnz == x_nnz == y_nnz
    sources = keep and not aligned
    indices = output_pool.empty((nnz,), np.int32)
    src_size = nnz if sources else 1  # TVM refuses size 0
    src_a, src_b = np.empty(src_size, np.int32), np.empty(src_size, np.int32)
    values = output_pool.empty((nnz,), a.values.dtype)
    if nnz:
        launch(kernel("merge_fill", op == "add", value_dtype_name(values), sources),
               (a.values, b.values, values, x.indptr, x.indices, y.indptr, y.indices, entry.indptr, indices,
                src_a, src_b, entry.part, m, x_nnz, y_nnz, nnz, src_a.shape[0], entry.part.shape[0] - 1),
               x_nnz + y_nnz + m)
    if not keep:
        return Pattern(entry.indptr, indices, x.shape, None, own_indices=True), values
    part = row_partition(entry.indptr, entry.part.shape[0] - 1)
    if sources:
        entry.pattern = Pattern(entry.indptr, indices, x.shape, part, src_a, src_b)
    else:
        entry.pattern = Pattern(entry.indptr, indices, x.shape, part, aligned=True)
    return entry.pattern, values


def _merge_count(op: str, a: Operand, b: Operand) -> Merge:
    """The row pointer of ``op``'s result, by ``merge_count``, which checks the rows as it reads
    them (columns in range, strictly increasing) and sums the rows' counts itself."""
    x, y = a.csr, b.csr
    (m, n), parts, x_nnz, y_nnz = x.shape, _parts(), x.nnz, y.nnz
    # Chunks of equal work: a row's merge steps are its entries in both operands.
    part = row_partition((x.indptr, y.indptr), parts)
    indptr = np.empty(m + 1, np.int32)  # no int64 temporaries: fresh pages cost
    if m and (x_nnz or y_nnz):
        sizes, bad = np.empty(parts + 1, np.int64), np.empty(parts, np.int32)
        marked = int(n <= MARKED_COLUMNS and n * parts <= MARK_COST * (x_nnz + y_nnz))
        marker = np.empty(parts * n if marked else 1, np.int32)
        launch(kernel("merge_count", op == "add"), (x.indptr, x.indices, y.indptr, y.indices, indptr, sizes, bad,
                                                    part, marker, m, n, x_nnz, y_nnz, parts, marked,
                                                    marker.shape[0]), x_nnz + y_nnz + m)
        if any(bad.tolist()):  # a list of a few flags: faster than NumPy's any
            _refuse_rows(op, a, b)
        if sizes.item(-1) > _INT32_MAX:
            fail(op, f"the result has {sizes.item(-1)} stored entries, more than the int32 index range holds")
    else:
        indptr[:] = 0
    return Merge(indptr, part)


class UnsortedRows(ArgumentError):
    """A merge operand with a row out of order or a repeated column (``compute`` sorts a copy of
    a SciPy one and goes on); ``operand`` is "A", "B" or "mask"."""

    def __init__(self, message: str, operand: str) -> None:
        super().__init__(message)
        self.operand = operand


def _refuse_rows(op: str, a: Operand, b: Operand) -> None:
    """Name the first problem ``merge_count`` found: a column out of range or a row out of order."""
    for name, x in (("A", a), ("B", b)):
        csr = x.csr
        check_structure(f"{op}: {name}", csr.indptr, csr.indices, *csr.shape, csr.nnz)  # a column out of range
        problem = _unsorted_row(csr)
        if problem is not None:
            raise UnsortedRows(f"{op}: {name}: {problem}", name)
    raise AssertionError(f"{op}: the merge refused a row that the checks accept")  # a bug of ours


# --- the numeric phases -------------------------------------------------------------------------


def spgemm_values(a: Any, a_values: np.ndarray, b: Any, b_values: np.ndarray, out: Any) -> np.ndarray:
    """``A @ B`` at the entries of the structure ``out`` (``A``'s and ``B``'s structures ``a``,
    ``b``): products outside it are dropped, entries no product reaches are 0."""
    values = output_pool.empty((out.nnz,), a_values.dtype)
    if not out.nnz:
        return values
    if not a.nnz or not b.nnz:
        values[:] = 0
        return values
    (m, k), n = a.shape, b.shape[1]
    parts = out.part.shape[0] - 1
    pos = np.empty((parts, n), np.int32)
    launch(kernel("spgemm_values", value_dtype_name(a_values)),
           (a_values, b_values, values, a.indptr, a.indices, b.indptr, b.indices, out.indptr, out.indices, pos,
            out.part, m, n, k, a.nnz, b.nnz, out.nnz, parts), a.nnz + b.nnz + out.nnz)
    return values


def merge_values(union: bool, pattern: Pattern, a_values: np.ndarray, b_values: np.ndarray) -> np.ndarray:
    """The values of ``A + B`` (``union``) or ``A ⊙ B`` on ``pattern`` (from ``merge_product``)."""
    values = output_pool.empty((pattern.nnz,), a_values.dtype)
    if pattern.aligned:  # one pass, no gathers
        return (np.add if union else np.multiply)(a_values, b_values, out=values)
    if union and not (a_values.shape[0] and b_values.shape[0]):  # all from one operand
        return np.take(a_values, pattern.src_a, out=values) if a_values.shape[0] else np.take(
            b_values, pattern.src_b, out=values)
    if pattern.nnz:
        parts = pattern.part.shape[0] - 1
        launch(kernel("merge_values", union, value_dtype_name(a_values)),
               (a_values, b_values, values, pattern.indptr, pattern.src_a, pattern.src_b, pattern.part,
                pattern.shape[0], a_values.shape[0], b_values.shape[0], pattern.nnz, parts), pattern.nnz)
    return values


# --- results ------------------------------------------------------------------------------------


def _index_dtype(*operands: Operand) -> np.dtype:
    """The result's index dtype: int64 when an operand's index arrays are int64, else int32."""
    return np.dtype(np.int64) if any(o.index_dtype == np.int64 for o in operands) else np.dtype(np.int32)


def result(like: Operand, pattern: Pattern, values: np.ndarray, index_dtype: np.dtype) -> Any:
    """A CSR matrix of ``like``'s kind (SciPy class or torch) with ``pattern`` and ``values``."""
    m, n = pattern.shape
    if like.is_torch:
        torch = torch_module()
        crow, col = _torch_indices(pattern, index_dtype)
        # The structure was made by our kernels (sorted, in range): torch's checks are off.
        return torch.sparse_csr_tensor(crow, col, torch.from_numpy(values), size=(m, n), check_invariants=False)
    cls = type(like.source)
    # Copies: the caller may edit the result's index arrays; the cached pattern stays as it is.
    indices = pattern.indices
    if not (pattern.own_indices and indices.dtype == index_dtype):
        indices = _copy(indices, index_dtype)
    indptr = pattern.indptr.astype(index_dtype)
    state = _csr_state(cls) if index_dtype == np.int32 else None
    if state is None:
        out = cls((values, indices, indptr), shape=(m, n))
    else:
        out = cls.__new__(cls)
        out.__dict__.update(state)
        out.data, out.indices, out.indptr, out._shape = values, indices, indptr, (m, n)
    out.has_sorted_indices = pattern.ordered
    return out


#: What SciPy's CSR constructor leaves on a matrix besides its arrays and shape, per class, or
#: None where a result is made by the constructor (``_csr_state``).
_CSR_STATES: dict[type, Optional[dict]] = {}
#: The attributes SciPy 1.x's CSR constructor sets (``maxprint`` is the printing limit).
_CSR_ATTRIBUTES = {"data", "indices", "indptr", "_shape", "maxprint"}


def _csr_state(cls: type) -> Optional[dict]:
    """The attributes a result of class ``cls`` gets besides its arrays and shape, when it may
    be made without SciPy's constructor, else None.

    The constructor checks the arrays it is given (their dtypes, lengths, the index dtype their
    contents need) and costs 20-60 us on a cora-sized result, as long as the rest of a cached
    ``add``; the kernels made these arrays, valid and int32. So SciPy's own ``csr_matrix`` and
    ``csr_array`` results take the attributes the constructor sets on a one-entry matrix, checked
    once per class to be exactly the ones known here (a SciPy that sets others, or a subclass,
    goes through the constructor)."""
    if cls not in _CSR_STATES:
        import scipy.sparse as sparse

        state = None
        if cls in (sparse.csr_matrix, getattr(sparse, "csr_array", None)):
            probe = cls((np.zeros(1, np.float32), np.zeros(1, np.int32), np.array([0, 1], np.int32)), shape=(1, 1))
            attributes = vars(probe)
            if set(attributes) == _CSR_ATTRIBUTES and probe.indices.dtype == np.int32:
                state = {k: v for k, v in attributes.items() if k not in ("data", "indices", "indptr", "_shape")}
        _CSR_STATES[cls] = state
    return _CSR_STATES[cls]


def _copy(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``array.astype(dtype)`` on output memory (a large one reused across calls)."""
    out = output_pool.empty(array.shape, dtype)
    np.copyto(out, array, casting="unsafe")
    return out


def _torch_indices(pattern: Pattern, index_dtype: np.dtype) -> tuple[Any, Any]:
    """The index tensors of a torch result: made once per pattern and shared by its results, so
    an op on a result finds its prepared structure (and the pair's symbolic phase) again; made
    anew when one of them was edited in place since (its version moved)."""
    torch = torch_module()
    found = pattern.tensors.get(index_dtype)
    if found is not None:
        crow, col, versions = found
        if (crow._version, col._version) == versions:
            return crow, col
    crow = torch.from_numpy(pattern.indptr.astype(index_dtype))
    col = torch.from_numpy(pattern.indices.astype(index_dtype))
    pattern.tensors[index_dtype] = (crow, col, (crow._version, col._version))
    return crow, col


# --- the operations -----------------------------------------------------------------------------


def _call(op: str, A: Any, B: Any, mask: Any, ordered: bool = True) -> Any:
    """``op``'s result: through ``torch_library``'s custom ops when the call belongs to them (a
    ``CsrTensors`` operand, or a tensor under ``torch.compile``), through autograd when a
    tensor operand needs a gradient, else computed here (SciPy operands go straight there)."""
    torch = sys.modules.get("torch")
    kinds = (torch.Tensor, CsrTensors) if torch is not None else ()
    if kinds and (isinstance(A, kinds) or isinstance(B, kinds) or isinstance(mask, kinds)):
        from .autograd import _library as library

        lib = library(A, B, mask)
        if lib is not None:
            return getattr(lib, op)(A, B, mask) if op == "spgemm" else getattr(lib, op)(A, B)
        if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in (A, B)):
            return _autograd(op, A, B, mask)
    return compute(op, A, B, mask, ordered=ordered)[0]


def add(A: Any, B: Any) -> Any:
    """``A + B`` for two CSR matrices of one shape (SciPy or torch, the same kind and dtype):
    a CSR matrix of that kind on the union of their patterns, rows sorted. The rows of ``A``
    and ``B`` must be sorted without repeated columns."""
    return _call("add", A, B, None)


def multiply(A: Any, B: Any) -> Any:
    """The elementwise product ``A ⊙ B`` (SciPy's ``A.multiply(B)``) for two CSR matrices of one
    shape, on the intersection of their patterns; rows sorted without repeated columns, as in
    ``add``."""
    return _call("multiply", A, B, None)


def spgemm(A: Any, B: Any, mask: Any = None, *, sorted: bool = True) -> Any:
    """``A @ B`` for CSR ``A`` (m x k) and ``B`` (k x n), as a CSR matrix of their kind with
    sorted rows. With ``mask`` (a CSR matrix of shape (m, n), SciPy or torch, sorted rows
    without repeated columns; its values are not read), the result has exactly ``mask``'s
    pattern and holds ``A @ B`` there (0 where no product lands): the product is never formed
    elsewhere.

    ``sorted=False`` lets a SciPy result leave each row's columns in the order its products
    reach them, as MKL's ``sp2m`` does, which saves putting them in order (the result's
    ``has_sorted_indices`` is then False; SciPy sorts where it needs to). Results that are
    sorted anyway stay so: torch's (its CSR tensors keep sorted rows), a mask's pattern, and a
    product whose sorted pattern is cached."""
    if not isinstance(sorted, bool):
        raise TypeError(f"spgemm: sorted must be True or False, got {sorted!r}")
    return _call("spgemm", A, B, mask, sorted)


def compute(op: str, A: Any, B: Any, mask: Any, sources: bool = False, ordered: bool = True
            ) -> tuple[Any, Operand, Operand, Pattern]:
    """``op`` on ``A`` and ``B`` (and ``mask``): the result, the operands and the result's
    pattern (``sources``: one ``gradients`` can read after the call: for ``add``/``multiply``,
    one that says where each entry comes from; for ``spgemm``, one kept in the cache, whose
    columns the result does not own).

    The merges (``add``, ``multiply``, a mask) need sorted rows without repeated columns. A
    SciPy operand that has others (SciPy's own products leave rows unsorted) is taken as SciPy
    takes it: a copy, its repeats summed and its rows sorted (``sum_duplicates``), on every
    call; a torch one is refused, naming the row (torch keeps its CSR tensors sorted)."""
    operands, sorted_copies = {"A": A, "B": B, "mask": mask}, set()
    while True:
        try:
            return _compute(op, operands["A"], operands["B"], operands["mask"], sources, ordered)
        except UnsortedRows as unsorted:
            name, x = unsorted.operand, operands[unsorted.operand]
            if getattr(x, "format", None) != "csr" or name in sorted_copies:
                raise  # torch's (or a sorted copy refused: a bug of ours)
            operands[name] = x.copy()
            operands[name].sum_duplicates()
            sorted_copies.add(name)


def _compute(op: str, A: Any, B: Any, mask: Any, sources: bool, ordered: bool) -> tuple[Any, Operand, Operand, Pattern]:
    merge = op != "spgemm"
    a, b = operand(f"{op}: A", A, merge=merge), operand(f"{op}: B", B, merge=merge)
    _same_kind(op, a, b)
    if op == "spgemm":
        if a.shape[1] != b.shape[0]:
            fail("spgemm: B", f"has {b.shape[0]} rows, but A has {a.shape[1]} columns (A @ B needs "
                              f"A.shape[1] == B.shape[0]; shapes {a.shape} and {b.shape})")
        if mask is None:
            pattern, values = product_pattern(a, b, sources or a.is_torch, ordered or a.is_torch)
        else:
            pattern = _mask_pattern(operand("spgemm: mask", mask, values=False), (a.shape[0], b.shape[1]))
            values = spgemm_values(a.csr, a.values, b.csr, b.values, pattern)
    else:
        if a.shape != b.shape:
            fail(f"{op}: B", f"has shape {b.shape}, but A has shape {a.shape}; {op} needs equal shapes")
        pattern, values = merge_product(op, a, b, sources or a.is_torch)
    return result(a, pattern, values, _index_dtype(a, b)), a, b, pattern


def _mask_pattern(mask: Operand, shape: tuple[int, int]) -> Pattern:
    """The mask's structure as an output pattern (checked once per structure)."""
    if mask.shape != shape:
        fail("spgemm: mask", f"has shape {mask.shape}, but A @ B has shape {shape}")
    sorted_rows("spgemm: mask", mask.csr)  # its operand() checked the range
    return symbolic.get("mask", (mask.csr,), lambda: Pattern(mask.csr.indptr, mask.csr.indices, shape, mask.csr.part))


# --- gradients ----------------------------------------------------------------------------------


def transposed(csr: Any) -> tuple[Pattern, np.ndarray]:
    """The structure of ``csr``'s transpose and the permutation listing ``csr``'s values in its
    order (a stable sort of the entries by column), once per structure."""

    def make() -> tuple[Pattern, np.ndarray]:
        m, n = csr.shape
        rows = np.repeat(np.arange(m, dtype=np.int32), np.diff(csr.indptr))
        perm = np.argsort(csr.indices, kind="stable")
        t_indptr = np.zeros(n + 1, np.int32)
        np.cumsum(np.bincount(csr.indices, minlength=n), out=t_indptr[1:])
        return Pattern(t_indptr, rows[perm], (n, m), row_partition(t_indptr, _parts())), perm

    return symbolic.get("transposed", (csr,), make)


def _grad_values(G: Any, pattern: Pattern) -> np.ndarray:
    """The values of the output gradient ``G`` at ``pattern``'s entries: its own values when it
    is CSR with that many entries (autograd hands back the result's pattern), else read at the
    entries from its dense form."""
    torch = torch_module()
    if G.layout == torch.sparse_csr and G._nnz() == pattern.nnz:
        return plain(G.values()).contiguous().numpy()
    dense = plain(G.to_dense() if G.layout != torch.strided else G).numpy()
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return np.ascontiguousarray(dense[rows, pattern.indices])


def gradients(op: str, a: Operand, b: Operand, pattern: Pattern, g: np.ndarray,
              want: tuple[bool, bool]) -> tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """The gradients of ``A``'s and ``B``'s values (where ``want``) from the output gradient's
    values ``g`` at ``pattern``:

    - ``add``: dA = G at A's entries, dB = G at B's entries;
    - ``multiply``: dA = G ⊙ B at A's entries, dB = G ⊙ A at B's (0 outside the intersection);
    - ``spgemm``: dA = (G @ Bᵀ) at A's entries, dB = (Aᵀ @ G) at B's: SpGEMMs masked by the
      operands' own patterns (``spgemm_values``), over the cached transposed structures.
    """
    dA = dB = None
    if op == "spgemm":
        if want[0]:
            bt, perm = transposed(b.csr)
            dA = spgemm_values(pattern, g, bt, np.ascontiguousarray(b.values[perm]), a.csr)
        if want[1]:
            at, perm = transposed(a.csr)
            dB = spgemm_values(at, np.ascontiguousarray(a.values[perm]), pattern, g, b.csr)
        return dA, dB
    src_a, src_b = pattern.sources()
    if op == "add":
        if want[0]:
            dA = np.zeros(a.csr.nnz, g.dtype)
            dA[src_a[src_a >= 0]] = g[src_a >= 0]
        if want[1]:
            dB = np.zeros(b.csr.nnz, g.dtype)
            dB[src_b[src_b >= 0]] = g[src_b >= 0]
        return dA, dB
    if want[0]:
        dA = np.zeros(a.csr.nnz, g.dtype)
        dA[src_a] = g * b.values[src_b]
    if want[1]:
        dB = np.zeros(b.csr.nnz, g.dtype)
        dB[src_b] = g * a.values[src_a]
    return dA, dB


@functools.cache
def _function() -> Any:
    """The ``torch.autograd.Function`` of the three ops (defined when first needed)."""
    import torch

    class SparseSparse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A_tensor, B_tensor, op, A, B, mask):
            out, a, b, pattern = compute(op, A, B, mask, sources=True)
            ctx.op, ctx.a, ctx.b, ctx.pattern = op, a, b, pattern
            return out

        @staticmethod
        def backward(ctx, G):
            g = _grad_values(G, ctx.pattern)
            dA, dB = gradients(ctx.op, ctx.a, ctx.b, ctx.pattern, g, tuple(ctx.needs_input_grad[:2]))
            return _csr_grad(ctx.a, dA), _csr_grad(ctx.b, dB), None, None, None, None

    return SparseSparse


def _csr_grad(x: Operand, values: Optional[np.ndarray]) -> Any:
    """The gradient of a torch CSR operand: a CSR tensor with its pattern and ``values``."""
    if values is None:
        return None
    torch = torch_module()
    A = x.source
    return torch.sparse_csr_tensor(A.crow_indices(), A.col_indices(), torch.from_numpy(values), size=tuple(A.shape),
                                   check_invariants=False)


def _autograd(op: str, A: Any, B: Any, mask: Any) -> Any:
    """``op`` recording gradients for the values of ``A`` and ``B`` (torch sparse CSR tensors)."""
    torch = torch_module()
    sparse = [x if isinstance(x, torch.Tensor) else None for x in (A, B)]
    return _function().apply(sparse[0], sparse[1], op, A, B, mask)
