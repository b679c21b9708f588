"""The sparse operations of the GNN layers, once per backend: ``sparsetir.ops`` or ``torch.sparse``.

Each backend has the same three methods (``transform``, ``aggregate``, ``attend``); a layer
written against them runs unchanged on either, and everything dense (the per-node attention
scores, activations, dropout of dense tensors) is the same torch code. The two compute the same
function, so a difference in epoch time is a difference between their sparse kernels. (The PyG
backend uses PyG's own layers instead: see ``gcn.py`` and ``gat.py``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from sparsetir import ops

from .csr import CsrSlot
from .dropout import dropout as drop
from .heads import HeadStructure


@dataclass(frozen=True)
class SparsetirKernels:
    """SpMM, SDDMM and edge softmax of ``sparsetir.ops`` on torch sparse CSR tensors (autograd)."""

    name: str = "sparsetir"

    def transform(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """``x Wᵀ``: an SpMM when ``x`` is sparse CSR (features), else a dense product."""
        return ops.spmm(x, weight.t()) if x.layout == torch.sparse_csr else F.linear(x, weight)

    def aggregate(self, adjacency: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``adjacency @ h`` for a sparse CSR ``adjacency``."""
        return ops.spmm(adjacency, h)

    def attend(self, s: HeadStructure, dst: torch.Tensor, src: torch.Tensor, h: torch.Tensor,
               negative_slope: float, dropout: float, workspace: dict) -> torch.Tensor:
        """Graph attention over ``s``: ``softmax_j(LeakyReLU(dst[i] + src[j])) @ h``, every head at once.

        ``dst``, ``src`` are each node's scores (heads*n,), ``h`` its features (heads*n, f),
        head-major; ``dropout`` drops attention coefficients (0 outside training). ``workspace``
        is the calling layer's, kept across calls: the CSR slots live there, one set per layer,
        so that two layers' backward passes never read each other's values.
        """
        ones = torch.ones_like(dst)
        # dot([dst_i, 1], [1, src_j]) = dst_i + src_j: SDDMM over the pattern gives every edge's score.
        scores = ops.sddmm(s.ones, torch.stack([dst, ones], 1), torch.stack([ones, src], 1))
        # Slots: the same CSR tensors every pass, so the ops' per-matrix preparation is reused.
        alpha = ops.softmax(_slot(workspace, "scores", s).fill(F.leaky_relu(scores.values(), negative_slope)))
        if dropout > 0:
            alpha = _slot(workspace, "dropped attention", s).fill(drop(alpha.values(), dropout))
        return ops.spmm(alpha, h)


@dataclass(frozen=True)
class TorchKernels:
    """The same operations with ``torch.sparse`` (``mm`` on CSR, ``softmax`` on COO) and torch gathers."""

    name: str = "torch"

    def transform(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """``x Wᵀ``: ``torch.sparse.mm`` when ``x`` is sparse CSR (features), else a dense product."""
        return torch.sparse.mm(x, weight.t()) if x.layout == torch.sparse_csr else F.linear(x, weight)

    def aggregate(self, adjacency: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``adjacency @ h`` for a sparse CSR ``adjacency``."""
        return torch.sparse.mm(adjacency, h)

    def attend(self, s: HeadStructure, dst: torch.Tensor, src: torch.Tensor, h: torch.Tensor,
               negative_slope: float, dropout: float, workspace: dict) -> torch.Tensor:
        """Graph attention over ``s`` (see ``SparsetirKernels.attend``; no ``workspace`` needed)."""
        scores = F.leaky_relu(dst[s.rows] + src[s.col], negative_slope)
        # torch.sparse.softmax takes COO only; the entries are row-major, i.e. coalesced.
        # The structure is the graph's own (checked when it was built): torch's checks are off, and said
        # so (torch warns when they are off implicitly).
        alpha = torch.sparse.softmax(torch.sparse_coo_tensor(s.coo, scores, s.size, is_coalesced=True,
                                                             check_invariants=False), 1)
        if dropout > 0:
            alpha = torch.sparse_coo_tensor(s.coo, drop(alpha.values(), dropout), s.size, is_coalesced=True,
                                            check_invariants=False)
        # torch.sparse.mm's gradient for a COO operand is a dense (rows x columns) product masked
        # afterwards (1 s per call on Cora's 8 heads, a 100 GB product on PubMed's); for a CSR
        # operand it is computed at the stored entries only.
        return torch.sparse.mm(alpha.to_sparse_csr(), h)


def _slot(workspace: dict, role: str, s: HeadStructure) -> CsrSlot:
    """The workspace's CSR slot for ``role`` over ``s``'s structure, made on first use."""
    slot = workspace.get(role)
    if slot is None or slot.col is not s.col:
        slot = workspace[role] = CsrSlot(s.crow, s.col, s.size)
    return slot


#: The kernels of each backend that runs the models' own layers.
KERNELS = {"sparsetir": SparsetirKernels(), "torch": TorchKernels()}
