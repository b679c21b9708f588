"""Full-graph GCN training on Cora over torch.distributed: each rank owns a partition of the
nodes, and every sparse product exchanges only the halo rows (sparsetir.distributed.spmm).

    torchrun --nproc_per_node=2 examples/gnn/distributed_gcn.py            # METIS partition
    torchrun --nproc_per_node=4 examples/gnn/distributed_gcn.py --method contiguous --check

Rank 0 prints every epoch's loss; ``--check`` also trains in one process on the whole graph
(``sparsetir.ops.spmm``) and fails unless the losses are equal. Kipf & Welling's 2-layer GCN
without dropout (dropout masks would have to be drawn for the whole graph to match), in float64,
Adam; the weights start equal on every rank, their gradients are summed over the ranks, so every
rank takes the same step and the run computes what the single-process run does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

from sparsetir import data, ops
from sparsetir.distributed import partition, shard, spmm
from sparsetir.models import Graph, load_node_data

HIDDEN = 16
LEARNING_RATE = 0.01
WEIGHT_DECAY = 5e-4
TOLERANCE = 1e-7  # relative, on float64 losses summed in another order


def train(propagate: Callable, x: torch.Tensor, y: torch.Tensor, train_mask: torch.Tensor, train_count: int,
          classes: int, epochs: int, seed: int, all_reduce: Callable = lambda t: t) -> list[float]:
    """The losses of ``epochs`` full-batch steps of a 2-layer GCN whose products with the
    normalized adjacency are ``propagate``; ``all_reduce`` sums a tensor over the ranks."""
    gen = torch.Generator().manual_seed(seed)
    W1 = _glorot(x.shape[1], HIDDEN, gen)
    W2 = _glorot(HIDDEN, classes, gen)
    optimizer = torch.optim.Adam([W1, W2], lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        hidden = torch.relu(propagate(x @ W1))
        out = propagate(hidden @ W2)
        loss = F.cross_entropy(out[train_mask], y[train_mask], reduction="sum") / train_count
        loss.backward()
        for W in (W1, W2):
            W.grad = all_reduce(W.grad)
        optimizer.step()
        losses.append(float(all_reduce(loss.detach())))
    return losses


def _glorot(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    bound = (6.0 / (rows + cols)) ** 0.5
    return ((torch.rand(rows, cols, generator=gen, dtype=torch.float64) * 2 - 1) * bound).requires_grad_()


def load(dataset: str, seed: int) -> tuple:
    """The normalized adjacency (float64 CSR) and node data of ``dataset``."""
    graph = Graph(data.load(dataset))
    nodes = load_node_data(dataset, graph.adjacency, seed=seed)
    return graph.gcn_normalized.astype(np.float64), nodes


def single_process_losses(dataset: str = "cora", epochs: int = 50, seed: int = 0) -> list[float]:
    """The losses of training on the whole graph in this process."""
    A, nodes = load(dataset, seed)
    return train(lambda h: ops.spmm(A, h), nodes.x.double(), nodes.y, nodes.train_mask,
                 int(nodes.train_mask.sum()), nodes.classes, epochs, seed)


def distributed_losses(dataset: str = "cora", epochs: int = 50, seed: int = 0, method: str = "metis") -> list[float]:
    """The losses of training with this process as one rank of the default process group."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    A, nodes = load(dataset, seed)
    mine = shard(A, partition(A, world_size, method, seed=seed), rank)
    rows = torch.from_numpy(mine.rows)

    def summed(t: torch.Tensor) -> torch.Tensor:
        t = t.clone()
        dist.all_reduce(t)
        return t

    return train(lambda h: spmm(mine, h), nodes.x[rows].double(), nodes.y[rows], nodes.train_mask[rows],
                 int(nodes.train_mask.sum()), nodes.classes, epochs, seed, all_reduce=summed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cora")
    parser.add_argument("--method", choices=["metis", "contiguous"], default="metis")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="compare with a single-process run (rank 0)")
    args = parser.parse_args()

    dist.init_process_group("gloo")  # rank, world size and address from torchrun's environment
    try:
        losses = distributed_losses(args.dataset, args.epochs, args.seed, args.method)
        if dist.get_rank() != 0:
            return 0
        for epoch, loss in enumerate(losses):
            print(f"epoch {epoch + 1:3d}  loss {loss:.6f}")
        if args.check:
            reference = single_process_losses(args.dataset, args.epochs, args.seed)
            worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
            print(f"{dist.get_world_size()} ranks ({args.method}) against one process: largest relative "
                  f"loss difference {worst:.2e}")
            if worst > TOLERANCE:
                return 1
        return 0
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
