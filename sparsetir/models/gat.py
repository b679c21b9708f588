"""The GAT of Veličković et al. (ICLR 2018) on sparsetir, torch.sparse or PyTorch Geometric.

Layer 1: 8 heads of 8 features, concatenated, ELU; layer 2: one head giving the class scores.
Each head scores an edge ``j -> i`` as ``LeakyReLU(a_dst · W h_i + a_src · W h_j)``,
normalizes the scores over each node's incoming edges (edge softmax, self loop included) and
averages its neighbours' ``W h_j`` with those weights. Dropout (0.6) acts on the layer inputs
and on the attention coefficients. The parameters carry PyG ``GATConv``'s names and shapes
(``lin.weight``, ``att_src``, ``att_dst``, ``bias``), so one state dict loads into any backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import torch
import torch.nn.functional as F
from torch import nn

from .dropout import dropout
from .features import SparseFeatures, input_dropout
from .graph import Graph
from .kernels import KERNELS


@dataclass(frozen=True)
class GATConfig:
    """The paper's settings for Cora (used here for every graph)."""

    hidden: int = 8
    heads: int = 8
    output_heads: int = 1
    dropout: float = 0.6
    negative_slope: float = 0.2
    lr: float = 0.005
    weight_decay: float = 5e-4


class GATLayer(nn.Module):
    """Multi-head graph attention with a backend's SDDMM / edge softmax / SpMM (``kernels.attend``)."""

    def __init__(self, in_features: int, out_features: int, heads: int, concat: bool, dropout: float,
                 negative_slope: float, kernels: Any) -> None:
        super().__init__()
        self.heads, self.out_features, self.concat = heads, out_features, concat
        self.dropout, self.negative_slope, self.kernels = dropout, negative_slope, kernels
        self.lin = nn.Linear(in_features, heads * out_features, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, out_features))
        self.att_dst = nn.Parameter(torch.empty(1, heads, out_features))
        self.bias = nn.Parameter(torch.zeros(heads * out_features if concat else out_features))
        # What the kernels keep between calls (sparsetir's CSR slots); not model state.
        self.workspace: dict = {}

    def forward(self, x: torch.Tensor, graph: Graph) -> torch.Tensor:
        n, heads, f = x.shape[0], self.heads, self.out_features
        h = self.kernels.transform(x, self.lin.weight).view(n, heads, f)
        # Per-node scores, then head-major layouts: head k's nodes are rows k*n ... k*n + n - 1.
        src = (h * self.att_src).sum(-1).t().reshape(-1)
        dst = (h * self.att_dst).sum(-1).t().reshape(-1)
        out = self.kernels.attend(graph.heads(heads), dst, src, h.transpose(0, 1).reshape(heads * n, f),
                                  self.negative_slope, self.dropout if self.training else 0.0, self.workspace)
        out = out.view(heads, n, f).transpose(0, 1)
        out = out.reshape(n, heads * f) if self.concat else out.mean(1)
        return out + self.bias


class GAT(nn.Module):
    """Veličković et al.'s GAT on ``graph``: ``backend`` is "sparsetir", "torch" or "pyg"."""

    def __init__(self, graph: Graph, in_features: int, classes: int, backend: str = "sparsetir",
                 config: GATConfig = GATConfig()) -> None:
        super().__init__()
        self.backend = backend
        self.config = config
        c = config
        self.graph_input: Union[Graph, torch.Tensor]
        if backend == "pyg":
            from .pyg import pyg_nn

            def conv(i: int, o: int, heads: int, concat: bool) -> nn.Module:
                return pyg_nn().GATConv(i, o, heads=heads, concat=concat, dropout=c.dropout,
                                        negative_slope=c.negative_slope)

            # A plain attribute, not a buffer: state dicts stay the same across backends.
            self.graph_input = graph.edge_index
        elif backend in KERNELS:
            kernels = KERNELS[backend]

            def conv(i: int, o: int, heads: int, concat: bool) -> nn.Module:
                return GATLayer(i, o, heads, concat, c.dropout, c.negative_slope, kernels)

            self.graph_input = graph
        else:
            raise ValueError(f"unknown backend {backend!r} (choose from sparsetir, torch, pyg)")
        self.conv1 = conv(in_features, c.hidden, c.heads, True)
        self.conv2 = conv(c.hidden * c.heads, classes, c.output_heads, False)

    def forward(self, x: Union[torch.Tensor, SparseFeatures]) -> torch.Tensor:
        """The class scores (logits) of every node, from dense features or ``SparseFeatures``."""
        p = self.config.dropout
        x = input_dropout(x, p, self.training)
        x = F.elu(self.conv1(x, self.graph_input))
        x = dropout(x, p, self.training)
        return self.conv2(x, self.graph_input)

    def optimizer(self) -> torch.optim.Optimizer:
        """Adam with the paper's learning rate and weight decay on every parameter."""
        return torch.optim.Adam(self.parameters(), lr=self.config.lr, weight_decay=self.config.weight_decay)
