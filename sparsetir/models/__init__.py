"""GNN models written with ``sparsetir.ops``, and the same models on torch.sparse and PyG.

- ``graph``: a graph's adjacency in every form the backends read (normalized, per head, edges);
- ``dataset``: node features, labels and splits (a user's Planetoid file, or synthetic data);
- ``kernels``: the sparse operations of each backend (``sparsetir.ops`` or ``torch.sparse``);
- ``gcn``, ``gat``: the two models, each with a ``backend`` of "sparsetir", "torch" or "pyg";
- ``train``: seeded construction and the training loop.

``sparsetir bench --model gcn|gat`` times their training epochs; ``examples/gnn/`` trains them.
See docs/gnn.md. Needs torch; the "pyg" backend needs torch-geometric (the ``gnn`` extra).
"""

from .dataset import NodeData, load_node_data, synthetic_node_data
from .gat import GAT, GATConfig
from .gcn import GCN, GCNConfig
from .graph import Graph
from .pyg import pyg_available
from .train import BACKENDS, MODELS, TrainingRun, accuracy, make_model, reset_parameters, train, train_step

__all__ = [
    "BACKENDS",
    "GAT",
    "GATConfig",
    "GCN",
    "GCNConfig",
    "Graph",
    "MODELS",
    "NodeData",
    "TrainingRun",
    "accuracy",
    "load_node_data",
    "make_model",
    "pyg_available",
    "reset_parameters",
    "synthetic_node_data",
    "train",
    "train_step",
]
