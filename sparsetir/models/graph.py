"""One graph in every form the GNN backends read, built once per graph and shared by all of them.

The models aggregate over the *incoming* neighbours of each node plus the node itself: row ``i``
of the adjacency lists the nodes ``j`` whose messages node ``i`` receives (``edge j -> i``), and
self loops are replaced by exactly one loop per node, as PyG's ``GCNConv``
(``add_remaining_self_loops``) and ``GATConv`` (``remove_self_loops`` then ``add_self_loops``)
do. Every backend therefore sees the same edges, and computes the same function.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
import torch

from .csr import csr_tensor
from .heads import HeadStructure


class Graph:
    """A graph's adjacency prepared for the GNN models: normalized, self-looped, per head, as edges."""

    def __init__(self, adjacency: sp.spmatrix) -> None:
        a = sp.csr_matrix(adjacency, dtype=np.float32)
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"the adjacency must be square, got shape {a.shape}")
        a.setdiag(0)
        a.eliminate_zeros()
        a.data[:] = 1.0
        a.sort_indices()
        #: The adjacency without self loops, values 1 (row i: the nodes i receives from).
        self.adjacency = a
        loops = (a + sp.eye(a.shape[0], dtype=np.float32, format="csr")).tocsr()
        loops.sort_indices()
        loops.indptr = loops.indptr.astype(np.int32)
        loops.indices = loops.indices.astype(np.int32)
        #: The adjacency with exactly one self loop per node, values 1: A + I.
        self.self_looped = loops
        self._heads: dict[int, HeadStructure] = {}

    @property
    def num_nodes(self) -> int:
        return self.adjacency.shape[0]

    @functools.cached_property
    def gcn_normalized(self) -> sp.csr_matrix:
        """D^-1/2 (A + I) D^-1/2 with D the row sums of A + I (Kipf & Welling's renormalization)."""
        loops = self.self_looped
        scale = 1.0 / np.sqrt(np.asarray(loops.sum(axis=1)).ravel())
        norm = sp.diags(scale) @ loops @ sp.diags(scale)
        norm = sp.csr_matrix(norm, dtype=np.float32)
        norm.sort_indices()
        return norm

    @functools.cached_property
    def gcn_normalized_tensor(self) -> torch.Tensor:
        """``gcn_normalized`` as a torch sparse CSR tensor (a constant: no gradient)."""
        norm = self.gcn_normalized
        return csr_tensor(torch.from_numpy(norm.indptr.astype(np.int64)),
                          torch.from_numpy(norm.indices.astype(np.int64)),
                          torch.from_numpy(norm.data), norm.shape)

    @functools.cached_property
    def edge_index(self) -> torch.Tensor:
        """PyG's ``edge_index`` (2, E): source ``j`` over target ``i`` for each entry (i, j), no loops."""
        coo = self.adjacency.tocoo()
        return torch.from_numpy(np.stack([coo.col, coo.row]).astype(np.int64))

    def heads(self, heads: int) -> HeadStructure:
        """The self-looped structure repeated for ``heads`` attention heads (built once per count)."""
        if heads not in self._heads:
            loops = self.self_looped
            self._heads[heads] = HeadStructure.repeat(torch.from_numpy(loops.indptr.astype(np.int64)),
                                                      torch.from_numpy(loops.indices.astype(np.int64)), heads)
        return self._heads[heads]
