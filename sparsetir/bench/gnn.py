"""``sparsetir bench --model gcn|gat``: GNN training epochs on sparsetir, torch.sparse and PyG.

On each data set, every backend trains the same model (``sparsetir.models``) from the same
seeded parameters for the same number of epochs, the backends taking turns epoch by epoch. An
epoch is forward, backward and optimizer step, timed by the wall clock. The report gives the median time of an epoch after the first
``WARMUP_EPOCHS`` (which compile sparsetir's kernels; the first epoch is reported apart),
sparsetir's speedup over each peer (the peer's time over sparsetir's), and the test accuracy
after the last epoch. The backends take turns epoch by epoch, so that all of them meet the same
machine (a shared machine's speed drifts over minutes); each keeps its own random stream, so
its training is the one it would do alone. The bench sets no threads, bindings or environment
variables. The data is the
bundled graph with the features of ``--features``, else Planetoid's own for Cora and CiteSeer
(bundled), else synthetic ones, and every row says which.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import scipy.sparse as sp

from sparsetir import data

DEFAULT_DATASETS = ("cora", "pubmed")
DEFAULT_EPOCHS = 200
SMOKE_EPOCHS = 10
WARMUP_EPOCHS = 3
DEFAULT_OUT = "bench-results"
EXIT_USAGE = 2
# Options of the kernel bench that mean nothing for a model run.
KERNEL_OPTIONS = ("widths", "kernels", "rounds", "threads")


@dataclass(frozen=True)
class ModelRow:
    """One backend's training run on one data set."""

    model: str
    dataset: str
    backend: str
    epochs: int
    ms_per_epoch: float  # median over the epochs after the warm-up
    mean_ms_per_epoch: float  # their mean (stalls show here, not in the median)
    first_epoch_ms: float
    final_loss: float
    val_accuracy: float
    test_accuracy: float
    data: str  # where the features and labels came from


def bench_model(kind: str, dataset: str, adjacency: sp.spmatrix, node_data, backends: tuple[str, ...],
                epochs: int, seed: int = 0, log=None) -> list[ModelRow]:
    """Train model ``kind`` on each of ``backends`` for ``epochs`` epochs; one row per backend.

    The backends take turns epoch by epoch (the order rotating), so that every backend's epochs
    are spread over the same stretch of time: on a shared machine the speed drifts over
    minutes, and backends timed one after another would each meet another drift. Each backend
    keeps its own random stream (dropout), as if it trained alone."""
    runs = _train_in_turns(kind, adjacency, node_data, backends, epochs, seed)
    rows = []
    for backend in backends:
        run = runs[backend]
        timed = run.seconds[WARMUP_EPOCHS:] or run.seconds
        row = ModelRow(kind, dataset, backend, epochs, 1e3 * statistics.median(timed), 1e3 * statistics.fmean(timed),
                       1e3 * run.seconds[0], run.losses[-1], run.val_accuracy, run.test_accuracy, node_data.source)
        rows.append(row)
        if log is not None:
            log(f"{kind} {dataset} {backend}: {row.ms_per_epoch:.2f} ms/epoch, test accuracy "
                f"{100 * row.test_accuracy:.1f}%")
    return rows


def _train_in_turns(kind: str, adjacency: sp.spmatrix, node_data, backends: tuple[str, ...], epochs: int,
                    seed: int) -> dict:
    """One ``TrainingRun`` per backend, their epochs interleaved (see ``bench_model``)."""
    import time

    import torch

    from sparsetir.models import Graph, make_model
    from sparsetir.models.train import TrainingRun, accuracy, train_step

    graph = Graph(adjacency)
    models = {b: make_model(kind, b, graph, node_data, seed) for b in backends}
    optimizers = {b: m.optimizer() for b, m in models.items()}
    runs = {b: TrainingRun() for b in backends}
    outside = torch.get_rng_state()
    torch.manual_seed(seed)
    streams = {b: torch.get_rng_state() for b in backends}  # every backend starts from the seed
    for epoch in range(epochs):
        shift = epoch % len(backends)
        for b in backends[shift:] + backends[:shift]:
            torch.set_rng_state(streams[b])
            start = time.perf_counter()
            loss = train_step(models[b], node_data, optimizers[b])
            runs[b].seconds.append(time.perf_counter() - start)
            runs[b].losses.append(loss)
            streams[b] = torch.get_rng_state()
    for b, model in models.items():
        runs[b].val_accuracy = accuracy(model, node_data, node_data.val_mask)
        runs[b].test_accuracy = accuracy(model, node_data, node_data.test_mask)
        runs[b].kept_epoch = epochs - 1
    torch.set_rng_state(outside)
    return runs


def speedups(rows: list[ModelRow]) -> dict[tuple[str, str], float]:
    """(dataset, peer backend) -> the peer's ms/epoch over sparsetir's on that data set."""
    ours = {r.dataset: r.ms_per_epoch for r in rows if r.backend == "sparsetir"}
    return {(r.dataset, r.backend): r.ms_per_epoch / ours[r.dataset]
            for r in rows if r.backend != "sparsetir" and r.dataset in ours}


def format_table(rows: list[ModelRow]) -> str:
    """The rows as a text table, with sparsetir's speedup over each peer beside the peer."""
    ratio = speedups(rows)
    lines = [f"{'dataset':<10} {'backend':<10} {'ms/epoch':>9} {'first ms':>9} {'speedup':>8} "
             f"{'test acc':>8} {'loss':>7}  data"]
    for r in rows:
        speedup = f"{ratio[(r.dataset, r.backend)]:.2f}x" if (r.dataset, r.backend) in ratio else "-"
        lines.append(f"{r.dataset:<10} {r.backend:<10} {r.ms_per_epoch:>9.2f} {r.first_epoch_ms:>9.1f} "
                     f"{speedup:>8} {100 * r.test_accuracy:>7.1f}% {r.final_loss:>7.4f}  {_short(r.data)}")
    return "\n".join(lines)


def _short(source: str) -> str:
    return "synthetic" if source.startswith("synthetic") else source


def run(args: argparse.Namespace) -> int:
    """The ``sparsetir bench --model`` command; the exit code."""
    try:
        import torch
    except ImportError:
        print("sparsetir bench --model: needs torch (pip install 'sparsetir[torch]')", file=sys.stderr)
        return EXIT_USAGE
    from sparsetir.models import BACKENDS, load_node_data, pyg_available

    kind = args.model
    smoke = bool(getattr(args, "smoke", False))
    epochs = getattr(args, "epochs", None) or (SMOKE_EPOCHS if smoke else DEFAULT_EPOCHS)
    seed = getattr(args, "seed", None) or 0
    quiet = bool(getattr(args, "quiet", False))
    ignored = [f"--{name}" for name in KERNEL_OPTIONS if getattr(args, name, None) is not None]
    if ignored:
        print(f"sparsetir bench --model: ignoring {', '.join(ignored)} (options of the kernel bench)",
              file=sys.stderr)
    specs = [*(getattr(args, "matrices", None) or []), *(getattr(args, "matrix", None) or [])]
    specs = specs or (["cora"] if smoke else list(DEFAULT_DATASETS))
    try:
        graphs = [data.load_named(spec) for spec in specs]
        features = getattr(args, "features", None)
        node_data = [load_node_data(name, adjacency, _features_for(name, features, len(specs)), seed)
                     for name, adjacency in graphs]
    except (OSError, ValueError) as err:
        print(f"sparsetir bench --model: {err}", file=sys.stderr)
        return EXIT_USAGE
    backends = BACKENDS if pyg_available() else tuple(b for b in BACKENDS if b != "pyg")
    log = None if quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    print(f"{kind.upper()} training: {epochs} epochs per backend, seed {seed}; ms/epoch is the median "
          f"after {WARMUP_EPOCHS} warm-up epochs; speedup = the backend's ms/epoch over sparsetir's")
    if "pyg" not in backends:
        print("pyg: skipped (torch-geometric is not installed: pip install 'sparsetir[gnn]')")
    for nd in node_data:
        print(f"data: {nd.describe()}")
    rows: list[ModelRow] = []
    for (name, adjacency), nd in zip(graphs, node_data):
        rows += bench_model(kind, name, adjacency, nd, backends, epochs, seed, log)
    print(format_table(rows))
    if any(nd.synthetic for nd in node_data):
        print("Accuracies on synthetic data are not the published Planetoid accuracies (Cora and CiteSeer "
              "use the bundled Planetoid data; for another graph pass --features, see docs/gnn.md).")
    out = Path(getattr(args, "out", None) or DEFAULT_OUT)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"gnn-{kind}.json"
    path.write_text(json.dumps(_report(kind, epochs, seed, rows, torch), indent=2) + "\n")
    print(f"wrote {path}")
    return 0


def _features_for(name: str, features: Optional[str], datasets: int) -> Optional[Path]:
    """The features file of data set ``name``: ``features`` itself, or ``<name>.npz`` inside it
    when it is a directory (None when that directory has none: synthetic data)."""
    if features is None:
        return None
    path = Path(features)
    if path.is_dir():
        candidate = path / f"{name}.npz"
        return candidate if candidate.is_file() else None
    if datasets > 1:
        raise ValueError(f"--features {path}: one file for {datasets} data sets; give a directory of "
                         "<dataset>.npz files instead")
    return path


def _report(kind: str, epochs: int, seed: int, rows: list[ModelRow], torch) -> dict:
    try:
        import torch_geometric
        pyg_version = torch_geometric.__version__
    except ImportError:
        pyg_version = None
    return {
        "model": kind,
        "epochs": epochs,
        "warmup_epochs": WARMUP_EPOCHS,
        "seed": seed,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
                    "torch": torch.__version__, "torch_geometric": pyg_version},
        "rows": [asdict(r) for r in rows],
        "speedups": [{"dataset": d, "peer": b, "speedup": s} for (d, b), s in speedups(rows).items()],
    }
