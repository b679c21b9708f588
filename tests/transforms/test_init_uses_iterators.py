"""T.init() is placed where every iterator it uses is bound, in its value as well as its indices."""

from __future__ import annotations

import numpy as np

import sparsetir

# The init's index uses no iterator, its value uses the spatial iterator i.
ROW_SUMS_FROM = '''
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32,
      nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    One = T.dense_fixed(1)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    C = T.match_sparse_buffer(c, (One,), "float32")
    with T.sp_iter([I, J], "SR", "acc") as [i, j]:
        with T.init():
            C[0] = B[i]
        C[0] = C[0] + A[i, j]
'''


def test_an_init_whose_value_uses_a_spatial_iterator_lowers_and_builds():
    kernel = sparsetir.build(sparsetir.parse(ROW_SUMS_FROM))
    indptr = np.array([0, 2, 3], np.int32)
    indices = np.array([0, 1, 1], np.int32)
    a = np.array([1, 2, 4], np.float32)
    b = np.array([10, 20], np.float32)
    c = np.zeros(1, np.float32)
    kernel(a=a, b=b, c=c, indptr=indptr, indices=indices, m=2, n=2, nnz=3)
    # Each row i restarts C[0] from B[i] (the init runs per spatial point), so the last row wins.
    np.testing.assert_allclose(c, [20 + 4])
