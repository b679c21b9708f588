"""What each ``examples/*.py`` is run on by ``sparsetir bench --scripts``, and what it must compute.

Per example (``SPECS``, one ``Spec`` each): the inputs, built from a chosen matrix where the
example is graph-like (cut to ``WORK_BUDGET`` by ``fitted``) or from the rng alone; the exact
final value of its output in float64, computed with SciPy/NumPy and never with sparsetir; and
the scale its float32 rounding grows with (``magnitude_of``), which the check's tolerance uses.
Running, timing and reporting them is ``scripts.py``'s part.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse

# The feature widths of the vs-serial inputs (one width per script: that part compares builds,
# not widths); RGCN's weights are FEAT_IN x FEAT_OUT per relation.
FEAT = 64
RGCN_FEAT = 16
RELATIONS = 4
# A graph-derived input is cut to a leading square submatrix (halving its side) until its work,
# in multiply-adds or element visits, is at most WORK_BUDGET: the serial build of the dense
# lookup (csr_spmm_detached) or of a hypergraph's two-hop sum would otherwise take seconds per
# call on the larger graphs.
WORK_BUDGET = 1.5e8
# ell_spmm's rows keep at most this many times the mean row length (the ELL part of a hybrid
# ELL + COO split; a skewed graph's whole ELL form is mostly padding).
ELL_SPREAD = 2
# csf_reduction's third level: up to 2 * CSF_K entries (random) under each stored (i, j).
CSF_K = 4


# ----------------------------------------------------------------------------------- inputs


def _values(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


def nans(*shape: int) -> np.ndarray:
    """float32 NaNs: the initial value of an output the kernel writes every element of, so an
    element it leaves unwritten fails the check."""
    return np.full(shape, np.nan, dtype=np.float32)


def _zeros(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=np.float32)


def _indptr(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int32)


def _row_ids(indptr: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))


def _longest(indptr: np.ndarray) -> int:
    return max(int(np.diff(indptr).max(initial=0)), 1)


def _sorted_distinct(rng: np.random.Generator, lengths: np.ndarray, extent: int) -> np.ndarray:
    """Sorted, duplicate-free indices in [0, extent) for segments of ``lengths`` (each <= extent)."""
    indptr = _indptr(lengths)
    step = max(1, extent // _longest(indptr))
    sums = np.cumsum(rng.integers(1, step + 1, size=int(indptr[-1])))
    before = np.concatenate([[0], sums])[indptr[:-1]]
    return (sums - np.repeat(before, lengths) - 1).astype(np.int32)


def _csr_args(graph: scipy.sparse.csr_matrix, rng) -> dict:
    """A CSR matrix with ``graph``'s pattern and random values, in the scripts' parameter names."""
    m, n = graph.shape
    return dict(a=_values(rng, graph.nnz), indptr=graph.indptr.astype(np.int32),
                indices=graph.indices.astype(np.int32), m=m, n=n, nnz=graph.nnz)


def _blocks(indptr, indices, shape, block: int = 4):
    """The ``block`` x ``block`` block pattern covering a CSR pattern: (indptr, indices) of the
    block columns, and the block position of every entry."""
    mb, nb = -(-shape[0] // block), -(-shape[1] // block)
    keys = (_row_ids(indptr) // block).astype(np.int64) * nb + indices // block
    unique = np.unique(keys)
    indptr_b = _indptr(np.bincount(unique // nb, minlength=mb))
    return indptr_b, (unique % nb).astype(np.int32), np.searchsorted(unique, keys), mb, nb


def spmm_inputs(graph, rng, feat=FEAT):
    m, n = graph.shape
    return dict(**_csr_args(graph, rng), b=_values(rng, n, feat), c=nans(m, feat), feat_size=feat)


def segment_inputs(graph, rng, feat=FEAT):
    """The segments are the graph's rows: the per-edge messages of a GNN layer, summed per node."""
    m = graph.shape[0]
    return dict(x=_values(rng, graph.nnz, feat), out=nans(m, feat), indptr=graph.indptr.astype(np.int32),
                m=m, max_len=_longest(graph.indptr), feat_size=feat, nnz=graph.nnz)


def rowsum_inputs(graph, rng):
    return dict(**_csr_args(graph, rng), b=nans(graph.shape[0]))


def elementwise_inputs(graph, rng):
    return dict(**_csr_args(graph, rng), b=nans(graph.nnz))


def _square(graph) -> scipy.sparse.csr_matrix:
    side = min(graph.shape)
    square = graph[:side, :side].tocsr()
    square.sort_indices()
    return square


def _pattern(keys: np.ndarray, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """indptr and indices of the sorted, distinct keys ``row * n + column``."""
    return _indptr(np.bincount(keys // n, minlength=m)), (keys % n).astype(np.int32)


def _pair_inputs(graph, rng, output: str) -> dict:
    """A: the graph's (leading square part's) pattern; B: its transpose's (the edges back), each
    with random values: A * B lives on the reciprocal edges, A + B is the symmetrized graph. The
    output ``c`` is over the ``"intersection"`` or ``"union"`` of the patterns, or (``"rows"``)
    ``out`` holds one value per row."""
    a = _square(graph)
    b = a.T.tocsr()
    b.sort_indices()
    m, n = a.shape
    keys_a, keys_b = (_row_ids(x.indptr).astype(np.int64) * n + x.indices for x in (a, b))
    inputs = dict(a=_values(rng, a.nnz), b=_values(rng, b.nnz))
    operands = dict(indptr_a=a.indptr.astype(np.int32), indices_a=a.indices.astype(np.int32),
                    indptr_b=b.indptr.astype(np.int32), indices_b=b.indices.astype(np.int32))
    sizes = dict(m=m, n=n, nnz_a=a.nnz, nnz_b=b.nnz)
    if output == "rows":
        return dict(**inputs, out=nans(m), **operands, **sizes)
    merged = np.intersect1d(keys_a, keys_b) if output == "intersection" else np.union1d(keys_a, keys_b)
    indptr_c, indices_c = _pattern(merged, m, n)
    return dict(**inputs, c=nans(len(indices_c)), **operands, indptr_c=indptr_c, indices_c=indices_c, **sizes,
                nnz_c=len(indices_c))


def multiply_inputs(graph, rng):
    return _pair_inputs(graph, rng, "intersection")


def add_inputs(graph, rng):
    return _pair_inputs(graph, rng, "union")


def row_dot_inputs(graph, rng):
    return _pair_inputs(graph, rng, "rows")


def spgemm_masked_inputs(graph, rng):
    """A @ B at A's own pattern, B with A's pattern and values of its own (the product of
    triangle counting, (A @ A) ⊙ A)."""
    a = _square(graph)
    m, n = a.shape
    indptr, indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    return dict(a=_values(rng, a.nnz), b=_values(rng, a.nnz), c=nans(a.nnz), indptr_a=indptr, indices_a=indices,
                indptr_b=indptr, indices_b=indices, indptr_c=indptr, indices_c=indices, m=m, k=n, n=n,
                nnz_a=a.nnz, nnz_b=a.nnz, nnz_c=a.nnz)


def _products(graph) -> float:
    """The products of A @ A: for every entry (i, k), the entries of row k."""
    square = _square(graph)
    return float(np.diff(square.indptr)[square.indices].sum())


def softmax_inputs(graph, rng):
    """Random standard-normal scores on the graph's pattern (attention scores on its edges)."""
    return elementwise_inputs(graph, rng)


def bsr_spmm_inputs(graph, rng, feat=FEAT):
    """The graph in BSR with 4x4 blocks (the stored zeros around its entries included)."""
    csr = _csr_args(graph, rng)
    indptr_b, indices_b, position, mb, nb = _blocks(csr["indptr"], csr["indices"], graph.shape)
    rows, cols = _row_ids(csr["indptr"]), csr["indices"]
    a = _zeros(len(indices_b), 4, 4)
    a[position, rows % 4, cols % 4] = csr["a"]
    return dict(a=a, b=_values(rng, nb * 4, feat), c=nans(mb * 4, feat), indptr=indptr_b,
                indices=indices_b, mb=mb, nb=nb, nnzb=len(indices_b), feat_size=feat)


def ell_inputs(graph, rng, feat=FEAT):
    """Each row's first ``ELL_SPREAD`` x mean-row-length entries, padded with zeros at column 0."""
    m, n = graph.shape
    csr = _csr_args(graph, rng)
    width = max(1, min(_longest(graph.indptr), math.ceil(ELL_SPREAD * graph.nnz / max(m, 1))))
    rows = _row_ids(csr["indptr"])
    slot = np.arange(graph.nnz) - csr["indptr"][rows]
    kept = slot < width
    indices, a = np.zeros((m, width), np.int32), _zeros(m, width)
    indices[rows[kept], slot[kept]] = csr["indices"][kept]
    a[rows[kept], slot[kept]] = csr["a"][kept]
    return dict(a=a, b=_values(rng, n, feat), c=nans(m, feat), indices=indices.ravel(), m=m, n=n,
                nnz_cols=width, feat_size=feat)


def sddmm_inputs(graph, rng, feat=FEAT):
    """Dense A (m, feat) and B (n, feat); X holds the values on the graph's pattern."""
    m, n = graph.shape
    csr = _csr_args(graph, rng)
    return dict(a=_values(rng, m, feat), b=_values(rng, n, feat), x=csr.pop("a"), y=nans(graph.nnz),
                **csr, feat_size=feat)


def csf_inputs(graph, rng):
    """I and J: the graph; K: 0 to 2 * CSF_K random coordinates under each stored (i, j)."""
    m, n = graph.shape
    lengths = rng.integers(0, min(2 * CSF_K, n) + 1, size=graph.nnz)
    indices_k = _sorted_distinct(rng, lengths, n)
    return dict(a=_values(rng, len(indices_k)), out=nans(m), indptr_j=graph.indptr.astype(np.int32),
                indices_j=graph.indices.astype(np.int32), indptr_k=_indptr(lengths), indices_k=indices_k,
                m=m, n=n, p=n, nnz_j=graph.nnz, nnz_k=len(indices_k))


def ragged_inputs(rng, rows=8192, max_j=16, max_k=8, feat=32):
    """Random: J ragged (0 to max_j) under each of ``rows`` rows, K (0 to max_k) under each J."""
    lengths_j = rng.integers(0, max_j + 1, size=rows)
    lengths_k = rng.integers(0, max_k + 1, size=int(lengths_j.sum()))
    nnz_k = int(lengths_k.sum())
    return dict(x=_values(rng, nnz_k, feat), out=nans(rows, feat), indptr_j=_indptr(lengths_j),
                indptr_k=_indptr(lengths_k), m=rows, max_j=max(int(lengths_j.max(initial=0)), 1),
                max_k=max(int(lengths_k.max(initial=0)), 1), feat_size=feat,
                nnz_j=int(lengths_j.sum()), nnz_k=nnz_k)


def rgcn_homogeneous_inputs(graph, rng, feat=RGCN_FEAT, relations=RELATIONS):
    """The graph's edges, each of a random relation type; one feat x feat weight per relation."""
    m, n = graph.shape
    return dict(**_csr_args(graph, rng), etype=rng.integers(0, relations, size=graph.nnz).astype(np.int32),
                w=_values(rng, relations, feat, feat), x=_values(rng, n, feat), y=nans(m, feat),
                num_rel=relations, feat_in=feat, feat_out=feat)


def rgcn_heterogeneous_inputs(graph, rng, feat=RGCN_FEAT, relations=RELATIONS):
    """The graph's edges split by a random relation type: one DCSR adjacency (the rows with an
    edge of that type, then their columns) per relation; y starts at zero and is added to."""
    side = max(graph.shape)
    rows, cols = _row_ids(graph.indptr), graph.indices.astype(np.int64)
    etype = rng.integers(0, relations, size=graph.nnz)
    order = np.lexsort((cols, rows, etype))
    rel, rows, cols = etype[order], rows[order], cols[order]
    pair = rel * side + rows
    starts = np.flatnonzero(np.concatenate([[True], pair[1:] != pair[:-1]])) if graph.nnz else np.zeros(0, int)
    counts = np.diff(np.concatenate([starts, [graph.nnz]]))
    return dict(a=_values(rng, graph.nnz), w=_values(rng, relations, feat, feat), x=_values(rng, side, feat),
                y=_zeros(side, feat), indptr_i=_indptr(np.bincount(rel[starts], minlength=relations)),
                indices_i=rows[starts].astype(np.int32), indptr_j=_indptr(counts),
                indices_j=cols.astype(np.int32), num_rel=relations, n=side, feat_in=feat, feat_out=feat,
                nnz_i=len(starts), nnz_j=graph.nnz)


def csr_to_bsr_inputs(graph, rng):
    """The graph, and the 4x4 block pattern that covers it; b starts at zero (only the stored
    entries of A are written)."""
    m, n = graph.shape
    csr = _csr_args(graph, rng)
    indptr_b, indices_b, _, mb, nb = _blocks(csr["indptr"], csr["indices"], graph.shape)
    return dict(**csr, b=_zeros(len(indices_b), 4, 4), indptr_b=indptr_b, indices_b=indices_b,
                mb=mb, nb=nb, nnzb=len(indices_b))


def hypergraph_inputs(graph, rng, feat=FEAT):
    """The graph as an incidence matrix: vertex v (a row) lies in hyperedge e (a column) where it
    stores an entry; U, the vertices of each hyperedge, is its transpose."""
    m, n = graph.shape
    transposed = graph.T.tocsr()
    transposed.sort_indices()
    return dict(x=_values(rng, m, feat), y=nans(m, feat), indptr_e=graph.indptr.astype(np.int32),
                indices_e=graph.indices.astype(np.int32), indptr_u=transposed.indptr.astype(np.int32),
                indices_u=transposed.indices.astype(np.int32), num_vertices=m, num_edges=n,
                feat_size=feat, nnz_e=graph.nnz, nnz_u=transposed.nnz)


def batched_inputs(rng, batch=64, largest=96):
    """Random: ``batch`` matmuls, each of extents drawn from 1 to ``largest``."""
    rows, inner, cols = (rng.integers(1, largest + 1, size=batch) for _ in range(3))
    nnz_ij, nnz_jk, nnz_ik = (int(v) for v in (rows @ inner, inner @ cols, rows @ cols))
    return dict(
        x=_values(rng, nnz_ij), y=_values(rng, nnz_jk), z=nans(nnz_ik),
        indptr_i=_indptr(rows), indptr_j=_indptr(inner), indptr_k=_indptr(cols),
        indptr_ij=_indptr(np.repeat(inner, rows)), indptr_jk=_indptr(np.repeat(cols, inner)),
        indptr_ik=_indptr(np.repeat(cols, rows)), batch=batch, max_i=int(rows.max()),
        max_j=int(inner.max()), max_k=int(cols.max()), nnz_i=int(rows.sum()),
        nnz_j=int(inner.sum()), nnz_ij=nnz_ij, nnz_jk=nnz_jk, nnz_ik=nnz_ik,
    )


# -------------------------------------------------------------------------------- references
# Each takes the inputs by parameter name and returns the output's exact final value in
# float64, computed with SciPy/NumPy, never with sparsetir.

# Elements of the nnz-by-width temporaries a reference makes at once.
CHUNK = 1 << 22


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _csr(values, indptr, indices, shape) -> scipy.sparse.csr_matrix:
    return scipy.sparse.csr_matrix((_f64(values), indices, indptr), shape=shape)


def spmm_reference(p):
    return _csr(p["a"], p["indptr"], p["indices"], (p["m"], p["n"])) @ _f64(p["b"])


def segment_reference(p):
    nnz = p["nnz"]
    segments = _csr(np.ones(nnz), p["indptr"], np.arange(nnz), (p["m"], nnz))
    return segments @ _f64(p["x"])


def rowsum_reference(p):
    return np.asarray(_csr(p["a"], p["indptr"], p["indices"], (p["m"], p["n"])).sum(axis=1)).ravel()


def elementwise_reference(p):
    return _f64(p["a"]) * 2.0 + 1.0


def _operands(p) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    shape = (p["m"], p["n"])
    return _csr(p["a"], p["indptr_a"], p["indices_a"], shape), _csr(p["b"], p["indptr_b"], p["indices_b"], shape)


def _on_c(matrix: scipy.sparse.csr_matrix, p) -> np.ndarray:
    """``matrix``'s values at the entries of C's pattern (0 where it stores none)."""
    rows = _row_ids(p["indptr_c"])
    return np.asarray(matrix[rows, p["indices_c"]], dtype=np.float64).ravel()


def multiply_reference(p):
    a, b = _operands(p)
    return _on_c(a.multiply(b).tocsr(), p)


def add_reference(p):
    a, b = _operands(p)
    return _on_c((a + b).tocsr(), p)


def spgemm_masked_reference(p):
    a = _csr(p["a"], p["indptr_a"], p["indices_a"], (p["m"], p["k"]))
    b = _csr(p["b"], p["indptr_b"], p["indices_b"], (p["k"], p["n"]))
    pattern = _csr(np.ones(p["nnz_c"]), p["indptr_c"], p["indices_c"], (p["m"], p["n"]))
    return _on_c((a @ b).multiply(pattern).tocsr(), p)


def row_dot_reference(p):
    a, b = _operands(p)
    return np.asarray(a.multiply(b).sum(axis=1), dtype=np.float64).ravel()


def bsr_spmm_reference(p):
    shape = (p["mb"] * 4, p["nb"] * 4)
    return scipy.sparse.bsr_matrix((_f64(p["a"]), p["indices"], p["indptr"]), shape=shape) @ _f64(p["b"])


def ell_reference(p):
    m, width = p["m"], p["nnz_cols"]
    return _csr(p["a"].ravel(), np.arange(0, m * width + 1, width), p["indices"], (m, p["n"])) @ _f64(p["b"])


def sddmm_reference(p):
    rows, cols = _row_ids(p["indptr"]), p["indices"]
    a, b, x = _f64(p["a"]), _f64(p["b"]), _f64(p["x"])
    y = np.empty(len(cols))
    step = max(1, CHUNK // max(1, a.shape[1]))
    for start in range(0, len(cols), step):
        part = slice(start, start + step)
        y[part] = x[part] * np.einsum("ij,ij->i", a[rows[part]], b[cols[part]])
    return y


def csf_reference(p):
    row_of_k = _row_ids(p["indptr_j"])[_row_ids(p["indptr_k"])]
    return np.bincount(row_of_k, weights=_f64(p["a"]), minlength=p["m"])


def ragged_reference(p):
    row_of_k = _row_ids(p["indptr_j"])[_row_ids(p["indptr_k"])]
    nnz = p["nnz_k"]
    rows = scipy.sparse.csr_matrix((np.ones(nnz), (row_of_k, np.arange(nnz))), shape=(p["m"], nnz))
    return rows @ _f64(p["x"])


def rgcn_homogeneous_reference(p):
    y = np.zeros((p["m"], p["feat_out"]))
    x, w = _f64(p["x"]), _f64(p["w"])
    for r in range(p["num_rel"]):
        a_r = _csr(np.where(p["etype"] == r, _f64(p["a"]), 0.0), p["indptr"], p["indices"], (p["m"], p["n"]))
        y += (a_r @ x) @ w[r]
    return y


def rgcn_heterogeneous_reference(p):
    n = p["n"]
    entry_row = _row_ids(p["indptr_j"])
    relation = _row_ids(p["indptr_i"])[entry_row]
    destination = p["indices_i"][entry_row]
    y, x, w = _f64(p["y"]).copy(), _f64(p["x"]), _f64(p["w"])
    for r in range(p["num_rel"]):
        mine = relation == r
        a_r = scipy.sparse.coo_matrix((_f64(p["a"])[mine], (destination[mine], p["indices_j"][mine])), (n, n))
        y += (a_r.tocsr() @ x) @ w[r]
    return y


def softmax_reference(p):
    return _softmax(p)[0]


def _softmax(p) -> tuple[np.ndarray, np.ndarray]:
    """The row-wise softmax of the stored values, and each value minus its row's max."""
    a, indptr = _f64(p["a"]), p["indptr"]
    lengths = np.diff(indptr)
    starts = indptr[:-1][lengths > 0]
    if not starts.size:
        return np.empty_like(a), np.empty_like(a)
    shifted = a - np.repeat(np.maximum.reduceat(a, starts), lengths[lengths > 0])
    exps = np.exp(shifted)
    return exps / np.repeat(np.add.reduceat(exps, starts), lengths[lengths > 0]), shifted


def softmax_magnitude(p):
    # float32 rounds exp's argument and the row sum: the error grows with |a - row max|.
    expected, shifted = _softmax(p)
    return expected * (1.0 + np.abs(shifted))


def csr_to_bsr_reference(p):
    """The stored entries of A at their places in their blocks; every other value as it was."""
    b = _f64(p["b"]).copy()
    nb = p["nb"]
    rows, cols = _row_ids(p["indptr"]), p["indices"].astype(np.int64)
    block_keys = _row_ids(p["indptr_b"]).astype(np.int64) * nb + p["indices_b"]
    keys = (rows // 4).astype(np.int64) * nb + cols // 4
    position = np.searchsorted(block_keys, keys)
    if not np.array_equal(block_keys[np.minimum(position, len(block_keys) - 1)], keys):
        raise ValueError("the block pattern does not cover A")
    b[position, rows % 4, cols % 4] = _f64(p["a"])
    return b


def hypergraph_reference(p):
    v, e = p["num_vertices"], p["num_edges"]
    h = _csr(np.ones(p["nnz_e"]), p["indptr_e"], p["indices_e"], (v, e))
    g = _csr(np.ones(p["nnz_u"]), p["indptr_u"], p["indices_u"], (e, v))
    return h @ (g @ _f64(p["x"]))


def batched_reference(p):
    rows, inner, cols = (np.diff(p[k]) for k in ("indptr_i", "indptr_j", "indptr_k"))
    x, y = _f64(p["x"]), _f64(p["y"])
    z = np.empty(p["nnz_ik"])
    for b in range(p["batch"]):
        xs, ys = p["indptr_ij"][p["indptr_i"][b]], p["indptr_jk"][p["indptr_j"][b]]
        zs = p["indptr_ik"][p["indptr_i"][b]]
        xb = x[xs:xs + rows[b] * inner[b]].reshape(rows[b], inner[b])
        yb = y[ys:ys + inner[b] * cols[b]].reshape(inner[b], cols[b])
        z[zs:zs + rows[b] * cols[b]] = (xb @ yb).ravel()
    return z


# ------------------------------------------------------------------------------------ specs


def _column_degrees(graph) -> np.ndarray:
    return np.bincount(graph.indices, minlength=graph.shape[1]).astype(np.float64)


@dataclass(frozen=True)
class Spec:
    """How one example is benchmarked against its serial build."""

    name: str  # the file's stem, and the function's name
    output: str  # the parameter the kernel writes
    reference: Callable[[dict], np.ndarray]
    # Inputs from a matrix (graph-like examples) or, with ``graph`` False, from the rng alone.
    inputs: Callable[..., dict]
    graph: bool = True
    # Multiply-adds (or element visits) of a call on a matrix: over WORK_BUDGET, the matrix is cut.
    work: Optional[Callable[[scipy.sparse.csr_matrix], float]] = None
    # The scale of float32 rounding per output value; default: the reference on |inputs|, the sum
    # of the absolute values of the terms for every example but softmax.
    magnitude: Optional[Callable[[dict], np.ndarray]] = None
    # The output is added to (no T.init): each timed call first puts it back to its initial value.
    accumulates: bool = False
    what: str = ""  # the input, in words, for docs/bench.md and the JSON


SPECS: dict[str, Spec] = {spec.name: spec for spec in (
    Spec("batched_ragged_matmul", "z", batched_reference, batched_inputs, graph=False,
         what="random: 64 matmuls, every extent from 1 to 96"),
    Spec("bsr_spmm", "c", bsr_spmm_reference, bsr_spmm_inputs,
         work=lambda g: 16.0 * len(_blocks(g.indptr, g.indices, g.shape)[1]) * FEAT,
         what=f"the matrix in 4x4 BSR, width {FEAT}"),
    Spec("csf_reduction", "out", csf_reference, csf_inputs,
         what=f"I, J: the matrix; K: 0 to {2 * CSF_K} random coordinates under each entry"),
    Spec("csr_add", "c", add_reference, add_inputs,
         what="the matrix plus its transpose, into the union of their patterns"),
    Spec("csr_add_assembled", "c", add_reference, add_inputs,
         what="the matrix plus its transpose, the union of their patterns computed by the kernel"),
    Spec("csr_elementwise", "b", elementwise_reference, elementwise_inputs, what="the matrix"),
    Spec("csr_multiply", "c", multiply_reference, multiply_inputs,
         what="the matrix times its transpose elementwise, into the intersection of their patterns"),
    Spec("csr_multiply_assembled", "c", multiply_reference, multiply_inputs,
         what="the matrix times its transpose elementwise, the intersection computed by the kernel"),
    Spec("csr_row_dot", "out", row_dot_reference, row_dot_inputs,
         what="the rows of the matrix dotted with those of its transpose"),
    Spec("csr_rowsum", "b", rowsum_reference, rowsum_inputs, what="the matrix"),
    Spec("csr_spmm", "c", spmm_reference, spmm_inputs, work=lambda g: float(g.nnz) * FEAT,
         what=f"the matrix, width {FEAT}"),
    Spec("csr_spmm_detached", "c", spmm_reference, spmm_inputs,
         work=lambda g: float(g.shape[0]) * g.shape[1] * FEAT,
         what=f"the matrix (every (row, column) is visited), width {FEAT}"),
    Spec("csr_to_bsr", "b", csr_to_bsr_reference, csr_to_bsr_inputs,
         what="the matrix and its covering 4x4 block pattern"),
    Spec("ell_spmm", "c", ell_reference, ell_inputs,
         what=f"the matrix's rows cut to {ELL_SPREAD}x the mean row length, width {FEAT}"),
    Spec("hypergraph", "y", hypergraph_reference, hypergraph_inputs,
         work=lambda g: float((_column_degrees(g) ** 2).sum()) * FEAT,
         what=f"the matrix as vertex-hyperedge incidence, width {FEAT}"),
    Spec("ragged_fused_reduction", "out", ragged_reference, ragged_inputs, graph=False,
         what="random: 8192 rows, J 0-16 per row, K 0-8 per J, width 32"),
    Spec("rgcn_heterogeneous", "y", rgcn_heterogeneous_reference, rgcn_heterogeneous_inputs,
         work=lambda g: float(g.nnz) * RGCN_FEAT * RGCN_FEAT, accumulates=True,
         what=f"the matrix's edges in {RELATIONS} random relations, {RGCN_FEAT}x{RGCN_FEAT} weights"),
    Spec("rgcn_homogeneous", "y", rgcn_homogeneous_reference, rgcn_homogeneous_inputs,
         work=lambda g: float(g.nnz) * RGCN_FEAT * RGCN_FEAT,
         what=f"the matrix's edges in {RELATIONS} random relations, {RGCN_FEAT}x{RGCN_FEAT} weights"),
    Spec("sddmm", "y", sddmm_reference, sddmm_inputs, work=lambda g: float(g.nnz) * FEAT,
         what=f"the matrix's pattern, width {FEAT}"),
    Spec("sddmm_fused", "y", sddmm_reference, sddmm_inputs, work=lambda g: float(g.nnz) * FEAT,
         what=f"the matrix's pattern, width {FEAT}"),
    Spec("segment_reduce", "out", segment_reference, segment_inputs, work=lambda g: float(g.nnz) * FEAT,
         what=f"the matrix's rows as segments of nnz x {FEAT} values"),
    Spec("sparse_softmax", "b", softmax_reference, softmax_inputs, magnitude=softmax_magnitude,
         what="random scores on the matrix's pattern"),
    # A binary search per product: a product costs a search of C's row.
    Spec("spgemm_masked", "c", spgemm_masked_reference, spgemm_masked_inputs, work=lambda g: 4.0 * _products(g),
         what="A @ B at A's pattern (triangle counting's product), B on A's pattern"),
)}

#: The examples the bench knows, in ``SPECS``'s order (the CLI's choices of ``--script``).
NAMES = tuple(SPECS)


def magnitude_of(spec: Spec, inputs: dict) -> np.ndarray:
    """Per output value, the scale its float32 rounding error grows with."""
    if spec.magnitude is not None:
        return spec.magnitude(inputs)
    absolute = {k: np.abs(v) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
                for k, v in inputs.items()}
    return spec.reference(absolute)


def fitted(spec: Spec, graph: scipy.sparse.csr_matrix) -> tuple[scipy.sparse.csr_matrix, Optional[int]]:
    """``graph``, or its leading square submatrix halved until the work fits WORK_BUDGET (with its side)."""
    if spec.work is None or spec.work(graph) <= WORK_BUDGET:
        return graph, None
    side = min(graph.shape)
    while side > 1:
        side //= 2
        cut = graph[:side, :side].tocsr()
        cut.sort_indices()
        if spec.work(cut) <= WORK_BUDGET:
            return cut, side
    return graph[:1, :1].tocsr(), 1


__all__ = ["FEAT", "NAMES", "SPECS", "WORK_BUDGET", "Spec", "fitted", "magnitude_of", "nans"]
