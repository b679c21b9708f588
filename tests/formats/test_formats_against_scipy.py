"""Where SciPy has the conversion, ours gives the same arrays."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from formats_cases import EDGE_CASES, canonical_scipy, matrices
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetir import data
from sparsetir import formats as F


def scipy_bsr(A, blocksize):
    B = canonical_scipy(A).tobsr(blocksize=blocksize)
    B.sort_indices()
    return B


def assert_bsr_matches(ours, theirs):
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


@pytest.mark.parametrize("blocksize", [(1, 1), (2, 2), (4, 4), (1, 4), (4, 1), (2, 6)])
def test_bsr_equals_tobsr(bundled, blocksize):
    _, A = bundled
    br, bc = blocksize
    m, n = (A.shape[0] // (br * 6)) * br * 6, (A.shape[1] // (bc * 6)) * bc * 6  # divisible shapes
    A = A[:m, :n].tocsr()
    assert_bsr_matches(F.Bsr.from_csr(A, blocksize), scipy_bsr(A, blocksize))


def test_bsr_equals_tobsr_on_a_block_matrix(shared_data_dir):
    path = shared_data_dir / "bcsstk16.npz"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    A = data.load_file(path)
    for b in (2, 3, 4, 6):  # 4884 = 2^2 * 3 * 11 * 37
        assert_bsr_matches(F.Bsr.from_csr(A, (b, b)), scipy_bsr(A, (b, b)))


@settings(max_examples=150)
@given(matrices(), st.integers(1, 4), st.integers(1, 4))
def test_bsr_equals_tobsr_random(A, br, bc):
    m, n = A.shape
    A = F.from_arrays(A.indptr, A.indices, A.data, A.shape)
    if m % br or n % bc:
        # SciPy needs divisible shapes; pad with empty rows and columns and compare the blocks.
        mp, np_ = -(-m // br) * br, -(-n // bc) * bc
        indptr = np.concatenate([A.indptr, np.full(mp - m, A.indptr[-1], A.indptr.dtype)])
        padded = sp.csr_matrix((A.data, A.indices, indptr), shape=(mp, np_))
        assert_bsr_matches(F.Bsr.from_csr(A, (br, bc)), scipy_bsr(padded, (br, bc)))
    else:
        assert_bsr_matches(F.Bsr.from_csr(A, (br, bc)), scipy_bsr(A, (br, bc)))


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_csc_equals_tocsc(case):
    A = EDGE_CASES[case]()
    ours, theirs = F.Csc.from_csr(A), canonical_scipy(A).tocsc()
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


def test_csc_equals_tocsc_bundled(bundled):
    _, A = bundled
    ours, theirs = F.Csc.from_csr(A), A.tocsc()
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


@pytest.mark.parametrize("blocksize", [(2, 2), (3, 5), (4, 4)])
def test_bitmap_and_sort_find_the_same_blocks(monkeypatch, blocksize):
    """``_blocks`` marks blocks in a bitmap when they are few, else sorts: both give the same."""
    from sparsetir.formats import bsr

    A = sp.random(200, 150, density=0.05, format="csr", random_state=9, dtype=np.float32)
    monkeypatch.setattr(bsr, "_BITMAP_CELLS_PER_SEGMENT", 0)
    by_sort = F.Bsr.from_csr(A, blocksize)
    monkeypatch.setattr(bsr, "_BITMAP_CELLS_PER_SEGMENT", 10**9)
    by_bitmap = F.Bsr.from_csr(A, blocksize)
    assert_bsr_matches(by_sort, by_bitmap)
    np.testing.assert_array_equal(by_sort.entry_slot, by_bitmap.entry_slot)
    assert_bsr_matches(by_sort, scipy_bsr(padded_like_scipy(A, blocksize), blocksize))


def padded_like_scipy(A, blocksize):
    br, bc = blocksize
    m, n = A.shape
    mp, np_ = -(-m // br) * br, -(-n // bc) * bc
    indptr = np.concatenate([A.indptr, np.full(mp - m, A.indptr[-1], A.indptr.dtype)])
    return sp.csr_matrix((A.data, A.indices, indptr), shape=(mp, np_))
