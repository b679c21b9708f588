"""GNN models (sparsetir.models): every backend computes the same function and gradients, training
lowers the loss, the attention matches a dense reference, and ``sparsetir bench --model`` runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

torch = pytest.importorskip("torch")

from sparsetir import data  # noqa: E402
from sparsetir.bench import gnn as gnn_bench  # noqa: E402
from sparsetir.cli import main  # noqa: E402
from sparsetir.models import (  # noqa: E402
    BACKENDS,
    GATConfig,
    Graph,
    load_node_data,
    make_model,
    pyg_available,
    synthetic_node_data,
    train,
    train_step,
)
from sparsetir.models.kernels import KERNELS  # noqa: E402

needs_pyg = pytest.mark.skipif(not pyg_available(), reason="torch_geometric is not installed")
MODELS = ("gcn", "gat")
PEERS = [pytest.param("torch"), pytest.param("pyg", marks=needs_pyg)]


def random_graph(n: int = 60, density: float = 0.06, seed: int = 0) -> sp.csr_matrix:
    """A symmetric random graph with a few self loops (replaced by the models), an isolated node
    and one node with many neighbours."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, format="csr", random_state=rng)
    a = (a + a.T).tolil()
    a[0, :] = 0
    a[:, 0] = 0  # node 0: isolated
    a[1, 2:n // 2] = 1
    a[2:n // 2, 1] = 1  # node 1: a hub
    for i in (3, 4):
        a[i, i] = 1  # self loops in the input
    a = sp.csr_matrix(a, dtype=np.float32)
    a.data[:] = 1
    a.sort_indices()
    return a


@pytest.fixture(scope="module")
def tiny():
    adjacency = random_graph()
    return Graph(adjacency), synthetic_node_data("tiny", adjacency, seed=0)


def forward_and_gradients(kind: str, backend: str, graph: Graph, node_data, seed: int = 0, train_mode=False,
                          sparse=True, config=None):
    """The model's output and each parameter's gradient of a cross-entropy loss on all nodes."""
    model = make_model(kind, backend, graph, node_data, seed, config)
    model.train(train_mode)
    torch.manual_seed(seed)
    out = model(node_data.features if sparse else node_data.x)
    torch.nn.functional.cross_entropy(out, node_data.y).backward()
    return out.detach(), {name: p.grad for name, p in model.named_parameters()}


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse-features", "dense-features"])
@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("kind", MODELS)
def test_backends_compute_the_same_output_and_gradients(tiny, kind, peer, sparse):
    graph, node_data = tiny
    out, grads = forward_and_gradients(kind, "sparsetir", graph, node_data, sparse=sparse)
    peer_out, peer_grads = forward_and_gradients(kind, peer, graph, node_data, sparse=sparse)
    assert out.shape == (graph.num_nodes, node_data.classes)
    torch.testing.assert_close(out, peer_out, rtol=1e-4, atol=1e-5)
    assert grads.keys() == peer_grads.keys()
    for name in grads:
        assert grads[name] is not None and grads[name].abs().sum() > 0, name
        torch.testing.assert_close(grads[name], peer_grads[name], rtol=1e-3, atol=1e-5, msg=name)


@pytest.mark.parametrize("kind, config", [
    ("gcn", None),
    ("gat", None),
    # Both layers on the same 2-head structure: each layer must keep its own CSR slots.
    ("gat", GATConfig(hidden=4, heads=2, output_heads=2)),
], ids=["gcn", "gat", "gat-same-heads"])
def test_sparsetir_gradients_match_torch_sparse_with_dropout(tiny, kind, config):
    # Both backends draw the same dropout masks from the same seed (inputs and, in GAT, the
    # attention coefficients), so even training-mode gradients agree.
    graph, node_data = tiny
    out, grads = forward_and_gradients(kind, "sparsetir", graph, node_data, seed=3, train_mode=True, config=config)
    ref_out, ref_grads = forward_and_gradients(kind, "torch", graph, node_data, seed=3, train_mode=True, config=config)
    torch.testing.assert_close(out, ref_out, rtol=1e-4, atol=1e-5)
    for name in grads:
        torch.testing.assert_close(grads[name], ref_grads[name], rtol=1e-3, atol=1e-5, msg=name)


def test_sparse_features_drop_stored_values_in_place(tiny):
    _, node_data = tiny
    features = node_data.features
    x = node_data.x
    kept = features.dropout(0.5, training=False)
    torch.testing.assert_close(kept.to_dense(), x)
    pointer = kept.values().data_ptr()
    dropped = features.dropout(0.5, training=True).to_dense()
    assert features.tensor.values().data_ptr() == pointer  # the same tensor, rewritten
    assert torch.all((dropped == 0) | torch.isclose(dropped, 2 * x))
    assert torch.all(dropped[x == 0] == 0) and 0 < int((dropped != 0).sum()) < int((x != 0).sum())
    torch.testing.assert_close(features.dropout(0.5, training=False).to_dense(), x)


def test_dropout_keeps_each_element_with_probability_1_minus_p_and_scales_it():
    from sparsetir.models.dropout import dropout

    x = torch.rand(200_000, dtype=torch.float64) + 1.0
    assert dropout(x, 0.6, training=False) is x and dropout(x, 0.0) is x
    torch.manual_seed(0)
    y = dropout(x.requires_grad_(), 0.6)
    kept = y != 0
    assert abs(float(kept.double().mean()) - 0.4) < 0.005
    torch.testing.assert_close(y[kept], x[kept] / 0.4)
    y.sum().backward()
    torch.testing.assert_close(x.grad, kept.double() / 0.4)  # gradients through kept elements only
    assert torch.all(dropout(x.detach(), 1.0) == 0)
    with pytest.raises(ValueError):
        dropout(x, 1.5)


@pytest.mark.parametrize("backend", ["sparsetir", "torch"])
def test_attention_matches_a_dense_reference(tiny, backend):
    graph, _ = tiny
    heads, n, f = 3, graph.num_nodes, 5
    gen = torch.Generator().manual_seed(1)
    dst, src = (torch.randn(heads * n, generator=gen, requires_grad=True) for _ in range(2))
    h = torch.randn(heads * n, f, generator=gen, requires_grad=True)
    grad_out = torch.randn(heads * n, f, generator=gen)

    out = KERNELS[backend].attend(graph.heads(heads), dst, src, h, 0.2, 0.0, {})
    grads = torch.autograd.grad((out * grad_out).sum(), [dst, src, h])

    # Dense: e[k, i, j] = LeakyReLU(dst[k, i] + src[k, j]) on the edges j -> i and the self loops.
    mask = torch.from_numpy(graph.self_looped.toarray() > 0)
    d, s, hh = dst.view(heads, n), src.view(heads, n), h.view(heads, n, f)
    e = torch.nn.functional.leaky_relu(d[:, :, None] + s[:, None, :], 0.2).masked_fill(~mask, float("-inf"))
    ref = (torch.softmax(e, -1) @ hh).reshape(heads * n, f)
    ref_grads = torch.autograd.grad((ref * grad_out).sum(), [dst, src, h])
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_gcn_normalization_replaces_self_loops_and_scales_by_degree():
    adjacency = random_graph()
    norm = Graph(adjacency).gcn_normalized.toarray()
    a = adjacency.toarray()
    np.fill_diagonal(a, 1)  # one loop per node, whether the input had one or not
    scale = 1 / np.sqrt(a.sum(1))
    np.testing.assert_allclose(norm, scale[:, None] * a * scale[None, :], rtol=1e-6)


@pytest.mark.parametrize("backend", [pytest.param(b, marks=needs_pyg) if b == "pyg" else b for b in BACKENDS])
@pytest.mark.parametrize("kind", MODELS)
def test_a_few_training_steps_reduce_the_loss(tiny, kind, backend):
    graph, node_data = tiny
    model = make_model(kind, backend, graph, node_data, seed=0)
    model.eval()
    optimizer = model.optimizer()
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(node_data.features)[node_data.train_mask],
                                                 node_data.y[node_data.train_mask])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.1, losses
    # And in training mode (dropout on) the loop runs and reports finite numbers.
    run = train(model, node_data, epochs=3)
    assert len(run.seconds) == 3 and all(np.isfinite(run.losses))
    assert 0.0 <= run.test_accuracy <= 1.0


def test_synthetic_data_has_planetoid_shapes_and_follows_the_graph():
    adjacency = data.load("cora")
    nd = synthetic_node_data("cora", adjacency, seed=0)
    assert tuple(nd.x.shape) == (2708, 1433) and nd.classes == 7
    masks = torch.stack([nd.train_mask, nd.val_mask, nd.test_mask])
    assert masks.sum(1).tolist() == [140, 500, 1000] and masks.sum(0).max() == 1  # disjoint
    assert torch.bincount(nd.y[nd.train_mask], minlength=7).tolist() == [20] * 7
    torch.testing.assert_close(nd.x.sum(1), torch.ones(2708))
    coo = adjacency.tocoo()
    y = nd.y.numpy()
    assert (y[coo.row] == y[coo.col]).mean() > 0.6  # neighbours mostly share a class
    again = synthetic_node_data("cora", adjacency, seed=0)
    assert torch.equal(nd.y, again.y) and torch.equal(nd.x, again.x)
    assert nd.synthetic and "synthetic" in nd.describe()


def test_a_features_file_is_read_and_checked(tmp_path):
    adjacency = random_graph()
    n = adjacency.shape[0]
    rng = np.random.default_rng(0)
    masks = {k: rng.random(n) < 0.3 for k in ("train_mask", "val_mask", "test_mask")}
    x = rng.random((n, 7)).astype(np.float32)
    np.savez(tmp_path / "tiny.npz", x=x, y=rng.integers(3, size=n), **masks)
    nd = load_node_data("tiny", adjacency, tmp_path / "tiny.npz")
    assert not nd.synthetic and str(tmp_path / "tiny.npz") in nd.source
    assert nd.classes <= 3 and torch.equal(nd.train_mask, torch.from_numpy(masks["train_mask"]))
    torch.testing.assert_close(nd.x, torch.from_numpy(x / x.sum(1, keepdims=True)))
    np.savez(tmp_path / "short.npz", x=x[:-1], y=np.zeros(n - 1, int), **{k: m[:-1] for k, m in masks.items()})
    with pytest.raises(ValueError, match=f"the {n} nodes of tiny"):
        load_node_data("tiny", adjacency, tmp_path / "short.npz")
    # An edge_index in the file is checked against the graph (PyG's: source over target).
    coo = Graph(adjacency).adjacency.tocoo()
    np.savez(tmp_path / "edges.npz", x=x, y=np.zeros(n, int), edge_index=np.stack([coo.col, coo.row]), **masks)
    assert not load_node_data("tiny", adjacency, tmp_path / "edges.npz").synthetic
    renumbered = (np.stack([coo.col, coo.row]) + 1) % n
    np.savez(tmp_path / "other.npz", x=x, y=np.zeros(n, int), edge_index=renumbered, **masks)
    with pytest.raises(ValueError, match="edge_index is not the graph tiny"):
        load_node_data("tiny", adjacency, tmp_path / "other.npz")


def test_bench_model_reports_one_row_per_backend(tiny):
    graph, node_data = tiny
    rows = gnn_bench.bench_model("gat", "tiny", graph.adjacency, node_data, ("sparsetir", "torch"), epochs=4)
    assert [r.backend for r in rows] == ["sparsetir", "torch"]
    assert all(r.ms_per_epoch > 0 and r.epochs == 4 and 0 <= r.test_accuracy <= 1 for r in rows)
    assert set(gnn_bench.speedups(rows)) == {("tiny", "torch")}
    assert "sparsetir" in gnn_bench.format_table(rows)


@pytest.mark.parametrize("kind", MODELS)
def test_bench_command_runs_on_a_tiny_graph(tmp_path, capsys, kind):
    sp.save_npz(tmp_path / "tiny.npz", random_graph())
    code = main(["bench", "--model", kind, "--epochs", "4", "--matrix", str(tmp_path / "tiny.npz"),
                 "--out", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads((tmp_path / f"gnn-{kind}.json").read_text())
    backends = [r["backend"] for r in report["rows"]]
    assert backends == (list(BACKENDS) if pyg_available() else ["sparsetir", "torch"])
    assert all(r["dataset"] == "tiny" and r["epochs"] == 4 for r in report["rows"])
    assert "synthetic" in out and "ms/epoch" in out
    for backend in backends:
        assert f"tiny       {backend}" in out


def test_bench_command_refuses_one_features_file_for_two_datasets(tmp_path, capsys):
    np.savez(tmp_path / "f.npz", x=np.zeros((1, 1)))
    code = main(["bench", "--model", "gcn", "cora", "pubmed", "--features", str(tmp_path / "f.npz"),
                 "--out", str(tmp_path)])
    assert code == 2
    assert "give a directory" in capsys.readouterr().err


@pytest.mark.parametrize("name, features, classes, split", [("cora", 1433, 7, [140, 500, 1000]),
                                                             ("citeseer", 3703, 6, [120, 500, 1000])])
def test_bundled_planetoid_data_is_the_real_one(name, features, classes, split):
    adjacency = data.load(name)
    nd = load_node_data(name, adjacency)
    assert not nd.synthetic and nd.source == f"Planetoid {name} (bundled)"
    assert tuple(nd.x.shape) == (adjacency.shape[0], features) and nd.classes == classes
    masks = torch.stack([nd.train_mask, nd.val_mask, nd.test_mask])
    assert masks.sum(1).tolist() == split and masks.sum(0).max() == 1
    assert torch.bincount(nd.y[nd.train_mask], minlength=classes).tolist() == [split[0] // classes] * classes
    assert bool((nd.y[masks.any(0)] >= 0).all())  # nodes without a label are in no split
    # The node order is the graph's: neighbours share a label as often as these graphs are known to.
    coo = adjacency.tocoo()
    y = nd.y.numpy()
    known = (y[coo.row] >= 0) & (y[coo.col] >= 0)
    homophily = (y[coo.row] == y[coo.col])[known].mean()
    assert homophily == pytest.approx({"cora": 0.810, "citeseer": 0.741}[name], abs=0.002)
    assert load_node_data(name, adjacency, synthetic=True).synthetic


def test_a_features_file_may_hold_csr_features(tmp_path):
    adjacency = random_graph()
    n = adjacency.shape[0]
    x = sp.random(n, 9, density=0.3, format="csr", dtype=np.float32, random_state=1)
    x.data += 0.5
    masks = {k: np.arange(n) % 3 == i for i, k in enumerate(("train_mask", "val_mask", "test_mask"))}
    np.savez(tmp_path / "csr.npz", x_indptr=x.indptr, x_indices=x.indices, x_data=x.data, x_shape=np.array(x.shape),
             y=np.arange(n) % 2, **masks)
    nd = load_node_data("tiny", adjacency, tmp_path / "csr.npz")
    dense = x.toarray()
    sums = dense.sum(1, keepdims=True)
    torch.testing.assert_close(nd.x, torch.from_numpy(np.divide(dense, sums, out=np.zeros_like(dense), where=sums != 0)))
    np.savez(tmp_path / "bad.npz", x_indptr=x.indptr[:-1], x_indices=x.indices, x_data=x.data,
             x_shape=np.array(x.shape), y=np.arange(n) % 2, **masks)
    with pytest.raises(ValueError, match="bad.npz: malformed feature arrays"):
        load_node_data("tiny", adjacency, tmp_path / "bad.npz")
    np.savez(tmp_path / "unlabelled.npz", x=x.toarray(), y=np.full(n, -1), **masks)
    with pytest.raises(ValueError, match="-1 for a node in no split"):
        load_node_data("tiny", adjacency, tmp_path / "unlabelled.npz")


def test_early_stopping_keeps_the_best_validation_epoch(tiny):
    graph, node_data = tiny
    model = make_model("gcn", "sparsetir", graph, node_data, seed=0)
    seen = []
    run = train(model, node_data, epochs=400, patience=5,
                on_epoch=lambda epoch, loss, seconds: seen.append(epoch))
    assert len(run.losses) == len(seen) < 400  # stopped early
    assert 0 <= run.kept_epoch < len(run.losses)
    assert len(run.losses) - 1 - run.kept_epoch >= 5 or run.kept_epoch == len(run.losses) - 1
    # The accuracies are those of the kept parameters: evaluating the model again gives them.
    from sparsetir.models.train import accuracy

    assert accuracy(model, node_data, node_data.val_mask) == run.val_accuracy
