"""``sparsetir.ops`` with torch inputs: results of the same kind, equal to torch's own."""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir.ops as ops

from ops_matrices import random_csr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse:UserWarning")


def _torch_csr(A):
    return torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                                   torch.from_numpy(A.data), size=A.shape)


def test_spmm_torch_in_torch_out():
    A = random_csr(60, 40, 0.1, 7)
    tA = _torch_csr(A)
    X = torch.randn(40, 32)
    C = ops.spmm(tA, X)
    assert isinstance(C, torch.Tensor) and C.dtype == torch.float32
    torch.testing.assert_close(C, torch.sparse.mm(tA, X), rtol=1e-5, atol=1e-5)


def test_spmm_scipy_matrix_torch_operand_and_grad_tensor():
    A = random_csr(30, 20, 0.2, 8)
    X = torch.randn(20, 16, requires_grad=True)
    C = ops.spmm(A, X)
    assert isinstance(C, torch.Tensor)
    np.testing.assert_allclose(C.detach().numpy(), A @ X.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_sddmm_torch():
    A = random_csr(50, 45, 0.1, 9)
    tA = _torch_csr(A)
    X, Y = torch.randn(50, 24), torch.randn(45, 24)
    O = ops.sddmm(tA, X, Y)
    assert O.layout == torch.sparse_csr
    expected = torch.sparse.sampled_addmm(tA, X, Y.t(), beta=0.0).values() * tA.values()
    torch.testing.assert_close(O.values(), expected, rtol=1e-5, atol=1e-5)
    assert torch.equal(O.crow_indices(), tA.crow_indices())


def test_spmv_and_softmax_torch():
    A = random_csr(40, 30, 0.15, 10)
    tA = _torch_csr(A)
    x = torch.randn(30)
    torch.testing.assert_close(ops.spmv(tA, x), torch.mv(tA.to_dense(), x), rtol=1e-5, atol=1e-5)
    S = ops.softmax(tA)
    assert S.layout == torch.sparse_csr and S.values().shape == tA.values().shape


def test_torch_coo_refused():
    with pytest.raises(ValueError, match="sparse CSR"):
        ops.spmm(torch.eye(3).to_sparse(), torch.randn(3, 2))


def _neg(t):
    """A tensor with torch's negative bit: its memory holds ``t``, its values are ``-t``."""
    view = t._neg_view()
    assert view.is_neg()
    return view


def _ell_dense(idx, vals, n):
    D = np.zeros((idx.shape[0], n), np.float64)
    for i in range(idx.shape[0]):
        np.add.at(D[i], idx[i], vals[i])
    return D


@pytest.mark.parametrize("fmt", ["csr", "bsr", "ell", "hyb", "auto"])
def test_spmm_reads_negative_views_as_their_values(fmt):
    A = random_csr(30, 20, 0.3, 31)
    X = torch.randn(20, 8)
    expected = -(A @ X.numpy().astype(np.float64))
    np.testing.assert_allclose(ops.spmm(A, _neg(X), format=fmt).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_every_op_reads_negative_views_as_their_values():
    A = random_csr(30, 20, 0.3, 32)
    A.sum_duplicates()
    X, Xs, x = torch.randn(20, 8), torch.randn(30, 8), torch.randn(20)
    Xn, Xsn = X.numpy().astype(np.float64), Xs.numpy().astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.spmv(A, _neg(x)).numpy(), -(A @ x.numpy().astype(np.float64)), **tol)
    np.testing.assert_allclose(ops.sddmm(A, _neg(Xs), X).toarray(), -A.multiply(Xsn @ Xn.T).toarray(), **tol)
    np.testing.assert_allclose(ops.sddmm(A, Xs, _neg(X)).toarray(), -A.multiply(Xsn @ Xn.T).toarray(), **tol)
    v = torch.randn(10, 3)
    np.testing.assert_allclose(ops.segment_sum(_neg(v), torch.tensor([0, 4, 4, 10])).numpy(),
                               -np.stack([v[:4].sum(0), np.zeros(3), v[4:].sum(0)]), **tol)
    idx, ev = torch.randint(0, 20, (5, 3)), torch.randn(5, 3)
    np.testing.assert_allclose(ops.ell_spmm(idx, _neg(ev), X).numpy(), -(_ell_dense(idx.numpy(), ev.numpy(), 20) @ Xn),
                               **tol)
    # The values of a matrix given as tensors (and of the torch.library ops behind it).
    crow, col = torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64))
    values = torch.from_numpy(A.data.copy())
    T = ops.CsrTensors(crow, col, _neg(values), A.shape)
    np.testing.assert_allclose(ops.spmm(T, X).numpy(), -(A @ Xn), **tol)
    np.testing.assert_allclose(ops.spmv(T, x).numpy(), -(A @ x.numpy().astype(np.float64)), **tol)
    np.testing.assert_allclose(ops.sddmm(T, Xs, X).values.numpy(), -A.multiply(Xsn @ Xn.T).data, **tol)


def test_gradients_through_negative_views():
    A = random_csr(30, 20, 0.3, 33)
    X = torch.randn(20, 8, requires_grad=True)
    out = ops.spmm(A, _neg(X))
    np.testing.assert_allclose(out.detach().numpy(), -(A @ X.detach().numpy().astype(np.float64)), rtol=1e-5, atol=1e-5)
    G = torch.randn(30, 8)
    out.backward(_neg(G))  # d/dX of (-A X) · (-G) = A^T G
    np.testing.assert_allclose(X.grad.numpy(), A.T @ G.numpy().astype(np.float64), rtol=1e-5, atol=1e-5)
