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
