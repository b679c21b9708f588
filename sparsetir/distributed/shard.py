"""``shard``: one rank's rows of a partitioned matrix, with local column ids and its halo plan."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..runtime.csr_checks import fail
from .local_products import LocalProducts
from .partition import Partition
from .square_csr import square_csr


@dataclass(frozen=True, eq=False)
class Shard:
    """Rank ``rank``'s rows of ``A`` and what it exchanges with the other ranks.

    Local column ids number the owned rows first (``rows``, in order), then the halo rows
    (``halo``: rows of ``X`` owned elsewhere that this rank's rows read, grouped by owner rank,
    ascending within a group). ``matrix`` is ``A[rows]`` with those column ids, of shape
    ``(len(rows), len(rows) + len(halo))``; ``send[r]`` are the global ids of the owned rows
    rank ``r`` needs (its ``recv[rank]``), ``recv[r]`` the halo rows that come from ``r``.
    """

    rank: int
    world_size: int
    rows: np.ndarray
    halo: np.ndarray
    matrix: sp.csr_matrix
    send: tuple
    recv: tuple

    @property
    def comm_rows(self) -> int:
        """How many rows of ``X`` this rank receives per product (its halo size)."""
        return int(self.halo.shape[0])

    @property
    def send_counts(self) -> list:
        """Rows sent to each rank, in rank order (0 to itself)."""
        return [int(s.shape[0]) for s in self.send]

    @property
    def recv_counts(self) -> list:
        """Rows received from each rank, in rank order (0 from itself)."""
        return [int(r.shape[0]) for r in self.recv]

    @cached_property
    def products(self) -> LocalProducts:
        """The local matrices ``spmm`` multiplies with (made on first use)."""
        return LocalProducts.of(self.matrix)

    @cached_property
    def send_local(self) -> np.ndarray:
        """Local ids (positions in ``rows``) of every row sent, concatenated in rank order."""
        if not self.send:
            return np.zeros(0, np.int64)
        return np.searchsorted(self.rows, np.concatenate(self.send)).astype(np.int64)


def shard(A: Any, part: Partition, rank: int) -> Shard:
    """Rank ``rank``'s rows of the square CSR matrix ``A`` (partitioned by ``part``) with local
    column ids, and the rows of ``X`` it sends to and receives from every other rank."""
    A = square_csr("shard: A", A)
    if not isinstance(part, Partition):
        fail("shard: part", f"expected a Partition made by sparsetir.distributed.partition, got {type(part).__name__}")
    n = A.shape[0]
    if part.owner.shape[0] != n:
        fail("shard: part", f"partitions {part.owner.shape[0]} rows, but A has {n}")
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank < part.world_size:
        fail("shard: rank", f"must be an int in [0, {part.world_size}), got {rank!r}")
    rank, P, owner = int(rank), part.world_size, part.owner
    rows = part.rows(rank)

    row_ids = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
    row_owner, col_owner = owner[row_ids], owner[A.indices]
    # Entries of another rank's rows in my columns: the rows of X I send, per destination.
    out = (col_owner == rank) & (row_owner != rank)
    sent = np.unique(row_owner[out] * n + A.indices[out])
    send = _split_by_rank(sent, n, P)
    # Entries of my rows in another rank's columns: the halo, grouped by owner (unique sorts
    # by owner * n + id, so by owner, then id).
    mine = A[rows]
    cols = mine.indices
    halo_keys = np.unique(owner[cols[owner[cols] != rank]] * n + cols[owner[cols] != rank])
    recv = _split_by_rank(halo_keys, n, P)
    halo = halo_keys % n

    local = np.full(n, -1, np.int64)
    local[rows] = np.arange(rows.shape[0])
    local[halo] = rows.shape[0] + np.arange(halo.shape[0])
    matrix = sp.csr_matrix(
        (mine.data, local[cols].astype(np.int32), mine.indptr.astype(np.int32)),
        shape=(rows.shape[0], rows.shape[0] + halo.shape[0]),
    )
    matrix.sort_indices()
    return Shard(rank, P, rows, halo, matrix, send, recv)


def _split_by_rank(keys: np.ndarray, n: int, world_size: int) -> tuple:
    """Sorted keys ``rank * n + row`` as one array of rows per rank."""
    bounds = np.searchsorted(keys, np.arange(world_size + 1) * n)
    return tuple(keys[bounds[r]:bounds[r + 1]] % n for r in range(world_size))
