"""``sparsetir bench --scripts``: users' scripts built with ``sparsetir.build(f)``, checked and timed.

Two parts, each result checked against a float64 NumPy/SciPy reference written here:

- **vs peers**: the README's SpMM and SDDMM scripts (``README_SPMM``, ``README_SDDMM``: the
  computations of ``sparsetir.ops.spmm`` and ``ops.sddmm``), built with the default schedule and called
  the way a user calls them (by name, arguments checked), timed against ``sparsetir.ops``, SciPy,
  torch and MKL on the chosen matrices and widths, exactly as ``sparsetir bench`` times its
  kernels (``kernels.KERNELS`` gives the peers, the operands and the reference);
- **vs serial**: every ``examples/*.py`` (not ``gnn/``) built with defaults against the same script
  built with ``schedule="none"``, on inputs of realistic size (``SPECS``: built from each chosen
  matrix where the example is graph-like, random otherwise), with what the default schedule did
  (``default_build.schedule_of(f, **widths).applied``).

A script's kernel writes into an output array the caller allocates; each checked answer is read
and the array is put back to its initial contents right after (NaN where the script writes every
element), outside the timed region, so a kernel that stops writing cannot pass on a stale answer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import numpy as np
import scipy.sparse

from . import interleave
from .check import mismatch
from .kernels import KERNELS, Case, Impl
from .timing import ALONE, Interleave, Timing, measure

#: The SpMM script of README.md's section "A script", verbatim (a test keeps the two equal).
README_SPMM = '''\
from sparsetir.script import tir as T


@T.prim_func
def csr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
             m: T.int32, n: T.int32, feat: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 2})
    I = T.dense_fixed(m)                                          # rows of A and C
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")  # A's stored columns, per row
    J_dense = T.dense_fixed(n)                                    # rows of B
    K = T.dense_fixed(feat)                                       # columns of B and C
    A = T.match_sparse_buffer(a, (I, J), dtype="float32")
    B = T.match_sparse_buffer(b, (J_dense, K), dtype="float32")
    C = T.match_sparse_buffer(c, (I, K), dtype="float32")
    with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:        # i, k spatial; j reduced
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + A[i, j] * B[j, k]
'''

#: The SDDMM script of README.md's section "A script", verbatim (a test keeps the two equal).
README_SDDMM = '''\
from sparsetir.script import tir as T


@T.prim_func
def sddmm(a: T.handle, x: T.handle, y: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
          m: T.int32, n: T.int32, feat: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    J_dense = T.dense_fixed(n)
    K = T.dense_fixed(feat)
    A = T.match_sparse_buffer(a, (I, J), dtype="float32")
    X = T.match_sparse_buffer(x, (I, K), dtype="float32")
    Y = T.match_sparse_buffer(y, (J_dense, K), dtype="float32")
    C = T.match_sparse_buffer(c, (I, J), dtype="float32")
    with T.sp_iter([I, J, K], "SSR", "sddmm") as [i, j, k]:        # i, j spatial; k reduced
        with T.init():
            C[i, j] = T.float32(0)
        C[i, j] = C[i, j] + A[i, j] * X[i, k] * Y[j, k]
'''

#: The README's scripts by the name the bench gives them.
README_SCRIPTS = {"readme_spmm": README_SPMM, "readme_sddmm": README_SDDMM}

#: Where the examples live: beside the package in a checkout (``examples/``).
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# The implementations' names in the tables and the JSON.
SCRIPT = "script"
OPS = "ops"
DEFAULT = "default"
SERIAL = "serial"
PEERS = ("scipy", "torch", "mkl")
FASTER_OF = ("scipy", "torch")

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


def _nan(*shape: int) -> np.ndarray:
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
    return dict(**_csr_args(graph, rng), b=_values(rng, n, feat), c=_nan(m, feat), feat_size=feat)


def segment_inputs(graph, rng, feat=FEAT):
    """The segments are the graph's rows: the per-edge messages of a GNN layer, summed per node."""
    m = graph.shape[0]
    return dict(x=_values(rng, graph.nnz, feat), out=_nan(m, feat), indptr=graph.indptr.astype(np.int32),
                m=m, max_len=_longest(graph.indptr), feat_size=feat, nnz=graph.nnz)


def rowsum_inputs(graph, rng):
    return dict(**_csr_args(graph, rng), b=_nan(graph.shape[0]))


def elementwise_inputs(graph, rng):
    return dict(**_csr_args(graph, rng), b=_nan(graph.nnz))


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
    return dict(a=a, b=_values(rng, nb * 4, feat), c=_nan(mb * 4, feat), indptr=indptr_b,
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
    return dict(a=a, b=_values(rng, n, feat), c=_nan(m, feat), indices=indices.ravel(), m=m, n=n,
                nnz_cols=width, feat_size=feat)


def sddmm_inputs(graph, rng, feat=FEAT):
    """Dense A (m, feat) and B (n, feat); X holds the values on the graph's pattern."""
    m, n = graph.shape
    csr = _csr_args(graph, rng)
    return dict(a=_values(rng, m, feat), b=_values(rng, n, feat), x=csr.pop("a"), y=_nan(graph.nnz),
                **csr, feat_size=feat)


def csf_inputs(graph, rng):
    """I and J: the graph; K: 0 to 2 * CSF_K random coordinates under each stored (i, j)."""
    m, n = graph.shape
    lengths = rng.integers(0, min(2 * CSF_K, n) + 1, size=graph.nnz)
    indices_k = _sorted_distinct(rng, lengths, n)
    return dict(a=_values(rng, len(indices_k)), out=_nan(m), indptr_j=graph.indptr.astype(np.int32),
                indices_j=graph.indices.astype(np.int32), indptr_k=_indptr(lengths), indices_k=indices_k,
                m=m, n=n, p=n, nnz_j=graph.nnz, nnz_k=len(indices_k))


def ragged_inputs(rng, rows=8192, max_j=16, max_k=8, feat=32):
    """Random: J ragged (0 to max_j) under each of ``rows`` rows, K (0 to max_k) under each J."""
    lengths_j = rng.integers(0, max_j + 1, size=rows)
    lengths_k = rng.integers(0, max_k + 1, size=int(lengths_j.sum()))
    nnz_k = int(lengths_k.sum())
    return dict(x=_values(rng, nnz_k, feat), out=_nan(rows, feat), indptr_j=_indptr(lengths_j),
                indptr_k=_indptr(lengths_k), m=rows, max_j=max(int(lengths_j.max(initial=0)), 1),
                max_k=max(int(lengths_k.max(initial=0)), 1), feat_size=feat,
                nnz_j=int(lengths_j.sum()), nnz_k=nnz_k)


def rgcn_homogeneous_inputs(graph, rng, feat=RGCN_FEAT, relations=RELATIONS):
    """The graph's edges, each of a random relation type; one feat x feat weight per relation."""
    m, n = graph.shape
    return dict(**_csr_args(graph, rng), etype=rng.integers(0, relations, size=graph.nnz).astype(np.int32),
                w=_values(rng, relations, feat, feat), x=_values(rng, n, feat), y=_nan(m, feat),
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
    return dict(x=_values(rng, m, feat), y=_nan(m, feat), indptr_e=graph.indptr.astype(np.int32),
                indices_e=graph.indices.astype(np.int32), indptr_u=transposed.indptr.astype(np.int32),
                indices_u=transposed.indices.astype(np.int32), num_vertices=m, num_edges=n,
                feat_size=feat, nnz_e=graph.nnz, nnz_u=transposed.nnz)


def batched_inputs(rng, batch=64, largest=96):
    """Random: ``batch`` matmuls, each of extents drawn from 1 to ``largest``."""
    rows, inner, cols = (rng.integers(1, largest + 1, size=batch) for _ in range(3))
    nnz_ij, nnz_jk, nnz_ik = (int(v) for v in (rows @ inner, inner @ cols, rows @ cols))
    return dict(
        x=_values(rng, nnz_ij), y=_values(rng, nnz_jk), z=_nan(nnz_ik),
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
    Spec("csr_elementwise", "b", elementwise_reference, elementwise_inputs, what="the matrix"),
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
)}

NAMES = tuple(SPECS)
# The vs-peers part: which kernel of kernels.KERNELS each script computes.
VS_PEERS = {"csr_spmm": "spmm", "sddmm": "sddmm"}


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


# ------------------------------------------------------------------------------------ results


@dataclass
class PeerRow:
    """The script, sparsetir.ops and the peers on one case (matrix, kernel, width)."""

    matrix: str
    shape: tuple[int, int]
    nnz: int
    kernel: str
    width: int
    script: str  # where the script comes from, in words
    timings: dict[str, Timing]
    interleaved_with: Optional[str] = None

    def ms(self, name: str, best: bool = False) -> Optional[float]:
        timing = self.timings.get(name)
        if timing is None:
            return None
        return timing.best_ms if best else timing.median_ms

    @property
    def errors(self) -> dict[str, str]:
        return {name: t.error for name, t in self.timings.items() if t.error}

    @property
    def faster_peer(self) -> Optional[str]:
        timed = [name for name in FASTER_OF if self.ms(name)]
        return min(timed, key=self.ms) if timed else None

    def ratio(self, other: Optional[str], best: bool = False) -> Optional[float]:
        """The script's speed over ``other``'s: its time over the script's (above 1: the script is faster)."""
        ours, theirs = self.ms(SCRIPT, best), self.ms(other, best) if other else None
        return theirs / ours if ours and theirs else None

    def to_json(self) -> dict[str, Any]:
        others = [name for name in (OPS, *PEERS) if name in self.timings]
        return {
            "matrix": self.matrix, "shape": list(self.shape), "nnz": self.nnz, "kernel": self.kernel,
            "width": self.width, "script": self.script, "interleaved_with": self.interleaved_with,
            "passed": not self.errors,
            "impls": {name: _timing_json(t) for name, t in self.timings.items()},
            "script_vs": {name: self.ratio(name) for name in others},
            "script_vs_from_best_rounds": {name: self.ratio(name, best=True) for name in others},
            "faster_peer": self.faster_peer,
            "script_vs_faster_peer": self.ratio(self.faster_peer),
        }


@dataclass
class SerialRow:
    """One example built with the default schedule and serially, on one input."""

    script: str
    input: str  # the matrix (and how it was cut) or "random"
    sizes: dict[str, int]  # the script's scalar arguments
    timings: dict[str, Timing]
    kernel_type: str = ""  # the class of the default build's kernel
    rules: list[str] = field(default_factory=list)  # "rule@block" of every rule that applied
    schedule_error: Optional[str] = None  # schedule_of failed: why
    interleaved_with: Optional[str] = None
    # sparsetir.build's time per build, the first time this run built the script (the compiled
    # kernels are cached, on disk too: a later run may find them); a width's variant of the
    # default build compiles on its first call, in the JSON's first_call_ms
    build_ms: dict[str, Optional[float]] = field(default_factory=dict)

    @property
    def parallel(self) -> bool:
        return any(rule.startswith("row_parallel@") for rule in self.rules)

    @property
    def errors(self) -> dict[str, str]:
        return {name: t.error for name, t in self.timings.items() if t.error}

    def ms(self, name: str, best: bool = False) -> Optional[float]:
        timing = self.timings.get(name)
        if timing is None:
            return None
        return timing.best_ms if best else timing.median_ms

    def speedup(self, best: bool = False) -> Optional[float]:
        """The serial build's time over the default build's (above 1: the default is faster)."""
        default, serial = self.ms(DEFAULT, best), self.ms(SERIAL, best)
        return serial / default if default and serial else None

    def to_json(self) -> dict[str, Any]:
        return {
            "script": self.script, "input": self.input, "sizes": self.sizes,
            "interleaved_with": self.interleaved_with, "passed": not self.errors,
            "impls": {name: _timing_json(t) for name, t in self.timings.items()},
            "speedup": self.speedup(), "speedup_from_best_rounds": self.speedup(best=True),
            "kernel": self.kernel_type, "parallel": self.parallel, "rules_applied": self.rules,
            "schedule_error": self.schedule_error, "build_ms": self.build_ms,
        }


def _timing_json(t: Timing) -> dict[str, Any]:
    return {"ms": t.median_ms, "best_ms": t.best_ms, "first_call_ms": t.first_call_ms,
            "calls_per_round": t.calls_per_round, "round_ms": t.round_ms,
            "results_checked": t.results_checked, "error": t.error}


@dataclass
class Results:
    """Both parts of a ``--scripts`` run."""

    peer_rows: list[PeerRow] = field(default_factory=list)
    serial_rows: list[SerialRow] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Per kernel of the vs-peers part: geometric mean and worst of the script's ratio over
        ops, the faster of SciPy and torch, and MKL; for the vs-serial part, of the speedup."""
        peers: dict[str, Any] = {}
        for kernel in dict.fromkeys(row.kernel for row in self.peer_rows):
            rows = [row for row in self.peer_rows if row.kernel == kernel]
            peers[kernel] = {
                "vs_ops": _stats([(row.ratio(OPS), row, OPS) for row in rows],
                                 [row.ratio(OPS, best=True) for row in rows]),
                "vs_faster_peer": _stats([(row.ratio(row.faster_peer), row, row.faster_peer) for row in rows],
                                         [row.ratio(row.faster_peer, best=True) for row in rows]),
                "vs_mkl": _stats([(row.ratio("mkl"), row, "mkl") for row in rows],
                                 [row.ratio("mkl", best=True) for row in rows]) if any(
                    "mkl" in row.timings for row in rows) else None,
            }
        serial = _stats([(row.speedup(), row, SERIAL) for row in self.serial_rows],
                        [row.speedup(best=True) for row in self.serial_rows])
        serial["parallelized"] = sum(row.parallel for row in self.serial_rows)
        serial["scripts"] = len(self.serial_rows)
        return {"vs_peers": peers, "vs_serial": serial}

    def to_json(self) -> dict[str, Any]:
        return {
            "readme_spmm": README_SPMM, "readme_sddmm": README_SDDMM, "examples": str(EXAMPLES),
            "passed": not self.failures(),
            "vs_peers": [row.to_json() for row in self.peer_rows],
            "vs_serial": [row.to_json() for row in self.serial_rows],
            "summary": self.summary(),
        }

    def failures(self) -> list[str]:
        """One line per implementation that answered wrongly or raised."""
        lines = [f"{impl} {row.kernel} script on {row.matrix} (width {row.width}): {error}"
                 for row in self.peer_rows for impl, error in row.errors.items()]
        lines += [f"{row.script} built {impl} on {row.input}: {error}"
                  for row in self.serial_rows for impl, error in row.errors.items()]
        return lines

    def checked(self) -> int:
        rows: list = [*self.peer_rows, *self.serial_rows]
        return sum(t.results_checked for row in rows for t in row.timings.values())


def _stats(ratios: Iterable[tuple[Optional[float], Any, Optional[str]]],
           best: Iterable[Optional[float]] = ()) -> dict[str, Any]:
    """The number, geometric mean and minimum (with where) of the measured ``ratios``, and the
    geometric mean of the same ratios from each one's fastest round (``best``)."""
    measured = [(r, row, peer) for r, row, peer in ratios if r]
    if not measured:
        return {"rows": 0, "geomean": None, "min": None, "min_at": None, "geomean_from_best_rounds": None}
    low, row, peer = min(measured, key=lambda item: item[0])
    if isinstance(row, PeerRow):
        where = {"matrix": row.matrix, "width": row.width, "vs": peer}
    else:
        where = {"script": row.script, "input": row.input}
    best = [r for r in best if r]
    return {"rows": len(measured), "geomean": _geomean([r for r, _, _ in measured]), "min": low, "min_at": where,
            "geomean_from_best_rounds": _geomean(best) if best else None}


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


# ------------------------------------------------------------------------------------ running


def script_function(name: str) -> Any:
    """The parsed example ``name`` (a README script for ``"readme_spmm"``, ``"readme_sddmm"``)."""
    import sparsetir

    if name in README_SCRIPTS:
        return sparsetir.parse(README_SCRIPTS[name], "README.md")
    return sparsetir.parse_file(EXAMPLES / f"{name}.py")


def unknown_examples() -> list[str]:
    """The examples/*.py files (gnn/ aside) that have no spec here: not run, with a note."""
    if not EXAMPLES.is_dir():
        return []
    return sorted(path.stem for path in EXAMPLES.glob("*.py") if path.stem not in SPECS)


def run(options, ours: dict, torch: Optional[ModuleType], mkl: Optional[ModuleType],
        matrices: Sequence[tuple[str, scipy.sparse.csr_matrix, str]], notes: list[str],
        progress: Callable[[list], Iterable] = lambda work: work) -> Results:
    """Both parts on ``matrices`` (name, matrix, file): the scripts ``options.scripts`` names (all
    of ``SPECS`` when empty), at ``options.widths``, ``options.rounds`` rounds, in ``options.mode``.

    ``ours`` holds sparsetir.ops's ``spmm`` and ``sddmm`` (a missing one is left out, with a note
    from the caller).
    """
    import sparsetir

    selected = list(options.scripts or NAMES)
    interleaved = options.mode != ALONE
    results = Results()
    if not EXAMPLES.is_dir():
        notes.append(f"scripts: {EXAMPLES} does not exist (sparsetir is not run from a checkout): "
                     "only the README's SpMM script is run")
        selected = ["csr_spmm"] if "csr_spmm" in selected else []
    elif not options.scripts:
        for name in unknown_examples():
            notes.append(f"scripts: examples/{name}.py has no inputs and reference in "
                         "sparsetir/bench/scripts.py: not run")

    work: list[tuple] = []
    for name, matrix, _ in matrices:
        for script, kernel in VS_PEERS.items():
            if script in selected:
                work += [("peers", script, kernel, name, matrix, width) for width in options.widths]
    for script in selected:
        if not EXAMPLES.is_dir():
            break
        if SPECS[script].graph:
            work += [("serial", script, name, matrix) for name, matrix, _ in matrices]
        else:
            work.append(("serial", script, "random", None))

    built: dict[str, tuple] = {}

    def build(script: str, schedule: str):
        """(function, kernel, error, build ms) of ``script`` for the vs-peers part ("peers": the
        README's script for csr_spmm and sddmm), or built with the default schedule or serially."""
        key = f"{script}:{schedule}"
        if key not in built:
            start = time.perf_counter()
            try:
                readme = {"csr_spmm": "readme_spmm", "sddmm": "readme_sddmm"}.get(script) if schedule == "peers" else None
                func = script_function(readme or script)
                kernel = sparsetir.build(func) if schedule in (DEFAULT, "peers") else \
                    sparsetir.build(func, schedule="none")
                built[key] = (func, kernel, None, (time.perf_counter() - start) * 1e3)
            except Exception as err:
                built[key] = (None, None, f"raised {type(err).__name__}: {err}", None)
        return built[key]

    for item in progress(work):
        if item[0] == "peers":
            _, script, kernel_name, name, matrix, width = item
            results.peer_rows.append(_peer_case(script, kernel_name, name, matrix, width, options,
                                                ours, torch, mkl, build(script, "peers"), interleaved))
        else:
            _, script, name, matrix = item
            results.serial_rows.append(_serial_case(SPECS[script], name, matrix, options, torch,
                                                    build(script, "default"), build(script, SERIAL),
                                                    interleaved))
    return results


def _script_impl(name: str, kernel: Any, arguments: dict, output: str, accumulates: bool = False,
                 build_error: Optional[str] = None) -> Impl:
    """The kernel called by name as a user calls it (arguments checked), writing into its own
    copy of ``arguments[output]``; reading an answer puts that array back to its initial value."""
    if build_error is not None:
        def fail():
            raise RuntimeError(f"sparsetir.build failed: {build_error}")
        return Impl(name, fail, lambda output: output)
    buffer = np.array(arguments[output], copy=True)
    initial = buffer.copy()
    call_arguments = {**arguments, output: buffer}

    if accumulates:
        def call():
            np.copyto(buffer, initial)
            kernel(**call_arguments)
            return buffer
    else:
        def call():
            kernel(**call_arguments)
            return buffer

    def values(result: np.ndarray) -> np.ndarray:
        answer = result.copy()
        np.copyto(buffer, initial)
        return answer

    return Impl(name, call, values)


def _peer_case(script: str, kernel_name: str, matrix_name: str, matrix, width: int, options, ours: dict,
               torch, mkl, built: tuple, interleaved: bool) -> PeerRow:
    kernel_spec = KERNELS[kernel_name]
    case = kernel_spec.case(matrix_name, matrix, width, options.seed)
    _, kernel, error, _ = built
    m, n = matrix.shape
    if kernel_name == "spmm":
        (x,) = case.operands
        arguments = dict(a=matrix.data, b=x, c=_nan(m, width), indptr=matrix.indptr, indices=matrix.indices,
                         m=m, n=n, feat=width, nnz=matrix.nnz)
        impl = _script_impl(SCRIPT, kernel, arguments, "c", build_error=error)
        where = "README.md's csr_spmm"
    else:
        # The README's SDDMM computes what ops.sddmm(A, X, Y) does, on A's pattern.
        x_rows, y_cols = case.operands
        arguments = dict(a=matrix.data, x=x_rows, y=y_cols, c=_nan(matrix.nnz), indptr=matrix.indptr,
                         indices=matrix.indices, m=m, n=n, feat=width, nnz=matrix.nnz)
        impl = _script_impl(SCRIPT, kernel, arguments, "c", build_error=error)
        where = "README.md's sddmm"
    impls = [impl]
    if kernel_name in ours:
        impls += [replace(found, name=OPS) if found.name == "sparsetir" else found
                  for found in kernel_spec.impls(case, ours[kernel_name], torch, mkl)]
    else:
        impls += [found for found in kernel_spec.impls(case, _missing, torch, mkl)
                  if found.name != "sparsetir"]
    between = interleave.between_op(case, torch) if interleaved else None
    timings = measure(impls, options.rounds, lambda impl, out: _judge(case, impl, out), between)
    shape = (int(m), int(n))
    return PeerRow(matrix_name, shape, int(matrix.nnz), kernel_name, width, where, timings,
                   between.description if between else None)


def _missing(*args):
    raise RuntimeError("sparsetir.ops has no such kernel")


def _judge(case: Case, impl: Impl, output: Any) -> Optional[str]:
    problem = mismatch(case, impl, output)
    return problem.replace("differ from SciPy", "differ from the float64 reference") if problem else None


def _serial_case(spec: Spec, matrix_name: str, matrix, options, torch, default: tuple, serial: tuple,
                 interleaved: bool) -> SerialRow:
    rng = np.random.default_rng(options.seed)
    label = matrix_name
    if spec.graph:
        graph, side = fitted(spec, matrix)
        if side is not None:
            label = f"{matrix_name}[:{side},:{side}]"
        inputs = spec.inputs(graph, rng)
    else:
        inputs = spec.inputs(rng)
    expected = spec.reference(inputs)
    case = Case(label, scipy.sparse.csr_matrix((1, 1), dtype=np.float32), spec.name, None, (),
                np.asarray(expected, dtype=np.float64), np.asarray(magnitude_of(spec, inputs), dtype=np.float64), 0)
    sizes = {k: int(v) for k, v in inputs.items() if isinstance(v, (int, np.integer))}
    func, kernel, error, default_ms = default
    _, serial_kernel, serial_error, serial_ms = serial
    impls = [_script_impl(DEFAULT, kernel, inputs, spec.output, spec.accumulates, error),
             _script_impl(SERIAL, serial_kernel, inputs, spec.output, spec.accumulates, serial_error)]
    between = _between(inputs, spec.output, torch) if interleaved else None
    timings = measure(impls, options.rounds, lambda impl, out: _judge(case, impl, out), between)
    row = SerialRow(spec.name, label, sizes, timings, interleaved_with=between.description if between else None,
                    build_ms={DEFAULT: default_ms, SERIAL: serial_ms})
    if kernel is not None:
        row.kernel_type = type(kernel).__name__
        try:
            from sparsetir import default_build

            widths = {w: sizes[w] for w in getattr(kernel, "widths", [])}
            applied = default_build.schedule_of(func, **widths).applied
            row.rules = [f"{d.rule}@{d.where}" for d in applied]
        except Exception as err:
            row.schedule_error = f"{type(err).__name__}: {err}"
    return row


def _between(inputs: dict, output: str, torch) -> Interleave:
    """The op run before every timed call of an example: X @ W on its largest 2-D float input (a
    random (4096, 32) one where it has none), as ``interleave.between_op`` does for the kernels."""
    rng = np.random.default_rng(interleave.SEED)
    dense = [v for k, v in inputs.items() if k != output and isinstance(v, np.ndarray) and v.ndim == 2
             and v.dtype == np.float32 and v.shape[0] > 1]
    features = max(dense, key=lambda v: v.size) if dense else None
    if features is None:
        features = rng.standard_normal((4096, interleave.INTERLEAVE_WIDTH), dtype=np.float32)
    k = min(features.shape[1], interleave.INTERLEAVE_WIDTH)
    x = np.ascontiguousarray(features[:, :k])
    w = rng.standard_normal((k, k), dtype=np.float32)
    shape = f"{x.shape[0]}x{k} @ {k}x{k}"
    if torch is None:
        return Interleave(f"numpy X @ W ({shape})", lambda: x @ w)
    x_t, w_t = torch.from_numpy(x), torch.from_numpy(w)
    return Interleave(f"torch X @ W ({shape})", lambda: x_t @ w_t)


# ------------------------------------------------------------------------------------ output


def tables(results: Results) -> list[str]:
    """The printed report: both tables and their summaries."""
    lines: list[str] = []
    summary = results.summary()
    if results.peer_rows:
        others = [name for name in (OPS, *PEERS) if any(name in row.timings for row in results.peer_rows)]
        header = ["matrix", "kernel", "width", "script ms", *[f"{name} ms" for name in others],
                  "script/ops", "vs faster", *(["vs mkl"] if "mkl" in others else [])]
        body = []
        for row in results.peer_rows:
            line = [row.matrix, row.kernel, str(row.width), *[_ms(row.timings.get(n)) for n in [SCRIPT, *others]],
                    _x(row.ratio(OPS)), _x(row.ratio(row.faster_peer))]
            if "mkl" in others:
                line.append(_x(row.ratio("mkl")))
            body.append(line)
        lines.append("scripts vs peers: the README's SpMM and SDDMM scripts, built with "
                     "sparsetir.build(f); ratios are the script's speed over the other's (above 1x: "
                     "the script is faster)")
        lines.append(_align([header, *body], text_columns={0, 1}))
        lines.append("")
        for kernel, stats in summary["vs_peers"].items():
            for label, key in (("sparsetir.ops", "vs_ops"), ("the faster of scipy/torch", "vs_faster_peer"),
                               ("mkl", "vs_mkl")):
                if stats[key] is not None:
                    lines.append(_summary_line(f"{kernel} script", label, stats[key]))
        lines.append("")
    if results.serial_rows:
        header = ["script", "input", "default ms", "serial ms", "speedup", "parallel", "rules applied"]
        body = [[row.script, row.input, _ms(row.timings.get(DEFAULT)), _ms(row.timings.get(SERIAL)),
                 _x(row.speedup()), "yes" if row.parallel else "no",
                 ", ".join(row.rules) or (f"? ({row.schedule_error})" if row.schedule_error else "none")]
                for row in results.serial_rows]
        lines.append("examples: sparsetir.build(f) (default schedule) vs sparsetir.build(f, schedule=\"none\") "
                     "(serial); speedup: serial time over default time")
        lines.append(_align([header, *body], text_columns={0, 1, 6}))
        lines.append("")
        stats = summary["vs_serial"]
        lines.append(_summary_line("default schedule", "the serial build", stats, script=True)
                     + f"; {stats['parallelized']} of {stats['scripts']} rows parallelized")
    return lines


def _summary_line(what: str, over: str, stats: dict, script: bool = False) -> str:
    if not stats["rows"]:
        return f"{what}: no ratio over {over} measured"
    where = stats["min_at"]
    at = (f"{where['script']} on {where['input']}" if script
          else f"{where['matrix']} width {where['width']}, vs {where['vs']}")
    best = stats.get("geomean_from_best_rounds")
    return (f"{what}: geomean {stats['geomean']:.2f}x over {over} on {stats['rows']} rows"
            + (f" ({best:.2f}x from best rounds)" if best else "")
            + f"; worst {stats['min']:.2f}x ({at})")


def _ms(timing: Optional[Timing]) -> str:
    if timing is None:
        return "-"
    if timing.error:
        return "FAIL"
    ms = timing.median_ms
    return "-" if ms is None else (f"{ms:.4f}" if ms < 1 else f"{ms:.3f}")


def _x(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _align(lines: list[list[str]], text_columns: set[int]) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) if i in text_columns else cell.rjust(w)
                  for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
        for line in lines
    )


def write_plot(path: Path, results: Results) -> None:
    """Bars of the script's ratios over ops and the faster peer, and of each example's speedup
    over its serial build, to ``path`` (log scale, growing from 1x)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot, ticker

    panels = []
    if results.peer_rows:
        labels = [f"{row.kernel}\n{row.matrix}\nw{row.width}" for row in results.peer_rows]
        panels.append(("script vs ops and peers", labels, {
            "vs ops": [row.ratio(OPS) for row in results.peer_rows],
            "vs faster of scipy/torch": [row.ratio(row.faster_peer) for row in results.peer_rows]}))
    if results.serial_rows:
        labels = [f"{row.script}\n{row.input}" for row in results.serial_rows]
        panels.append(("default schedule vs serial build", labels,
                       {"speedup": [row.speedup() for row in results.serial_rows]}))
    if not panels:
        return
    most = max(len(labels) for _, labels, _ in panels)
    figure, axes = pyplot.subplots(len(panels), 1, figsize=(max(6.0, 0.9 * most + 2), 3.6 * len(panels)),
                                   squeeze=False)
    for axis, (title, labels, series) in zip(axes[:, 0], panels):
        bar = 0.8 / len(series)
        shown = [1.0]
        for s, (name, values) in enumerate(series.items()):
            ys = [v or math.nan for v in values]
            xs = [i + (s - (len(series) - 1) / 2) * bar for i in range(len(labels))]
            axis.bar(xs, [y - 1.0 for y in ys], bottom=1.0, width=bar, label=name)
            shown += [y for y in ys if not math.isnan(y)]
        axis.axhline(1.0, color="black", linewidth=1)
        axis.set_yscale("log")
        axis.set_ylim(min(shown) / 1.5, max(shown) * 1.5)
        axis.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        axis.yaxis.set_minor_formatter(ticker.NullFormatter())
        axis.set_xticks(range(len(labels)))
        axis.set_xticklabels(labels, fontsize="x-small", rotation=90 if len(labels) > 12 else 0)
        axis.set_title(title, fontsize="medium")
        axis.set_ylabel("above 1x: the script\n(default build) is faster", fontsize="small")
        axis.legend(loc="best", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


__all__ = ["NAMES", "README_SPMM", "SPECS", "Results", "run", "tables", "write_plot"]
