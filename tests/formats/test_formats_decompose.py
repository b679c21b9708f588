"""``bsr.decompose``: parts of decreasing block sizes that hold every entry exactly once."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from formats_cases import EDGE_CASES, canonical_scipy, dense_of, matrices
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetir import ArgumentError
from sparsetir import formats as F


def check_parts(parts, A, sizes):
    canon = canonical_scipy(A)
    assert [p.blocksize for p in parts] == [(b, b) for b in sorted(set(sizes), reverse=True)]
    held = np.stack([p.entry_slot >= 0 for p in parts])
    assert np.all(held.sum(axis=0) == 1), "every entry in exactly one part"
    total = sp.csr_matrix(A.shape, dtype=canon.dtype)
    covered = np.zeros(A.shape, bool)
    for p in parts:
        dense = dense_of(p)  # the part's own arrays are consistent
        assert np.all(np.diff(p.indptr) >= 0)
        for R in range(p.indptr.size - 1):
            assert np.all(np.diff(p.indices[p.indptr[R]:p.indptr[R + 1]]) > 0)
        part = p.to_csr()
        np.testing.assert_array_equal(part.toarray(), dense)
        total = total + part
        # Blocks of different parts never overlap.
        b = p.blocksize[0]
        block_rows = np.repeat(np.arange(p.indptr.size - 1), np.diff(p.indptr))
        for R, C in zip(block_rows, p.indices):
            cells = covered[R * b:(R + 1) * b, C * b:(C + 1) * b]
            assert not cells.any()
            cells[...] = True
        values = p.values(np.asarray(A.data))
        np.testing.assert_array_equal(values, p.flat_data())
    total.sum_duplicates()
    assert (total != canon).nnz == 0


def test_block_matrix_goes_to_large_blocks():
    dense = np.zeros((40, 40), np.float32)
    dense[0:16, 16:32] = 1  # one full 16 x 16 block
    dense[32:36, 0:4] = 2  # one full 4 x 4 block
    dense[20, 5] = 3
    dense[37, 39] = 4
    A = sp.csr_matrix(dense)
    parts = F.bsr.decompose(A, (16, 4, 1), min_density=0.9)
    assert [p.nnzb for p in parts] == [1, 1, 2]
    check_parts(parts, A, (16, 4, 1))


def test_min_density_extremes():
    A = sp.random(30, 30, density=0.1, format="csr", random_state=2, dtype=np.float32)
    zero = F.bsr.decompose(A, (8, 2), min_density=0)
    assert zero[0].entries == A.nnz and zero[1].nnzb == 0
    one = F.bsr.decompose(A, (8, 2), min_density=1.0)
    assert one[0].nnzb == 0 and one[1].entries == A.nnz
    check_parts(zero, A, (8, 2))


@settings(max_examples=150)
@given(matrices(max_dim=20, max_entries=120), st.sampled_from([(4, 2, 1), (8, 4), (6, 3, 1), (2,), (9, 3)]),
       st.floats(0, 1))
def test_random_decompositions(A, sizes, min_density):
    check_parts(F.bsr.decompose(A, sizes, min_density), A, sizes)


def test_bundled(bundled):
    name, A = bundled
    if name == "pubmed":
        A = A[:5000, :5000].tocsr()
    parts = F.bsr.decompose(A, (16, 4, 1), min_density=0.2)
    total = sum(p.to_csr() for p in parts)
    assert (total != A).nnz == 0
    assert sum(p.entries for p in parts) == A.nnz


def test_sizes_may_come_in_any_order():
    A = EDGE_CASES["not_divisible"]()
    assert [p.blocksize for p in F.bsr.decompose(A, (1, 4, 2))] == [(4, 4), (2, 2), (1, 1)]


@pytest.mark.parametrize("sizes, message", [
    ((6, 4), "block size 4 does not divide 6"),
    ((32, 16, 3), "block size 3 does not divide 16"),
    ((4, 4), "must be distinct"),
    ((), "needs at least one block size"),
    ((4, 0), "must be positive integers"),
    (4, "expected a sequence of block sizes"),
])
def test_bad_sizes(sizes, message):
    with pytest.raises(ArgumentError, match=rf"^bsr\.decompose: sizes: .*{message}"):
        F.bsr.decompose(EDGE_CASES["unsorted"](), sizes)


@pytest.mark.parametrize("density", [-0.1, 1.5, "half", None, True])
def test_bad_min_density(density):
    with pytest.raises(ArgumentError, match=r"^bsr\.decompose: min_density: must be a number from 0 to 1"):
        F.bsr.decompose(EDGE_CASES["unsorted"](), (2, 1), density)
