"""The distributed GCN example (examples/gnn/distributed_gcn.py) trained on 2 gloo processes has
the losses of the single-process run, for METIS and contiguous partitions."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pymetis")

from ranks import run_ranks  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gnn" / "distributed_gcn.py"
EPOCHS = 15


def load_example():
    spec = importlib.util.spec_from_file_location("distributed_gcn", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_on_rank(rank: int, world_size: int, out_dir: str) -> None:
    example = load_example()
    losses = {method: example.distributed_losses("cora", EPOCHS, 0, method) for method in ("metis", "contiguous")}
    if rank == 0:
        Path(out_dir, "losses.json").write_text(json.dumps(losses))


@pytest.mark.timeout(120)
def test_two_ranks_have_the_single_process_losses(tmp_path):
    run_ranks(train_on_rank, 2, (str(tmp_path),), timeout_s=100)
    losses = json.loads((tmp_path / "losses.json").read_text())
    example = load_example()
    reference = example.single_process_losses("cora", EPOCHS, 0)
    assert reference[-1] < reference[0]  # it trains
    for method, run in losses.items():
        assert run == pytest.approx(reference, rel=example.TOLERANCE), method
