"""Distributed ``spmm`` on P = 2 and 4 gloo processes equals the single-process product and
gradient, on Cora and shared matrices, with METIS and contiguous partitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from ranks import run_ranks  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
#: every shared matrix (../shared/data): graphs with self loops and hubs, a geometric graph, an FEM matrix
SHARED = ["citeseer", "pubmed", "email_enron", "soc_slashdot0902", "rgg_n_2_15_s0", "bcsstk16"]
FEATURES = 16


def matrices(shared: list = SHARED) -> list:
    """Cora (shipped) and those of the ``shared`` matrices that are present."""
    return ["cora"] + [name for name in shared if (SHARED_DATA / f"{name}.npz").exists()]


def check_spmm(rank: int, world_size: int, names: list) -> None:
    """On every rank: the distributed forward and backward against ``A @ X`` and autograd's
    gradient of ``sum(W * (A @ X))`` for each matrix and partition method."""
    from sparsetir import data
    from sparsetir.distributed import partition, shard, spmm

    for name in names:
        A = data.load(name, search_dirs=[SHARED_DATA])
        A = A.multiply(1.0 / abs(A).max()).tocsr().astype(np.float32)  # bcsstk16 holds values up to 2e9
        n = A.shape[0]
        gen = torch.Generator().manual_seed(7)
        X = torch.randn(n, FEATURES, generator=gen, dtype=torch.float64)
        W = torch.randn(n, FEATURES, generator=gen, dtype=torch.float64)
        A64 = A.astype(np.float64)
        Y_ref = torch.from_numpy(A64 @ X.numpy())
        grad_ref = torch.from_numpy(A64.T @ W.numpy())
        for method in ("contiguous", "metis"):
            part = partition(A, world_size, method)
            mine = shard(A, part, rank)
            rows = torch.from_numpy(part.rows(rank))
            X_local = X[rows].float().requires_grad_()
            Y_local = spmm(mine, X_local)
            (Y_local * W[rows].float()).sum().backward()
            where = f"{name} {method} rank {rank}/{world_size}"
            torch.testing.assert_close(Y_local.double(), Y_ref[rows], rtol=1e-4, atol=1e-4, msg=lambda m: f"{where} forward: {m}")
            torch.testing.assert_close(X_local.grad.double(), grad_ref[rows], rtol=1e-4, atol=1e-4,
                                       msg=lambda m: f"{where} backward: {m}")
        dist.barrier()


@pytest.mark.timeout(150)
@pytest.mark.parametrize("world_size", [2, 4])
def test_spmm_equals_single_process(world_size):
    run_ranks(check_spmm, world_size, (matrices(),), timeout_s=120)


def fail_on_rank_one(rank: int, world_size: int) -> None:
    from sparsetir import data
    from sparsetir.distributed import partition, shard, spmm

    A = data.load("cora")
    mine = shard(A, partition(A, world_size, "contiguous"), rank)
    if rank == 1:
        raise RuntimeError("rank 1 fails on purpose")
    spmm(mine, torch.zeros(mine.rows.shape[0], 4))  # rank 0 waits for a halo that never comes


@pytest.mark.timeout(120)
def test_a_failing_rank_fails_the_run_without_hanging():
    # the first rank to fail is reported: rank 1 itself, or rank 0 losing its peer mid-exchange
    with pytest.raises(Exception, match="rank 1 fails on purpose|Connection reset by peer|Connection closed by peer"):
        run_ranks(fail_on_rank_one, 2, timeout_s=90)
