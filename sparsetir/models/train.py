"""Building a model with seeded parameters, and the full-batch training loop every backend shares."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .dataset import NodeData
from .gat import GAT, GATConfig
from .gcn import GCN, GCNConfig
from .graph import Graph

#: The models by name, with their paper settings.
MODELS = {"gcn": (GCN, GCNConfig), "gat": (GAT, GATConfig)}
#: Every backend, sparsetir's first.
BACKENDS = ("sparsetir", "torch", "pyg")


def make_model(kind: str, backend: str, graph: Graph, data: NodeData, seed: int = 0, config=None) -> nn.Module:
    """Model ``kind`` ("gcn" or "gat") on ``backend`` with the parameters ``seed`` gives every backend."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r} (choose from {', '.join(MODELS)})")
    cls, default = MODELS[kind]
    model = cls(graph, data.x.shape[1], data.classes, backend, config or default())
    reset_parameters(model, seed)
    return model


def reset_parameters(model: nn.Module, seed: int) -> None:
    """Glorot-uniform weights (PyG's ``glorot``, over the last two dimensions) and zero biases,
    drawn in parameter-name order from ``seed``: equal for equal names and shapes, whatever the
    backend built."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("bias"):
                p.zero_()
            else:
                bound = math.sqrt(6.0 / (p.shape[-2] + p.shape[-1]))
                p.uniform_(-bound, bound, generator=generator)


def train_step(model: nn.Module, data: NodeData, optimizer: torch.optim.Optimizer) -> float:
    """One epoch of full-batch training (forward, backward, optimizer step); the training loss."""
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data.features)[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    return loss.item()


def accuracy(model: nn.Module, data: NodeData, mask: torch.Tensor) -> float:
    """The fraction of the nodes in ``mask`` whose class the model predicts (eval mode)."""
    model.eval()
    with torch.no_grad():
        predicted = model(data.features).argmax(1)
    return float((predicted[mask] == data.y[mask]).float().mean())


@dataclass
class TrainingRun:
    """The losses and wall-clock seconds of each epoch, and the accuracies at the end (of the
    kept epoch: the last one, or with early stopping the one with the best validation)."""

    losses: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    val_accuracy: float = math.nan
    test_accuracy: float = math.nan
    kept_epoch: int = -1  # the epoch (0-based) whose parameters the accuracies are of


def train(model: nn.Module, data: NodeData, epochs: int, seed: int = 0,
          on_epoch: Optional[Callable[[int, float, float], None]] = None,
          patience: Optional[int] = None) -> TrainingRun:
    """Train for ``epochs`` epochs with the model's optimizer, dropout seeded with ``seed``;
    ``on_epoch(epoch, loss, seconds)`` after each (``seconds``: the training step alone).

    With ``patience``, early stopping as the GAT paper does it: after each epoch the model is
    evaluated on the validation nodes, training stops once neither the validation accuracy nor
    the validation loss has improved for ``patience`` epochs, and the model keeps the parameters
    of the epoch with the best validation accuracy (ties: the lower loss)."""
    optimizer = model.optimizer()
    torch.manual_seed(seed)
    run = TrainingRun()
    best: Optional[tuple[float, float]] = None  # (val accuracy, -val loss) of the kept state
    best_acc, best_loss, stale, state = -math.inf, math.inf, 0, None
    for epoch in range(epochs):
        start = time.perf_counter()
        loss = train_step(model, data, optimizer)
        run.seconds.append(time.perf_counter() - start)
        run.losses.append(loss)
        if on_epoch is not None:
            on_epoch(epoch, loss, run.seconds[-1])
        if patience is None:
            continue
        val_acc, val_loss = _validation(model, data)
        if best is None or (val_acc, -val_loss) > best:
            best, run.kept_epoch = (val_acc, -val_loss), epoch
            state = copy.deepcopy(model.state_dict())
        if val_acc > best_acc or val_loss < best_loss:
            best_acc, best_loss, stale = max(val_acc, best_acc), min(val_loss, best_loss), 0
        else:
            stale += 1
            if stale >= patience:
                break
    if state is not None:
        model.load_state_dict(state)
    else:
        run.kept_epoch = len(run.losses) - 1
    run.val_accuracy = accuracy(model, data, data.val_mask)
    run.test_accuracy = accuracy(model, data, data.test_mask)
    return run


def _validation(model: nn.Module, data: NodeData) -> tuple[float, float]:
    """(accuracy, cross-entropy loss) on the validation nodes, in eval mode."""
    model.eval()
    with torch.no_grad():
        scores = model(data.features)[data.val_mask]
    labels = data.y[data.val_mask]
    return float((scores.argmax(1) == labels).float().mean()), float(F.cross_entropy(scores, labels))
