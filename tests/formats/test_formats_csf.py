"""CSF: COO in, levels of compressed coordinates, COO back."""

from __future__ import annotations

import numpy as np
import pytest
from formats_cases import EDGE_CASES, canonical_scipy, csf_coordinates
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetir import ArgumentError
from sparsetir import formats as F


def test_documented_example():
    f = F.Csf.from_coo(np.array([[1, 0, 0], [0, 1, 1], [0, 3, 2]]), np.array([3.0, 2.0, 1.0]), (2, 3, 4))
    assert [a.tolist() for a in f.indptr] == [[0, 2], [0, 1, 2], [0, 2, 3]]
    assert [a.tolist() for a in f.indices] == [[0, 1], [1, 0], [2, 3, 0]]
    assert f.data.tolist() == [1.0, 2.0, 3.0] and f.entry_slot.tolist() == [2, 1, 0]


@st.composite
def coo(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    nnz = draw(st.integers(0, 30))
    coords = np.array([draw(st.lists(st.integers(0, d - 1), min_size=nnz, max_size=nnz)) for d in shape],
                      np.int64).reshape(ndim, nnz)
    values = np.array(draw(st.lists(st.integers(-3, 3), min_size=nnz, max_size=nnz)), np.float64)
    return coords, values, shape


@settings(max_examples=200)
@given(coo())
def test_random_tensors(case):
    coords, values, shape = case
    f = F.Csf.from_coo(coords, values, shape)
    dense = np.zeros(shape)
    np.add.at(dense, tuple(coords), values)
    out_coords, out_values = f.to_coo()
    # Lexicographically sorted, distinct, duplicates summed, stored zeros kept.
    unique = np.unique(coords.T, axis=0).T if coords.shape[1] else coords
    np.testing.assert_array_equal(out_coords, unique)
    np.testing.assert_array_equal(out_values, dense[tuple(unique)])
    # The levels say the same (read independently), and each entry lands on its coordinate.
    np.testing.assert_array_equal(np.array(csf_coordinates(f)).reshape(len(shape), -1), unique)
    for level in range(len(shape)):
        assert f.indptr[level][0] == 0 and f.indptr[level][-1] == f.indices[level].size
        assert np.all(np.diff(f.indptr[level]) >= 1)  # every node has a child
    np.testing.assert_array_equal(out_coords[:, f.entry_slot], coords)
    np.testing.assert_array_equal(f.values(values * 2), out_values * 2)


def test_from_csr_is_two_levels():
    A = EDGE_CASES["duplicates"]()
    f = F.Csf.from_csr(A)
    canon = canonical_scipy(A)
    rows = np.flatnonzero(np.diff(canon.indptr))
    np.testing.assert_array_equal(f.indices[0], rows)
    np.testing.assert_array_equal(f.indptr[1], np.append(canon.indptr[rows], canon.nnz))
    np.testing.assert_array_equal(f.indices[1], canon.indices)


def test_three_d_has_no_csr_form():
    f = F.Csf.from_coo(np.zeros((3, 1), int), np.ones(1), (1, 1, 1))
    with pytest.raises(ArgumentError, match=r"^Csf\.to_csr: a 3-D tensor has no CSR form; use to_coo\(\)"):
        f.to_csr()


@pytest.mark.parametrize("coords, values, shape, message", [
    (np.zeros((2, 1), int), np.ones(1), (2, 2, 2), r"^Csf\.from_coo: coords: must have shape \(3, nnz\)"),
    (np.zeros((2, 1)), np.ones(1), (2, 2), r"^Csf\.from_coo: coords: must be an integer array, got dtype float64"),
    (np.array([[0], [2]]), np.ones(1), (2, 2), r"^Csf\.from_coo: coords: coordinate 2 of dimension 1 is out of range for size 2"),
    (np.array([[-1], [0]]), np.ones(1), (2, 2), r"^Csf\.from_coo: coords: coordinate -1 of dimension 0 is out of range"),
    (np.zeros((2, 1), int), np.ones(1, np.int64), (2, 2), r"^Csf\.from_coo: values: must be float32 or float64, got int64"),
    (np.zeros((2, 1), int), np.ones(2), (2, 2), r"^Csf\.from_coo: values: expected 1 values"),
    (np.zeros((2, 1), int), np.ones(1), [2, 2], r"^Csf\.from_coo: shape: must be a non-empty tuple"),
    (np.zeros((0, 0), int), np.ones(0), (), r"^Csf\.from_coo: shape: must be a non-empty tuple"),
])
def test_bad_coo(coords, values, shape, message):
    with pytest.raises(ArgumentError, match=message):
        F.Csf.from_coo(coords, values, shape)
