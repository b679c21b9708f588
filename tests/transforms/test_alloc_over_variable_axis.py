"""``T.alloc_sparse_buffer`` over a variable axis (seed 000's ``(I, J2)`` intermediate): stored
flat like a value array, ``(nnz,)`` plus a dimension per fixed axis after it, allocated by that
total and indexed through the indptr."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
from sparsetir._tvm import tvm

SOFTMAX = '''from sparsetir.script import tir as T


@T.prim_func
def csr_softmax(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32,
                nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J), "float32")
    ROW_MAX = T.alloc_sparse_buffer((I,), "float32")
    EXP = T.alloc_sparse_buffer((I, J), "float32")
    ROW_SUM = T.alloc_sparse_buffer((I,), "float32")
    with T.sp_iter([I, J], "SR", "row_max") as [i, j]:
        with T.init():
            ROW_MAX[i] = T.min_value("float32")
        ROW_MAX[i] = T.max(ROW_MAX[i], A[i, j])
    with T.sp_iter([I, J], "SS", "exp") as [i, j]:
        EXP[i, j] = T.exp(A[i, j] - ROW_MAX[i])
    with T.sp_iter([I, J], "SR", "row_sum") as [i, j]:
        with T.init():
            ROW_SUM[i] = T.float32(0)
        ROW_SUM[i] = ROW_SUM[i] + EXP[i, j]
    with T.sp_iter([I, J], "SS", "normalize") as [i, j]:
        B[i, j] = EXP[i, j] / ROW_SUM[i]
'''

# The seed's ragged intermediate, with a feature axis after it: (I, J2, F) is (nnz, feat).
RAGGED = '''from sparsetir.script import tir as T


@T.prim_func
def ragged_two_pass(x: T.handle, y: T.handle, out: T.handle, indptr: T.handle, m: T.int32, n: T.int32,
                    nnz: T.int32, feat: T.int32) -> None:
    I = T.dense_fixed(m)
    J2 = T.dense_variable(I, (n, nnz), indptr)
    F = T.dense_fixed(feat)
    X = T.match_sparse_buffer(x, (I, J2, F), "float32")
    Y = T.match_sparse_buffer(y, (I, F), "float32")
    OUT = T.match_sparse_buffer(out, (I, F), "float32")
    SCALED = T.alloc_sparse_buffer((I, J2, F), "float32")
    with T.sp_iter([I, J2, F], "SSS", "scale") as [i, j, f]:
        SCALED[i, j, f] = X[i, j, f] * Y[i, f] + T.cast(j, "float32")
    with T.sp_iter([I, F, J2], "SSR", "reduce") as [i, f, j]:
        with T.init():
            OUT[i, f] = T.float32(0)
        OUT[i, f] = OUT[i, f] + SCALED[i, j, f]
'''

LENGTHS = {  # row lengths
    "random": [3, 0, 5, 1, 7, 2, 0, 4],
    "empty_rows": [0, 0, 2, 0, 0],
    "single_row": [6],
    "long_row": [2, 640, 0, 1],
}


def _csr(rng, lengths, n):
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths] + [np.zeros(0)])
    return indptr, indices.astype(np.int32)


def _softmax_reference(a, indptr):
    out = np.empty(len(a))
    for r in range(len(indptr) - 1):
        row = a[indptr[r]:indptr[r + 1]].astype(np.float64)
        if row.size:
            e = np.exp(row - row.max())
            out[indptr[r]:indptr[r + 1]] = e / e.sum()
    return out


@pytest.mark.parametrize("schedule", ["default", "none"])
@pytest.mark.parametrize("case", sorted(LENGTHS))
def test_softmax_through_an_intermediate_over_the_sparse_axis(case, schedule):
    kernel = sparsetir.build(sparsetir.parse(SOFTMAX), schedule=schedule)
    rng = np.random.default_rng(11)
    lengths = LENGTHS[case]
    n = max(max(lengths), 1) + 3
    indptr, indices = _csr(rng, lengths, n)
    a = rng.uniform(-3, 3, len(indices)).astype(np.float32)
    b = np.full_like(a, np.nan)
    kernel(a, b, indptr, indices, len(lengths), n, len(indices))
    np.testing.assert_allclose(b, _softmax_reference(a, indptr), rtol=1e-5, atol=1e-6)
    # scipy's view: each non-empty row of the result sums to one
    sums = np.asarray(sp.csr_matrix((b, indices, indptr), shape=(len(lengths), n)).sum(axis=1)).ravel()
    np.testing.assert_allclose(sums[np.asarray(lengths) > 0], 1, rtol=1e-5)


@pytest.mark.parametrize("case", sorted(LENGTHS))
def test_ragged_intermediate_with_a_feature_axis(case):
    kernel = sparsetir.build(sparsetir.parse(RAGGED))
    rng = np.random.default_rng(12)
    lengths = np.asarray(LENGTHS[case])
    m, feat, n = len(lengths), 3, max(lengths.max(), 1)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    x = rng.uniform(-1, 1, (indptr[-1], feat)).astype(np.float32)
    y = rng.uniform(-1, 1, (m, feat)).astype(np.float32)
    out = np.full((m, feat), np.nan, np.float32)
    kernel(x, y, out, indptr, m, n, int(indptr[-1]), feat)
    rows = np.repeat(np.arange(m), lengths)
    cols = np.arange(indptr[-1]) - indptr[rows]
    expected = np.zeros((m, feat))
    np.add.at(expected, rows, x.astype(np.float64) * y[rows] + cols[:, None])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_the_intermediate_is_allocated_by_its_nnz_and_round_trips():
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(SOFTMAX))
    again = sparsetir.parse(f2.script())
    sparsetir.assert_structural_equal(again, f2)
    f3 = sparsetir.lower_sparse_buffer(f2)
    text = f3.script()
    assert "EXP = T.sblock_alloc_buffer((nnz,))" in text
    assert "EXP[indptr[vi] + vj]" in text
    assert sparsetir.structural_equal(tvm.script.from_source(text), f3)
