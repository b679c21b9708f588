"""``sparsetir.ops`` under ``torch.compile``: the ``torch.library`` custom ops
(``sparsetir/ops/torch_library.py``), ``CsrTensors``, and models that compile without graph breaks.

Compiling is slow on CPU (inductor builds C++), so the models are tiny and compiled once each:
one GCN with the default inductor backend, everything else with ``aot_eager`` (which traces
forward and backward through the same fake implementations and autograd formulas).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir.ops as ops

from ops_matrices import random_csr

torch = pytest.importorskip("torch")
from sparsetir.ops import torch_library  # noqa: E402  (registers the ops; needs torch)

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse:UserWarning"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")]

N_NODES = 24


def _tensors(A, dtype=torch.float64, values=None):
    """SciPy CSR ``A`` as ``CsrTensors`` with int64 index tensors (as torch makes them)."""
    v = torch.tensor(A.data, dtype=dtype) if values is None else values
    return ops.CsrTensors(torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64)),
                          v, A.shape)


def _small():
    """12 x 9, float64, with empty rows (first and last among them) and a long row."""
    return random_csr(12, 9, 0.25, 5, np.float64)


def _leaf(array, dtype=torch.float64):
    return torch.tensor(np.asarray(array), dtype=dtype, requires_grad=True)


# --- the custom ops: schemas, fake implementations, autograd registration -----------------------


def _opcheck_cases():
    A = _small()
    crow, col = torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64))
    rng = np.random.default_rng(0)
    v = _leaf(A.data)
    X, Y = _leaf(rng.standard_normal((9, 5))), _leaf(rng.standard_normal((12, 5)))
    x, y = _leaf(rng.standard_normal(9)), _leaf(rng.standard_normal(12))
    ell_indices = torch.from_numpy(rng.integers(0, 9, size=(6, 3)))
    return {
        "spmm": (torch_library.spmm_op, (crow, col, v, 12, 9, X)),
        "spmm_transposed": (torch_library.spmm_op, (crow, col, v, 12, 9, Y, True)),
        "sddmm": (torch_library.sddmm_op, (crow, col, v, 12, 9, Y, X)),
        "spmv": (torch_library.spmv_op, (crow, col, v, 12, 9, x)),
        "spmv_transposed": (torch_library.spmv_op, (crow, col, v, 12, 9, y, True)),
        "softmax": (torch_library.softmax_op, (crow, col, v, 12, 9)),
        "segment_sum": (torch_library.segment_sum_op, (X, torch.tensor([0, 2, 2, 9]))),
        "segment_sum_1d": (torch_library.segment_sum_op, (x, torch.tensor([0, 4, 9, 9]))),
        "ell_spmm": (torch_library.ell_spmm_op, (ell_indices, _leaf(rng.standard_normal((6, 3))), X)),
    }


@pytest.mark.parametrize("case", sorted(_opcheck_cases()))
def test_opcheck(case):
    op, args = _opcheck_cases()[case]
    torch.library.opcheck(op, args)


# --- eager: CsrTensors give the results and gradients of the sparse-tensor path -----------------


def test_csr_tensors_in_eager_mode_match_the_sparse_tensor_ops():
    A = _small()
    tA = torch.sparse_csr_tensor(torch.from_numpy(A.indptr), torch.from_numpy(A.indices), torch.from_numpy(A.data),
                                 size=A.shape)
    P = ops.csr_tensors(tA)
    rng = np.random.default_rng(1)
    X, Y = torch.from_numpy(rng.standard_normal((9, 4))), torch.from_numpy(rng.standard_normal((12, 4)))
    torch.testing.assert_close(ops.spmm(P, X), ops.spmm(tA, X))
    torch.testing.assert_close(ops.spmv(P, X[:, 0]), ops.spmv(tA, X[:, 0]))
    O = ops.sddmm(P, Y, X)
    assert isinstance(O, ops.CsrTensors) and O.crow_indices is P.crow_indices and O.shape == A.shape
    torch.testing.assert_close(O.values, ops.sddmm(tA, Y, X).values())
    torch.testing.assert_close(ops.softmax(P).values, ops.softmax(tA).values())
    torch.testing.assert_close(ops.spmm(ops.csr_tensors(A), X.numpy()), ops.spmm(A, X))


@pytest.mark.parametrize("op", ["spmm", "sddmm", "spmv", "softmax", "segment_sum", "ell_spmm"])
def test_gradcheck_eager_custom_ops(op):
    """The custom ops' own gradient formulas (not the autograd.Function ones), float64."""
    A = _small()
    rng = np.random.default_rng(2)
    v = _leaf(A.data)
    X, Y = _leaf(rng.standard_normal((9, 3))), _leaf(rng.standard_normal((12, 3)))
    weights = torch.from_numpy(rng.standard_normal(A.nnz))
    ell_indices = torch.from_numpy(rng.integers(0, 9, (5, 4)))
    calls = {
        "spmm": (lambda v, X: ops.spmm(_tensors(A, values=v), X), (v, X)),
        "sddmm": (lambda v, X, Y: ops.sddmm(_tensors(A, values=v), Y, X).values, (v, X, Y)),
        "spmv": (lambda v, x: ops.spmv(_tensors(A, values=v), x), (v, _leaf(rng.standard_normal(9)))),
        "softmax": (lambda v: ops.softmax(_tensors(A, values=v)).values * weights, (v,)),
        "segment_sum": (lambda X: torch_library.segment_sum(X, torch.tensor([0, 2, 2, 9])), (X,)),
        "ell_spmm": (lambda v, X: torch_library.ell_spmm(ell_indices, v, X), (_leaf(rng.standard_normal((5, 4))), X)),
    }
    f, args = calls[op]
    assert torch.autograd.gradcheck(f, args)


def test_inputs_are_not_modified_and_a_structure_is_prepared_once():
    A = _small()
    P = _tensors(A)
    before = [t.clone() for t in P[:3]]
    X = torch.randn(9, 4, dtype=torch.float64, requires_grad=True)
    count = torch_library.structures.preparations
    for _ in range(3):
        ops.spmm(P, X).sum().backward()
    assert torch_library.structures.preparations == count + 1
    for t, saved in zip(P[:3], before):
        assert torch.equal(t, saved)


def test_an_in_place_edit_of_the_indices_is_seen():
    A = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    P = _tensors(A)
    X = torch.tensor([[1.0], [10.0]], dtype=torch.float64)
    torch.testing.assert_close(ops.spmm(P, X), torch.tensor([[1.0], [20.0]], dtype=torch.float64))
    P.col_indices.copy_(torch.tensor([1, 0]))  # increments _version: the structure is prepared again
    torch.testing.assert_close(ops.spmm(P, X), torch.tensor([[10.0], [2.0]], dtype=torch.float64))


def test_forget_sees_an_edit_through_a_numpy_view():
    A = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    P = _tensors(A)
    X = torch.tensor([[1.0], [10.0]], dtype=torch.float64)
    ops.spmm(P, X)
    P.col_indices.numpy()[:] = [1, 0]  # torch does not see this write (_version stays)
    ops.forget(P)
    torch.testing.assert_close(ops.spmm(P, X), torch.tensor([[10.0], [2.0]], dtype=torch.float64))


def test_a_structure_goes_away_with_its_index_tensors():
    P = _tensors(_small())
    ops.spmm(P, torch.ones(9, 2, dtype=torch.float64))
    count = len(torch_library.structures)
    del P
    gc.collect()
    assert len(torch_library.structures) == count - 1


# --- models under torch.compile ------------------------------------------------------------------


def _normalized_adjacency(n=N_NODES, seed=3):
    """D^-1/2 (A + I) D^-1/2 of a random symmetric graph, as a torch sparse CSR tensor (float32)."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=0.15, random_state=rng, format="csr")
    A = ((A + A.T) > 0).astype(np.float32) + sp.eye(n, dtype=np.float32)
    d = np.asarray(A.sum(axis=1)).ravel() ** -0.5
    A = sp.csr_matrix(sp.diags(d) @ A @ sp.diags(d), dtype=np.float32)
    return torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)),
                                   torch.from_numpy(A.indices.astype(np.int64)), torch.from_numpy(A.data), size=A.shape)


class GCN(torch.nn.Module):
    """Two graph convolutions; the adjacency's components are buffers (they follow ``.to()``)."""

    def __init__(self, adjacency, features=8, hidden=16, classes=4):
        super().__init__()
        crow, col, values, self.shape = ops.csr_tensors(adjacency)
        self.register_buffer("crow", crow)
        self.register_buffer("col", col)
        self.register_buffer("values", values)
        self.lin1 = torch.nn.Linear(features, hidden)
        self.lin2 = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        A = ops.CsrTensors(self.crow, self.col, self.values, self.shape)
        h = torch.relu(ops.spmm(A, self.lin1(x)))
        return torch.log_softmax(ops.spmm(A, self.lin2(h)), dim=1)


class AttentionLayer(torch.nn.Module):
    """SDDMM, edge softmax and SpMM, as in a GAT layer, with the matrix as an attribute."""

    def __init__(self, adjacency, features=8):
        super().__init__()
        self.A = ops.csr_tensors(adjacency)
        self.lin = torch.nn.Linear(features, features)

    def forward(self, x):
        h = self.lin(x)
        attention = ops.softmax(ops.sddmm(self.A, h, h))
        return ops.spmm(attention, h) + ops.spmv(self.A, h[:, 0])[:, None]


@pytest.fixture(scope="module")
def adjacency():
    return _normalized_adjacency()


def _features(seed=4, n=N_NODES):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal((n, 8), dtype=np.float32))


@pytest.mark.parametrize("model_class", [GCN, AttentionLayer])
def test_models_have_no_graph_breaks(adjacency, model_class):
    torch.manual_seed(0)
    explanation = torch._dynamo.explain(model_class(adjacency))(_features())
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    ops_in_graph = [str(op) for graph_ops in explanation.ops_per_graph for op in graph_ops]
    assert any("sparsetir" in op for op in ops_in_graph), ops_in_graph


def _forward_backward(model, x):
    x = x.clone().requires_grad_()
    model.zero_grad()
    out = model(x)
    (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
    return out.detach(), x.grad, [p.grad.clone() for p in model.parameters()]


def _assert_same(eager, compiled):
    for e, c in zip(eager, compiled, strict=True):
        for a, b in zip(e if isinstance(e, list) else [e], c if isinstance(c, list) else [c], strict=True):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-5)


def test_compiled_gcn_matches_eager_with_inductor(adjacency):
    """The default backend: inductor compiles the graph around the opaque sparsetir kernels."""
    torch.manual_seed(0)
    model = GCN(adjacency)
    x = _features()
    eager = _forward_backward(model, x)
    compiled_model = torch.compile(model)
    first = _forward_backward(compiled_model, x)
    count = torch_library.structures.preparations
    second = _forward_backward(compiled_model, _features(seed=5))
    _assert_same(eager, first)
    _assert_same(_forward_backward(model, _features(seed=5)), second)
    # Buffers reach the compiled graph as the same tensors: the structure and its transpose
    # (the backward's) are prepared on the first call only.
    assert torch_library.structures.preparations == count


def test_compiled_attention_matches_the_eager_sparse_tensor_path(adjacency):
    """Compiled custom ops against eager autograd.Function ops on a torch sparse CSR tensor:
    two implementations of the same gradient rules."""
    torch.manual_seed(0)
    model = AttentionLayer(adjacency)
    x = _features()
    compiled = _forward_backward(torch.compile(model, backend="aot_eager", fullgraph=True), x)

    def eager_forward(x):
        h = model.lin(x)
        attention = ops.softmax(ops.sddmm(adjacency, h, h))
        return ops.spmm(attention, h) + ops.spmv(adjacency, h[:, 0])[:, None]

    model.forward = eager_forward
    _assert_same(_forward_backward(model, x), compiled)


@pytest.mark.parametrize("op", ["spmm", "sddmm"])
def test_gradcheck_through_the_compiled_path(op):
    A = _small()
    rng = np.random.default_rng(6)
    v, X, Y = _leaf(A.data), _leaf(rng.standard_normal((9, 3))), _leaf(rng.standard_normal((12, 3)))
    crow, col = torch.from_numpy(A.indptr.astype(np.int64)), torch.from_numpy(A.indices.astype(np.int64))
    if op == "spmm":
        def f(v, X):
            return ops.spmm(ops.CsrTensors(crow, col, v, A.shape), X)
        args = (v, X)
    else:
        def f(v, X, Y):
            return ops.sddmm(ops.CsrTensors(crow, col, v, A.shape), Y, X).values
        args = (v, X, Y)
    assert torch.autograd.gradcheck(torch.compile(f, backend="aot_eager", fullgraph=True), args)


def test_bsr_spmm_runs_eagerly_in_a_graph_break():
    B = sp.bsr_matrix(np.kron(np.eye(3), np.ones((2, 2))).astype(np.float32), blocksize=(2, 2))
    X = torch.randn(6, 4)

    def f(X):
        return ops.bsr_spmm(B, X * 2) + 1

    explanation = torch._dynamo.explain(f)(X)
    assert explanation.graph_break_count == 1
    torch.testing.assert_close(torch.compile(f, backend="aot_eager")(X), torch.from_numpy(B @ (2 * X.numpy())) + 1)


# -- two sparse operands: add, multiply, spgemm ----------------------------------------------


def _pair_inputs():
    A = random_csr(12, 9, 0.3, 11, np.float64)
    B = random_csr(9, 10, 0.3, 12, np.float64)
    C = random_csr(12, 9, 0.3, 13, np.float64)
    M = random_csr(12, 10, 0.3, 14, np.float64)
    return A, B, C, M


def _dense(t: ops.CsrTensors) -> np.ndarray:
    return t.to_sparse_csr().to_dense().numpy()


def test_sparse_pairs_of_csr_tensors_give_csr_tensors():
    A, B, C, M = _pair_inputs()
    for got, expected in (
        (ops.add(_tensors(A), _tensors(C)), (A + C).toarray()),
        (ops.multiply(_tensors(A), _tensors(C)), A.multiply(C).toarray()),
        (ops.spgemm(_tensors(A), _tensors(B)), (A @ B).toarray()),
        (ops.spgemm(_tensors(A), _tensors(B), mask=_tensors(M)), (A @ B).multiply(M != 0).toarray()),
    ):
        assert type(got) is ops.CsrTensors
        assert got.crow_indices.dtype == torch.int64 and got.col_indices.dtype == torch.int64
        np.testing.assert_allclose(_dense(got), expected, rtol=1e-12, atol=1e-12)
    masked = ops.spgemm(_tensors(A), _tensors(B), mask=_tensors(M))
    assert torch.equal(masked.col_indices, torch.from_numpy(M.indices.astype(np.int64)))


@pytest.mark.parametrize("op", ["add", "multiply", "spgemm", "masked"])
def test_gradcheck_of_sparse_pairs_eager_and_compiled(op):
    A, B, C, M = _pair_inputs()
    other = C if op in ("add", "multiply") else B
    a, b = _tensors(A), _tensors(other)
    va, vb = _leaf(A.data), _leaf(other.data)

    def f(va, vb):
        left, right = ops.CsrTensors(a[0], a[1], va, a.shape), ops.CsrTensors(b[0], b[1], vb, b.shape)
        if op == "masked":
            return ops.spgemm(left, right, mask=_tensors(M)).values
        return getattr(ops, op)(left, right).values

    assert torch.autograd.gradcheck(f, (va, vb))
    torch._dynamo.reset()  # each case's own graph, not a recompilation of the last case's code
    assert torch.autograd.gradcheck(torch.compile(f, backend="aot_eager", fullgraph=True), (va, vb))


def test_a_compiled_sparse_product_feeds_dense_ops():
    """A·B's number of entries is known only at run time: the compiled graph carries it as an
    unbacked size through the ops after it, forward and backward."""
    A, B, _, _ = _pair_inputs()
    a, b = _tensors(A), _tensors(B)
    X = torch.randn(10, 3, dtype=torch.float64)

    def f(va, X):
        product = ops.spgemm(ops.CsrTensors(a[0], a[1], va, a.shape), b)
        return ops.spmm(product, X).sum() + (product.values ** 2).sum()

    va_eager, va_compiled = _leaf(A.data), _leaf(A.data)
    eager = f(va_eager, X)
    eager.backward()
    compiled = torch.compile(f, backend="aot_eager", fullgraph=True)(va_compiled, X)
    compiled.backward()
    torch.testing.assert_close(compiled, eager)
    torch.testing.assert_close(va_compiled.grad, va_eager.grad)
