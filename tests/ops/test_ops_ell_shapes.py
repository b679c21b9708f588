"""``ops.ell_spmm`` takes indices and values each 2-D ``(m, width)`` or flat ``(m * width,)``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sparsetir
import sparsetir.ops as ops


def _case(m=6, width=3, n=9, feat=20, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(m, width))
    vals = rng.standard_normal((m, width)).astype(np.float32)
    X = rng.standard_normal((n, feat)).astype(np.float32)
    dense = np.zeros((m, n))
    for i in range(m):
        np.add.at(dense[i], idx[i], vals[i])
    return idx, vals, X, dense @ X


@pytest.mark.parametrize("idx_flat", [False, True])
@pytest.mark.parametrize("vals_flat", [False, True])
def test_both_shapes_for_both_arrays(idx_flat, vals_flat):
    idx, vals, X, expected = _case()
    i = idx.reshape(-1) if idx_flat else idx
    v = vals.reshape(-1) if vals_flat else vals
    rows = 6 if idx_flat and vals_flat else None
    np.testing.assert_allclose(ops.ell_spmm(i, v, X, rows=rows), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.ell_spmm(i, v, X, rows=6), expected, rtol=1e-5, atol=1e-5)


def test_torch_flat_inputs():
    idx, vals, X, expected = _case(seed=1)
    got = ops.ell_spmm(torch.from_numpy(idx.reshape(-1)), torch.from_numpy(vals), torch.from_numpy(X))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_zero_rows_and_zero_width():
    X = np.ones((4, 3), np.float32)
    np.testing.assert_array_equal(ops.ell_spmm(np.zeros(0, int), np.zeros(0, np.float32), X, rows=5), np.zeros((5, 3)))
    assert ops.ell_spmm(np.zeros((0, 2), int), np.zeros(0, np.float32), X).shape == (0, 3)


@pytest.mark.parametrize("args, message", [
    ((np.zeros(6, int), np.zeros(6, np.float32)), r"ell_spmm: indices: and values are both flat; pass rows="),
    ((np.zeros(7, int), np.zeros(7, np.float32), 3), r"ell_spmm: indices: has 7 entries, which is not a multiple of rows=3"),
    ((np.zeros((2, 3), int), np.zeros((3, 2), np.float32)), r"ell_spmm: values: shape \(3, 2\) does not match the other array's shape \(2, 3\)"),
    ((np.zeros(5, int), np.zeros((2, 3), np.float32)), r"ell_spmm: indices: has 5 entries, expected rows \* width = 2 \* 3 = 6"),
    ((np.zeros((2, 3), int), np.zeros((2, 3), np.float32), 4), r"ell_spmm: rows: is 4, but the arrays have 2 rows"),
    ((np.zeros((1, 2, 3), int), np.zeros((2, 3), np.float32)), r"ell_spmm: indices: expected a 2-D \(rows, width\) or flat \(rows \* width,\) array, got shape \(1, 2, 3\)"),
    ((np.zeros((2, 3), int), np.zeros((2, 3), np.float32), -1), r"ell_spmm: rows: expected a non-negative integer, got -1"),
])
def test_shape_errors_name_the_problem(args, message):
    with pytest.raises(sparsetir.ArgumentError, match=message):
        ops.ell_spmm(*args[:2], np.ones((4, 3), np.float32), rows=args[2] if len(args) > 2 else None)
