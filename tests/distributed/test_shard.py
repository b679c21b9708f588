"""``shard``: local column ids, the halo plan, and METIS against contiguous halos."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsetir import ArgumentError, data
from sparsetir.distributed import partition, shard

pytest.importorskip("pymetis")

CORA = data.load("cora")


def directed(n: int = 80) -> sp.csr_matrix:
    """An unsymmetric pattern with an empty row and a self loop."""
    rng = np.random.default_rng(11)
    A = sp.random(n, n, density=0.05, format="lil", random_state=rng, dtype=np.float32)
    A[3, :] = 0
    A[4, 4] = 2.0
    return A.tocsr()


@pytest.mark.parametrize("A", [CORA, directed()], ids=["cora", "directed"])
@pytest.mark.parametrize("method", ["contiguous", "metis"])
@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_local_rows_reproduce_the_product_and_plans_match(A, method, world_size):
    part = partition(A, world_size, method)
    shards = [shard(A, part, r) for r in range(world_size)]
    X = np.random.default_rng(0).standard_normal((A.shape[0], 3))
    for me in shards:
        assert np.array_equal(me.rows, part.rows(me.rank))
        assert me.matrix.shape == (len(me.rows), len(me.rows) + me.comm_rows)
        assert np.all(part.owner[me.halo] != me.rank)
        local_X = np.concatenate([X[me.rows], X[me.halo]])
        np.testing.assert_allclose(me.matrix @ local_X, (A @ X)[me.rows], atol=1e-6)
        assert me.send[me.rank].size == 0 and me.recv[me.rank].size == 0
        assert np.array_equal(np.concatenate(me.recv), me.halo)  # halo grouped by owner
        for other in shards:  # what I send to r is what r receives from me
            assert np.array_equal(me.send[other.rank], other.recv[me.rank])
        assert np.array_equal(me.rows[me.send_local], np.concatenate(me.send))
    # the halo is exactly the off-rank columns of the rank's rows
    for me in shards:
        cols = np.unique(A[me.rows].indices)
        assert np.array_equal(np.sort(me.halo), cols[part.owner[cols] != me.rank])


def test_one_rank_has_no_halo():
    me = shard(CORA, partition(CORA, 1, "contiguous"), 0)
    assert me.comm_rows == 0 and me.send_counts == [0] and me.recv_counts == [0]


def test_metis_halo_is_no_larger_than_contiguous_on_cora():
    for world_size in (2, 4, 8):
        halo = {m: sum(shard(CORA, partition(CORA, world_size, m), r).comm_rows for r in range(world_size))
                for m in ("metis", "contiguous")}
        assert halo["metis"] <= halo["contiguous"], (world_size, halo)


def test_refusals_name_the_argument_and_the_problem():
    part = partition(CORA, 2, "contiguous")
    with pytest.raises(ArgumentError, match=r"shard: rank: must be an int in \[0, 2\), got 2"):
        shard(CORA, part, 2)
    with pytest.raises(ArgumentError, match=r"shard: part: partitions 2708 rows, but A has 3"):
        shard(sp.csr_matrix((3, 3), dtype=np.float32), part, 0)
    with pytest.raises(ArgumentError, match=r"shard: part: expected a Partition .*got ndarray"):
        shard(CORA, part.owner, 0)
    with pytest.raises(ArgumentError, match=r"shard: A: must be square"):
        shard(sp.csr_matrix((3, 4), dtype=np.float32), part, 0)
