"""``partition``: deterministic, covering, balanced row partitions, and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsetir import ArgumentError, data
from sparsetir.distributed import partition

pytest.importorskip("pymetis")

CORA = data.load("cora")


def skewed(n: int = 60) -> sp.csr_matrix:
    """A square matrix with an empty row, a dense row and random rows."""
    rng = np.random.default_rng(3)
    A = sp.random(n, n, density=0.08, format="lil", random_state=rng, dtype=np.float32)
    A[5, :] = 0
    A[7, :] = 1
    return A.tocsr()


@pytest.mark.parametrize("method", ["contiguous", "metis"])
@pytest.mark.parametrize("world_size", [1, 2, 3, 4, 8])
def test_every_row_has_one_owner_and_rows_are_sorted(method, world_size):
    part = partition(CORA, world_size, method)
    assert part.owner.shape == (CORA.shape[0],) and part.owner.dtype.kind == "i"
    assert 0 <= part.owner.min() and part.owner.max() < world_size
    rows = [part.rows(r) for r in range(world_size)]
    assert all(np.all(np.diff(r) > 0) for r in rows)
    assert np.array_equal(np.sort(np.concatenate(rows)), np.arange(CORA.shape[0]))
    assert all(np.all(part.owner[r] == rank) for rank, r in enumerate(rows))


@pytest.mark.parametrize("method", ["contiguous", "metis"])
def test_deterministic(method):
    for seed in (0, 5):
        assert np.array_equal(partition(CORA, 4, method, seed=seed).owner, partition(CORA, 4, method, seed=seed).owner)


def test_contiguous_blocks_have_about_equal_nnz():
    A = skewed(200)
    part = partition(A, 4, "contiguous")
    assert np.all(np.diff(part.owner) >= 0)  # contiguous blocks in rank order
    nnz = np.diff(A.indptr)
    per_rank = np.array([nnz[part.rows(r)].sum() for r in range(4)])
    assert per_rank.max() - per_rank.min() <= 2 * nnz.max()


def test_contiguous_gives_every_rank_a_row():
    dense = np.zeros((4, 4), np.float32)
    dense[0, :] = 1  # every nonzero in the first row
    part = partition(sp.csr_matrix(dense), 4, "contiguous")
    assert [len(part.rows(r)) for r in range(4)] == [1, 1, 1, 1]
    empty = sp.csr_matrix((5, 5), dtype=np.float32)
    assert [len(partition(empty, 2, "contiguous").rows(r)) for r in range(2)] in ([2, 3], [3, 2])


def test_metis_balances_and_handles_empty_rows_and_asymmetry():
    A = skewed(200)
    part = partition(A, 4, "metis")
    sizes = [len(part.rows(r)) for r in range(4)]
    assert sum(sizes) == 200 and min(sizes) > 0


def test_torch_sparse_csr_input_gives_the_same_partition():
    torch = pytest.importorskip("torch")
    T = torch.sparse_csr_tensor(CORA.indptr, CORA.indices, CORA.data, CORA.shape)
    for method in ("contiguous", "metis"):
        assert np.array_equal(partition(T, 4, method).owner, partition(CORA, 4, method).owner)


def test_refusals_name_the_argument_and_the_problem():
    with pytest.raises(ArgumentError, match=r"partition: A: must be square .*\(3, 4\)"):
        partition(sp.csr_matrix((3, 4), dtype=np.float32), 2)
    with pytest.raises(ArgumentError, match=r"partition: A: .*dense numpy array"):
        partition(np.eye(3), 2)
    with pytest.raises(ArgumentError, match=r"partition: world_size: must be between 1 and the row count 2708, got 0"):
        partition(CORA, 0)
    with pytest.raises(ArgumentError, match=r"partition: world_size: must be between 1 and the row count 2708, got 2709"):
        partition(CORA, 2709)
    with pytest.raises(ArgumentError, match=r"partition: world_size: must be an int, got float"):
        partition(CORA, 2.0)
    with pytest.raises(ArgumentError, match=r"partition: method: must be one of 'metis', 'contiguous', got 'random'"):
        partition(CORA, 2, method="random")
    with pytest.raises(ArgumentError, match=r"rank: must be in \[0, 2\), got 2"):
        partition(CORA, 2).rows(2)
