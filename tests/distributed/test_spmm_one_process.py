"""``spmm`` in one process: a single-rank shard needs no process group; bad calls are refused
before any communication."""

from __future__ import annotations

import numpy as np
import pytest

from sparsetir import ArgumentError, data
from sparsetir.distributed import partition, shard, spmm

torch = pytest.importorskip("torch")

CORA = data.load("cora")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_one_rank_equals_the_product_and_its_gradient(dtype):
    me = shard(CORA, partition(CORA, 1, "contiguous"), 0)
    X = torch.randn(CORA.shape[0], 5, dtype=dtype, requires_grad=True)
    W = torch.randn(CORA.shape[0], 5, dtype=dtype)
    (spmm(me, X) * W).sum().backward()
    A = CORA.astype(np.float64)
    np.testing.assert_allclose(spmm(me, X).detach().double().numpy(), A @ X.detach().double().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(X.grad.double().numpy(), A.T @ W.double().numpy(), rtol=1e-5, atol=1e-5)


def test_refusals_name_the_argument_and_the_problem():
    one = shard(CORA, partition(CORA, 1, "contiguous"), 0)
    two = shard(CORA, partition(CORA, 2, "contiguous"), 0)
    with pytest.raises(ArgumentError, match=r"spmm: X_local: has 3 rows, but rank 0 owns 2708"):
        spmm(one, torch.zeros(3, 4))
    with pytest.raises(ArgumentError, match=r"spmm: X_local: expected a dense 2-D torch tensor, got ndarray of shape \(2708, 4\)"):
        spmm(one, np.zeros((2708, 4), np.float32))
    with pytest.raises(ArgumentError, match=r"spmm: X_local: must be float32 or float64, got torch.int64"):
        spmm(one, torch.zeros(2708, 4, dtype=torch.int64))
    with pytest.raises(ArgumentError, match=r"spmm: shard: expected a Shard"):
        spmm(CORA, torch.zeros(2708, 4))
    with pytest.raises(ArgumentError, match=r"spmm: group: the shard is one of 2 ranks, but torch.distributed is not initialized"):
        spmm(two, torch.zeros(two.rows.shape[0], 4))
