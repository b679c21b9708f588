"""Distributed ``sddmm`` on P = 2 and 4 gloo processes equals single-process ``ops.sddmm`` and
its autograd gradients, on Cora and shared matrices, with METIS and contiguous partitions."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from ranks import run_ranks  # noqa: E402
from test_spmm_ranks import SHARED_DATA, matrices  # noqa: E402

FEATURES = 8
#: the shared matrices besides Cora: a graph with self loops, an FEM matrix with real values (the
#: check compares dense copies of the rank's rows, so the largest graphs stay out)
SHARED = ["citeseer", "bcsstk16"]


def entry_weights(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """A weight per entry that depends only on its global position: the same on every rank."""
    return np.sin(0.37 * rows + 0.11 * cols)


def check_sddmm(rank: int, world_size: int, names: list) -> None:
    """On every rank: the distributed values and the gradients of ``sum(w * values)`` against
    ``ops.sddmm`` on the whole matrix with torch autograd (float64), for each partition."""
    from sparsetir import data, ops
    from sparsetir.distributed import partition, sddmm, shard

    for name in names:
        A = data.load(name, search_dirs=[SHARED_DATA])
        A = A.multiply(1.0 / abs(A).max()).tocsr().astype(np.float32)  # bcsstk16 holds values up to 2e9
        n = A.shape[0]
        gen = torch.Generator().manual_seed(11)
        X = torch.randn(n, FEATURES, generator=gen, dtype=torch.float64, requires_grad=True)
        Y = torch.randn(n, FEATURES, generator=gen, dtype=torch.float64, requires_grad=True)
        A64 = A.astype(np.float64)
        ref = ops.sddmm(A64, X, Y)
        ref_rows = np.repeat(np.arange(n), np.diff(A64.indptr))
        w = torch.from_numpy(entry_weights(ref_rows, A64.indices))
        (ref.values() * w).sum().backward()
        for method in ("contiguous", "metis"):
            part = partition(A, world_size, method)
            mine = shard(A, part, rank)
            rows = torch.from_numpy(part.rows(rank))
            X_local = X.detach()[rows].float().requires_grad_()
            Y_local = Y.detach()[rows].float().requires_grad_()
            out = sddmm(mine, X_local, Y_local)
            columns = np.concatenate([mine.rows, mine.halo])  # local column id -> global
            local_rows = mine.rows[np.repeat(np.arange(mine.rows.shape[0]), np.diff(mine.matrix.indptr))]
            local_cols = columns[out.col_indices().numpy()]
            (out.values() * torch.from_numpy(entry_weights(local_rows, local_cols)).float()).sum().backward()
            where = f"{name} {method} rank {rank}/{world_size}"
            got = sp_global(out, local_rows, local_cols, n)
            expected = sp_global(ref, ref_rows, A64.indices, n)[mine.rows]
            np.testing.assert_allclose(got[mine.rows].toarray(), expected.toarray(), rtol=1e-4, atol=1e-4,
                                       err_msg=f"{where} values")
            torch.testing.assert_close(X_local.grad.double(), X.grad[rows], rtol=1e-4, atol=1e-4,
                                       msg=lambda m: f"{where} dX: {m}")
            torch.testing.assert_close(Y_local.grad.double(), Y.grad[rows], rtol=1e-4, atol=1e-4,
                                       msg=lambda m: f"{where} dY: {m}")
        dist.barrier()


def sp_global(out, rows: np.ndarray, cols: np.ndarray, n: int):
    """A result's values at their global positions, as a SciPy COO-built CSR matrix."""
    import scipy.sparse as sp

    return sp.csr_matrix((out.values().detach().double().numpy(), (rows, cols)), shape=(n, n))


@pytest.mark.timeout(150)
@pytest.mark.parametrize("world_size", [2, 4])
def test_sddmm_equals_single_process(world_size):
    run_ranks(check_sddmm, world_size, (matrices(SHARED),), timeout_s=120)
