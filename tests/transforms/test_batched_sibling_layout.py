"""The original SparseTIR's batched matmul (its lowering tests' ``bmm``): a batch axis ``B``, the
extents ``I``, ``J``, ``K`` of each batch's matrices, and ``X`` laid out ``(B, I, IJ)`` with ``IJ``
a variable axis under ``B`` whose indptr holds each batch's offset in ``x``. ``IJ`` comes after
its sibling ``I``, not right after its parent: each batch's block of ``IJ`` positions is split
evenly among the rows of ``I``."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import tvm

BMM = '''from sparsetir.script import tir as T


@T.prim_func
def bmm(x: T.handle, y: T.handle, z: T.handle, indptr_i: T.handle, indptr_j: T.handle, indptr_k: T.handle,
        indptr_ij: T.handle, indptr_jk: T.handle, indptr_ik: T.handle, batch_size: T.int32, nnz_i: T.int32,
        nnz_j: T.int32, nnz_k: T.int32, nnz_ij: T.int32, nnz_jk: T.int32, nnz_ik: T.int32) -> None:
    B = T.dense_fixed(batch_size)
    I = T.dense_variable(B, (32768, nnz_i), indptr_i, "int32")
    J = T.dense_variable(B, (32768, nnz_j), indptr_j, "int32")
    K = T.dense_variable(B, (32768, nnz_k), indptr_k, "int32")
    IJ = T.dense_variable(B, (32768, nnz_ij), indptr_ij, "int32")
    JK = T.dense_variable(B, (32768, nnz_jk), indptr_jk, "int32")
    IK = T.dense_variable(B, (32768, nnz_ik), indptr_ik, "int32")
    X = T.match_sparse_buffer(x, (B, I, IJ), "float32")
    Y = T.match_sparse_buffer(y, (B, J, JK), "float32")
    Z = T.match_sparse_buffer(z, (B, I, IK), "float32")
    with T.sp_iter([B, I, J, K], "SSRS", "bmm") as [b, i, j, k]:
        with T.init():
            Z[b, i, k] = T.float32(0)
        Z[b, i, k] = Z[b, i, k] + X[b, i, j] * Y[b, j, k]
'''

CASES = {  # (rows, inner, cols) of each batch
    "random": ([3, 1, 4, 2], [2, 5, 1, 3], [4, 2, 3, 1]),
    "empty_batches": ([0, 2, 3, 2], [3, 0, 2, 1], [2, 3, 0, 2]),
    "single_batch": ([5], [4], [3]),
    "large_batch": ([2, 120, 1], [3, 90, 2], [1, 70, 4]),
}


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def _inputs(rows, inner, cols, seed=0):
    rng = np.random.default_rng(seed)
    rows, inner, cols = (np.asarray(v) for v in (rows, inner, cols))
    xs = [rng.uniform(-1, 1, (r, c)).astype(np.float32) for r, c in zip(rows, inner)]
    ys = [rng.uniform(-1, 1, (r, c)).astype(np.float32) for r, c in zip(inner, cols)]
    x = np.concatenate([a.ravel() for a in xs])
    y = np.concatenate([a.ravel() for a in ys])
    z = np.full(int(rows @ cols), np.nan, np.float32)
    args = dict(x=x, y=y, z=z, indptr_i=_offsets(rows), indptr_j=_offsets(inner), indptr_k=_offsets(cols),
                indptr_ij=_offsets(rows * inner), indptr_jk=_offsets(inner * cols), indptr_ik=_offsets(rows * cols),
                batch_size=len(rows), nnz_i=int(rows.sum()), nnz_j=int(inner.sum()), nnz_k=int(cols.sum()),
                nnz_ij=len(x), nnz_jk=len(y), nnz_ik=len(z))
    return args, xs, ys


def _reference(xs, ys):
    """Each batch's product, by NumPy, laid out like z: the batches' row-major blocks in order."""
    return np.concatenate([(a.astype(np.float64) @ b.astype(np.float64)).ravel() for a, b in zip(xs, ys)])


@pytest.fixture(scope="module")
def func():
    return sparsetir.parse(BMM)


@pytest.mark.parametrize("schedule", ["default", "none"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bmm_matches_a_per_batch_matmul(func, case, schedule):
    kernel = sparsetir.build(func, schedule=schedule)
    args, xs, ys = _inputs(*CASES[case])
    kernel(**args)
    np.testing.assert_allclose(args["z"], _reference(xs, ys), rtol=1e-5, atol=1e-5)


def test_stages_round_trip(func):
    sparsetir.assert_structural_equal(sparsetir.parse(func.script()), func)
    f2 = sparsetir.lower_sparse_iter(func)
    again = sparsetir.parse(f2.script())
    sparsetir.assert_structural_equal(again, f2)
    assert again.script() == f2.script()
    f3 = sparsetir.lower_sparse_buffer(f2)
    assert sparsetir.structural_equal(tvm.script.from_source(f3.script()), f3)
    # the batch's offset, then rows of (block // rows of I) positions
    assert "x[indptr_ij[vb] + vi * ((indptr_ij[vb + 1] - indptr_ij[vb]) // T.max(indptr_i[vb + 1] - indptr_i[vb], 1)) + vj]" \
        in f3.script()


def test_a_sparse_axis_after_a_sibling_is_still_refused():
    text = BMM.replace('IJ = T.dense_variable(B, (32768, nnz_ij), indptr_ij, "int32")',
                       'IJ = T.sparse_variable(B, (32768, nnz_ij), (indptr_ij, indices_ij), "int32")')
    text = text.replace("indptr_ik: T.handle,", "indptr_ik: T.handle, indices_ij: T.handle,")
    f = sparsetir.parse(text)
    with pytest.raises(sparsetir.VerifyError) as info:
        sparsetir.lower_sparse_iter(f)
    assert (info.value.line, info.value.col) == (15, 9)  # the declaration of X
    assert "axis 'IJ' must come right after its ancestors, as (B, IJ, ...)" in info.value.message
