"""``sparsetir.ops`` kernels against SciPy/NumPy references (correctness only, no timings)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir.ops as ops
from sparsetir.schedule.default import prefetch

from ops_matrices import MATRICES, random_csr, snapshot

FEATS = [1, 7, 16, 32, 33, 48, 160]


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("feat", FEATS)
def test_spmm_matches_scipy(matrix, feat):
    X = np.random.default_rng(feat).standard_normal((matrix.shape[1], feat)).astype(np.float32)
    before = snapshot(matrix.data, matrix.indices, matrix.indptr, X)
    C = ops.spmm(matrix, X)
    assert isinstance(C, np.ndarray) and C.shape == (matrix.shape[0], feat) and C.dtype == np.float32
    np.testing.assert_allclose(C, matrix.astype(np.float64) @ X.astype(np.float64), **_tol(np.float32))
    for old, new in zip(before, [matrix.data, matrix.indices, matrix.indptr, X]):
        np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("feat", [32, 5, 128])
def test_spmm_dtypes(dtype, feat):
    A = MATRICES["random"](dtype)
    X = np.random.default_rng(0).standard_normal((A.shape[1], feat)).astype(dtype)
    np.testing.assert_allclose(ops.spmm(A, X), A @ X, **_tol(dtype))


def test_spmm_unsorted_indices_duplicates_and_int64():
    rows = np.array([0, 0, 0, 2, 2])
    cols = np.array([3, 1, 3, 0, 2])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    indptr = np.array([0, 3, 3, 5], np.int64)
    A = sp.csr_matrix((vals, cols[[0, 1, 2, 3, 4]].astype(np.int64), indptr), shape=(3, 4))
    assert not A.has_sorted_indices
    X = np.arange(4 * 3, dtype=np.float32).reshape(4, 3)
    dense = np.zeros((3, 4), np.float32)
    np.add.at(dense, (rows, cols), vals)
    np.testing.assert_allclose(ops.spmm(A, X), dense @ X, rtol=1e-6)


def test_spmm_non_contiguous_operand():
    A = MATRICES["random"]()
    X = np.asfortranarray(np.random.default_rng(1).standard_normal((A.shape[1], 16)).astype(np.float32))
    np.testing.assert_allclose(ops.spmm(A, X), A @ X, rtol=1e-5, atol=1e-5)


def test_spmm_larger_than_a_partition_chunk():
    A = random_csr(3000, 2000, 0.003, 4)
    X = np.random.default_rng(2).standard_normal((2000, 64)).astype(np.float32)
    np.testing.assert_allclose(ops.spmm(A, X), A @ X, rtol=1e-5, atol=1e-5)


def _sddmm_reference(A, X, Y):
    coo = A.tocoo()
    values = coo.data.astype(np.float64) * np.einsum("pk,pk->p", X[coo.row].astype(np.float64), Y[coo.col].astype(np.float64))
    return values


@pytest.mark.parametrize("feat", FEATS)
def test_sddmm_matches_numpy(matrix, feat):
    m, n = matrix.shape
    rng = np.random.default_rng(feat)
    X = rng.standard_normal((m, feat)).astype(np.float32)
    Y = rng.standard_normal((n, feat)).astype(np.float32)
    before = snapshot(matrix.data, matrix.indices, matrix.indptr, X, Y)
    O = ops.sddmm(matrix, X, Y)
    assert sp.issparse(O) and O.format == "csr" and O.shape == matrix.shape
    np.testing.assert_array_equal(O.indptr, matrix.indptr)
    np.testing.assert_array_equal(O.indices, matrix.indices)
    assert not np.shares_memory(O.indices, matrix.indices)
    np.testing.assert_allclose(O.tocoo().data, _sddmm_reference(matrix, X, Y), rtol=1e-5, atol=1e-5)
    for old, new in zip(before, [matrix.data, matrix.indices, matrix.indptr, X, Y]):
        np.testing.assert_array_equal(old, new)


def test_sddmm_float64():
    A = MATRICES["random"](np.float64)
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((A.shape[0], 24)), rng.standard_normal((A.shape[1], 24))
    np.testing.assert_allclose(ops.sddmm(A, X, Y).tocoo().data, _sddmm_reference(A, X, Y), rtol=1e-12)


def test_spmv(matrix):
    x = np.random.default_rng(0).standard_normal(matrix.shape[1]).astype(np.float32)
    np.testing.assert_allclose(ops.spmv(matrix, x), matrix.astype(np.float64) @ x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(), (3,), (32,)])
def test_segment_sum(shape):
    offsets = np.array([0, 0, 4, 4, 5, 12, 12], np.int32)
    values = np.random.default_rng(0).standard_normal((12, *shape)).astype(np.float32)
    expected = np.stack([values[s:e].sum(axis=0) for s, e in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_allclose(ops.segment_sum(values, offsets), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("feat", [256, 512, 520, 1024])
def test_segment_sum_wide_rows(dtype, feat):
    # Rows of 2 KB and more take the streaming schedule (kernels.STREAMED_ROW_BYTES); 520 has no
    # 16-lane vector width, float64 at 256 is exactly 2 KB.
    rng = np.random.default_rng(feat)
    lengths = rng.integers(0, 6, 90)
    lengths[[0, 45, 89]] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.standard_normal((int(offsets[-1]), feat)).astype(dtype)
    before = snapshot(values, offsets)
    expected = np.stack([values[s:e].astype(np.float64).sum(axis=0) for s, e in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_allclose(ops.segment_sum(values, offsets), expected, **_tol(dtype))
    for old, new in zip(before, [values, offsets]):
        np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("block", [(2, 3), (4, 4), (1, 1)])
@pytest.mark.parametrize("feat", [16, 5])
def test_bsr_spmm(block, feat):
    m, n = 12 * block[0], 10 * block[1]
    A = sp.random(m, n, density=0.15, format="csr", dtype=np.float32, random_state=5).tobsr(blocksize=block)
    X = np.random.default_rng(1).standard_normal((n, feat)).astype(np.float32)
    np.testing.assert_allclose(ops.bsr_spmm(A, X), A @ X, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("feat", [32, 3])
def test_ell_spmm(feat):
    rng = np.random.default_rng(2)
    indices = rng.integers(0, 40, (25, 6)).astype(np.int32)
    values = rng.standard_normal((25, 6)).astype(np.float32)
    values[3] = 0  # a row of padding only
    X = rng.standard_normal((40, feat)).astype(np.float32)
    expected = np.einsum("mw,mwk->mk", values, X[indices])
    np.testing.assert_allclose(ops.ell_spmm(indices, values, X), expected, rtol=1e-5, atol=1e-5)


def test_softmax(matrix):
    S = ops.softmax(matrix)
    expected = matrix.data.astype(np.float64).copy()
    for s, e in zip(matrix.indptr[:-1], matrix.indptr[1:]):
        if e > s:
            z = np.exp(expected[s:e] - expected[s:e].max())
            expected[s:e] = z / z.sum()
    np.testing.assert_allclose(S.data, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(S.indptr, matrix.indptr)


def test_sddmm_with_prefetch_for_a_large_operand():
    # Y (70000 x 16 float32, 4.5 MB) is above prefetch.MIN_BYTES: the prefetching kernel runs.
    A = random_csr(300, 70000, 0.0005, 6, empty_rows=True, long_row=False)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 16)).astype(np.float32)
    Y = rng.standard_normal((70000, 16)).astype(np.float32)
    O = ops.sddmm(A, X, Y)
    np.testing.assert_allclose(O.tocoo().data, _sddmm_reference(A, X, Y), rtol=1e-5, atol=1e-5)
    assert any(key.prefetch for key in ops.library._kernels)


def test_sddmm_prefetches_the_first_lines_of_wide_rows():
    # 200 float32 (800 bytes, 13 lines) per row and Y of 2.4 MB: only the first lines are fetched.
    A = random_csr(400, 3000, 0.003, 8, empty_rows=True, long_row=False)
    rng = np.random.default_rng(6)
    X = rng.standard_normal((400, 200)).astype(np.float32)
    Y = rng.standard_normal((3000, 200)).astype(np.float32)
    assert ops._sddmm_prefetch(ops._csr("A", A), Y) == prefetch.WIDE_LINES
    O = ops.sddmm(A, X, Y)
    np.testing.assert_allclose(O.tocoo().data, _sddmm_reference(A, X, Y), rtol=1e-5, atol=1e-5)
    assert any(key.prefetch and key.prefetch_lines == prefetch.WIDE_LINES and key.feat == 200
               for key in ops.library._kernels)


def test_sddmm_does_not_prefetch_runs_of_columns():
    # A banded matrix: consecutive columns, which the hardware prefetcher streams by itself.
    n = 20000
    A = sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr", dtype=np.float32)
    Y = np.ones((n, 64), np.float32)
    assert ops._csr("A", A).column_locality[0] > prefetch.MAX_RUNS
    assert ops._sddmm_prefetch(ops._csr("A", A), Y) == -1
    np.testing.assert_allclose(ops.sddmm(A, Y, Y).data, 64 * A.data)


@pytest.mark.parametrize("dtype, feat", [("float32", 64), ("float32", 128), ("float64", 64)])
def test_spmm_prefetches_rows_that_one_register_tile_pass_reads(dtype, feat):
    # Scattered columns (empty rows, one long row) at 256-512 bytes per row of X: prefetched.
    A = random_csr(500, 4000, 0.004, 9, empty_rows=True, long_row=True).astype(dtype)
    a = ops._csr("A", A)
    assert ops._spmm_prefetch(a, feat)
    assert not ops._spmm_prefetch(a, 16) and not ops._spmm_prefetch(a, 4 * feat)  # a line or two; several passes
    X = np.random.default_rng(7).standard_normal((4000, feat)).astype(dtype)
    np.testing.assert_allclose(ops.spmm(A, X), A.toarray().astype(np.float64) @ X, rtol=1e-4, atol=1e-4)
    assert a.kernels[("spmm", feat)][1] is ops.library.get(ops.KernelKey("spmm", dtype, feat, prefetch=True))


def test_spmm_does_not_prefetch_runs_of_columns():
    n = 5000
    A = sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr", dtype=np.float32)
    assert not ops._spmm_prefetch(ops._csr("A", A), 128)
    X = np.random.default_rng(8).standard_normal((n, 128)).astype(np.float32)
    np.testing.assert_allclose(ops.spmm(A, X), A @ X, rtol=1e-5, atol=1e-5)


def test_prefetch_rewrite_targets_the_row_loop():
    import sparsetir
    from sparsetir.ops import kernels
    from sparsetir.transforms.prefetch_gathered_rows import prefetch_gathered_rows

    f3 = sparsetir.lower_sparse_buffer(kernels.make_sddmm(kernels.KernelKey("sddmm", "float32", 32)))
    text = prefetch_gathered_rows(f3, "y", "indptr", "indices", "nnz", distance=8).script()
    assert text.count("llvm.prefetch") == 2  # two 64-byte lines per 32-float row
    assert "T.min(indptr[" in text and "+ 8, nnz - 1)" in text
    wide = sparsetir.lower_sparse_buffer(kernels.make_sddmm(kernels.KernelKey("sddmm", "float32", 512)))
    assert prefetch_gathered_rows(wide, "y", "indptr", "indices", "nnz", max_lines=4).script().count("llvm.prefetch") == 4


# Widths that are not a multiple of the vector width run as full vectors plus a tail
# (kernels.split_width): every op that splits, in both dtypes, with empty rows and segments.
AWKWARD = [33, 100, 127, 136]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("feat", AWKWARD)
def test_awkward_widths_spmm_and_sddmm(dtype, feat):
    A = random_csr(90, 70, 0.08, seed=feat, dtype=dtype)  # empty rows and one full row
    assert np.any(np.diff(A.indptr) == 0)
    rng = np.random.default_rng(feat)
    B = rng.standard_normal((70, feat)).astype(dtype)
    np.testing.assert_allclose(ops.spmm(A, B), A.astype(np.float64) @ B.astype(np.float64), **_tol(dtype))
    X, Y = rng.standard_normal((90, feat)).astype(dtype), rng.standard_normal((70, feat)).astype(dtype)
    np.testing.assert_allclose(ops.sddmm(A, X, Y).tocoo().data, _sddmm_reference(A, X, Y), **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("feat", AWKWARD)
def test_awkward_widths_segment_sum_bsr_and_ell(dtype, feat):
    rng = np.random.default_rng(feat)
    lengths = rng.integers(0, 5, 40)
    lengths[[0, 17]] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.standard_normal((int(offsets[-1]), feat)).astype(dtype)
    expected = np.stack([values[s:e].astype(np.float64).sum(axis=0) for s, e in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_allclose(ops.segment_sum(values, offsets), expected, **_tol(dtype))

    A = sp.random(24, 20, density=0.2, format="csr", dtype=dtype, random_state=feat).tobsr(blocksize=(4, 4))
    X = rng.standard_normal((20, feat)).astype(dtype)
    np.testing.assert_allclose(ops.bsr_spmm(A, X), A.astype(np.float64) @ X.astype(np.float64), **_tol(dtype))

    indices = rng.integers(0, 30, (25, 6)).astype(np.int32)
    ell_values = rng.standard_normal((25, 6)).astype(dtype)
    ell_values[3] = 0
    Z = rng.standard_normal((30, feat)).astype(dtype)
    expected = np.einsum("mw,mwk->mk", ell_values.astype(np.float64), Z[indices].astype(np.float64))
    np.testing.assert_allclose(ops.ell_spmm(indices, ell_values, Z), expected, **_tol(dtype))


def test_sddmm_overlapping_last_vector_keeps_an_infinity():
    # At width 127 the last 16-lane vector re-reads columns 111..126; the lane of column 111 is
    # selected away, not multiplied by 0, so an infinity there gives inf, not NaN.
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], np.float32))
    X = np.ones((2, 127), np.float32)
    Y = np.ones((3, 127), np.float32)
    X[0, 111] = np.inf
    values = ops.sddmm(A, X, Y).tocoo().data
    np.testing.assert_array_equal(values, [np.inf, np.inf, 3.0 * 127])


def test_sddmm_row_longer_than_the_column_count():
    """Duplicates can make a row hold more entries than A has columns. The scheduled SDDMM kernel
    bounds a row by the column count, so such a matrix is computed by gathering (it used to be
    refused, and so was the values-gradient of spmm on it); each entry gets its own product."""
    indptr = np.array([0, 5, 5, 7], np.int32)
    indices = np.array([0, 1, 0, 2, 0, 2, 2], np.int32)
    values = np.array([1.0, -2.0, 3.0, 0.5, 2.0, 4.0, -1.0])
    A = sp.csr_matrix((values, indices, indptr), shape=(3, 3))
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    before = snapshot(A.data, A.indices, A.indptr, X, Y)
    out = ops.sddmm(A, X, Y)
    rows = np.repeat(np.arange(3), np.diff(indptr))
    expected = values * np.einsum("ij,ij->i", X[rows], Y[indices])
    np.testing.assert_allclose(out.data, expected, rtol=1e-12)
    np.testing.assert_array_equal(out.indices, indices)
    for old, new in zip(before, [A.data, A.indices, A.indptr, X, Y]):
        np.testing.assert_array_equal(old, new)

    torch = pytest.importorskip("torch")
    w = torch.tensor(values, requires_grad=True)
    Xt = torch.tensor(X[:, :4], requires_grad=True)
    G = torch.tensor(rng.standard_normal((3, 4)))
    C = ops.spmm(ops.CsrTensors(torch.tensor(indptr), torch.tensor(indices), w, (3, 3)), Xt)
    (C * G).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.einsum("ij,ij->i", G.numpy()[rows], X[indices, :4]), rtol=1e-12)
    dense = np.zeros((3, 3))
    np.add.at(dense, (rows, indices), values)
    np.testing.assert_allclose(Xt.grad.numpy(), dense.T @ G.numpy(), rtol=1e-12)


def test_the_prefetch_distance_choice_reaches_the_kernel():
    # ``Choices.prefetch_distance`` (a tuning knob) sets how many entries ahead the gathered
    # rows are fetched, in a script's default build and in an ops kernel; results stay exact.
    from pathlib import Path

    import sparsetir
    from sparsetir.default_build import build_default
    from sparsetir.ops import kernels
    from sparsetir.schedule.default import Choices

    def fetched_ahead(func) -> set:
        lines = [line for line in func.script().splitlines() if "llvm.prefetch" in line]
        assert lines
        return {line.split("indptr[vi] + j + ")[1].split(",")[0] for line in lines}

    key = kernels.KernelKey("spmm", "float32", 32, prefetch=True, choices=Choices(prefetch_distance=24))
    assert fetched_ahead(ops.library.get(key).func) == {"24"}
    script = sparsetir.parse_file(str(Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"))
    A = random_csr(300, 200, 0.05, seed=7)
    B = np.random.default_rng(7).standard_normal((200, 32)).astype(np.float32)
    for distance in (8, 24):
        kernel = build_default(script, "llvm", None, None, Choices(prefetch=0, prefetch_distance=distance))
        assert fetched_ahead(kernel.variant(feat_size=32).func) == {str(distance)}
        C = np.zeros((300, 32), np.float32)
        kernel(A.data, B, C, A.indptr, A.indices, 300, 200, 32, A.nnz)
        np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
