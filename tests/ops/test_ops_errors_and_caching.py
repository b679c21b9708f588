"""Bad input gives clear errors; compilation and per-matrix preparation happen once."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
import sparsetir.ops as ops
from sparsetir.runtime.cache import default_cache

from ops_matrices import random_csr


@pytest.fixture
def A():
    return random_csr(20, 15, 0.2, 11)


def test_wrong_dtype_is_named(A):
    with pytest.raises(sparsetir.ArgumentError, match=r"spmm: X: dtype float64 does not match .* float32"):
        ops.spmm(A, np.ones((15, 4)))


def test_wrong_shape_is_named(A):
    with pytest.raises(sparsetir.ArgumentError, match=r"spmm: X: expected 15 rows"):
        ops.spmm(A, np.ones((14, 4), np.float32))
    with pytest.raises(sparsetir.ArgumentError, match=r"spmm: X: expected a 2-D array"):
        ops.spmm(A, np.ones(15, np.float32))
    with pytest.raises(sparsetir.ArgumentError, match=r"sddmm: Y: has 3 columns, but X has 4"):
        ops.sddmm(A, np.ones((20, 4), np.float32), np.ones((15, 3), np.float32))


def test_inconsistent_indptr_is_named():
    bad = sp.csr_matrix((np.ones(3, np.float32), np.array([0, 1, 2]), np.array([0, 2, 1, 3])), shape=(3, 3))
    with pytest.raises(ValueError, match=r"spmm: A: indptr: not non-decreasing at position 1 \(indptr\[1\]=2 > indptr\[2\]=1\)"):
        ops.spmm(bad, np.ones((3, 2), np.float32))
    short = sp.csr_matrix((3, 3), dtype=np.float32)
    short.indptr = np.array([0, 0, 0, 1], np.int32)
    with pytest.raises(ValueError, match=r"spmm: A: indptr: ends at indptr\[3\]=1, expected the number of stored values 0"):
        ops.spmm(short, np.ones((3, 2), np.float32))


def test_out_of_range_column_is_named():
    bad = sp.csr_matrix((np.ones(2, np.float32), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    bad.indices[1] = 7
    ops.forget(bad)
    with pytest.raises(ValueError, match=r"column index 7 is out of range for 2 columns"):
        ops.spmm(bad, np.ones((2, 2), np.float32))


@pytest.mark.parametrize("fmt", ["csr", "bsr", "ell", "hyb", "auto"])
def test_negative_int64_indices_are_called_negative(fmt):
    bad = sp.csr_matrix((2, 3), dtype=np.float32)
    bad.data, bad.indices, bad.indptr = np.ones(2, np.float32), np.array([0, -2]), np.array([0, 1, 2])
    with pytest.raises(sparsetir.ArgumentError, match=r"^spmm: A: indices has a negative value \(-2\)"):
        ops.spmm(bad, np.ones((3, 2), np.float32), format=fmt)


def test_negative_torch_indices_and_offsets_are_called_negative():
    torch = pytest.importorskip("torch")
    At = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, -1]), torch.ones(2), size=(2, 3),
                                 check_invariants=False)
    with pytest.raises(sparsetir.ArgumentError, match=r"^spmm: A: col_indices has a negative value \(-1\)"):
        ops.spmm(At, torch.ones(3, 2))
    with pytest.raises(sparsetir.ArgumentError, match=r"^segment_sum: offsets: offsets has a negative value \(-1\)"):
        ops.segment_sum(np.ones(3, np.float32), np.array([0, -1, 3], np.int64))
    with pytest.raises(sparsetir.ArgumentError, match=r"^ell_spmm: indices: indices has a negative value \(-3\)"):
        ops.ell_spmm(torch.tensor([[0, -3]]), torch.ones(1, 2), torch.ones(3, 2))


def test_csr_tensors_with_a_negative_shape_are_refused():
    torch = pytest.importorskip("torch")
    A = ops.CsrTensors(torch.tensor([0, 1, 2]), torch.tensor([0, 1]), torch.ones(2), (2, -3))
    with pytest.raises(sparsetir.ArgumentError, match=r"^spmm: A: shape \(2, -3\) has a negative dimension"):
        ops.spmm(A, torch.ones(3, 2))
    with pytest.raises(sparsetir.ArgumentError, match=r"^softmax: A: shape \(2, -3\) has a negative dimension"):
        ops.softmax(A)


def test_other_formats_and_value_dtypes_refused(A):
    with pytest.raises(ValueError, match=r"expected a scipy.sparse CSR matrix .* 'coo' matrix.*tocsr"):
        ops.spmm(A.tocoo(), np.ones((15, 2), np.float32))
    with pytest.raises(ValueError, match=r"values must be float32 or float64, got int64"):
        ops.spmm(A.astype(np.int64), np.ones((15, 2), np.int64))
    with pytest.raises(ValueError, match=r"expected a scipy.sparse BSR matrix"):
        ops.bsr_spmm(A, np.ones((15, 2), np.float32))


@pytest.mark.parametrize("make, message", [
    (lambda A: A.toarray(), "expected a scipy.sparse CSR matrix or a torch sparse CSR tensor, got a dense numpy "
                            "array of shape (20, 15); make it sparse with scipy.sparse.csr_matrix(a)"),
    (lambda A: None, "is None; expected a scipy.sparse CSR matrix or a torch sparse CSR tensor"),
    (lambda A: A.tocoo(), "expected a scipy.sparse CSR matrix or a torch sparse CSR tensor, got a scipy.sparse "
                          "'coo' matrix; convert it with .tocsr()"),
    (lambda A: A.data[:3], "expected a scipy.sparse CSR matrix or a torch sparse CSR tensor, got a dense numpy "
                           "array of shape (3,); make it sparse with scipy.sparse.csr_matrix(a)"),
    (lambda A: {"indptr": A.indptr}, "expected a scipy.sparse CSR matrix or a torch sparse CSR tensor, got dict"),
], ids=["ndarray", "none", "coo", "vector", "dict"])
def test_a_non_csr_A_gets_a_hint_that_fits_it(A, make, message):
    assert spmm_error(make(A), np.ones((15, 2), np.float32)) == f"spmm: A: {message}"


def spmm_error(A, X) -> str:
    """The message of the ``ArgumentError`` that ``spmm(A, X)`` raises (no traceback kept: it
    would keep the operands, and their cache entries, alive)."""
    try:
        ops.spmm(A, X)
    except sparsetir.ArgumentError as err:
        return str(err)
    raise AssertionError("spmm accepted A")


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch: sparse CSR is beta
@pytest.mark.parametrize("make, got", [
    (lambda t: t, "a dense torch tensor (layout torch.strided)"),
    (lambda t: t.to_sparse(), "a torch sparse COO tensor (layout torch.sparse_coo)"),
    (lambda t: t.to_sparse_csc(), "a torch sparse CSC tensor (layout torch.sparse_csc)"),
], ids=["dense", "coo", "csc"])
def test_a_torch_A_is_told_to_convert_with_to_sparse_csr(A, make, got):
    torch = pytest.importorskip("torch")
    dense = torch.from_numpy(A.toarray())
    assert spmm_error(make(dense), torch.ones(15, 2)) == (
        f"spmm: A: expected a torch sparse CSR tensor (layout torch.sparse_csr), got {got}; convert it with .to_sparse_csr()")
    converted = make(dense).to_sparse_csr()  # the hint works
    assert torch.allclose(ops.spmm(converted, torch.ones(15, 2)), dense @ torch.ones(15, 2), atol=1e-5)


def test_segment_sum_bad_offsets():
    with pytest.raises(ValueError, match=r"segment_sum: offsets: ends at offsets\[2\]=3, expected the number of stored values 4"):
        ops.segment_sum(np.ones(4, np.float32), np.array([0, 2, 3]))


def test_ell_bad_index():
    with pytest.raises(ValueError, match=r"ell_spmm: indices: column index 9 is out of range for X with 5 rows"):
        ops.ell_spmm(np.array([[9]]), np.ones((1, 1), np.float32), np.ones((5, 2), np.float32))


def test_second_call_does_not_compile_or_prepare(A):
    X = np.ones((15, 24), np.float32)
    ops.spmm(A, X)
    compiled, kernels, preparations = default_cache.compilations, len(ops.library), ops.prepared.preparations
    ops.spmm(A, X)
    ops.spmm(A, X + 1)
    assert default_cache.compilations == compiled
    assert len(ops.library) == kernels
    assert ops.prepared.preparations == preparations
    # Another matrix with the same configuration reuses the kernel; only its preparation is new.
    ops.spmm(random_csr(9, 15, 0.3, 12), X)
    assert default_cache.compilations == compiled
    assert ops.prepared.preparations == preparations + 1


def test_replaced_arrays_are_prepared_again(A):
    X = np.ones((15, 3), np.float32)
    ops.spmm(A, X)
    B = A.copy()
    B.data = B.data * 2
    np.testing.assert_allclose(ops.spmm(B, X), B @ X, rtol=1e-6)
    A.data = A.data * 3
    np.testing.assert_allclose(ops.spmm(A, X), A @ X, rtol=1e-6)


def test_sddmm_computes_rows_longer_than_the_column_count():
    """Such rows (duplicates) are computed by gathering, entry by entry; once refused."""
    A = sp.csr_matrix((np.arange(1, 6, dtype=np.float32), np.array([0, 1, 2, 0, 1]), np.array([0, 5, 5, 5])),
                      shape=(3, 3))
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    Y = np.arange(12, 0, -1, dtype=np.float32).reshape(3, 4)
    S = ops.sddmm(A, X, Y)
    np.testing.assert_allclose(S.data, A.data * (X[0] * Y[A.indices]).sum(1), rtol=1e-6)
    np.testing.assert_allclose(ops.spmm(A, X), A.toarray() @ X)  # SpMM adds duplicates up like SciPy


def test_read_only_and_empty_inputs_take_the_adapting_path(A):
    B = A.copy()
    for arr in (B.data, B.indices, B.indptr):
        arr.flags.writeable = False
    X = np.ones((15, 5), np.float32)
    X.flags.writeable = False
    x = np.ones(15, np.float32)
    x.flags.writeable = False
    np.testing.assert_allclose(ops.spmm(B, X), A @ X, rtol=1e-6)
    np.testing.assert_allclose(ops.spmv(B, x), A @ x, rtol=1e-6)
    Xs = np.ones((20, 5), np.float32)
    np.testing.assert_allclose(ops.sddmm(B, Xs, X).toarray(), (A * 5).toarray(), rtol=1e-6)
    assert not B.data.flags.writeable and not B.indices.flags.writeable
    Z = sp.csr_matrix((20, 15), dtype=np.float32)
    np.testing.assert_array_equal(ops.spmm(Z, np.ones((15, 5), np.float32)), 0)
    np.testing.assert_array_equal(ops.spmv(Z, np.ones(15, np.float32)), 0)
    assert ops.sddmm(Z, Xs, np.ones((15, 5), np.float32)).nnz == 0


def test_sddmm_result_owns_its_arrays_and_matrices_leave_the_cache():
    import gc

    A = random_csr(20, 15, 0.2, 12)
    X = np.ones((20, 3), np.float32)
    Y = np.ones((15, 3), np.float32)
    S = ops.sddmm(A, X, Y)
    assert type(S) is type(A) and S.shape == A.shape
    for name in ("data", "indices", "indptr"):
        assert not np.shares_memory(getattr(S, name), getattr(A, name))
    before = len(ops.prepared)
    del A
    gc.collect()
    assert len(ops.prepared) == before - 1


def test_inference_mode_edit_of_csr_tensors_is_seen():
    """Inference tensors have no version counter: an in-place edit of the column indices inside
    inference mode used to be missed (the old structure was used, a silently wrong product)."""
    torch = pytest.importorskip("torch")
    with torch.inference_mode():
        crow, col = torch.tensor([0, 1, 2]), torch.tensor([0, 1])
        A = ops.CsrTensors(crow, col, torch.tensor([1.0, 1.0]), (2, 2))
        X = torch.tensor([[1.0], [10.0]])
        assert ops.spmm(A, X).ravel().tolist() == [1.0, 10.0]
        col.copy_(torch.tensor([1, 0]))
        assert ops.spmm(A, X).ravel().tolist() == [10.0, 1.0]


@pytest.mark.parametrize("parts,message", [
    ("numpy", "crow_indices must be a torch tensor, got ndarray"),
    ("float-shape", "shape must be two ints (rows, cols), got (2.7, 2.9)"),
])
def test_malformed_csr_tensors_are_refused(parts, message):
    torch = pytest.importorskip("torch")
    if parts == "numpy":
        A = ops.CsrTensors(np.array([0, 1, 2]), np.array([0, 1]), np.array([1.0, 2.0], np.float32), (2, 2))
    else:
        A = ops.CsrTensors(torch.tensor([0, 1, 2]), torch.tensor([0, 1]), torch.tensor([1.0, 2.0]), (2.7, 2.9))
    with pytest.raises(sparsetir.ArgumentError, match=re.escape(message)):
        ops.spmm(A, torch.ones(2, 3))


def test_bsr_with_an_empty_block_size_is_refused():
    B = sp.bsr_matrix(np.eye(4, dtype=np.float32), blocksize=(2, 2))
    B.data = np.zeros((B.data.shape[0], 0, 2), np.float32)
    with pytest.raises(ValueError, match=re.escape("bsr_spmm: A: block size (0, 2) must be positive")):
        ops.bsr_spmm(B, np.ones((4, 3), np.float32))


def test_scipy_sort_indices_in_place_is_seen():
    """A.sort_indices() reorders an unsorted matrix's indices and values in place; the prepared
    (old) column order paired with the new values once gave a product of neither matrix."""
    A = sp.csr_matrix((np.array([1.0, 2.0, 3.0], np.float32), np.array([1, 0, 2]), np.array([0, 2, 3])), shape=(2, 3))
    X = np.array([[10.0], [100.0], [1000.0]], np.float32)
    np.testing.assert_allclose(ops.spmm(A, X), A @ X)
    A.sort_indices()
    np.testing.assert_allclose(ops.spmm(A, X), A @ X)
    np.testing.assert_allclose(ops.sddmm(A, X[:2], X).toarray(), A.multiply(X[:2] @ X.T).toarray())
