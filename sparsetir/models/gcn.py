"""The 2-layer GCN of Kipf & Welling (ICLR 2017) on sparsetir, torch.sparse or PyTorch Geometric.

``H' = D^-1/2 (A + I) D^-1/2 · H Wᵀ + b``, twice, with ReLU and dropout between; the same
function on every backend. The layers' parameters carry PyG ``GCNConv``'s names and shapes
(``conv1.lin.weight``, ``conv1.bias``, ...), so one state dict loads into any backend.
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
class GCNConfig:
    """The paper's settings for the citation graphs."""

    hidden: int = 16
    dropout: float = 0.5
    lr: float = 0.01
    # On the first layer only, as in the paper's code (and PyG's example).
    weight_decay: float = 5e-4


class GCNLayer(nn.Module):
    """One graph convolution ``adjacency @ (x Wᵀ) + b`` with a backend's kernels."""

    def __init__(self, in_features: int, out_features: int, kernels: Any) -> None:
        super().__init__()
        self.lin = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.kernels = kernels

    def forward(self, x: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
        # Transform first, then aggregate: the narrow side goes through the sparse product.
        return self.kernels.aggregate(adjacency, self.kernels.transform(x, self.lin.weight)) + self.bias


class GCN(nn.Module):
    """Kipf & Welling's GCN on ``graph``: ``backend`` is "sparsetir", "torch" or "pyg"."""

    def __init__(self, graph: Graph, in_features: int, classes: int, backend: str = "sparsetir",
                 config: GCNConfig = GCNConfig()) -> None:
        super().__init__()
        self.backend = backend
        self.config = config
        if backend == "pyg":
            from .pyg import pyg_nn

            # cached: the normalized graph is computed once, as our backends' is.
            def conv(i: int, o: int) -> nn.Module:
                return pyg_nn().GCNConv(i, o, cached=True)

            # A plain attribute, not a buffer: state dicts stay the same across backends.
            self.graph_input = graph.edge_index
        elif backend in KERNELS:
            kernels = KERNELS[backend]

            def conv(i: int, o: int) -> nn.Module:
                return GCNLayer(i, o, kernels)

            self.graph_input = graph.gcn_normalized_tensor
        else:
            raise ValueError(f"unknown backend {backend!r} (choose from sparsetir, torch, pyg)")
        self.conv1 = conv(in_features, config.hidden)
        self.conv2 = conv(config.hidden, classes)

    def forward(self, x: Union[torch.Tensor, SparseFeatures]) -> torch.Tensor:
        """The class scores (logits) of every node, from dense features or ``SparseFeatures``."""
        p = self.config.dropout
        x = input_dropout(x, p, self.training)
        x = F.relu(self.conv1(x, self.graph_input))
        x = dropout(x, p, self.training)
        return self.conv2(x, self.graph_input)

    def optimizer(self) -> torch.optim.Optimizer:
        """Adam with the paper's learning rate; weight decay on the first layer only."""
        return torch.optim.Adam([
            dict(params=self.conv1.parameters(), weight_decay=self.config.weight_decay),
            dict(params=self.conv2.parameters(), weight_decay=0.0),
        ], lr=self.config.lr)
