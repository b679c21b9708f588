"""``formats.stats``: row-length figures and block densities."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from formats_cases import EDGE_CASES, canonical_scipy

from sparsetir import formats as F

# The package exports the function ``stats``, which hides the module of the same name.
stats_module = importlib.import_module("sparsetir.formats.stats")


def brute_density(A, b):
    coo = A.tocoo()
    blocks = set(zip(coo.row // b, coo.col // b))
    return A.nnz / (len(blocks) * b * b) if blocks else 0.0


def test_exact_on_small_matrices(bundled):
    name, A = bundled
    s = F.stats(A, sample=None)
    lengths = np.diff(A.indptr)
    assert (s.rows, s.cols, s.nnz, s.row_max, s.empty_rows) == (*A.shape, A.nnz, lengths.max(), np.sum(lengths == 0))
    assert s.row_mean == pytest.approx(lengths.mean()) and s.row_std == pytest.approx(lengths.std())
    assert (s.row_p50, s.row_p90, s.row_p99) == tuple(np.percentile(lengths, (50, 90, 99), method="inverted_cdf"))
    assert s.block_sample == 1.0
    for b in F.BLOCK_SIZES:
        assert s.density(b) == pytest.approx(brute_density(A, b))


def test_sampled_is_close(bundled):
    _, A = bundled
    exact, sampled = F.stats(A, sample=None), F.stats(A, sample=2000)
    assert 0 < sampled.block_sample < 1
    for b in F.BLOCK_SIZES:
        assert sampled.density(b) == pytest.approx(exact.density(b), rel=0.25)
    assert sampled.row_p99 == exact.row_p99  # row figures are always exact


def test_numpy_fallback_counts_the_same(monkeypatch):
    A = sp.random(50, 61, density=0.1, format="csr", random_state=0, dtype=np.float32)
    expected = F.stats(A, sample=None)
    monkeypatch.setattr(stats_module, "_scipy_count_blocks", None)
    assert F.stats(A, sample=None) == expected


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_cases(case):
    A = EDGE_CASES[case]()
    canon = canonical_scipy(A)
    s = F.stats(A)
    assert s.nnz == canon.nnz and s.rows == canon.shape[0]
    for b in F.BLOCK_SIZES:
        assert s.density(b) == pytest.approx(brute_density(canon, b))


def test_block_structure_is_seen():
    dense = np.kron(np.eye(10), np.ones((6, 6))).astype(np.float32)
    s = F.stats(sp.csr_matrix(dense))
    assert s.density(6) == 1.0 and s.density(3) == 1.0 and s.density(2) == 1.0
    assert s.density(4) < 1.0
