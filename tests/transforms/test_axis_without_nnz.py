"""``T.dense_variable(I, n, indptr)`` as seed 000 writes it, with no nnz: its number of positions is
the last entry of the indptr, known when the kernel is called. The arrays laid out by the axis
give it (their length, ``J_nnz`` in stage III) and the call checks that the indptr ends there,
so the kernel stays inside them."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import tvm
from sparsetir.errors import ArgumentError, LoweringError
from sparsetir.ir.stage2 import NNZ_FROM_ATTR

RAGGED = '''from sparsetir.script import tir as T


@T.prim_func
def ragged_rows(x: T.handle, scale: T.handle, out: T.handle, sums: T.handle, indptr: T.handle, m: T.int32,
                n: T.int32, feat: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.dense_variable(I, n, indptr)
    F = T.dense_fixed(feat)
    X = T.match_sparse_buffer(x, (I, J, F), "float32")
    SCALE = T.match_sparse_buffer(scale, (I, J), "float32")
    OUT = T.match_sparse_buffer(out, (I, J, F), "float32")
    SUMS = T.match_sparse_buffer(sums, (I, F), "float32")
    with T.sp_iter([I, J, F], "SSS", "scale") as [i, j, f]:
        OUT[i, j, f] = X[i, j, f] * SCALE[i, j]
    with T.sp_iter([I, F, J], "SSR", "sum") as [i, f, j]:
        with T.init():
            SUMS[i, f] = T.float32(0)
        SUMS[i, f] = SUMS[i, f] + X[i, j, f]
'''

LENGTHS = {
    "random": [3, 0, 4, 1, 2, 0, 5],
    "empty_rows": [0, 0, 3, 0],
    "single_row": [4],
    "long_row": [1, 700, 0],
}


def _inputs(lengths, feat=3, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    return dict(
        x=rng.uniform(-1, 1, (nnz, feat)).astype(np.float32), scale=rng.uniform(-1, 1, nnz).astype(np.float32),
        out=np.full((nnz, feat), np.nan, np.float32), sums=np.full((len(lengths), feat), np.nan, np.float32),
        indptr=indptr, m=len(lengths), n=max(int(lengths.max()), 1), feat=feat,
    )


def _reference(args):
    rows = np.repeat(np.arange(args["m"]), np.diff(args["indptr"]))
    sums = np.zeros((args["m"], args["feat"]))
    np.add.at(sums, rows, args["x"].astype(np.float64))
    return args["x"] * args["scale"][:, None], sums


@pytest.fixture(scope="module")
def func():
    return sparsetir.parse(RAGGED)


@pytest.mark.parametrize("schedule", ["default", "none"])
@pytest.mark.parametrize("case", sorted(LENGTHS))
def test_kernel_matches_numpy(func, case, schedule):
    kernel = sparsetir.build(func, schedule=schedule)
    args = _inputs(LENGTHS[case])
    out, sums = _reference(args)
    kernel(**args)
    np.testing.assert_allclose(args["out"], out, rtol=1e-6)
    np.testing.assert_allclose(args["sums"], sums, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("array", ["x", "scale", "out"])
def test_an_array_shorter_than_the_indptr_says_is_refused(func, array):
    kernel = sparsetir.build(func)
    args = _inputs(LENGTHS["random"])
    args[array] = args[array][:-1].copy()
    with pytest.raises(ArgumentError) as info:
        kernel(**args)
    shape = "(J_nnz, feat) = (15, 3), got (14, 3)" if array != "scale" else "(J_nnz,) = (15,), got (14,)"
    assert str(info.value) == f"argument '{array}': expected shape {shape}"


def test_arrays_shorter_together_than_the_indptr_says_are_refused(func):
    kernel = sparsetir.build(func)
    args = _inputs(LENGTHS["random"])
    for array in ("x", "scale", "out"):
        args[array] = args[array][:-1].copy()
    with pytest.raises(ArgumentError, match=r"argument '(x|indptr)': (expected shape \(J_nnz, feat\) = \(15, 3\), "
                                            r"got \(14, 3\)|ends at indptr\[7\]=15, expected J_nnz = 14)$"):
        kernel(**args)


def test_an_indptr_past_the_arrays_is_refused(func):
    kernel = sparsetir.build(func)
    args = _inputs(LENGTHS["random"])
    args["indptr"][-1] += 1
    with pytest.raises(ArgumentError, match=r"argument '(x|indptr)': (expected shape \(J_nnz, feat\) = \(16, 3\), "
                                            r"got \(15, 3\)|ends at indptr\[7\]=16, expected J_nnz = 15)$"):
        kernel(**args)


def test_stage3_binds_the_size_to_the_arrays_and_round_trips(func):
    f2 = sparsetir.lower_sparse_iter(func)
    assert "J = T.dense_variable(I, n, indptr)" in f2.script()
    sparsetir.assert_structural_equal(sparsetir.parse(f2.script()), f2)
    f3 = sparsetir.lower_sparse_buffer(f2)
    assert dict(f3.attrs[NNZ_FROM_ATTR]) == {"J_nnz": "indptr"}
    assert [str(p.ty.shape[0]) for p in f3.params[:3]] == ["J_nnz", "J_nnz", "J_nnz"]
    assert "T.if_then_else" not in f3.script()  # every access proves inside its array: no guards
    assert sparsetir.structural_equal(tvm.script.from_source(f3.script()), f3)


def test_a_size_no_array_gives_is_a_lowering_error():
    # J is only nested under: K's indptr has J's positions + 1 entries, which no array's length is.
    script = '''from sparsetir.script import tir as T


@T.prim_func
def nested(a: T.handle, indptr_j: T.handle, indptr_k: T.handle, m: T.int32, n: T.int32, nnz_k: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.dense_variable(I, n, indptr_j)
    K = T.dense_variable(J, (n, nnz_k), indptr_k)
    A = T.match_sparse_buffer(a, (I, J, K), "float32")
    with T.sp_iter([I, J, K], "SSS", "fill") as [i, j, k]:
        A[i, j, k] = T.float32(1)
'''
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(script))
    with pytest.raises(LoweringError, match=r"axis 'J' declares no nnz, and no array laid out by it gives its number "
                                            r"of positions; declare it: T.dense_variable\(I, \(n, nnz\), indptr_j\)"):
        sparsetir.lower_sparse_buffer(f2)
