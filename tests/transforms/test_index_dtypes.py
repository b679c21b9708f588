"""Lowering with 64-bit (and narrow) extents: loops and block vars take the axis's idtype."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import sparsetir

CSR_SPMM_I64 = '''
from sparsetir.script import tir as T


@T.prim_func
def csr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
             m: T.int64, n: T.int64, feat_size: T.int64, nnz: T.int64) -> None:
    I = T.dense_fixed(m, idtype="int64")
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int64")
    J_detach = T.dense_fixed(n, idtype="int64")
    K = T.dense_fixed(feat_size, idtype="int64")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([I, J, K], "SRS", "csr_spmm") as [i, j, k]:
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + A[i, j] * B[j, k]
'''

# An int32 axis whose length is an int64 (or uint8) scalar: the extent is cast to int32.
SCALE_ROWS = '''
from sparsetir.script import tir as T


@T.prim_func
def scale(x: T.handle, y: T.handle, n: T.{ltype}) -> None:
    I = T.dense_fixed(n)
    X = T.match_sparse_buffer(x, (I,), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    with T.sp_iter([I], "S", "scale") as [i]:
        Y[i] = X[i] * T.float32(2)
'''

# A lookup into an int64 sparse axis: the binary search runs in int64.
SDDMM_LOOKUP_I64 = '''
from sparsetir.script import tir as T


@T.prim_func
def gather(a: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int64, nnz: T.int64) -> None:
    I = T.dense_fixed(m, idtype="int64")
    J = T.sparse_variable(I, (m, nnz), (indptr, indices), "int64")
    Jd = T.dense_fixed(m, idtype="int64")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    C = T.match_sparse_buffer(c, (I, Jd), "float32")
    with T.sp_iter([I, Jd], "SS", "gather") as [i, j]:
        C[i, j] = A[i, j]
'''


def _csr(m: int, n: int, seed: int) -> scipy.sparse.csr_matrix:
    a = scipy.sparse.random(m, n, density=0.1, format="csr", random_state=seed, dtype=np.float32)
    a.sort_indices()
    return a


def test_int64_csr_spmm_lowers_builds_and_matches_scipy():
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(CSR_SPMM_I64))
    assert "int64" in str(f2)
    kernel = sparsetir.build(f2)
    a = _csr(60, 45, 0)
    x = np.random.default_rng(0).standard_normal((45, 7), dtype=np.float32)
    c = np.full((60, 7), np.nan, np.float32)
    kernel(a=a.data, b=x, c=c, indptr=a.indptr.astype(np.int64), indices=a.indices.astype(np.int64),
           m=60, n=45, feat_size=7, nnz=a.nnz)
    np.testing.assert_allclose(c, a @ x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ltype", ["int64", "uint8"])
def test_a_length_of_another_integer_type_is_cast_to_the_axis_idtype(ltype):
    kernel = sparsetir.build(sparsetir.parse(SCALE_ROWS.format(ltype=ltype)))
    x = np.arange(37, dtype=np.float32)
    y = np.zeros(37, np.float32)
    kernel(x=x, y=y, n=37)
    np.testing.assert_allclose(y, 2 * x)


def test_a_coordinate_lookup_in_an_int64_axis_searches_in_int64():
    kernel = sparsetir.build(sparsetir.parse(SDDMM_LOOKUP_I64))
    a = _csr(30, 30, 1)
    c = np.full((30, 30), np.nan, np.float32)
    kernel(a=a.data, c=c, indptr=a.indptr.astype(np.int64), indices=a.indices.astype(np.int64), m=30, nnz=a.nnz)
    np.testing.assert_allclose(c, a.toarray())


@pytest.mark.parametrize("text", [CSR_SPMM_I64, SCALE_ROWS.format(ltype="int64"), SCALE_ROWS.format(ltype="uint8"),
                                  SDDMM_LOOKUP_I64], ids=["spmm", "int64-length", "uint8-length", "lookup"])
def test_stage2_with_int64_positions_round_trips(text):
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(text))
    again = sparsetir.parse(f2.script(), "<stage2>")
    sparsetir.assert_structural_equal(again, f2)
    assert again.script() == f2.script()
