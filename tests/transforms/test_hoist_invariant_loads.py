"""The CPU build's hoisting of loop-invariant loads of read-only arrays (``hoist_invariant_loads``):
what moves, what must stay, and that kernels still compute the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from sparsetir._tvm import TensorLoad, structural_equal, structural_walk, tirx
from sparsetir._tvm import tvmscript_tirx as T
from sparsetir.runtime.build import build_stage3
from sparsetir.transforms.hoist_invariant_loads import hoist_invariant_loads


@T.prim_func(s_tir=True)
def scale(
    a: T.Buffer(("nnz",), "float32"),
    b: T.Buffer(("nnz",), "float32"),
    w: T.Buffer(("m",), "float32"),
    indptr: T.Buffer(("m + 1",), "int32"),
    m: T.int32,
    nnz: T.int32,
):
    T.func_attr({"tir.noalias": True})
    for i in range(m):
        with T.sblock("row"):
            vi = T.axis.spatial(m, i)
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("scale"):
                    vj = T.axis.spatial(indptr[vi + 1] - indptr[vi], j)
                    b[indptr[vi] + vj] = a[indptr[vi] + vj] * w[vi]


@T.prim_func(s_tir=True)
def guarded(
    a: T.Buffer(("nnz",), "float32"),
    b: T.Buffer(("nnz",), "float32"),
    w: T.Buffer(("m",), "float32"),
    indptr: T.Buffer(("m + 1",), "int32"),
    m: T.int32,
    nnz: T.int32,
):
    T.func_attr({"tir.noalias": True})
    for i in range(m):
        with T.sblock("row"):
            vi = T.axis.spatial(m, i)
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("scale"):
                    vj = T.axis.spatial(indptr[vi + 1] - indptr[vi], j)
                    # w[vi + 1] exists only for rows before the last: read only under the guard
                    b[indptr[vi] + vj] = a[indptr[vi] + vj] * T.if_then_else(vi + 1 < m, w[vi + 1], T.float32(1))


@T.prim_func(s_tir=True)
def running(
    a: T.Buffer(("nnz",), "float32"),
    b: T.Buffer(("m",), "float32"),
    indptr: T.Buffer(("m + 1",), "int32"),
    m: T.int32,
    nnz: T.int32,
):
    T.func_attr({"tir.noalias": True})
    for i in range(m):
        with T.sblock("row"):
            vi = T.axis.spatial(m, i)
            b[vi] = T.float32(0)
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("sum"):
                    vj = T.axis.spatial(indptr[vi + 1] - indptr[vi], j)
                    # b is written: its loads stay where they are
                    b[vi] = b[vi] + a[indptr[vi] + vj] + b[0]


def _loop(func, name: str):
    found = []
    structural_walk(func.body, lambda n: found.append(n) if isinstance(n, tirx.For) and n.loop_var.name == name else None)
    assert len(found) == 1, f"expected one loop {name}, found {len(found)}"
    return found[0]


def _loads(stmt, buffer: str) -> list:
    found = []
    structural_walk(stmt, lambda n: found.append(n) if isinstance(n, TensorLoad) and n.source.name == buffer else None)
    return found


def _parents_of(func, loop) -> list:
    """The statements on the path from the function body down to ``loop``."""
    path: list = []

    def visit(node, trail):
        if node.same_as(loop):
            path.extend(trail)
            return
        for child in _children(node):
            if not path:
                visit(child, trail + [node])

    visit(func.body, [])
    return path


def _children(node) -> list:
    if isinstance(node, tirx.SeqStmt):
        return list(node.seq)
    if isinstance(node, tirx.IfThenElse):
        return [node.then_case] + ([node.else_case] if node.else_case is not None else [])
    if isinstance(node, tirx.For):
        return [node.body]
    body = getattr(node, "block", None)
    if body is not None:
        return [body]
    inner = getattr(node, "body", None)
    return [inner] if inner is not None else []


def test_row_start_leaves_the_row_loop_under_a_guard():
    out = hoist_invariant_loads(scale)
    j = _loop(out, "j")
    # the block's read/write regions still name indptr[vi]; the statements do not
    stores = []
    structural_walk(j.body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else None)
    assert stores and not any(_loads(s, "indptr") for s in stores)
    assert not any(_loads(s, "w") for s in stores)
    parents = _parents_of(out, j)
    guard = next(p for p in reversed(parents) if isinstance(p, tirx.IfThenElse))
    assert isinstance(guard.condition, tirx.GT) and structural_equal(guard.condition.a, j.extent)
    binds = [s for s in guard.then_case.seq if isinstance(s, tirx.Bind)]
    assert {str(b.value) for b in binds} >= {"indptr[vi]", "w[vi]"}


def test_guarded_load_and_loads_of_written_arrays_stay():
    out = hoist_invariant_loads(guarded)
    j = _loop(out, "j")
    stores = []
    structural_walk(j.body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else None)
    assert any(_loads(s, "w") for s in stores)  # under if_then_else: not evaluated on every row
    assert not any(_loads(s, "indptr") for s in stores)

    out = hoist_invariant_loads(running)
    j = _loop(out, "j")
    stores = []
    structural_walk(j.body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else None)
    assert any(ld.indices[0].__class__ is tirx.IntImm for s in stores for ld in _loads(s, "b"))


def test_without_noalias_nothing_moves():
    plain = scale.with_attr("tir.noalias", False)
    assert hoist_invariant_loads(plain) is plain


@pytest.mark.parametrize("func", [scale, guarded])
def test_kernels_compute_the_reference_with_empty_rows(func):
    rng = np.random.default_rng(3)
    lengths = np.array([3, 0, 5, 0, 1, 0], dtype=np.int32)  # the last row is empty
    m = len(lengths)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    a = rng.standard_normal(nnz).astype(np.float32)
    w = rng.standard_normal(m).astype(np.float32)
    b = np.full(nnz, np.nan, dtype=np.float32)
    kernel = build_stage3(func.with_attr("global_symbol", func.__name__ if hasattr(func, "__name__") else "k"), [])
    kernel(a, b, w, indptr, m, nnz)
    rows = np.repeat(np.arange(m), lengths)
    if func is scale:
        factor = w[rows]
    else:
        factor = np.where(rows + 1 < m, w[np.minimum(rows + 1, m - 1)], 1.0).astype(np.float32)
    np.testing.assert_allclose(b, a * factor, rtol=1e-6)


def test_row_sums_with_a_written_array_compute_the_reference():
    matrix = scipy.sparse.random(7, 9, density=0.3, format="csr", random_state=5, dtype=np.float32)
    b = np.full(7, np.nan, dtype=np.float32)
    kernel = build_stage3(running.with_attr("global_symbol", "running"), [])
    kernel(matrix.data, b, matrix.indptr.astype(np.int32), 7, matrix.nnz)
    # b[0] is read while rows are summed: row 0's partial sums feed it, then its total
    expected = np.zeros(7, dtype=np.float64)
    for i in range(7):
        for p in range(matrix.indptr[i], matrix.indptr[i + 1]):
            expected[i] = expected[i] + matrix.data[p] + expected[0]
    np.testing.assert_allclose(b, expected, rtol=1e-5)
