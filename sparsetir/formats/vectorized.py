"""Vectorized building blocks the conversions share: entry rows, stable orders, prefix tests.

Nothing here loops in Python over rows or entries. The helpers take and return plain NumPy
arrays; the conversions give them meaning.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

_INT32_MAX = int(np.iinfo(np.int32).max)


#: The dtype of position arrays (entry maps, orders, ids): NumPy's own index type, which fancy
#: indexing takes as it is; an int32 index array is converted on every use, which makes a
#: scatter about three times slower.
POSITION = np.dtype(np.intp)


def _scipy_index_dtype(limit: int) -> np.dtype:
    """The index dtype SciPy's compiled routines take for values below ``limit``."""
    return np.dtype(np.int32) if limit <= _INT32_MAX else np.dtype(np.int64)


def entry_rows(indptr: np.ndarray) -> np.ndarray:
    """The row of every stored entry of a CSR ``indptr`` (int32, length ``indptr[-1]``)."""
    rows = indptr.shape[0] - 1
    return np.repeat(np.arange(rows, dtype=np.int32), np.diff(indptr))


def offsets(counts: np.ndarray) -> np.ndarray:
    """The indptr of segments of ``counts`` sizes: ``[0, c0, c0 + c1, ...]`` (int64)."""
    out = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def run_starts(*keys: np.ndarray) -> np.ndarray:
    """Boolean flags marking where any of the equal-length ``keys`` differs from the previous
    position (position 0 always starts a run)."""
    n = keys[0].shape[0]
    flags = np.empty(n, bool)
    if n:
        flags[0] = True
        np.not_equal(keys[0][1:], keys[0][:-1], out=flags[1:])
        for key in keys[1:]:
            flags[1:] |= key[1:] != key[:-1]
    return flags


def run_ids(flags: np.ndarray) -> np.ndarray:
    """The run index of every position, from ``run_starts`` flags."""
    # A cumulative sum of booleans straight into int64 takes NumPy's slow casting path (ten times
    # slower here); into int32 and then widened it does not.
    narrow = np.int32 if flags.shape[0] <= _INT32_MAX else POSITION
    ids = np.cumsum(flags, dtype=narrow).astype(POSITION, copy=False)
    ids -= 1
    return ids


def divmod_pow2(values: np.ndarray, divisor: int) -> tuple[np.ndarray, np.ndarray]:
    """``divmod(values, divisor)`` for non-negative integer ``values``, with shifts when
    ``divisor`` is a power of two (several times faster than integer division)."""
    if divisor & (divisor - 1) == 0:
        shift = divisor.bit_length() - 1
        return values >> shift, values & (divisor - 1)
    return np.divmod(values, divisor)


def stable_counting_order(keys: np.ndarray, key_count: int) -> np.ndarray:
    """The stable order that sorts the integer ``keys`` (each in ``[0, key_count)``): positions
    with equal keys keep their order. O(len + key_count).

    A counting sort done by SciPy's compiled CSR -> CSC transposition: the keys are the column
    indices of a one-row matrix whose values are the positions, and the transposition moves
    each value to its column's segment, in order.
    """
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, POSITION)
    dtype = _scipy_index_dtype(max(n, key_count))
    one_row = scipy.sparse.csr_matrix(
        (np.arange(n, dtype=POSITION), keys.astype(dtype, copy=False), np.array([0, n], dtype)),
        shape=(1, key_count),
    )
    return one_row.tocsc().data


def transpose(indptr: np.ndarray, indices: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(column indptr (n + 1), row of each entry, position in CSR order of each entry), the
    entries of a CSR in column order, rows increasing within a column: one counting sort by
    SciPy's compiled CSR -> CSC transposition, carrying the positions as values."""
    m, n = shape
    nnz = indices.shape[0]
    positions = scipy.sparse.csr_matrix((np.arange(nnz, dtype=POSITION), indices, indptr), shape=shape)
    columns = positions.tocsc()
    return (columns.indptr.astype(np.int32, copy=False), columns.indices.astype(np.int32, copy=False),
            columns.data)
