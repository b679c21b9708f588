"""Gradients of ``sparsetir.ops`` through torch autograd (``sparsetir/ops/autograd.py``).

Each op is checked by ``gradcheck`` in float64 on small matrices with empty rows, and against
an independent dense torch reference on cora in float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir.ops as ops
from sparsetir import data

from ops_matrices import random_csr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse:UserWarning")

RTOL = 1e-4


def _torch_csr(A, requires_grad=False):
    t = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                torch.from_numpy(A.data.copy()), size=A.shape)
    return t.requires_grad_(requires_grad)


def _small(dtype=np.float64):
    """A 12 x 9 matrix with empty rows (first and last among them), a single-entry row and a long row."""
    A = random_csr(12, 9, 0.25, 5, dtype).tolil()
    A[3, :] = 0
    A[3, 4] = 0.7
    return A.tocsr()


def _with_values(A, v):
    """A torch CSR with ``A``'s structure and the values ``v`` (through which gradients flow)."""
    return torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                   v, size=A.shape)


def _leaf(array):
    return torch.tensor(array, dtype=torch.float64, requires_grad=True)


# --- gradcheck, float64 -------------------------------------------------------------------------


def test_gradcheck_spmm():
    A = _small()
    v, X = _leaf(A.data), _leaf(np.random.default_rng(0).standard_normal((9, 5)))
    assert torch.autograd.gradcheck(lambda v, X: ops.spmm(_with_values(A, v), X), (v, X))


def test_gradcheck_spmm_on_a_leaf_csr_tensor():
    A = _torch_csr(_small(), requires_grad=True)
    X = _leaf(np.random.default_rng(1).standard_normal((9, 3)))
    assert torch.autograd.gradcheck(ops.spmm, (A, X), masked=True, check_undefined_grad=False)


def test_gradcheck_sddmm():
    A = _small()
    rng = np.random.default_rng(2)
    v, X, Y = _leaf(A.data), _leaf(rng.standard_normal((12, 4))), _leaf(rng.standard_normal((9, 4)))
    assert torch.autograd.gradcheck(lambda v, X, Y: ops.sddmm(_with_values(A, v), X, Y).values(), (v, X, Y))


def test_gradcheck_spmv():
    A = _small()
    v, x = _leaf(A.data), _leaf(np.random.default_rng(3).standard_normal(9))
    assert torch.autograd.gradcheck(lambda v, x: ops.spmv(_with_values(A, v), x), (v, x))


@pytest.mark.parametrize("width", [None, 3])
def test_gradcheck_segment_sum(width):
    offsets = np.array([0, 2, 2, 5, 6, 6], np.int64)  # empty segments in the middle and at the end
    shape = (6,) if width is None else (6, width)
    values = _leaf(np.random.default_rng(4).standard_normal(shape))
    assert torch.autograd.gradcheck(lambda v: ops.segment_sum(v, torch.from_numpy(offsets)), (values,))


def test_gradcheck_softmax():
    A = _small()
    assert np.diff(A.indptr).min() == 0 and 1 in np.diff(A.indptr)
    v = _leaf(A.data)
    weights = torch.from_numpy(np.random.default_rng(5).standard_normal(A.nnz))
    assert torch.autograd.gradcheck(lambda v: ops.softmax(_with_values(A, v)).values() * weights, (v,))


def test_gradcheck_bsr_spmm():
    dense = np.zeros((6, 8))
    dense[0:2, 2:4] = [[1, 2], [3, 4]]
    dense[4:6, 0:2] = [[5, 0], [6, 7]]
    dense[4:6, 6:8] = [[1, 1], [0, 2]]
    B = sp.bsr_matrix(dense, blocksize=(2, 2))  # block row 1 is empty
    X = _leaf(np.random.default_rng(6).standard_normal((8, 3)))
    assert torch.autograd.gradcheck(lambda X: ops.bsr_spmm(B, X), (X,))
    (C := ops.bsr_spmm(B, X)).sum().backward()
    np.testing.assert_allclose(X.grad.numpy(), dense.T @ np.ones(C.shape))


@pytest.mark.parametrize("n", [7, 3])  # 3: rows longer than the column count (repeated columns)
def test_gradcheck_ell_spmm(n):
    rng = np.random.default_rng(14)
    indices = rng.integers(0, n, size=(5, 4))
    values, X = _leaf(rng.standard_normal((5, 4))), _leaf(rng.standard_normal((n, 3)))
    assert torch.autograd.gradcheck(lambda v, X: ops.ell_spmm(indices, v, X), (values, X))
    flat = _leaf(rng.standard_normal(20))
    assert torch.autograd.gradcheck(lambda v, X: ops.ell_spmm(indices.reshape(-1), v, X, rows=5), (flat, X))


# --- against a dense torch reference on cora, float32 ------------------------------------------


@pytest.fixture(scope="module")
def cora():
    return data.load("cora")


def _dense_leaf(A):
    """``A`` as a dense float32 tensor and the mask of its pattern."""
    return torch.from_numpy(A.toarray()).requires_grad_(), torch.from_numpy(A.toarray() != 0)


def _assert_close(actual, expected, scale=None):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    atol = RTOL * (np.abs(expected).max() if scale is None else scale)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=atol)


def test_spmm_gradients_on_cora(cora):
    rng = np.random.default_rng(7)
    A = _torch_csr(cora, requires_grad=True)
    X = torch.from_numpy(rng.standard_normal((cora.shape[1], 32), dtype=np.float32)).requires_grad_()
    G = torch.from_numpy(rng.standard_normal((cora.shape[0], 32), dtype=np.float32))
    ops.spmm(A, X).backward(G)

    D, mask = _dense_leaf(cora)
    X_ref = X.detach().clone().requires_grad_()
    (D @ X_ref).backward(G)
    _assert_close(X.grad, X_ref.grad)
    assert A.grad.layout == torch.sparse_csr
    _assert_close(A.grad.values(), D.grad[mask])


def test_spmm_a_grad_matches_torch_sparse_mm(cora):
    X = torch.from_numpy(np.random.default_rng(8).standard_normal((cora.shape[1], 16), dtype=np.float32))
    A = _torch_csr(cora, requires_grad=True)
    ops.spmm(A, X).sum().backward()
    A_ref = _torch_csr(cora, requires_grad=True)
    torch.sparse.mm(A_ref, X).sum().backward()
    assert A.grad.layout == A_ref.grad.layout == torch.sparse_csr
    assert A.grad.shape == A.shape and A.grad.dtype == A.dtype
    assert torch.equal(A.grad.crow_indices(), A.crow_indices())
    assert torch.equal(A.grad.col_indices(), A.col_indices())
    _assert_close(A.grad.values(), A_ref.grad.values())


def test_sddmm_gradients_on_cora(cora):
    rng = np.random.default_rng(9)
    m, n = cora.shape
    A = _torch_csr(cora, requires_grad=True)
    X = torch.from_numpy(rng.standard_normal((m, 32), dtype=np.float32)).requires_grad_()
    Y = torch.from_numpy(rng.standard_normal((n, 32), dtype=np.float32)).requires_grad_()
    dO = torch.from_numpy(rng.standard_normal(cora.nnz, dtype=np.float32))
    O = ops.sddmm(A, X, Y)
    O.values().backward(dO)

    D, mask = _dense_leaf(cora)
    X_ref, Y_ref = (t.detach().clone().requires_grad_() for t in (X, Y))
    (D * (X_ref @ Y_ref.T))[mask].backward(dO)
    _assert_close(X.grad, X_ref.grad)
    _assert_close(Y.grad, Y_ref.grad)
    _assert_close(A.grad.values(), D.grad[mask])


def test_spmv_gradients_on_cora(cora):
    rng = np.random.default_rng(10)
    A = _torch_csr(cora, requires_grad=True)
    x = torch.from_numpy(rng.standard_normal(cora.shape[1], dtype=np.float32)).requires_grad_()
    g = torch.from_numpy(rng.standard_normal(cora.shape[0], dtype=np.float32))
    ops.spmv(A, x).backward(g)

    D, mask = _dense_leaf(cora)
    x_ref = x.detach().clone().requires_grad_()
    (D @ x_ref).backward(g)
    _assert_close(x.grad, x_ref.grad)
    _assert_close(A.grad.values(), D.grad[mask])


def test_softmax_gradients_on_cora(cora):
    rng = np.random.default_rng(11)
    A = _torch_csr(cora, requires_grad=True)
    dP = torch.from_numpy(rng.standard_normal(cora.nnz, dtype=np.float32))
    ops.softmax(A).values().backward(dP)

    coo = cora.tocoo()
    idx = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
    v = torch.from_numpy(coo.data.copy()).requires_grad_()
    torch.sparse.softmax(torch.sparse_coo_tensor(idx, v, cora.shape), dim=1).coalesce().values().backward(dP)
    _assert_close(A.grad.values(), v.grad)  # cora is canonical: COO order is CSR order


def test_segment_sum_gradients_on_cora(cora):
    rng = np.random.default_rng(12)
    values = torch.from_numpy(rng.standard_normal((cora.nnz, 8), dtype=np.float32)).requires_grad_()
    G = torch.from_numpy(rng.standard_normal((cora.shape[0], 8), dtype=np.float32))
    ops.segment_sum(values, cora.indptr).backward(G)
    rows = np.repeat(np.arange(cora.shape[0]), np.diff(cora.indptr))
    _assert_close(values.grad, G.numpy()[rows])


def test_gat_layer_chain_on_cora(cora):
    """SDDMM, edge softmax and SpMM chained, as in a GAT layer: gradients reach X and W."""
    rng = np.random.default_rng(13)
    A = _torch_csr(cora)
    X = torch.from_numpy(rng.standard_normal((cora.shape[0], 16), dtype=np.float32)).requires_grad_()
    W = torch.from_numpy(rng.standard_normal((16, 16), dtype=np.float32) / 4).requires_grad_()
    H = X @ W
    ops.spmm(ops.softmax(ops.sddmm(A, H, H)), H).sum().backward()

    D, mask = _dense_leaf(cora)
    X_ref, W_ref = (t.detach().clone().requires_grad_() for t in (X, W))
    H_ref = X_ref @ W_ref
    scores = torch.where(mask, D.detach() * (H_ref @ H_ref.T), -torch.inf)
    P = torch.nan_to_num(torch.softmax(scores, dim=1), nan=0.0)  # empty rows: all -inf
    (P @ H_ref).sum().backward()
    _assert_close(X.grad, X_ref.grad)
    _assert_close(W.grad, W_ref.grad)


# --- which calls record gradients ---------------------------------------------------------------


def test_scipy_matrix_with_torch_operands_gets_operand_grads():
    A = _small(np.float32)
    X = torch.randn(12, 4, requires_grad=True)
    Y = torch.randn(9, 4, requires_grad=True)
    O = ops.sddmm(A, X, Y)
    assert O.layout == torch.sparse_csr and O.grad_fn is not None
    ops.spmm(A, Y).sum().backward()
    O.values().sum().backward()
    D = torch.from_numpy(A.toarray())
    torch.testing.assert_close(Y.grad, D.T @ torch.ones(12, 4) + D.T @ X.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(X.grad, D @ Y.detach(), rtol=1e-5, atol=1e-5)


def test_numpy_operand_with_a_csr_tensor_that_requires_grad():
    A = _torch_csr(_small(np.float32), requires_grad=True)
    X = np.ones((9, 2), np.float32)
    C = ops.spmm(A, X)
    assert isinstance(C, torch.Tensor) and C.grad_fn is not None
    C.sum().backward()
    _assert_close(A.grad.values(), np.full(A._nnz(), 2.0))


def test_calls_without_grad_take_the_plain_path():
    A = _small(np.float32)
    tA = _torch_csr(A)
    X = torch.randn(9, 4)
    for result in (ops.spmm(tA, X), ops.spmv(tA, X[:, 0]), ops.sddmm(tA, torch.randn(12, 4), X),
                   ops.softmax(tA), ops.segment_sum(X, [0, 3, 9])):
        assert result.grad_fn is None and not result.requires_grad
    assert isinstance(ops.sddmm(A, np.ones((12, 4), np.float32), X.numpy()), sp.csr_matrix)


def test_no_grad_is_respected():
    A = _torch_csr(_small(np.float32), requires_grad=True)
    X = torch.randn(9, 4, requires_grad=True)
    with torch.no_grad():
        results = [ops.spmm(A, X), ops.sddmm(A, torch.randn(12, 4), X), ops.softmax(A), ops.spmv(A, X[:, 0]),
                   ops.segment_sum(X, [0, 3, 9])]
    for result in results:
        assert result.grad_fn is None and not result.requires_grad


def test_only_the_inputs_that_require_grad_get_one():
    A = _torch_csr(_small(np.float32))
    X = torch.randn(12, 4)
    Y = torch.randn(9, 4, requires_grad=True)
    ops.sddmm(A, X, Y).values().sum().backward()
    assert X.grad is None and A.grad is None and Y.grad is not None


def test_sparse_results_share_the_backward_structure_of_their_input():
    """The transposed structure is built once per pattern, not once per sddmm/softmax result."""
    A = _torch_csr(_small(np.float32))
    X = torch.randn(12, 4, requires_grad=True)
    P = ops.softmax(ops.sddmm(A, X, torch.randn(9, 4)))

    def rebuilt():
        raise AssertionError("the result's structure was prepared again")

    assert ops.prepared.get("autograd", P, rebuilt) is ops.prepared.get("autograd", A, rebuilt)


def test_edge_weights_train_through_csr_tensors_prepared_once():
    from sparsetir.ops import torch_library

    A = _small(np.float32)
    crow, col = torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64))
    X = torch.randn(A.shape[1], 5)
    ops.spmm(ops.CsrTensors(crow, col, torch.from_numpy(A.data.copy()), A.shape), X)
    before = torch_library.structures.preparations
    for step in range(3):
        w = torch.from_numpy(A.data * np.float32(step + 1)).requires_grad_()
        G = torch.randn(A.shape[0], 5)
        (ops.spmm(ops.CsrTensors(crow, col, w, A.shape), X) * G).sum().backward()
        # d/dw_e of sum(G * (A X)) = G[row_e] . X[col_e], a dense (nnz,) gradient
        rows = torch.repeat_interleave(torch.arange(A.shape[0]), crow.diff())
        torch.testing.assert_close(w.grad, (G[rows] * X[col]).sum(1), rtol=1e-5, atol=1e-5)
    assert torch_library.structures.preparations == before
