"""SDDMM with infinities and NaN matches its definition ``A * (X @ Y.T)`` at the stored entries."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir.ops as ops

from ops_matrices import random_csr

WIDTHS = [1, 3, 16, 20, 32, 33, 64, 127]


def _reference(A, X, Y):
    """NumPy's ``A * (X @ Y.T)`` at A's stored entries (float64 dot products, as NumPy does)."""
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    with np.errstate(invalid="ignore", over="ignore"):
        dots = (X.astype(np.float64) @ Y.astype(np.float64).T)[rows, A.indices]
        return (A.data.astype(np.float64) * dots).astype(A.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("feat", WIDTHS)
def test_infinite_and_nan_values_of_A(dtype, feat):
    # The case: A = -inf where the dot product is 2.5 gave NaN (A multiplied into every
    # partial product, -inf * 0 = NaN); the definition gives -inf.
    A = sp.csr_matrix((np.array([-np.inf, np.inf, np.nan, 2.0, -np.inf, np.inf], dtype),
                       np.array([0, 0, 0, 0, 1, 1]), np.array([0, 1, 2, 3, 4, 6])), shape=(5, 2))
    X = np.zeros((5, feat), dtype)
    X[:, 0] = 2.5
    X[4, -1] = -1.0  # row 4: a negative partial product too (dot with column 1 is 0 - 1 = -1)
    Y = np.zeros((2, feat), dtype)
    Y[0, 0] = 1.0
    Y[1, -1] = 1.0
    got = ops.sddmm(A, X, Y).data
    expected = _reference(A, X, Y)
    assert got[0] == -np.inf and got[1] == np.inf and np.isnan(got[2]) and got[3] == 5.0
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("feat", WIDTHS)
def test_infinities_in_X_and_Y(dtype, feat):
    rng = np.random.default_rng(feat)
    A = random_csr(30, 20, 0.3, feat, dtype)
    A.sum_duplicates()
    X = rng.standard_normal((30, feat)).astype(dtype)
    Y = rng.standard_normal((20, feat)).astype(dtype)
    X[3, 0] = np.inf            # an infinite dot product (or NaN where Y's lane is 0 or -inf)
    Y[5, feat - 1] = -np.inf    # the last lane: the one the odd-width path overlaps
    Y[7, 0] = 0.0
    X[7 % 30, 0] = np.inf       # inf * 0 = NaN in the dot product, as in NumPy
    got = ops.sddmm(A, X, Y).data
    expected = _reference(A, X, Y)
    special = ~np.isfinite(expected)
    assert special.any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[special], expected[special])
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[~special], expected[~special], **tol)


@pytest.mark.parametrize("feat", [0])
def test_width_zero_follows_the_definition(feat):
    A = sp.csr_matrix((np.array([np.inf, 2.0], np.float32), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
    got = ops.sddmm(A, np.zeros((1, feat), np.float32), np.zeros((2, feat), np.float32)).data
    np.testing.assert_array_equal(np.isnan(got), [True, False])  # inf * (empty dot = 0) = NaN
    assert got[1] == 0.0
