"""``sddmm`` in one process: a single-rank shard equals ``ops.sddmm`` and its gradients; bad
calls are refused before any communication."""

from __future__ import annotations

import numpy as np
import pytest

from sparsetir import ArgumentError, data, ops
from sparsetir.distributed import partition, sddmm, shard

torch = pytest.importorskip("torch")

CORA = data.load("cora")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_one_rank_equals_ops_sddmm_and_its_gradients(dtype):
    me = shard(CORA, partition(CORA, 1, "contiguous"), 0)
    gen = torch.Generator().manual_seed(3)
    X = torch.randn(CORA.shape[0], 5, generator=gen, dtype=dtype, requires_grad=True)
    Y = torch.randn(CORA.shape[0], 5, generator=gen, dtype=dtype, requires_grad=True)
    W = torch.randn(CORA.nnz, generator=gen, dtype=dtype)
    out = sddmm(me, X, Y)
    assert out.layout == torch.sparse_csr and tuple(out.shape) == CORA.shape
    (out.values() * W).sum().backward()
    X_ref, Y_ref = X.detach().clone().requires_grad_(), Y.detach().clone().requires_grad_()
    ref = ops.sddmm(CORA.astype(_np_dtype(dtype)), X_ref, Y_ref)
    (ref.values() * W).sum().backward()
    np.testing.assert_array_equal(out.crow_indices().numpy(), CORA.indptr)  # one rank: the global order
    np.testing.assert_array_equal(out.col_indices().numpy(), CORA.indices)
    torch.testing.assert_close(out.values().detach(), ref.values().detach())
    torch.testing.assert_close(X.grad, X_ref.grad)
    torch.testing.assert_close(Y.grad, Y_ref.grad)


def test_a_dense_output_gradient_is_read_at_the_entries():
    me = shard(CORA, partition(CORA, 1, "contiguous"), 0)
    X = torch.randn(CORA.shape[0], 3, dtype=torch.float64, requires_grad=True)
    Y = torch.randn(CORA.shape[0], 3, dtype=torch.float64)
    sddmm(me, X, Y).to_dense().sum().backward()
    np.testing.assert_allclose(X.grad.numpy(), CORA @ Y.numpy(), rtol=1e-10)


def _np_dtype(dtype):
    return np.float32 if dtype == torch.float32 else np.float64


def test_refusals_name_the_argument_and_the_problem():
    one = shard(CORA, partition(CORA, 1, "contiguous"), 0)
    two = shard(CORA, partition(CORA, 2, "contiguous"), 0)
    X = torch.zeros(2708, 4)
    with pytest.raises(ArgumentError, match=r"sddmm: Y_local: has 3 rows, but rank 0 owns 2708"):
        sddmm(one, X, torch.zeros(3, 4))
    with pytest.raises(ArgumentError, match=r"sddmm: X_local: expected a dense 2-D torch tensor"):
        sddmm(one, np.zeros((2708, 4), np.float32), X)
    with pytest.raises(ArgumentError, match=r"sddmm: Y_local: has 5 columns, but X_local has 4"):
        sddmm(one, X, torch.zeros(2708, 5))
    with pytest.raises(ArgumentError, match=r"sddmm: Y_local: is torch.float64, but X_local is torch.float32"):
        sddmm(one, X, torch.zeros(2708, 4, dtype=torch.float64))
    with pytest.raises(ArgumentError, match=r"sddmm: shard: expected a Shard"):
        sddmm(CORA, X, X)
    with pytest.raises(ArgumentError, match=r"sddmm: group: the shard is one of 2 ranks, but torch.distributed is not initialized"):
        sddmm(two, torch.zeros(two.rows.shape[0], 4), torch.zeros(two.rows.shape[0], 4))
