"""``partition``: which rank owns each row of a square sparse matrix."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..runtime.csr_checks import fail
from .square_csr import square_csr

METHODS = ("metis", "contiguous")


@dataclass(frozen=True, eq=False)
class Partition:
    """A row partition: ``owner[i]`` is the rank that owns row ``i`` (and row ``i`` of ``X``)."""

    owner: np.ndarray
    world_size: int
    method: str
    _rows: tuple = field(init=False, repr=False)

    def __post_init__(self) -> None:
        order = np.argsort(self.owner, kind="stable")  # stable: each rank's rows stay sorted
        bounds = np.searchsorted(self.owner[order], np.arange(self.world_size + 1))
        rows = tuple(order[bounds[r]:bounds[r + 1]] for r in range(self.world_size))
        object.__setattr__(self, "_rows", rows)

    def rows(self, rank: int) -> np.ndarray:
        """The sorted global ids of the rows ``rank`` owns."""
        if not 0 <= rank < self.world_size:
            fail("rank", f"must be in [0, {self.world_size}), got {rank}")
        return self._rows[rank]


def partition(A: Any, world_size: int, method: str = "metis", seed: int = 0) -> Partition:
    """A deterministic row partition of the square CSR matrix ``A`` over ``world_size`` ranks:
    ``"metis"`` cuts few edges of ``A``'s symmetrised pattern (few halo rows), ``"contiguous"``
    cuts the rows into blocks of equal nonzero counts. The same ``A`` and ``seed`` give the same
    partition on every rank."""
    A = square_csr("partition: A", A)
    n = A.shape[0]
    if isinstance(world_size, bool) or not isinstance(world_size, (int, np.integer)):
        fail("partition: world_size", f"must be an int, got {type(world_size).__name__}")
    if not 1 <= world_size <= n:
        fail("partition: world_size", f"must be between 1 and the row count {n}, got {world_size}")
    if method == "metis":
        owner = _metis(A, int(world_size), seed)
    elif method == "contiguous":
        owner = _contiguous(A, int(world_size))
    else:
        fail("partition: method", f"must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    return Partition(owner.astype(np.int64), int(world_size), method)


def _contiguous(A: sp.csr_matrix, world_size: int) -> np.ndarray:
    """Contiguous row blocks of about ``nnz / world_size`` entries each, none empty."""
    n, indptr = A.shape[0], A.indptr
    if indptr[-1] == 0:  # no entries: equal row counts
        targets, weights = np.arange(world_size) * n / world_size, np.arange(n + 1)
    else:
        targets, weights = np.arange(world_size) * indptr[-1] / world_size, indptr
    starts = np.searchsorted(weights, targets, side="left").astype(np.int64)
    starts[0] = 0
    for r in range(1, world_size):  # at least one row per rank, room for the ranks after
        starts[r] = min(max(starts[r], starts[r - 1] + 1), n - (world_size - r))
    owner = np.zeros(n, np.int64)
    owner[starts[1:]] = 1
    return np.cumsum(owner)


def _metis(A: sp.csr_matrix, world_size: int, seed: int) -> np.ndarray:
    """METIS k-way partition of the undirected graph of ``A + Aᵀ`` without self loops, each
    vertex weighted by its row length + 1 (so the ranks get similar work)."""
    if world_size == 1:
        return np.zeros(A.shape[0], np.int64)
    try:
        import pymetis
    except ImportError as err:
        raise ImportError(
            "partition(method='metis') needs pymetis: pip install 'sparsetir[distributed]' "
            "(or pass method='contiguous')"
        ) from err
    pattern = sp.csr_matrix((np.ones(A.nnz, np.int8), A.indices, A.indptr), shape=A.shape)
    graph = (pattern + pattern.T).tocsr()
    graph.setdiag(0)
    graph.eliminate_zeros()
    graph.sort_indices()
    weights = np.diff(A.indptr) + 1
    options = pymetis.Options(seed=int(seed))
    adjacency = pymetis.CSRAdjacency(graph.indptr.astype(np.int64), graph.indices.astype(np.int64))
    result = pymetis.part_graph(world_size, adjacency, vweights=weights.astype(np.int64), options=options)
    return np.asarray(result[1], np.int64)
