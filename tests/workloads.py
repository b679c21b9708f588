"""Workload fixtures: script path, parameters, input generators and NumPy/SciPy references.

Each entry of ``WORKLOADS`` names a stage-I script (``examples/``, ``tests/scripts/``, ``tests/transforms/scripts/``) and gives:

- ``params``: the function's parameters in signature order;
- ``outputs``: the parameters the kernel writes;
- ``make_inputs(rng, case)``: keyword arguments by parameter name;
- ``reference(inputs)``: the expected final value of every output, computed independently of
  sparsetir (float64 accumulation, cast to the output dtype).

Input conventions:

- Structure arrays (``indptr*``, ``indices*``) are 1-D int32; column indices are sorted and free of
  duplicates within each segment.
- Value arrays are laid out in position space: one dimension per axis of the buffer, except that
  a variable axis (dense or sparse) has a single dimension of size nnz that replaces the
  dimensions of all axes before it. So a CSR matrix is ``csr.data`` (nnz,), a BSR matrix
  (nnzb, b, b), an ELL matrix (m, nnz_cols), a ragged (I, J, K) tensor (nnz, feat), and a dense
  (n, feat) buffer stays 2-D.
- Outputs whose every element is written (all with ``T.init``, plus elementwise stores) are
  NaN-filled, so a missing write shows; outputs only partly written or accumulated without init
  are zero-filled, and the reference starts from their initial value.
- Scalars are Python ints.

``case`` is one of ``CASES``:

- ``random``: random segment lengths, some of them empty;
- ``empty_rows``: top-level segments empty, always including the first and the last;
- ``single_row``: one top-level segment;
- ``long_rows``: one segment of ``LONG`` (>= 500) entries;
- ``empty_segments``: empty segments at every level of the format (for two-level formats this is
  the same as ``empty_rows``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp

SCRIPTS = Path(__file__).parent / "scripts"
CASES = ("random", "empty_rows", "single_row", "long_rows", "empty_segments")
LONG = 600

Inputs = dict[str, object]


@dataclasses.dataclass(frozen=True)
class Workload:
    """A stage-I fixture script with its inputs and its reference semantics."""

    path: Path
    function: str
    params: tuple[str, ...]
    outputs: tuple[str, ...]
    make_inputs: Callable[[np.random.Generator, str], Inputs]
    reference: Callable[[Inputs], dict[str, np.ndarray]]
    cases: tuple[str, ...] = CASES


# ---------------------------------------------------------------------------------------------
# Generators


def _values(rng, *shape):
    """Random float32 values in [-1, 1)."""
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _nan(*shape):
    """A NaN-filled float32 output."""
    return np.full(shape, np.nan, dtype=np.float32)


def _zeros(*shape):
    """A zero-filled float32 output."""
    return np.zeros(shape, dtype=np.float32)


def _lengths(rng, count, mode, hi):
    """Segment lengths for one level of a format.

    ``mode`` is a case name or ``"nonempty"``; ``hi`` bounds the ordinary lengths.
    """
    if mode in ("random", "long_rows"):
        lengths = rng.integers(0, hi + 1, size=count)
    else:
        lengths = rng.integers(1, hi + 1, size=count)
    if mode in ("empty_rows", "empty_segments") and count > 0:
        empty = rng.random(count) < 0.3
        empty[[0, -1]] = True
        empty[count // 2] = count < 3  # keep one segment non-empty
        lengths[empty] = 0
    if mode == "long_rows" and count > 0:
        lengths[count // 2] = LONG
    return lengths


def _indptr(lengths):
    """Offsets of segments of the given lengths."""
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def _compressed(rng, lengths, extent, lo=0):
    """indptr and sorted, duplicate-free indices in [lo, extent) for the given segment lengths."""
    segments = [np.sort(rng.choice(extent - lo, size=k, replace=False)) + lo for k in lengths]
    indices = np.concatenate(segments + [np.zeros(0, dtype=np.int64)]).astype(np.int32)
    return _indptr(lengths), indices


def _max_len(lengths):
    """The declared maximum segment length (at least 1)."""
    return max(int(np.max(lengths, initial=0)), 1)


def _row_ids(indptr):
    """The segment number of every position."""
    return np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _csr_matrix(values, indptr, indices, shape):
    """A float64 scipy CSR matrix from structure arrays and stored values."""
    return sp.csr_matrix((_f64(values), indices, indptr), shape=shape)


# (m, n, max row length, feat)
_CSR_SHAPES = {
    "random": (37, 29, 10, 19),
    "empty_rows": (40, 31, 12, 8),
    "single_row": (1, 53, 20, 5),
    "long_rows": (9, 700, 12, 4),
    "empty_segments": (24, 20, 8, 6),
}


def _csr(rng, case):
    """A canonical CSR pattern for the case: (m, n, feat, indptr, indices)."""
    m, n, hi, feat = _CSR_SHAPES[case]
    indptr, indices = _compressed(rng, _lengths(rng, m, case, hi), n)
    return m, n, feat, indptr, indices


def _block_pattern(indptr, indices, m, block):
    """The blocks of a CSR pattern at the given block size: (indptr, indices) of block columns."""
    mb = -(-m // block)
    block_rows = _row_ids(indptr) // block
    block_cols = indices.astype(np.int64) // block
    pairs = np.unique(block_rows * (1 << 32) + block_cols)
    rows, cols = pairs >> 32, pairs & ((1 << 32) - 1)
    return _indptr(np.bincount(rows, minlength=mb)), cols.astype(np.int32)


# ---------------------------------------------------------------------------------------------
# CSR SpMM family: csr_spmm, csr_spmm_detached, RFC csrmm


def spmm_inputs(rng, case):
    """A CSR matrix A (m, n), a dense B (n, feat); output c (m, feat)."""
    m, n, feat, indptr, indices = _csr(rng, case)
    return dict(
        a=_values(rng, len(indices)), b=_values(rng, n, feat), c=_nan(m, feat),
        indptr=indptr, indices=indices, m=m, n=n, feat_size=feat, nnz=len(indices),
    )


def spmm_reference(inp):
    """c = A @ B."""
    A = _csr_matrix(inp["a"], inp["indptr"], inp["indices"], (inp["m"], inp["n"]))
    return {"c": _f32(A @ _f64(inp["b"]))}


# ---------------------------------------------------------------------------------------------
# SDDMM family: sddmm, sddmm_fused, RFC sddmm


def sddmm_inputs(rng, case):
    """Dense A (m, feat), B (n, feat), a CSR X; output y with X's pattern."""
    m, n, feat, indptr, indices = _csr(rng, case)
    nnz = len(indices)
    return dict(
        a=_values(rng, m, feat), b=_values(rng, n, feat), x=_values(rng, nnz), y=_nan(nnz),
        indptr=indptr, indices=indices, m=m, n=n, feat_size=feat, nnz=nnz,
    )


def sddmm_reference(inp):
    """y[p] = x[p] * dot(A[row(p)], B[col(p)]) for every stored position p."""
    rows, cols = _row_ids(inp["indptr"]), inp["indices"]
    dots = np.einsum("pk,pk->p", _f64(inp["a"])[rows], _f64(inp["b"])[cols])
    return {"y": _f32(_f64(inp["x"]) * dots)}


# ---------------------------------------------------------------------------------------------
# Other CSR kernels


def rowsum_inputs(rng, case):
    """A CSR matrix; output b (m,)."""
    m, n, _, indptr, indices = _csr(rng, case)
    return dict(
        a=_values(rng, len(indices)), b=_nan(m), indptr=indptr, indices=indices,
        m=m, n=n, nnz=len(indices),
    )


def rowsum_reference(inp):
    """b = A.sum(axis=1)."""
    A = _csr_matrix(inp["a"], inp["indptr"], inp["indices"], (inp["m"], inp["n"]))
    return {"b": _f32(np.asarray(A.sum(axis=1)).ravel())}


def elementwise_inputs(rng, case):
    """A CSR matrix; output b with the same pattern."""
    m, n, _, indptr, indices = _csr(rng, case)
    nnz = len(indices)
    return dict(
        a=_values(rng, nnz), b=_nan(nnz), indptr=indptr, indices=indices, m=m, n=n, nnz=nnz,
    )


def elementwise_reference(inp):
    """b = a * 2 + 1 on the stored entries."""
    return {"b": _f32(_f64(inp["a"]) * 2.0 + 1.0)}


# ---------------------------------------------------------------------------------------------
# Two sparse operands co-iterated (T.intersect / T.union): csr_multiply, csr_add, csr_row_dot


def _keys(indptr, indices, n):
    """Every stored (row, column) as one sorted int64 key, row * n + column."""
    return _row_ids(indptr).astype(np.int64) * n + indices


def _from_keys(keys, m, n):
    """indptr and indices of the pattern of sorted, distinct keys."""
    return _indptr(np.bincount(keys // n, minlength=m)), (keys % n).astype(np.int32)


def _values_at(values, indptr, indices, n, keys):
    """A matrix's stored values at the given keys, 0 where it stores none."""
    own = _keys(indptr, indices, n)
    pos = np.minimum(np.searchsorted(own, keys), max(len(own) - 1, 0))
    hit = own[pos] == keys if len(own) else np.zeros(len(keys), bool)
    return np.where(hit, _f64(values)[pos] if len(own) else 0.0, 0.0)


def pair_inputs(rng, case, output="intersection"):
    """Two CSR matrices A, B of one shape sharing about half of A's entries, and the output:
    ``c`` over the ``"intersection"`` or ``"union"`` of their patterns, or ``"rows"``: ``out``,
    one value per row."""
    m, n, _, indptr_a, indices_a = _csr(rng, case)
    _, _, _, indptr_r, indices_r = _csr(rng, case)
    keys_a = _keys(indptr_a, indices_a, n)
    kept = keys_a[rng.random(len(keys_a)) < 0.5]
    keys_b = np.union1d(kept, _keys(indptr_r, indices_r, n))
    indptr_b, indices_b = _from_keys(keys_b, m, n)
    a, b = _values(rng, len(indices_a)), _values(rng, len(indices_b))
    operands = dict(indptr_a=indptr_a, indices_a=indices_a, indptr_b=indptr_b, indices_b=indices_b)
    sizes = dict(m=m, n=n, nnz_a=len(indices_a), nnz_b=len(indices_b))
    if output == "rows":
        return dict(a=a, b=b, out=_nan(m), **operands, **sizes)
    merged = np.intersect1d(keys_a, keys_b) if output == "intersection" else np.union1d(keys_a, keys_b)
    indptr_c, indices_c = _from_keys(merged, m, n)
    return dict(a=a, b=b, c=_nan(len(indices_c)), **operands, indptr_c=indptr_c, indices_c=indices_c, **sizes,
                nnz_c=len(indices_c))


def _pair_at(inp, keys):
    n = inp["n"]
    a = _values_at(inp["a"], inp["indptr_a"], inp["indices_a"], n, keys)
    b = _values_at(inp["b"], inp["indptr_b"], inp["indices_b"], n, keys)
    return a, b


def multiply_reference(inp):
    """c = A * B at every entry of C's pattern."""
    a, b = _pair_at(inp, _keys(inp["indptr_c"], inp["indices_c"], inp["n"]))
    return {"c": _f32(a * b)}


def add_reference(inp):
    """c = A + B at every entry of C's pattern (a matrix without an entry there counts 0)."""
    a, b = _pair_at(inp, _keys(inp["indptr_c"], inp["indices_c"], inp["n"]))
    return {"c": _f32(a + b)}


def spgemm_masked_inputs(rng, case):
    """A (m, k) and B (k, n) in CSR, and C's pattern: half of A @ B's entries and as many outside
    it (where C stays 0); c is zeroed by the kernel (NaN-filled here)."""
    m, k, _, indptr_a, indices_a = _csr(rng, case)
    n = max(k // 2, 1)
    _, _, _, indptr_b, indices_b = _csr(rng, case)
    rows_b = min(len(indptr_b) - 1, k)
    lengths_b = np.diff(indptr_b)[:rows_b]
    lengths_b = np.concatenate([lengths_b, np.zeros(k - rows_b, lengths_b.dtype)])
    indptr_b = _indptr(lengths_b)
    indices_b = indices_b[:indptr_b[-1]] % n
    keys = np.unique(_row_ids(indptr_b).astype(np.int64) * n + indices_b)  # B's rows, sorted, no repeats
    indptr_b, indices_b = _from_keys(keys, k, n)
    a = sp.csr_matrix((np.ones(len(indices_a)), indices_a, indptr_a), shape=(m, k))
    b = sp.csr_matrix((np.ones(len(indices_b)), indices_b, indptr_b), shape=(k, n))
    product = (a @ b).tocoo()
    reached = product.row.astype(np.int64) * n + product.col
    chosen = reached[rng.random(len(reached)) < 0.5]
    others = rng.integers(0, m * n, size=len(chosen)) if m * n else np.zeros(0, np.int64)
    indptr_c, indices_c = _from_keys(np.union1d(chosen, others), m, n)
    return dict(a=_values(rng, len(indices_a)), b=_values(rng, len(indices_b)), c=_nan(len(indices_c)),
                indptr_a=indptr_a, indices_a=indices_a, indptr_b=indptr_b, indices_b=indices_b,
                indptr_c=indptr_c, indices_c=indices_c, m=m, k=k, n=n, nnz_a=len(indices_a),
                nnz_b=len(indices_b), nnz_c=len(indices_c))


def spgemm_masked_reference(inp):
    """c = (A @ B) at every entry of C's pattern, 0 where no product lands."""
    m, k, n = inp["m"], inp["k"], inp["n"]
    a = sp.csr_matrix((_f64(inp["a"]), inp["indices_a"], inp["indptr_a"]), shape=(m, k))
    b = sp.csr_matrix((_f64(inp["b"]), inp["indices_b"], inp["indptr_b"]), shape=(k, n))
    product = (a @ b).tocsr()
    rows = _row_ids(inp["indptr_c"])
    return {"c": _f32(np.asarray(product[rows, inp["indices_c"]]).ravel() if len(rows) else np.zeros(0))}


def row_dot_reference(inp):
    """out[i] = the dot product of row i of A and row i of B."""
    n = inp["n"]
    both = np.intersect1d(_keys(inp["indptr_a"], inp["indices_a"], n), _keys(inp["indptr_b"], inp["indices_b"], n))
    a, b = _pair_at(inp, both)
    return {"out": _f32(np.bincount(both // n, weights=a * b, minlength=inp["m"]))}


def softmax_inputs(rng, case):
    """A CSR matrix with values in [-4, 4); output b with the same pattern."""
    inp = elementwise_inputs(rng, case)
    inp["a"] = (inp["a"] * 4.0).astype(np.float32)
    return inp


def softmax_reference(inp):
    """Softmax over the stored entries of each row."""
    a, indptr = _f64(inp["a"]), inp["indptr"]
    b = np.empty_like(a)
    for start, end in zip(indptr[:-1], indptr[1:]):
        if end > start:
            e = np.exp(a[start:end] - a[start:end].max())
            b[start:end] = e / e.sum()
    return {"b": _f32(b)}


def csr_to_bsr_inputs(rng, case):
    """A CSR matrix and the 4x4 block pattern covering it; output b (nnzb, 4, 4), zero-filled."""
    m, n, _, indptr, indices = _csr(rng, case)
    indptr_b, indices_b = _block_pattern(indptr, indices, m, 4)
    nnzb = len(indices_b)
    return dict(
        a=_values(rng, len(indices)), b=_zeros(nnzb, 4, 4), indptr=indptr, indices=indices,
        indptr_b=indptr_b, indices_b=indices_b, m=m, n=n, nnz=len(indices),
        mb=-(-m // 4), nb=-(-n // 4), nnzb=nnzb,
    )


def csr_to_bsr_reference(inp):
    """Stored blocks take the matching 4x4 tile of A; entries A does not store keep b's value."""
    m, n, mb, nb = inp["m"], inp["n"], inp["mb"], inp["nb"]
    dense = np.zeros((mb * 4, nb * 4))
    stored = np.zeros((mb * 4, nb * 4), dtype=bool)
    A = _csr_matrix(inp["a"], inp["indptr"], inp["indices"], (m, n))
    dense[:m, :n] = A.toarray()
    pattern = _csr_matrix(np.ones(inp["nnz"]), inp["indptr"], inp["indices"], (m, n))
    stored[:m, :n] = pattern.toarray() > 0
    tiles = dense.reshape(mb, 4, nb, 4).transpose(0, 2, 1, 3)
    masks = stored.reshape(mb, 4, nb, 4).transpose(0, 2, 1, 3)
    rows, cols = _row_ids(inp["indptr_b"]), inp["indices_b"]
    b = np.where(masks[rows, cols], tiles[rows, cols], _f64(inp["b"]))
    return {"b": _f32(b)}


# ---------------------------------------------------------------------------------------------
# ELL and BSR


# (m, n, max row length, feat)
_ELL_SHAPES = {
    "random": (19, 23, 6, 7),
    "empty_rows": (21, 17, 5, 4),
    "single_row": (1, 30, 9, 5),
    "long_rows": (9, 700, 5, 3),
    "empty_segments": (16, 12, 4, 6),
}


def ell_inputs(rng, case):
    """ELL with nnz_cols = the longest row; shorter rows are padded with zeros at unused columns."""
    m, n, hi, feat = _ELL_SHAPES[case]
    lengths = _lengths(rng, m, case, hi)
    nnz_cols = _max_len(lengths)
    indices = np.empty((m, nnz_cols), dtype=np.int32)
    a = np.zeros((m, nnz_cols), dtype=np.float32)
    for i, k in enumerate(lengths):
        cols = rng.choice(n, size=nnz_cols, replace=False)  # the first k are real, the rest padding
        vals = np.concatenate([_values(rng, k), np.zeros(nnz_cols - k, dtype=np.float32)])
        order = np.argsort(cols)
        indices[i], a[i] = cols[order], vals[order]
    return dict(
        a=a, b=_values(rng, n, feat), c=_nan(m, feat), indices=indices.ravel(),
        m=m, n=n, nnz_cols=nnz_cols, feat_size=feat,
    )


def ell_reference(inp):
    """c = A @ B, A rebuilt as CSR with nnz_cols entries per row."""
    m, c = inp["m"], inp["nnz_cols"]
    indptr = np.arange(0, m * c + 1, c)
    A = _csr_matrix(inp["a"].ravel(), indptr, inp["indices"], (m, inp["n"]))
    return {"c": _f32(A @ _f64(inp["b"]))}


# (block rows, block cols, max blocks per block row, feat)
_BSR_SHAPES = {
    "random": (7, 9, 4, 6),
    "empty_rows": (8, 7, 4, 5),
    "single_row": (1, 11, 5, 4),
    "long_rows": (3, 650, 4, 3),
    "empty_segments": (6, 5, 3, 4),
}


def _bsr(rng, case):
    """A canonical block pattern: (block rows, block cols, feat, indptr, indices)."""
    rows, cols, hi, feat = _BSR_SHAPES[case]
    indptr, indices = _compressed(rng, _lengths(rng, rows, case, hi), cols)
    return rows, cols, feat, indptr, indices


def bsr_spmm_inputs(rng, case):
    """BSR A with 4x4 blocks, dense B (nb * 4, feat); output c (mb * 4, feat)."""
    mb, nb, feat, indptr, indices = _bsr(rng, case)
    nnzb = len(indices)
    return dict(
        a=_values(rng, nnzb, 4, 4), b=_values(rng, nb * 4, feat), c=_nan(mb * 4, feat),
        indptr=indptr, indices=indices, mb=mb, nb=nb, nnzb=nnzb, feat_size=feat,
    )


def bsr_spmm_reference(inp):
    """c = A @ B."""
    shape = (inp["mb"] * 4, inp["nb"] * 4)
    A = sp.bsr_matrix((_f64(inp["a"]), inp["indices"], inp["indptr"]), shape=shape)
    return {"c": _f32(A @ _f64(inp["b"]))}


_RFC_BLK = {"random": 4, "empty_rows": 2, "single_row": 3, "long_rows": 1, "empty_segments": 4}


def rfc_bsrmm_inputs(rng, case):
    """The RFC's bsrmm: nb block rows, mb block cols; b (mb, blk, feat), c (nb, blk, feat)."""
    nb, mb, feat, indptr, indices = _bsr(rng, case)
    blk, nnzb = _RFC_BLK[case], len(indices)
    return dict(
        a=_values(rng, nnzb, blk, blk), b=_values(rng, mb, blk, feat), c=_nan(nb, blk, feat),
        indptr=indptr, indices=indices, nb=nb, mb=mb, nnzb=nnzb, blk=blk, feat_size=feat,
    )


def rfc_bsrmm_reference(inp):
    """C[i, bi, f] = sum over stored blocks j and bj of A[i, j, bi, bj] * B[j, bj, f]."""
    nb, mb, blk, feat = inp["nb"], inp["mb"], inp["blk"], inp["feat_size"]
    A = sp.bsr_matrix((_f64(inp["a"]), inp["indices"], inp["indptr"]), shape=(nb * blk, mb * blk))
    c = A @ _f64(inp["b"]).reshape(mb * blk, feat)
    return {"c": _f32(c.reshape(nb, blk, feat))}


# (m, n, max row length, feat); m and n are multiples of 32 so every block lies inside A
_COMPOSABLE_SHAPES = {
    "random": (64, 96, 12, 5),
    "empty_rows": (64, 64, 10, 4),
    "long_rows": (32, 640, 10, 3),
    "empty_segments": (96, 64, 8, 3),
}
_COMPOSABLE_BLOCKS = (4, 16, 32)


def composable_inputs(rng, case):
    """A CSR A, dense B, and BSR 4/16/32 patterns each covering A; outputs c and a_4/a_16/a_32."""
    m, n, hi, feat = _COMPOSABLE_SHAPES[case]
    indptr, indices = _compressed(rng, _lengths(rng, m, case, hi), n)
    inp = dict(
        a=_values(rng, len(indices)), b=_values(rng, n, feat), c=_nan(m, feat),
        indptr=indptr, indices=indices, m=m, n=n, feat_size=feat, nnz=len(indices),
    )
    for block in _COMPOSABLE_BLOCKS:
        indptr_x, indices_x = _block_pattern(indptr, indices, m, block)
        inp.update({
            f"a_{block}": _nan(len(indices_x), block, block), f"indptr_{block}": indptr_x,
            f"indices_{block}": indices_x, f"m_{block}": m // block, f"n_{block}": n // block,
            f"nnz_{block}": len(indices_x),
        })
    return inp


def composable_reference(inp):
    """c = A @ B; a_X holds A's X-by-X tiles at the stored blocks (zeros where A stores nothing)."""
    m, n = inp["m"], inp["n"]
    dense = _csr_matrix(inp["a"], inp["indptr"], inp["indices"], (m, n)).toarray()
    out = {"c": _f32(dense @ _f64(inp["b"]))}
    for x in _COMPOSABLE_BLOCKS:
        tiles = dense.reshape(m // x, x, n // x, x).transpose(0, 2, 1, 3)
        out[f"a_{x}"] = _f32(tiles[_row_ids(inp[f"indptr_{x}"]), inp[f"indices_{x}"]])
    return out


# ---------------------------------------------------------------------------------------------
# Ragged and CSF


# (m, max segment length, feat)
_SEGMENT_SHAPES = {
    "random": (23, 9, 7),
    "empty_rows": (20, 6, 5),
    "single_row": (1, 12, 4),
    "long_rows": (7, 8, 3),
    "empty_segments": (15, 5, 6),
}


def segment_inputs(rng, case):
    """A ragged x (nnz, feat) with m segments; output out (m, feat)."""
    m, hi, feat = _SEGMENT_SHAPES[case]
    lengths = _lengths(rng, m, case, hi)
    nnz = int(lengths.sum())
    return dict(
        x=_values(rng, nnz, feat), out=_nan(m, feat), indptr=_indptr(lengths),
        m=m, max_len=_max_len(lengths), feat_size=feat, nnz=nnz,
    )


def segment_reference(inp):
    """out[i] = sum of the rows of x in segment i."""
    out = np.zeros((inp["m"], inp["feat_size"]))
    np.add.at(out, _row_ids(inp["indptr"]), _f64(inp["x"]))
    return {"out": _f32(out)}


def _two_level_modes(case):
    """Length modes (outer level, inner level) for a three-level format."""
    return {
        "random": ("random", "random"),
        "empty_rows": ("empty_rows", "random"),
        "single_row": ("single_row", "random"),
        "long_rows": ("nonempty", "long_rows"),
        "empty_segments": ("empty_segments", "empty_segments"),
    }[case]


# (m, n, p, max J per row, max K per fiber)
_CSF_SHAPES = {
    "random": (11, 9, 7, 5, 4),
    "empty_rows": (12, 8, 6, 4, 4),
    "single_row": (1, 10, 8, 6, 5),
    "long_rows": (5, 6, 700, 3, 3),
    "empty_segments": (10, 8, 6, 4, 4),
}


def csf_inputs(rng, case):
    """A CSF tensor (dense I, compressed J, compressed K); output out (m,)."""
    m, n, p, hi_j, hi_k = _CSF_SHAPES[case]
    outer, inner = _two_level_modes(case)
    indptr_j, indices_j = _compressed(rng, _lengths(rng, m, outer, hi_j), n)
    indptr_k, indices_k = _compressed(rng, _lengths(rng, len(indices_j), inner, hi_k), p)
    return dict(
        a=_values(rng, len(indices_k)), out=_nan(m), indptr_j=indptr_j, indices_j=indices_j,
        indptr_k=indptr_k, indices_k=indices_k, m=m, n=n, p=p,
        nnz_j=len(indices_j), nnz_k=len(indices_k),
    )


def csf_reference(inp):
    """out[i] = sum of the values stored under row i."""
    row_of_k = _row_ids(inp["indptr_j"])[_row_ids(inp["indptr_k"])]
    out = np.bincount(row_of_k, weights=_f64(inp["a"]), minlength=inp["m"])
    return {"out": _f32(out)}


# (m, max J per row, max K per J, feat)
_RAGGED4_SHAPES = {
    "random": (9, 5, 4, 3),
    "empty_rows": (10, 4, 4, 2),
    "single_row": (1, 5, 5, 4),
    "long_rows": (5, 3, 3, 3),
    "empty_segments": (8, 4, 3, 3),
}


def ragged4_inputs(rng, case):
    """A 4-D ragged x (nnz_k, feat): J ragged under I, K ragged under J; output out (m, feat)."""
    m, hi_j, hi_k, feat = _RAGGED4_SHAPES[case]
    outer, inner = _two_level_modes(case)
    lengths_j = _lengths(rng, m, outer, hi_j)
    lengths_k = _lengths(rng, int(lengths_j.sum()), inner, hi_k)
    return dict(
        x=_values(rng, int(lengths_k.sum()), feat), out=_nan(m, feat),
        indptr_j=_indptr(lengths_j), indptr_k=_indptr(lengths_k), m=m,
        max_j=_max_len(lengths_j), max_k=_max_len(lengths_k), feat_size=feat,
        nnz_j=int(lengths_j.sum()), nnz_k=int(lengths_k.sum()),
    )


def ragged4_reference(inp):
    """out[i] = sum of the rows of x stored under i."""
    row_of_k = _row_ids(inp["indptr_j"])[_row_ids(inp["indptr_k"])]
    out = np.zeros((inp["m"], inp["feat_size"]))
    np.add.at(out, row_of_k, _f64(inp["x"]))
    return {"out": _f32(out)}


# Fused iterations over three or more axes (tests/transforms/scripts)

_T = Path(__file__).resolve().parent / "transforms" / "scripts"


def csf_fuse3_inputs(rng, case):
    """A CSF tensor a (dense I, compressed J, compressed K) and an output b of the same structure."""
    inputs = csf_inputs(rng, case)
    del inputs["out"]
    return {"a": inputs.pop("a"), "b": _nan(inputs["nnz_k"]), **inputs}


def csf_fuse3_reference(inp):
    """b[i, j, k] = 2 a[i, j, k] + 100 i + 10 j + k at every stored (i, j, k)."""
    pos_j = _row_ids(inp["indptr_k"])  # the J position of every K position
    i = _row_ids(inp["indptr_j"])[pos_j]
    j, k = inp["indices_j"][pos_j], inp["indices_k"]
    return {"b": _f32(2 * _f64(inp["a"]) + (100 * i + 10 * j + k).astype(np.float32))}


def _chain_lengths(rng, m, case, his):
    """Segment lengths of a chain of variable axes under m rows (the case shapes the outer two)."""
    outer, inner = _two_level_modes(case)
    lengths = [_lengths(rng, m, outer, his[0])]
    for hi in his[1:]:
        lengths.append(_lengths(rng, int(lengths[-1].sum()), inner, hi))
    return lengths


# (rows, max J per row, max K per J, max M per K, feat)
_RAGGED5_SHAPES = {
    "random": (7, 4, 3, 3, 3),
    "empty_rows": (8, 3, 3, 3, 2),
    "single_row": (1, 4, 4, 3, 2),
    "long_rows": (4, 3, 3, 2, 3),
    "empty_segments": (8, 3, 3, 3, 2),
}


def ragged_fuse3_inputs(rng, case):
    """A 5-D ragged x (nnz_m, feat): J, K, M each ragged under the axis before; out (rows, feat)."""
    rows, hi_j, hi_k, hi_m, feat = _RAGGED5_SHAPES[case]
    lj, lk, lm = _chain_lengths(rng, rows, case, (hi_j, hi_k, hi_m))
    return dict(
        x=_values(rng, int(lm.sum()), feat), out=_nan(rows, feat),
        indptr_j=_indptr(lj), indptr_k=_indptr(lk), indptr_m=_indptr(lm), rows=rows,
        max_j=_max_len(lj), max_k=_max_len(lk), max_m=_max_len(lm), feat_size=feat,
        nnz_j=int(lj.sum()), nnz_k=int(lk.sum()), nnz_m=int(lm.sum()),
    )


def ragged_fuse3_reference(inp):
    """out[i] = sum of the rows of x stored under i."""
    row = _row_ids(inp["indptr_j"])[_row_ids(inp["indptr_k"])][_row_ids(inp["indptr_m"])]
    out = np.zeros((inp["rows"], inp["feat_size"]))
    np.add.at(out, row, _f64(inp["x"]))
    return {"out": _f32(out)}


def fused_rows_inputs(rng, case):
    """A 4-D ragged x (nnz_l,): J, K, L each ragged under the axis before; out ragged (nnz_j,)."""
    m, hi_j, hi_k, hi_l, _ = _RAGGED5_SHAPES[case]
    lj, lk, ll = _chain_lengths(rng, m, case, (hi_j, hi_k, hi_l))
    return dict(
        x=_values(rng, int(ll.sum())), out=_nan(int(lj.sum())),
        indptr_j=_indptr(lj), indptr_k=_indptr(lk), indptr_l=_indptr(ll), m=m,
        max_j=_max_len(lj), max_k=_max_len(lk), max_l=_max_len(ll),
        nnz_j=int(lj.sum()), nnz_k=int(lk.sum()), nnz_l=int(ll.sum()),
    )


def fused_rows_reference(inp):
    """out[(i, j)] = sum of the values of x stored under the (i, j) position."""
    pos_j = _row_ids(inp["indptr_k"])[_row_ids(inp["indptr_l"])]
    return {"out": _f32(np.bincount(pos_j, weights=_f64(inp["x"]), minlength=inp["nnz_j"]))}


# ---------------------------------------------------------------------------------------------
# Graph kernels


def rgcn_homo_inputs(rng, case):
    """A CSR graph whose edges carry relation types; output y (m, feat_out)."""
    m, n, feat_in, indptr, indices = _csr(rng, case)
    nnz, num_rel, feat_out = len(indices), 3, 5
    return dict(
        a=_values(rng, nnz), etype=rng.integers(0, num_rel, size=nnz).astype(np.int32),
        w=_values(rng, num_rel, feat_in, feat_out), x=_values(rng, n, feat_in),
        y=_nan(m, feat_out), indptr=indptr, indices=indices, m=m, n=n, num_rel=num_rel,
        feat_in=feat_in, feat_out=feat_out, nnz=nnz,
    )


def rgcn_homo_reference(inp):
    """y = sum over relations r of A_r @ X @ W[r], A_r the edges of type r."""
    y = np.zeros((inp["m"], inp["feat_out"]))
    x, w = _f64(inp["x"]), _f64(inp["w"])
    for r in range(inp["num_rel"]):
        values = np.where(inp["etype"] == r, _f64(inp["a"]), 0.0)
        A_r = _csr_matrix(values, inp["indptr"], inp["indices"], (inp["m"], inp["n"]))
        y += A_r @ x @ w[r]
    return {"y": _f32(y)}


# (num_rel, n, max rows per relation, max cols per row, feat_in, feat_out)
_HETERO_SHAPES = {
    "random": (3, 15, 8, 5, 6, 5),
    "empty_rows": (4, 14, 6, 5, 4, 3),
    "single_row": (1, 12, 6, 5, 3, 4),
    "long_rows": (2, 650, 5, 4, 3, 2),
    "empty_segments": (4, 13, 6, 5, 4, 3),
}


def rgcn_hetero_inputs(rng, case):
    """One DCSR adjacency per relation (R dense, I and J compressed); output y (n, feat_out)."""
    num_rel, n, hi_i, hi_j, feat_in, feat_out = _HETERO_SHAPES[case]
    outer, inner = _two_level_modes(case)
    inner = "nonempty" if inner == "random" else inner  # DCSR stores only rows with entries
    indptr_i, indices_i = _compressed(rng, _lengths(rng, num_rel, outer, hi_i), n)
    indptr_j, indices_j = _compressed(rng, _lengths(rng, len(indices_i), inner, hi_j), n)
    return dict(
        a=_values(rng, len(indices_j)), w=_values(rng, num_rel, feat_in, feat_out),
        x=_values(rng, n, feat_in), y=_zeros(n, feat_out), indptr_i=indptr_i,
        indices_i=indices_i, indptr_j=indptr_j, indices_j=indices_j, num_rel=num_rel, n=n,
        feat_in=feat_in, feat_out=feat_out, nnz_i=len(indices_i), nnz_j=len(indices_j),
    )


def rgcn_hetero_reference(inp):
    """y = y0 + sum over relations r of A_r @ X @ W[r]."""
    n = inp["n"]
    rel_of_row = _row_ids(inp["indptr_i"])
    row_of_entry = _row_ids(inp["indptr_j"])
    dest = inp["indices_i"][row_of_entry]
    y, x, w = _f64(inp["y"]).copy(), _f64(inp["x"]), _f64(inp["w"])
    for r in range(inp["num_rel"]):
        mine = rel_of_row[row_of_entry] == r
        A_r = sp.coo_matrix((_f64(inp["a"])[mine], (dest[mine], inp["indices_j"][mine])), (n, n))
        y += A_r.tocsr() @ x @ w[r]
    return {"y": _f32(y)}


# (vertices, hyperedges, max hyperedges per vertex, feat)
_HYPER_SHAPES = {
    "random": (23, 11, 4, 5),
    "empty_rows": (20, 9, 4, 4),
    "single_row": (1, 6, 4, 3),
    "long_rows": (12, 650, 5, 3),
    "empty_segments": (18, 10, 4, 4),
}


def hypergraph_inputs(rng, case):
    """An incidence matrix as vertex->hyperedges (E) and hyperedge->vertices (U); output y."""
    num_v, num_e, hi, feat = _HYPER_SHAPES[case]
    lengths = _lengths(rng, num_v, case, hi)
    if case == "empty_segments":  # hyperedges 0 and num_e - 1 have no vertices
        indptr_e, indices_e = _compressed(rng, lengths, num_e - 1, lo=1)
    else:
        indptr_e, indices_e = _compressed(rng, lengths, num_e)
    incidence = sp.csr_matrix((np.ones(len(indices_e)), indices_e, indptr_e), (num_v, num_e))
    transposed = incidence.T.tocsr()
    transposed.sort_indices()
    return dict(
        x=_values(rng, num_v, feat), y=_nan(num_v, feat), indptr_e=indptr_e, indices_e=indices_e,
        indptr_u=transposed.indptr.astype(np.int32), indices_u=transposed.indices.astype(np.int32),
        num_vertices=num_v, num_edges=num_e, feat_size=feat,
        nnz_e=len(indices_e), nnz_u=len(transposed.indices),
    )


def hypergraph_reference(inp):
    """y = H @ (G @ X), H vertex->hyperedge and G hyperedge->vertex incidence as given."""
    num_v, num_e = inp["num_vertices"], inp["num_edges"]
    H = _csr_matrix(np.ones(inp["nnz_e"]), inp["indptr_e"], inp["indices_e"], (num_v, num_e))
    G = _csr_matrix(np.ones(inp["nnz_u"]), inp["indptr_u"], inp["indices_u"], (num_e, num_v))
    return {"y": _f32(H @ (G @ _f64(inp["x"])))}


# ---------------------------------------------------------------------------------------------
# Batched ragged matmul


# (batch, max rows, max inner, max cols)
_BATCH_SHAPES = {
    "random": (5, 6, 5, 4),
    "empty_rows": (6, 5, 4, 4),
    "single_row": (1, 4, 5, 3),
    "long_rows": (3, 4, 4, 4),
    "empty_segments": (6, 4, 4, 4),
}


def batched_inputs(rng, case):
    """Per batch b: X[b] (rows_b, inner_b), Y[b] (inner_b, cols_b); output z holds each Z[b]."""
    batch, hi_i, hi_j, hi_k = _BATCH_SHAPES[case]
    rows = _lengths(rng, batch, "empty_rows" if case == "empty_rows" else "nonempty", hi_i)
    inner = _lengths(rng, batch, "long_rows" if case == "long_rows" else "nonempty", hi_j)
    cols = _lengths(rng, batch, "nonempty", hi_k)
    if case == "empty_segments":  # each level empty somewhere, and under a non-empty parent
        rows[[0, -1]] = 0
        inner[[1, -1]] = 0
        cols[[2, -1]] = 0
    nnz_ij, nnz_jk, nnz_ik = (int(v) for v in (rows @ inner, inner @ cols, rows @ cols))
    return dict(
        x=_values(rng, nnz_ij), y=_values(rng, nnz_jk), z=_nan(nnz_ik),
        indptr_i=_indptr(rows), indptr_j=_indptr(inner), indptr_k=_indptr(cols),
        indptr_ij=_indptr(np.repeat(inner, rows)), indptr_jk=_indptr(np.repeat(cols, inner)),
        indptr_ik=_indptr(np.repeat(cols, rows)), batch=batch, max_i=_max_len(rows),
        max_j=_max_len(inner), max_k=_max_len(cols), nnz_i=int(rows.sum()),
        nnz_j=int(inner.sum()), nnz_ij=nnz_ij, nnz_jk=nnz_jk, nnz_ik=nnz_ik,
    )


def batched_reference(inp):
    """Z[b] = X[b] @ Y[b] for every batch."""
    rows, inner, cols = (np.diff(inp[k]) for k in ("indptr_i", "indptr_j", "indptr_k"))
    x, y = _f64(inp["x"]), _f64(inp["y"])
    z = np.empty(inp["nnz_ik"])
    for b in range(inp["batch"]):
        xs = inp["indptr_ij"][inp["indptr_i"][b]]
        ys = inp["indptr_jk"][inp["indptr_j"][b]]
        zs = inp["indptr_ik"][inp["indptr_i"][b]]
        xb = x[xs:xs + rows[b] * inner[b]].reshape(rows[b], inner[b])
        yb = y[ys:ys + inner[b] * cols[b]].reshape(inner[b], cols[b])
        z[zs:zs + rows[b] * cols[b]] = (xb @ yb).ravel()
    return {"z": _f32(z)}


# ---------------------------------------------------------------------------------------------
# The registry

_CSR_PARAMS = ("indptr", "indices")
_PAIR_PARAMS = ("a", "b", "c", "indptr_a", "indices_a", "indptr_b", "indices_b", "indptr_c", "indices_c",
                "m", "n", "nnz_a", "nnz_b", "nnz_c")
_SPMM_PARAMS = ("a", "b", "c", *_CSR_PARAMS, "m", "n", "feat_size", "nnz")
_SDDMM_PARAMS = ("a", "b", "x", "y", *_CSR_PARAMS, "m", "n", "feat_size", "nnz")
_W = Path(__file__).resolve().parents[1] / "examples"
_RFC = SCRIPTS / "rfc"


def _bsr_params(x):
    return (f"a_{x}", f"indptr_{x}", f"indices_{x}", f"m_{x}", f"n_{x}", f"nnz_{x}")


WORKLOADS = {
    "csr_spmm": Workload(
        _W / "csr_spmm.py", "csr_spmm", _SPMM_PARAMS, ("c",), spmm_inputs, spmm_reference
    ),
    "csr_spmm_detached": Workload(
        _W / "csr_spmm_detached.py", "csr_spmm_detached", _SPMM_PARAMS, ("c",),
        spmm_inputs, spmm_reference,
    ),
    "segment_reduce": Workload(
        _W / "segment_reduce.py", "segment_reduce",
        ("x", "out", "indptr", "m", "max_len", "feat_size", "nnz"), ("out",),
        segment_inputs, segment_reference,
    ),
    "csr_rowsum": Workload(
        _W / "csr_rowsum.py", "csr_rowsum", ("a", "b", *_CSR_PARAMS, "m", "n", "nnz"), ("b",),
        rowsum_inputs, rowsum_reference,
    ),
    "bsr_spmm": Workload(
        _W / "bsr_spmm.py", "bsr_spmm",
        ("a", "b", "c", *_CSR_PARAMS, "mb", "nb", "nnzb", "feat_size"), ("c",),
        bsr_spmm_inputs, bsr_spmm_reference,
    ),
    "ell_spmm": Workload(
        _W / "ell_spmm.py", "ell_spmm",
        ("a", "b", "c", "indices", "m", "n", "nnz_cols", "feat_size"), ("c",),
        ell_inputs, ell_reference,
    ),
    "csr_elementwise": Workload(
        _W / "csr_elementwise.py", "csr_elementwise", ("a", "b", *_CSR_PARAMS, "m", "n", "nnz"),
        ("b",), elementwise_inputs, elementwise_reference,
    ),
    "csr_multiply": Workload(
        _W / "csr_multiply.py", "csr_multiply", _PAIR_PARAMS, ("c",), pair_inputs, multiply_reference,
    ),
    "csr_add": Workload(
        _W / "csr_add.py", "csr_add", _PAIR_PARAMS, ("c",),
        lambda rng, case: pair_inputs(rng, case, output="union"), add_reference,
    ),
    "spgemm_masked": Workload(
        _W / "spgemm_masked.py", "spgemm_masked",
        ("a", "b", "c", "indptr_a", "indices_a", "indptr_b", "indices_b", "indptr_c", "indices_c",
         "m", "k", "n", "nnz_a", "nnz_b", "nnz_c"),
        ("c",), spgemm_masked_inputs, spgemm_masked_reference,
    ),
    "csr_row_dot": Workload(
        _W / "csr_row_dot.py", "csr_row_dot",
        ("a", "b", "out", "indptr_a", "indices_a", "indptr_b", "indices_b", "m", "n", "nnz_a", "nnz_b"),
        ("out",), lambda rng, case: pair_inputs(rng, case, output="rows"), row_dot_reference,
    ),
    "sddmm": Workload(
        _W / "sddmm.py", "sddmm", _SDDMM_PARAMS, ("y",), sddmm_inputs, sddmm_reference
    ),
    "sddmm_fused": Workload(
        _W / "sddmm_fused.py", "sddmm_fused", _SDDMM_PARAMS, ("y",), sddmm_inputs, sddmm_reference
    ),
    "csf_reduction": Workload(
        _W / "csf_reduction.py", "csf_reduction",
        ("a", "out", "indptr_j", "indices_j", "indptr_k", "indices_k", "m", "n", "p",
         "nnz_j", "nnz_k"),
        ("out",), csf_inputs, csf_reference,
    ),
    "ragged_fused_reduction": Workload(
        _W / "ragged_fused_reduction.py", "ragged_fused_reduction",
        ("x", "out", "indptr_j", "indptr_k", "m", "max_j", "max_k", "feat_size", "nnz_j",
         "nnz_k"),
        ("out",), ragged4_inputs, ragged4_reference,
    ),
    "rgcn_homogeneous": Workload(
        _W / "rgcn_homogeneous.py", "rgcn_homogeneous",
        ("a", "etype", "w", "x", "y", *_CSR_PARAMS, "m", "n", "num_rel", "feat_in", "feat_out",
         "nnz"),
        ("y",), rgcn_homo_inputs, rgcn_homo_reference,
    ),
    "rgcn_heterogeneous": Workload(
        _W / "rgcn_heterogeneous.py", "rgcn_heterogeneous",
        ("a", "w", "x", "y", "indptr_i", "indices_i", "indptr_j", "indices_j", "num_rel", "n",
         "feat_in", "feat_out", "nnz_i", "nnz_j"),
        ("y",), rgcn_hetero_inputs, rgcn_hetero_reference,
    ),
    "sparse_softmax": Workload(
        _W / "sparse_softmax.py", "sparse_softmax", ("a", "b", *_CSR_PARAMS, "m", "n", "nnz"),
        ("b",), softmax_inputs, softmax_reference,
    ),
    "csr_to_bsr": Workload(
        _W / "csr_to_bsr.py", "csr_to_bsr",
        ("a", "b", *_CSR_PARAMS, "indptr_b", "indices_b", "m", "n", "nnz", "mb", "nb", "nnzb"),
        ("b",), csr_to_bsr_inputs, csr_to_bsr_reference,
    ),
    "hypergraph": Workload(
        _W / "hypergraph.py", "hypergraph",
        ("x", "y", "indptr_e", "indices_e", "indptr_u", "indices_u", "num_vertices",
         "num_edges", "feat_size", "nnz_e", "nnz_u"),
        ("y",), hypergraph_inputs, hypergraph_reference,
    ),
    "batched_ragged_matmul": Workload(
        _W / "batched_ragged_matmul.py", "batched_ragged_matmul",
        ("x", "y", "z", "indptr_i", "indptr_j", "indptr_k", "indptr_ij", "indptr_jk",
         "indptr_ik", "batch", "max_i", "max_j", "max_k", "nnz_i", "nnz_j", "nnz_ij", "nnz_jk",
         "nnz_ik"),
        ("z",), batched_inputs, batched_reference,
    ),
    # T.fuse over three axes, and a fused pair followed by two variable reduction axes.
    "csf_fuse3": Workload(
        _T / "csf_fuse3.py", "csf_scale",
        ("a", "b", "indptr_j", "indices_j", "indptr_k", "indices_k", "m", "n", "p", "nnz_j", "nnz_k"),
        ("b",), csf_fuse3_inputs, csf_fuse3_reference,
    ),
    "ragged_fuse3_reduction": Workload(
        _T / "ragged_fuse3_reduction.py", "ragged_fuse3_reduction",
        ("x", "out", "indptr_j", "indptr_k", "indptr_m", "rows", "max_j", "max_k", "max_m", "feat_size",
         "nnz_j", "nnz_k", "nnz_m"),
        ("out",), ragged_fuse3_inputs, ragged_fuse3_reference,
    ),
    "fused_rows_reduction": Workload(
        _T / "fused_rows_reduction.py", "fused_rows_reduction",
        ("x", "out", "indptr_j", "indptr_k", "indptr_l", "m", "max_j", "max_k", "max_l", "nnz_j", "nnz_k",
         "nnz_l"),
        ("out",), fused_rows_inputs, fused_rows_reference,
    ),
    # The RFC's own computing scripts.
    "rfc_sddmm": Workload(
        _RFC / "sddmm.py", "sddmm", _SDDMM_PARAMS, ("y",), sddmm_inputs, sddmm_reference
    ),
    "rfc_csrmm": Workload(
        _RFC / "csrmm.py", "csrmm", _SPMM_PARAMS, ("c",), spmm_inputs, spmm_reference
    ),
    "rfc_bsrmm": Workload(
        _RFC / "bsrmm_stage_i.py", "bsrmm_stage_i",
        ("a", "b", "c", *_CSR_PARAMS, "nb", "mb", "nnzb", "blk", "feat_size"), ("c",),
        rfc_bsrmm_inputs, rfc_bsrmm_reference,
    ),
    "rfc_composable": Workload(
        _RFC / "composable_result.py", "bsr_rewrite_with_preprocess",
        (*_SPMM_PARAMS, *_bsr_params(4), *_bsr_params(16), *_bsr_params(32)),
        ("c", "a_4", "a_16", "a_32"), composable_inputs, composable_reference,
        cases=tuple(c for c in CASES if c != "single_row"),  # rows come in whole 32-row blocks
    ),
}
