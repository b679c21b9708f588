"""A variable axis under a sparse fixed one (seed 000's ``J3`` under ``J1``): its indptr has a row
per stored position of the whole chain above it (rows x fixed width), and the default argument
checks accept exactly that."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir.driver import constraints_of
from sparsetir.errors import ArgumentError
from sparsetir.runtime import IndptrConstraint

SCRIPT = '''from sparsetir.script import tir as T


@T.prim_func
def csf_fixed(a: T.handle, x: T.handle, out: T.handle, indices_1: T.handle, indptr_3: T.handle,
              indices_3: T.handle, m: T.int32, n: T.int32, c: T.int32, n1: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J1 = T.sparse_fixed(I, (n, c), indices_1)
    J3 = T.sparse_variable(J1, (n1, nnz), (indptr_3, indices_3))
    J_detach = T.dense_fixed(n)
    K_detach = T.dense_fixed(n1)
    A = T.match_sparse_buffer(a, (I, J1, J3), "float32")
    X = T.match_sparse_buffer(x, (J_detach, K_detach), "float32")
    OUT = T.match_sparse_buffer(out, (I,), "float32")
    with T.sp_iter([I, J1, J3], "SRR", "contract") as [i, j, k]:
        with T.init():
            OUT[i] = T.float32(0)
        OUT[i] = OUT[i] + A[i, j, k] * X[j, k]
'''


def _inputs(rng, m, n, c, n1, fiber_lengths):
    """A CSF tensor: c distinct sorted columns per row of I, then a sorted fiber under each."""
    indices_1 = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for _ in range(m)]).astype(np.int32)
    lengths = fiber_lengths(rng, m * c, n1)
    indptr_3 = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices_3 = np.concatenate([np.sort(rng.choice(n1, k, replace=False)) for k in lengths] + [np.zeros(0)])
    nnz = int(indptr_3[-1])
    return dict(
        a=rng.uniform(-1, 1, nnz).astype(np.float32), x=rng.uniform(-1, 1, (n, n1)).astype(np.float32),
        out=np.full(m, np.nan, np.float32), indices_1=indices_1, indptr_3=indptr_3,
        indices_3=indices_3.astype(np.int32), m=m, n=n, c=c, n1=n1, nnz=nnz,
    )


def _reference(args):
    """out[i] = sum over stored (j, k) of A[i, j, k] * X[j, k], from a dense copy of A."""
    m, n, c, n1 = args["m"], args["n"], args["c"], args["n1"]
    dense = np.zeros((m, n, n1))
    for fiber in range(m * c):
        i, j = fiber // c, args["indices_1"][fiber]
        lo, hi = args["indptr_3"][fiber], args["indptr_3"][fiber + 1]
        dense[i, j, args["indices_3"][lo:hi]] = args["a"][lo:hi]
    return np.einsum("ijk,jk->i", dense, args["x"].astype(np.float64))


CASES = {
    "random": (6, 9, 3, 7, lambda rng, count, n1: rng.integers(0, n1 + 1, count)),
    "empty_fibers": (5, 6, 2, 5, lambda rng, count, n1: np.where(np.arange(count) % 3 == 0, 0, 2)),
    "single_row": (1, 8, 4, 6, lambda rng, count, n1: rng.integers(1, n1 + 1, count)),
    "long_fibers": (3, 5, 2, 700, lambda rng, count, n1: np.where(np.arange(count) == 2, 650, 1)),
}


@pytest.fixture(scope="module")
def func():
    return sparsetir.parse(SCRIPT)


@pytest.fixture(scope="module")
def kernel(func):
    return sparsetir.build(func)


@pytest.mark.parametrize("case", sorted(CASES))
def test_checked_kernel_matches_dense_reference(kernel, case):
    args = _inputs(np.random.default_rng(3), *CASES[case])
    expected = _reference(args)
    kernel(**args)  # the default argument checks accept the valid indptr
    np.testing.assert_allclose(args["out"], expected, rtol=2e-5, atol=2e-5)


def test_indptr_rows_are_the_positions_of_the_chain_above(func):
    checks = [c for c in constraints_of(sparsetir.lower_sparse_iter(func)) if isinstance(c, IndptrConstraint)]
    assert {c.array for c in checks} == {"indptr_3"}
    assert all([str(f) for f in c.rows] == ["m", "c"] for c in checks)


def test_an_indptr_with_one_row_per_fixed_column_is_refused(kernel):
    args = _inputs(np.random.default_rng(3), *CASES["random"])
    args["indptr_3"] = args["indptr_3"][: args["c"] + 1].copy()
    with pytest.raises(ArgumentError, match=r"argument 'indptr_3': expected shape \(m \* c \+ 1,\) = \(19,\), got \(4,\)"):
        kernel(**args)


def test_a_decreasing_indptr_of_the_right_length_is_refused(kernel):
    args = _inputs(np.random.default_rng(3), *CASES["random"])
    args["indptr_3"][5] = args["indptr_3"][6] + 1
    with pytest.raises(ArgumentError, match=r"argument 'indptr_3': not non-decreasing at position 5"):
        kernel(**args)


def test_stages_round_trip(func):
    sparsetir.assert_structural_equal(sparsetir.parse(func.script()), func)
    f2 = sparsetir.lower_sparse_iter(func)
    again = sparsetir.parse(f2.script())
    sparsetir.assert_structural_equal(again, f2)
    assert again.script() == f2.script()
