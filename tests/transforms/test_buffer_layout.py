"""A buffer is laid out from the root axis down: other layouts parse, but are refused (located)
before lowering starts."""

from __future__ import annotations

import pytest

import sparsetir

HEADER = '''from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    K = T.dense_fixed(4)
    A = T.match_sparse_buffer(a, {axes}, "float32")
    with T.sp_iter([I, J], "SS", "fill") as [i, j]:
        A[{index}] = T.float32(1)
'''


@pytest.mark.parametrize("axes,index", [("(K, I, J)", "0, i, j"), ("(I, K, J)", "i, 0, j")])
def test_an_axis_not_right_after_its_ancestors_is_refused_at_the_buffer(axes, index):
    f = sparsetir.parse(HEADER.format(axes=axes, index=index))
    with pytest.raises(sparsetir.VerifyError) as info:
        sparsetir.lower_sparse_iter(f)
    err = info.value
    assert err.line == 9  # the buffer's declaration
    assert "laid out from the root axis down to be lowered" in err.message and "'J' must come right after its ancestors, as (I, J, ...)" in err.message


def test_a_layout_from_the_root_down_lowers():
    f = sparsetir.parse(HEADER.format(axes="(I, J, K)", index="i, j, 0"))
    sparsetir.lower_sparse_buffer(sparsetir.lower_sparse_iter(f))
