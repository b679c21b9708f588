"""Node features, labels and splits for the GNN models: Planetoid's own, a user's file, or synthetic.

``load_node_data`` reads, in order of preference, the ``.npz`` the caller names (arrays ``x``
dense or ``x_indptr``/``x_indices``/``x_data``/``x_shape`` as CSR, ``y``, ``train_mask``,
``val_mask``, ``test_mask``, and optionally ``edge_index`` to check the graph against; node
``i`` is row ``i`` of the graph, as in PyG's ``Planetoid``), the Planetoid data that ships with
the package for Cora and CiteSeer (``sparsetir.data.node_data_file``), and otherwise generates
data of the real shapes on the real graph. The synthetic labels follow the graph's communities
and the features are noisy class indicators, so both are learnable, but accuracies on them are
*not* the published Planetoid accuracies. ``NodeData.source`` says which one a run used.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse import csgraph

from ..data import node_data_file
from .features import SparseFeatures


@dataclass(frozen=True)
class PlanetoidShape:
    """The sizes of a Planetoid data set: features, classes and the standard split."""

    features: int
    classes: int
    train: int  # 20 nodes per class
    val: int = 500
    test: int = 1000


PLANETOID = {
    "cora": PlanetoidShape(1433, 7, 140),
    "citeseer": PlanetoidShape(3703, 6, 120),
    "pubmed": PlanetoidShape(500, 3, 60),
}


def shape_of(name: str, nodes: int) -> PlanetoidShape:
    """The Planetoid shape of ``name``; for another graph, 64 features, 4 classes and a split of
    at most 20 nodes per class, 500 and 1000 nodes that leaves a fifth of the nodes unused."""
    if name in PLANETOID:
        return PLANETOID[name]
    classes = 4
    return PlanetoidShape(64, classes, classes * min(20, max(1, nodes // (5 * classes))),
                          val=min(500, nodes // 5), test=min(1000, 2 * nodes // 5))

# The synthetic generator. Labels: each node takes the class of its nearest of SEEDS_PER_CLASS
# random seed nodes per class (graph distance), then LABEL_NOISE of the labels are redrawn, so
# neighbours mostly share a class. Features: WORDS_PER_NODE "words" per node, each drawn from the
# node's class's block of features with probability TOPIC_RATE, else from all features.
SEEDS_PER_CLASS = 6
SMOOTHING_ROUNDS = 3
LABEL_NOISE = 0.08
WORDS_PER_NODE = 18
TOPIC_RATE = 0.35


@dataclass(frozen=True)
class NodeData:
    """What a node-classification run needs besides the graph, and where it came from."""

    name: str
    x: torch.Tensor  # (n, features) float32, rows normalized to sum 1
    y: torch.Tensor  # (n,) int64 class of each node
    train_mask: torch.Tensor  # (n,) bool
    val_mask: torch.Tensor
    test_mask: torch.Tensor
    classes: int
    source: str  # "planetoid file PATH" or "synthetic (seed S)"

    @functools.cached_property
    def features(self) -> SparseFeatures:
        """``x`` as the models' input: sparse, with dropout on the stored values (``features.py``)."""
        return SparseFeatures(self.x)

    @property
    def synthetic(self) -> bool:
        return self.source.startswith("synthetic")

    def describe(self) -> str:
        """One line: the data set, its sizes and its origin."""
        return (f"{self.name}: {self.x.shape[0]} nodes, {self.x.shape[1]} features, {self.classes} classes, "
                f"split {int(self.train_mask.sum())}/{int(self.val_mask.sum())}/{int(self.test_mask.sum())}; "
                f"{self.source}")


def load_node_data(name: str, adjacency: sp.spmatrix, features: Optional[Union[str, os.PathLike]] = None,
                   seed: int = 0, synthetic: bool = False) -> NodeData:
    """``features`` (a Planetoid ``.npz``) when given, else the bundled Planetoid data of graph
    ``name`` when there is some (Cora, CiteSeer) and ``synthetic`` is false, else synthetic data."""
    if features is not None:
        return read_node_data(name, adjacency, features)
    bundled = None if synthetic else _bundled(name)
    if bundled is not None:
        return read_node_data(name, adjacency, bundled, source=f"Planetoid {name} (bundled)")
    return synthetic_node_data(name, adjacency, seed)


def _bundled(name: str) -> Optional[Path]:
    try:
        return node_data_file(name)
    except ValueError:  # not a plain data set name: nothing bundled under it
        return None


def read_node_data(name: str, adjacency: sp.spmatrix, path: Union[str, os.PathLike],
                   source: Optional[str] = None) -> NodeData:
    """The features, labels and masks of ``path`` (checked against the graph's node count).

    Nodes labelled -1 (no label in the data set) must be in no split."""
    path = Path(path)
    with np.load(path, allow_pickle=False) as f:
        missing = [k for k in ("y", "train_mask", "val_mask", "test_mask") if k not in f]
        if "x" not in f and not all(k in f for k in _CSR_FEATURES):
            missing.insert(0, "x (or " + ", ".join(_CSR_FEATURES) + ")")
        if missing:
            raise ValueError(f"{path}: missing array(s) {', '.join(missing)}")
        x = np.asarray(f["x"], np.float32) if "x" in f else _csr_features(path, *(f[k] for k in _CSR_FEATURES))
        y = np.asarray(f["y"], np.int64)
        masks = [np.asarray(f[k], bool) for k in ("train_mask", "val_mask", "test_mask")]
        edge_index = np.asarray(f["edge_index"]) if "edge_index" in f else None
    n = adjacency.shape[0]
    if x.ndim != 2 or x.shape[0] != n or y.shape != (n,) or any(m.shape != (n,) for m in masks):
        raise ValueError(f"{path}: expected x (n, f), y and masks (n,) for the {n} nodes of {name}, "
                         f"got x {x.shape}, y {y.shape}, masks {[m.shape for m in masks]}")
    if y.size and (y.min() < -1 or any(bool((y[m] < 0).any()) for m in masks)):
        raise ValueError(f"{path}: labels must be classes 0, 1, ... (or -1 for a node in no split)")
    if edge_index is not None and not _same_edges(adjacency, edge_index):
        raise ValueError(f"{path}: its edge_index is not the graph {name} (other edges or another node order)")
    return NodeData(name, torch.from_numpy(_normalize_rows(x)), torch.from_numpy(y), *map(torch.from_numpy, masks),
                    classes=int(y.max()) + 1, source=source or f"planetoid file {path}")


_CSR_FEATURES = ("x_indptr", "x_indices", "x_data", "x_shape")


def _csr_features(path: Path, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                  shape: np.ndarray) -> np.ndarray:
    """Dense features from their CSR arrays, checked."""
    try:
        matrix = sp.csr_matrix((data, indices, indptr), shape=tuple(int(d) for d in shape))
        matrix.check_format(full_check=True)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: malformed feature arrays x_indptr/x_indices/x_data/x_shape ({err})") from err
    return matrix.toarray().astype(np.float32)


def _same_edges(adjacency: sp.spmatrix, edge_index: np.ndarray) -> bool:
    """Whether ``edge_index`` (2, E), source over target, has the edges of ``adjacency`` (self
    loops and direction aside)."""
    def pairs(rows: np.ndarray, cols: np.ndarray) -> set:
        keep = rows != cols
        return set(zip(np.minimum(rows, cols)[keep].tolist(), np.maximum(rows, cols)[keep].tolist()))

    coo = sp.coo_matrix(adjacency)
    return edge_index.ndim == 2 and edge_index.shape[0] == 2 and \
        pairs(coo.row, coo.col) == pairs(edge_index[1], edge_index[0])


def synthetic_node_data(name: str, adjacency: sp.spmatrix, seed: int = 0) -> NodeData:
    """Data of Planetoid ``name``'s shape on its graph: community labels, noisy class features."""
    shape = shape_of(name, adjacency.shape[0])
    rng = np.random.default_rng(seed)
    y = _community_labels(adjacency, shape.classes, rng)
    x = _class_features(y, shape.features, shape.classes, rng)
    train, val, test = _split(y, shape, rng)
    return NodeData(name, torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(train),
                    torch.from_numpy(val), torch.from_numpy(test), shape.classes,
                    source=f"synthetic (seed {seed}; not the Planetoid features/labels)")


def _community_labels(adjacency: sp.spmatrix, classes: int, rng: np.random.Generator) -> np.ndarray:
    n = adjacency.shape[0]
    seeds = rng.choice(n, size=min(n, classes * SEEDS_PER_CLASS), replace=False)
    seed_class = np.arange(seeds.size) % classes
    _, _, nearest = csgraph.dijkstra(adjacency, directed=False, indices=seeds, unweighted=True,
                                     min_only=True, return_predecessors=True)
    y = rng.integers(classes, size=n)  # nodes no seed reaches keep a random class
    reached = nearest >= 0
    y[reached] = seed_class[_position_of(seeds, nearest[reached])]
    # Majority votes over each node's neighbourhood (itself included) smooth the borders.
    loops = adjacency + sp.eye(n, format="csr")
    for _ in range(SMOOTHING_ROUNDS):
        votes = loops @ np.eye(classes)[y] + rng.random((n, classes)) * 0.5
        y = votes.argmax(1)
    noisy = rng.random(n) < LABEL_NOISE
    y[noisy] = rng.integers(classes, size=int(noisy.sum()))
    return y.astype(np.int64)


def _position_of(values: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The index in ``values`` (distinct) of each of ``items``."""
    order = np.argsort(values)
    return order[np.searchsorted(values, items, sorter=order)]


def _class_features(y: np.ndarray, features: int, classes: int, rng: np.random.Generator) -> np.ndarray:
    n = y.size
    block = features // classes
    topical = rng.random((n, WORDS_PER_NODE)) < TOPIC_RATE
    words = np.where(topical, y[:, None] * block + rng.integers(block, size=(n, WORDS_PER_NODE)),
                     rng.integers(features, size=(n, WORDS_PER_NODE)))
    x = np.zeros((n, features), np.float32)
    x[np.arange(n)[:, None], words] = 1.0
    return _normalize_rows(x)


def _split(y: np.ndarray, shape: PlanetoidShape, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Planetoid's kind of split: ``train`` nodes spread evenly over the classes, then val, test."""
    n = y.size
    per_class = shape.train // shape.classes
    train = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:per_class] for c in range(shape.classes)])
    rest = rng.permutation(np.setdiff1d(np.arange(n), train))
    val, test = rest[:shape.val], rest[shape.val:shape.val + shape.test]
    masks = []
    for chosen in (train, val, test):
        m = np.zeros(n, bool)
        m[chosen] = True
        masks.append(m)
    return tuple(masks)


def _normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to sum 1 (rows of zeros stay zero), as both papers preprocess the features."""
    sums = x.sum(1, keepdims=True)
    return np.divide(x, sums, out=np.zeros_like(x), where=sums != 0).astype(np.float32)
