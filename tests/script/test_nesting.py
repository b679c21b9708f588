"""How deeply scripts may nest, at both stages, and what reading a deep expression costs."""

from __future__ import annotations

import sparsetir
import pytest
from sparsetir.script import expr_parser

STAGE1 = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    K = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([I, J, K], "SRS", "s") as [i, j, k]:
        C[i, k] = C[i, k] + A[i, j]
"""


def _sum(term: str, count: int) -> str:
    return " + ".join([term] * count)


def test_constant_checks_visit_each_operation_once():
    """Each ``+`` of a constant sum asks whether its operands are constant; remembered answers
    keep that linear (it was quadratic: a 1,000-term sum took seconds, a fuzzer hang)."""
    visits = []
    children = expr_parser._children

    def counting(node):
        visits.append(node)
        return children(node)

    for terms in (200, 800):
        visits.clear()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(expr_parser, "_children", counting)
            sparsetir.parse(STAGE1.replace("C[i, k] + A[i, j]", f"T.float32({_sum('1', terms)})"))
        assert len(visits) < 10 * terms, (terms, len(visits))  # quadratic: terms**2 / 2
