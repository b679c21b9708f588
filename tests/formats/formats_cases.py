"""Shared cases for the ``sparsetir.formats`` tests: conversions, matrices, and references that
read a format's own arrays (independently of ``to_csr`` and ``slot_coordinates``)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from sparsetir import formats as F

#: Every conversion under test, by name: a function of one CSR input.
CONVERSIONS: dict[str, Callable] = {
    "csr": F.canonical,
    "csc": F.Csc.from_csr,
    "dcsr": F.Dcsr.from_csr,
    "csf": F.Csf.from_csr,
    "bsr1x1": lambda A: F.Bsr.from_csr(A, (1, 1)),
    "bsr2x3": lambda A: F.Bsr.from_csr(A, (2, 3)),
    "bsr4x4": lambda A: F.Bsr.from_csr(A, (4, 4)),
    "bsr1x8": lambda A: F.Bsr.from_csr(A, (1, 8)),
    "bsr5x1": lambda A: F.Bsr.from_csr(A, (5, 1)),
    "ell1": lambda A: F.Ell.from_csr(A, 1),
    "ell3": lambda A: F.Ell.from_csr(A, 3),
    "ell32": lambda A: F.Ell.from_csr(A, 32),
    "padded1": lambda A: F.PaddedCsr.from_csr(A, 1),
    "padded4": lambda A: F.PaddedCsr.from_csr(A, 4),
    "hybrid1": lambda A: F.Hybrid.from_csr(A, 1, (1, 2, 4)),
    "hybrid3": lambda A: F.Hybrid.from_csr(A, 3, (1, 2, 4, 8)),
    "hybrid_one_width": lambda A: F.Hybrid.from_csr(A, 2, (2,)),
}


def canonical_scipy(A) -> sp.csr_matrix:
    """SciPy's canonical form of a CSR input (a copy: sorted, duplicates summed, zeros kept)."""
    if isinstance(A, F.CsrArrays):
        A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=A.shape)
    elif not isinstance(A, (sp.csr_matrix, sp.csr_array)):  # torch
        A = sp.csr_matrix((A.values().numpy(), A.col_indices().numpy(), A.crow_indices().numpy()), shape=tuple(A.shape))
    B = sp.csr_matrix(A, copy=True)
    B.sum_duplicates()
    return B


def assert_same_csr(B: sp.csr_matrix, A: sp.csr_matrix) -> None:
    """``B`` equals the canonical ``A`` exactly: same arrays, same values, same stored zeros."""
    assert B.shape == A.shape
    assert (B != A).nnz == 0
    np.testing.assert_array_equal(B.indptr, A.indptr)
    np.testing.assert_array_equal(B.indices, A.indices)
    np.testing.assert_array_equal(B.data, A.data)
    assert B.dtype == A.dtype


def slot_map(f) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, values, real) of every slot of ``f``'s flat value array, read from the
    format's own arrays in the test's own way; ``real`` marks slots holding an entry of the
    matrix (not padding or fill)."""
    if isinstance(f, (F.Csr, F.Dcsr)):
        counts = np.diff(f.indptr)
        rows = np.repeat(np.arange(counts.size), counts)
        if isinstance(f, F.Dcsr):
            rows = f.row_indices[rows]
        return rows, f.indices, f.data, np.ones(f.slots, bool)
    if isinstance(f, F.Csc):
        counts = np.diff(f.indptr)
        return f.indices, np.repeat(np.arange(counts.size), counts), f.data, np.ones(f.slots, bool)
    if isinstance(f, F.Csf):
        rows, cols = csf_coordinates(f)
        return rows, cols, f.data, np.ones(f.slots, bool)
    if isinstance(f, F.Bsr):
        br, bc = f.blocksize
        block_rows = np.repeat(np.arange(f.indptr.size - 1), np.diff(f.indptr))
        i, j = np.meshgrid(np.arange(br), np.arange(bc), indexing="ij")
        rows = (block_rows[:, None, None] * br + i[None]).reshape(-1)
        cols = (f.indices[:, None, None] * bc + j[None]).reshape(-1)
        inside = (rows < f.shape[0]) & (cols < f.shape[1])
        return rows, cols, f.data.reshape(-1), inside
    if isinstance(f, F.Ell):
        rows, cols = _ell_slots(f.rows, f.indices, f.counts, f.width)
        return rows, cols, f.data.reshape(-1), _ell_real(f.counts, f.width)
    if isinstance(f, F.PaddedCsr):
        chunks = np.diff(f.indptr)
        chunk_rows = np.repeat(np.arange(chunks.size), chunks)
        # The real entries of chunk k of row i: min(pad, lengths[i] - k * pad).
        k = np.arange(chunk_rows.size) - np.repeat(f.indptr[:-1], chunks)
        counts = np.minimum(f.pad, f.lengths[chunk_rows] - k * f.pad)
        rows, cols = _ell_slots(chunk_rows, f.indices.reshape(-1, f.pad), counts, f.pad)
        return rows, cols, f.data, _ell_real(counts, f.pad)
    if isinstance(f, F.Hybrid):
        parts = [(_ell_slots(b.rows, b.indices, b.counts, b.width), _ell_real(b.counts, b.width)) for b in f.buckets]
        rows = np.concatenate([p[0][0] for p in parts])
        cols = np.concatenate([p[0][1] for p in parts])
        return rows, cols, f.data, np.concatenate([p[1] for p in parts])
    raise TypeError(type(f))


def csf_coordinates(f) -> tuple[np.ndarray, ...]:
    """The coordinates of every leaf of a CSF, found by binary search in each level's indptr."""
    node = np.arange(f.slots)
    coords = []
    for level in reversed(range(len(f.shape))):
        coords.append(f.indices[level][node])
        node = np.searchsorted(f.indptr[level], node, side="right") - 1
    return tuple(reversed(coords))


def _ell_slots(rows, indices, counts, width):
    return np.repeat(rows, width), np.asarray(indices).reshape(-1)


def _ell_real(counts, width):
    return (np.arange(width)[None, :] < np.asarray(counts)[:, None]).reshape(-1)


def dense_of(f) -> np.ndarray:
    """The dense matrix ``f`` stands for, from its own arrays; asserts that padding and fill
    slots hold 0 and that no two real slots share a coordinate."""
    rows, cols, values, real = slot_map(f)
    assert rows.shape == cols.shape == values.shape == real.shape == (f.slots,)
    assert np.all(values[~real] == 0), "a padding or fill slot holds a value"
    out = np.zeros(f.shape, values.dtype)
    r, c = rows[real], cols[real]
    if r.size:
        keys = r.astype(np.int64) * max(f.shape[1], 1) + c
        assert np.unique(keys).size == keys.size, "two real slots share a coordinate"
    out[r, c] = values[real]
    return out


def padding(f) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the padding slots of an ELL-like format."""
    rows, cols, _, real = slot_map(f)
    return rows[~real], cols[~real]


# --- matrices --------------------------------------------------------------------------------


def arrays(rows, cols, values, shape, index_dtype=np.int32, value_dtype=np.float32, shuffle_seed=None) -> F.CsrArrays:
    """A CSR input holding the COO entries in the given order within each row (rows grouped
    stably), so unsorted columns and duplicates stay as given."""
    rows = np.asarray(rows, np.int64)
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return F.from_arrays(indptr.astype(index_dtype), np.asarray(cols, np.int64)[order].astype(index_dtype),
                         np.asarray(values, value_dtype)[order], shape)


def _dense_row(n=37):
    A = sp.random(9, n, density=0.2, format="lil", random_state=4, dtype=np.float32)
    A[4, :] = np.arange(1, n + 1)
    return A.tocsr()


def _long_rows(width, extra):
    """Rows of width + 1 and of many widths + extra entries (hybrid/ELL splitting)."""
    n = 8 * width + extra + 5
    A = sp.lil_matrix((4, n), dtype=np.float32)
    A[1, 3:3 + width + 1] = 1.0
    A[2, 1:1 + 6 * width + extra] = np.arange(6 * width + extra) + 1.0
    A[3, 0] = 2.0
    return A.tocsr()


#: Small matrices with the awkward cases, by name (each a function making a fresh input).
EDGE_CASES: dict[str, Callable] = {
    "0x0": lambda: sp.csr_matrix((0, 0), dtype=np.float32),
    "0_rows": lambda: sp.csr_matrix((0, 7), dtype=np.float32),
    "0_columns": lambda: sp.csr_matrix((6, 0), dtype=np.float32),
    "all_rows_empty": lambda: sp.csr_matrix((5, 9), dtype=np.float32),
    "single_row": lambda: sp.random(1, 40, density=0.3, format="csr", random_state=2, dtype=np.float32),
    "single_column": lambda: sp.random(30, 1, density=0.5, format="csr", random_state=3, dtype=np.float32),
    "full_dense_row": _dense_row,
    "fully_dense": lambda: sp.csr_matrix(np.arange(1, 13, dtype=np.float32).reshape(3, 4)),
    "duplicates": lambda: arrays([0, 0, 0, 2, 2, 1], [3, 1, 3, 0, 0, 2], [1, 2, 4, 8, 16, 32], (3, 5)),
    "unsorted": lambda: arrays([0, 0, 0, 1, 1, 3], [4, 0, 2, 3, 1, 0], [1, 2, 3, 4, 5, 6], (4, 5)),
    "explicit_zeros": lambda: arrays([0, 0, 1, 2, 2], [1, 2, 0, 3, 3], [0, 5, 0, 0, 0], (3, 4)),
    "int64_indices": lambda: arrays([0, 1, 1, 4], [2, 0, 5, 1], [1, 2, 3, 4], (5, 6), index_dtype=np.int64),
    "float64": lambda: sp.random(11, 13, density=0.3, format="csr", random_state=5, dtype=np.float64),
    "not_divisible": lambda: sp.random(13, 11, density=0.35, format="csr", random_state=6, dtype=np.float32),
    "long_rows_w4": lambda: _long_rows(4, 1),
    "long_rows_w8": lambda: _long_rows(8, 3),
    "long_rows_w32": lambda: _long_rows(32, 1),
    "csr_array": lambda: sp.csr_array(sp.random(8, 9, density=0.3, format="csr", random_state=7, dtype=np.float32)),
}


@st.composite
def matrices(draw, max_dim: int = 12, max_entries: int = 40):
    """A CSR input: random shape, entries in random order within rows, duplicates, explicit
    zeros (small integer values, so sums of duplicates are exact), int32 or int64 indices,
    float32 or float64 values."""
    m = draw(st.integers(0, max_dim))
    n = draw(st.integers(0, max_dim))
    count = draw(st.integers(0, max_entries)) if m and n else 0
    rows = draw(st.lists(st.integers(0, max(m - 1, 0)), min_size=count, max_size=count))
    cols = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=count, max_size=count))
    values = draw(st.lists(st.integers(-3, 3), min_size=count, max_size=count))
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    value_dtype = draw(st.sampled_from([np.float32, np.float64]))
    return arrays(rows, cols, values, (m, n), index_dtype, value_dtype)
