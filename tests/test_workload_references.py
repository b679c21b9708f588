"""The workload registry checked against slow loops over dense tensors, without sparsetir.

Each ``slow_*`` function first rebuilds the dense tensors from the structure arrays by walking
them position by position, then computes the workload's definition with plain Python loops.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest

from workloads import CASES, LONG, WORKLOADS

SEED = 20240611
# Structure arrays of formats derived from another one (their empty segments follow from it).
DERIVED = {"indptr_b", "indptr_4", "indptr_16", "indptr_32"}


def _segments(indptr):
    """(segment, position) pairs in storage order."""
    indptr = [int(v) for v in indptr]
    return [(s, p) for s in range(len(indptr) - 1) for p in range(indptr[s], indptr[s + 1])]


def _zeros(*shape):
    """A nested-list zero tensor."""
    if len(shape) == 1:
        return [0.0] * shape[0]
    return [_zeros(*shape[1:]) for _ in range(shape[0])]


def _dense_csr(values, indptr, indices, m, n):
    """Dense m x n lists from CSR, and the mask of stored entries."""
    dense, stored = _zeros(m, n), [[False] * n for _ in range(m)]
    for i, p in _segments(indptr):
        dense[i][int(indices[p])] = float(values[p])
        stored[i][int(indices[p])] = True
    return dense, stored


def _matmul(a, b):
    """Dense matrix product of nested lists."""
    rows, inner, cols = len(a), len(b), len(b[0]) if b else 0
    out = _zeros(rows, cols) if rows else []
    for i in range(rows):
        for k in range(cols):
            s = 0.0
            for j in range(inner):
                s += a[i][j] * b[j][k]
            out[i][k] = s
    return out


def slow_spmm(inp):
    """c = A @ B over dense A."""
    A, _ = _dense_csr(inp["a"], inp["indptr"], inp["indices"], inp["m"], inp["n"])
    return {"c": _matmul(A, inp["b"].tolist())}


def slow_sddmm(inp):
    """y at stored (i, j) = x * sum over k of A[i, k] * B[j, k]."""
    a, b = inp["a"].tolist(), inp["b"].tolist()
    y = [0.0] * inp["nnz"]
    for i, p in _segments(inp["indptr"]):
        j = int(inp["indices"][p])
        dot = sum(a[i][k] * b[j][k] for k in range(inp["feat_size"]))
        y[p] = float(inp["x"][p]) * dot
    return {"y": y}


def slow_rowsum(inp):
    """b[i] = sum over j of dense A[i, j]."""
    A, _ = _dense_csr(inp["a"], inp["indptr"], inp["indices"], inp["m"], inp["n"])
    return {"b": [sum(row) for row in A]}


def slow_elementwise(inp):
    """b = a * 2 + 1 at every stored entry."""
    return {"b": [float(v) * 2.0 + 1.0 for v in inp["a"]]}


def _stored(inp, x):
    """{(row, column): value} of operand ``x`` (``a`` or ``b``) of a co-iterated pair."""
    return {(i, int(inp[f"indices_{x}"][p])): float(inp[x][p]) for i, p in _segments(inp[f"indptr_{x}"])}


def _slow_pair(inp, combine):
    A, B = _stored(inp, "a"), _stored(inp, "b")
    return {"c": [combine(A.get((i, int(inp["indices_c"][p])), 0.0), B.get((i, int(inp["indices_c"][p])), 0.0))
                  for i, p in _segments(inp["indptr_c"])]}


def slow_multiply(inp):
    """c = A * B at every entry of C's pattern, from dictionaries of the stored entries."""
    return _slow_pair(inp, lambda x, y: x * y)


def slow_add(inp):
    """c = A + B at every entry of C's pattern (0 for a matrix without one there)."""
    return _slow_pair(inp, lambda x, y: x + y)


def slow_spgemm_masked(inp):
    """c[(i, j)] = the sum over k of A[i, k] * B[k, j], at every entry of C's pattern."""
    A, B = _stored(inp, "a"), _stored(inp, "b")
    rows_b: dict = {}
    for (k, j), v in B.items():
        rows_b.setdefault(k, []).append((j, v))
    product: dict = {}
    for (i, k), x in A.items():
        for j, y in rows_b.get(k, []):
            product[(i, j)] = product.get((i, j), 0.0) + x * y
    return {"c": [product.get((i, int(inp["indices_c"][p])), 0.0) for i, p in _segments(inp["indptr_c"])]}


def slow_row_dot(inp):
    """out[i] = the sum of A[i, j] * B[i, j] over the columns j both rows store."""
    A, B = _stored(inp, "a"), _stored(inp, "b")
    out = [0.0] * inp["m"]
    for (i, j), v in A.items():
        out[i] += v * B.get((i, j), 0.0)
    return {"out": out}


def slow_softmax(inp):
    """Softmax over the stored entries of each row, with math.exp."""
    b = [0.0] * inp["nnz"]
    for i in range(inp["m"]):
        positions = [p for s, p in _segments(inp["indptr"]) if s == i]
        if not positions:
            continue
        top = max(float(inp["a"][p]) for p in positions)
        total = sum(math.exp(float(inp["a"][p]) - top) for p in positions)
        for p in positions:
            b[p] = math.exp(float(inp["a"][p]) - top) / total
    return {"b": b}


def slow_csr_to_bsr(inp):
    """Each stored block takes A's entries inside it; other entries keep b's initial value."""
    A, stored = _dense_csr(inp["a"], inp["indptr"], inp["indices"], inp["m"], inp["n"])
    b = inp["b"].astype(np.float64).tolist()
    for r, p in _segments(inp["indptr_b"]):
        c = int(inp["indices_b"][p])
        for ii in range(4):
            for ji in range(4):
                i, j = r * 4 + ii, c * 4 + ji
                if i < inp["m"] and j < inp["n"] and stored[i][j]:
                    b[p][ii][ji] = A[i][j]
    return {"b": b}


def slow_ell(inp):
    """c = A @ B, A dense from nnz_cols (column, value) pairs per row."""
    m, n, cols = inp["m"], inp["n"], inp["nnz_cols"]
    A = _zeros(m, n)
    for i in range(m):
        for q in range(cols):
            A[i][int(inp["indices"][i * cols + q])] += float(inp["a"][i, q])
    return {"c": _matmul(A, inp["b"].tolist())}


def _dense_bsr(a, indptr, indices, rows, cols, blk):
    """Dense (rows * blk) x (cols * blk) lists from BSR blocks."""
    A = _zeros(rows * blk, cols * blk)
    for r, p in _segments(indptr):
        c = int(indices[p])
        for bi in range(blk):
            for bj in range(blk):
                A[r * blk + bi][c * blk + bj] = float(a[p, bi, bj])
    return A


def slow_bsr_spmm(inp):
    """c = A @ B with A dense from 4x4 blocks."""
    A = _dense_bsr(inp["a"], inp["indptr"], inp["indices"], inp["mb"], inp["nb"], 4)
    return {"c": _matmul(A, inp["b"].tolist())}


def slow_rfc_bsrmm(inp):
    """C[i, bi, f] = sum of A[i, j, bi, bj] * B[j, bj, f], through dense matrices."""
    nb, mb, blk, feat = inp["nb"], inp["mb"], inp["blk"], inp["feat_size"]
    A = _dense_bsr(inp["a"], inp["indptr"], inp["indices"], nb, mb, blk)
    B = [[float(inp["b"][j, bj, f]) for f in range(feat)] for j in range(mb) for bj in range(blk)]
    C = _matmul(A, B)
    return {"c": [[C[i * blk + bi] for bi in range(blk)] for i in range(nb)]}


def slow_composable(inp):
    """c = A @ B; a_X[p] is the X-by-X tile of dense A at stored block p."""
    A, _ = _dense_csr(inp["a"], inp["indptr"], inp["indices"], inp["m"], inp["n"])
    out = {"c": _matmul(A, inp["b"].tolist())}
    for x in (4, 16, 32):
        tiles = [_zeros(x, x) for _ in range(inp[f"nnz_{x}"])]
        for r, p in _segments(inp[f"indptr_{x}"]):
            c = int(inp[f"indices_{x}"][p])
            for ii in range(x):
                for ji in range(x):
                    tiles[p][ii][ji] = A[r * x + ii][c * x + ji]
        out[f"a_{x}"] = tiles
    return out


def slow_segment(inp):
    """out[i, k] = sum over the positions of segment i."""
    out = _zeros(inp["m"], inp["feat_size"])
    for i, p in _segments(inp["indptr"]):
        for k in range(inp["feat_size"]):
            out[i][k] += float(inp["x"][p, k])
    return {"out": out}


def slow_csf(inp):
    """out[i] = sum over j, k of the dense 3-D tensor."""
    m, n, p = inp["m"], inp["n"], inp["p"]
    D = [_zeros(n, p) for _ in range(m)]
    row_of_j = dict((q, i) for i, q in _segments(inp["indptr_j"]))
    for q, r in _segments(inp["indptr_k"]):
        i, j, k = row_of_j[q], int(inp["indices_j"][q]), int(inp["indices_k"][r])
        D[i][j][k] = float(inp["a"][r])
    return {"out": [sum(D[i][j][k] for j in range(n) for k in range(p)) for i in range(m)]}


def slow_ragged4(inp):
    """out[i, l] = sum over j, k of the zero-padded dense 4-D tensor."""
    m, mj, mk, feat = inp["m"], inp["max_j"], inp["max_k"], inp["feat_size"]
    D = [[[[0.0] * feat for _ in range(mk)] for _ in range(mj)] for _ in range(m)]
    indptr_j, indptr_k = inp["indptr_j"], inp["indptr_k"]
    for i, q in _segments(indptr_j):
        for r in range(int(indptr_k[q]), int(indptr_k[q + 1])):
            j, k = q - int(indptr_j[i]), r - int(indptr_k[q])
            D[i][j][k] = [float(v) for v in inp["x"][r]]
    out = _zeros(m, feat)
    for i in range(m):
        for j in range(mj):
            for k in range(mk):
                for l in range(feat):
                    out[i][l] += D[i][j][k][l]
    return {"out": out}


def slow_rgcn_homo(inp):
    """y[i, fo] = sum over stored j and fi of A[i, j] * W[etype, fi, fo] * X[j, fi]."""
    m, n = inp["m"], inp["n"]
    A, stored = _dense_csr(inp["a"], inp["indptr"], inp["indices"], m, n)
    E, _ = _dense_csr(inp["etype"], inp["indptr"], inp["indices"], m, n)
    W, X = inp["w"].tolist(), inp["x"].tolist()
    y = _zeros(m, inp["feat_out"])
    for i in range(m):
        for j in range(n):
            if stored[i][j]:
                for fo in range(inp["feat_out"]):
                    for fi in range(inp["feat_in"]):
                        y[i][fo] += A[i][j] * W[int(E[i][j])][fi][fo] * X[j][fi]
    return {"y": y}


def slow_rgcn_hetero(inp):
    """y = y0 + sum over r, stored (i, j), fi of A[r, i, j] * W[r, fi, fo] * X[j, fi]."""
    num_rel, n = inp["num_rel"], inp["n"]
    A = [_zeros(n, n) for _ in range(num_rel)]
    stored = [[[False] * n for _ in range(n)] for _ in range(num_rel)]
    rel_of_row = dict((q, r) for r, q in _segments(inp["indptr_i"]))
    for q, p in _segments(inp["indptr_j"]):
        r, i, j = rel_of_row[q], int(inp["indices_i"][q]), int(inp["indices_j"][p])
        A[r][i][j], stored[r][i][j] = float(inp["a"][p]), True
    W, X, y = inp["w"].tolist(), inp["x"].tolist(), inp["y"].astype(np.float64).tolist()
    for r in range(num_rel):
        for i in range(n):
            for j in range(n):
                if stored[r][i][j]:
                    for fo in range(inp["feat_out"]):
                        for fi in range(inp["feat_in"]):
                            y[i][fo] += A[r][i][j] * W[r][fi][fo] * X[j][fi]
    return {"y": y}


def slow_hypergraph(inp):
    """y[v] = sum over e with H[v, e] and u with G[e, u] of X[u], on dense 0/1 incidences."""
    num_v, num_e = inp["num_vertices"], inp["num_edges"]
    H, _ = _dense_csr(np.ones(inp["nnz_e"]), inp["indptr_e"], inp["indices_e"], num_v, num_e)
    G, _ = _dense_csr(np.ones(inp["nnz_u"]), inp["indptr_u"], inp["indices_u"], num_e, num_v)
    X = inp["x"].tolist()
    y = _zeros(num_v, inp["feat_size"])
    for v in range(num_v):
        for e in range(num_e):
            if H[v][e]:
                for u in range(num_v):
                    if G[e][u]:
                        for f in range(inp["feat_size"]):
                            y[v][f] += X[u][f]
    return {"y": y}


def slow_batched(inp):
    """Z[b] = X[b] @ Y[b], with the matrices read and written row by row through the indptrs."""
    z = [0.0] * inp["nnz_ik"]
    for b in range(inp["batch"]):
        i_rows = range(int(inp["indptr_i"][b]), int(inp["indptr_i"][b + 1]))
        j_rows = range(int(inp["indptr_j"][b]), int(inp["indptr_j"][b + 1]))

        def row(values, indptr, q):
            return [float(v) for v in values[int(indptr[q]):int(indptr[q + 1])]]

        X = [row(inp["x"], inp["indptr_ij"], q) for q in i_rows]
        Y = [row(inp["y"], inp["indptr_jk"], q) for q in j_rows]
        Z = _matmul(X, Y) if Y else [[] for _ in X]
        for q, z_row in zip(i_rows, Z):
            start, end = int(inp["indptr_ik"][q]), int(inp["indptr_ik"][q + 1])
            if not Y:  # no inner dimension: the row of Z is all zeros
                z_row = [0.0] * (end - start)
            z[start:end] = z_row
    return {"z": z}


def _chain(inp, names):
    """(top row, position at each level) of every position of the last axis of an indptr chain."""
    out = []
    for i in range(len(inp[names[0]]) - 1):
        stack = [(i, [], p) for p in range(int(inp[names[0]][i]), int(inp[names[0]][i + 1]))]
        for name in names[1:]:
            stack = [(i, path + [q], r) for i, path, q in stack for r in range(int(inp[name][q]), int(inp[name][q + 1]))]
        out.extend((i, path + [r]) for i, path, r in stack)
    return out


def slow_csf_fuse3(inp):
    """b at every stored (i, j, k): 2 a + 100 i + 10 j + k, walking the CSF tree."""
    b = [0.0] * inp["nnz_k"]
    for i, (q, r) in _chain(inp, ["indptr_j", "indptr_k"]):
        j, k = int(inp["indices_j"][q]), int(inp["indices_k"][r])
        b[r] = 2 * float(inp["a"][r]) + 100 * i + 10 * j + k
    return {"b": b}


def slow_ragged_fuse3(inp):
    """out[i, l] = sum of x over every (j, k, m) stored under i."""
    out = _zeros(inp["rows"], inp["feat_size"])
    for i, (_, _, r) in _chain(inp, ["indptr_j", "indptr_k", "indptr_m"]):
        for l in range(inp["feat_size"]):
            out[i][l] += float(inp["x"][r][l])
    return {"out": out}


def slow_fused_rows(inp):
    """out at each stored (i, j): the sum of x over every (k, l) stored under it."""
    out = [0.0] * inp["nnz_j"]
    for _, (q, _, r) in _chain(inp, ["indptr_j", "indptr_k", "indptr_l"]):
        out[q] += float(inp["x"][r])
    return {"out": out}


SLOW = {
    "csr_spmm": slow_spmm,
    "csr_spmm_detached": slow_spmm,
    "segment_reduce": slow_segment,
    "csr_rowsum": slow_rowsum,
    "bsr_spmm": slow_bsr_spmm,
    "ell_spmm": slow_ell,
    "csr_elementwise": slow_elementwise,
    "csr_multiply": slow_multiply,
    "csr_add": slow_add,
    "spgemm_masked": slow_spgemm_masked,
    "csr_row_dot": slow_row_dot,
    "sddmm": slow_sddmm,
    "sddmm_fused": slow_sddmm,
    "csf_reduction": slow_csf,
    "ragged_fused_reduction": slow_ragged4,
    "csf_fuse3": slow_csf_fuse3,
    "ragged_fuse3_reduction": slow_ragged_fuse3,
    "fused_rows_reduction": slow_fused_rows,
    "rgcn_homogeneous": slow_rgcn_homo,
    "rgcn_heterogeneous": slow_rgcn_hetero,
    "sparse_softmax": slow_softmax,
    "csr_to_bsr": slow_csr_to_bsr,
    "hypergraph": slow_hypergraph,
    "batched_ragged_matmul": slow_batched,
    "rfc_sddmm": slow_sddmm,
    "rfc_csrmm": slow_spmm,
    "rfc_bsrmm": slow_rfc_bsrmm,
    "rfc_composable": slow_composable,
}

CASE_PARAMS = [(name, case) for name, w in WORKLOADS.items() for case in w.cases]


def _inputs(name, case):
    return WORKLOADS[name].make_inputs(np.random.default_rng(SEED), case)


def _indptrs(inp):
    return [k for k in inp if k.startswith("indptr")]


def test_every_workload_has_a_slow_check():
    assert set(SLOW) == set(WORKLOADS)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_fixture_signature(name):
    """The script holds the import and prim_funcs only; the named one has the listed params."""
    w = WORKLOADS[name]
    module = ast.parse(w.path.read_text())
    first, *rest = module.body
    assert ast.unparse(first) == "from sparsetir.script import tir as T"
    assert rest and all(isinstance(node, ast.FunctionDef) for node in rest)
    assert all([ast.unparse(d) for d in node.decorator_list] == ["T.prim_func"] for node in rest)
    func = next(node for node in rest if node.name == w.function)
    assert tuple(arg.arg for arg in func.args.args) == w.params
    assert set(w.outputs) <= set(w.params)


@pytest.mark.parametrize("name,case", CASE_PARAMS)
def test_inputs_well_formed(name, case):
    """Keys, dtypes, canonical structure arrays, and the shape the case promises."""
    w = WORKLOADS[name]
    inp = _inputs(name, case)
    assert tuple(inp) == w.params
    for key, value in inp.items():
        if isinstance(value, np.ndarray):
            assert value.flags.c_contiguous
            kind = "int32" if key.startswith(("indptr", "indices", "etype")) else "float32"
            assert value.dtype == kind, key
        else:
            assert type(value) is int, key
    for key in w.outputs:
        out = inp[key]
        assert np.isnan(out).all() or (out == 0).all(), key
    for key in _indptrs(inp):
        indptr = inp[key]
        assert indptr.ndim == 1 and indptr[0] == 0 and (np.diff(indptr) >= 0).all(), key
        indices = inp.get(key.replace("indptr", "indices"))
        if indices is not None:
            assert indptr[-1] == len(indices), key
            for s in range(len(indptr) - 1):
                assert (np.diff(indices[indptr[s]:indptr[s + 1]]) > 0).all(), (key, s)
    top = inp[_indptrs(inp)[0]] if _indptrs(inp) else None
    if case == "empty_rows" and top is not None:
        assert np.diff(top)[0] == 0 and np.diff(top)[-1] == 0
    if case == "single_row" and top is not None:
        assert len(top) == 2 and top[1] > 0
    if case == "long_rows":
        longest = max([int(np.diff(inp[k]).max(initial=0)) for k in _indptrs(inp)]
                      + [inp.get("nnz_cols", 0)])
        assert longest >= LONG
    if case == "empty_segments":
        for key in set(_indptrs(inp)) - DERIVED:
            assert (np.diff(inp[key]) == 0).any(), key


@pytest.mark.parametrize("name,case", CASE_PARAMS)
def test_reference_matches_slow_loops(name, case):
    """The vectorized reference equals the loop definition, with the outputs' shapes and dtypes."""
    w = WORKLOADS[name]
    inp = _inputs(name, case)
    snapshot = {k: v.copy() for k, v in inp.items() if isinstance(v, np.ndarray)}
    expected = w.reference(inp)
    for key, value in snapshot.items():  # the reference must not write its inputs
        np.testing.assert_array_equal(inp[key], value)
    assert set(expected) == set(w.outputs)
    slow = SLOW[name](inp)
    for key in w.outputs:
        assert expected[key].shape == inp[key].shape, key
        assert expected[key].dtype == inp[key].dtype, key
        assert np.isfinite(expected[key]).all(), key
        got = np.asarray(slow[key], dtype=np.float64).reshape(inp[key].shape)
        np.testing.assert_allclose(expected[key], got, rtol=1e-5, atol=1e-5, err_msg=key)


def test_inputs_are_deterministic():
    for name, case in CASE_PARAMS:
        a, b = _inputs(name, case), _inputs(name, case)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("case", CASES)
def test_cases_differ(case):
    """Each case really yields its own inputs (a guard against a case silently ignored)."""
    others = [c for c in CASES if c != case]
    mine = _inputs("csr_spmm", case)["indptr"]
    assert all(not np.array_equal(mine, _inputs("csr_spmm", c)["indptr"]) for c in others)
