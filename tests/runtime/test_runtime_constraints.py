"""constraints_from_axes: which arrays are checked, with which sizes, per axis kind."""

from __future__ import annotations

from sparsetir._tvm import Var, tirx
from sparsetir.ir.axis import Axis, dense_fixed
from sparsetir.runtime import IndicesConstraint, IndptrConstraint, LastOf, constraints_from_axes
from stage3_kernels import csr_axes, dcsr_axes


def _handle(name: str) -> Var:
    return Var(name, "handle")


def test_csr_axes_give_indptr_then_indices():
    i, j = csr_axes()
    indptr, indices = constraints_from_axes([i, j], set())
    assert indptr == IndptrConstraint("indptr", "J", rows=(i.length,), nnz=j.nnz)
    assert indices == IndicesConstraint(
        "indices", "J", positions=(j.nnz,), length=j.length, sorted=False, row_indptr="indptr"
    )


def test_binary_search_requires_sorted_rows():
    _, indices = constraints_from_axes(csr_axes(), {"J"})
    assert indices.sorted


def test_parents_are_included_once_and_first():
    i, j = csr_axes()
    assert constraints_from_axes([j], set()) == constraints_from_axes([i, j, i], set())


def test_nested_variable_axis_has_one_row_per_parent_position():
    o, i, j = dcsr_axes()
    ptr_i, idx_i, ptr_j, idx_j = constraints_from_axes([j], set())
    assert (ptr_i.array, ptr_i.rows, ptr_i.nnz) == ("indptr_i", (o.length,), i.nnz)
    assert (idx_i.array, idx_i.positions, idx_i.length) == ("indices_i", (i.nnz,), i.length)
    assert (ptr_j.array, ptr_j.rows, ptr_j.nnz) == ("indptr_j", (i.nnz,), j.nnz)
    assert (idx_j.array, idx_j.positions, idx_j.row_indptr) == ("indices_j", (j.nnz,), "indptr_j")


def test_sparse_fixed_axis_stores_nnz_cols_per_parent_position():
    m, n, k = Var("m", "int32"), Var("n", "int32"), Var("k", "int32")
    i = dense_fixed("I", m)
    j = Axis("J", "sparse_fixed", i, n, None, k, None, _handle("cols"), "int32", True)
    (indices,) = constraints_from_axes([j], {"J"})
    assert indices == IndicesConstraint(
        "cols", "J", positions=(m, k), length=n, sorted=True, row_indptr=None, row_width=k
    )


def test_dense_variable_axis_bounds_row_lengths():
    m, n, nnz = Var("m", "int32"), Var("n", "int32"), Var("nnz", "int32")
    i = dense_fixed("I", m)
    j = Axis("J", "dense_variable", i, n, nnz, None, _handle("ptr"), None, "int32", True)
    (indptr,) = constraints_from_axes([j], set())
    assert indptr == IndptrConstraint("ptr", "J", rows=(m,), nnz=nnz, max_row_length=n)


def test_variable_axis_without_nnz_counts_positions_from_its_indptr():
    m, n = Var("m", "int32"), Var("n", "int32")
    i = dense_fixed("I", m)
    j = Axis("J", "sparse_variable", i, n, None, None, _handle("ptr"), _handle("idx"), "int32", True)
    four = tirx.IntImm("int32", 4)
    k = Axis("K", "sparse_fixed", j, n, None, four, None, _handle("kidx"), "int32", True)
    ptr, idx, kidx = constraints_from_axes([k], set())
    assert ptr.nnz is None
    assert idx.positions == (LastOf("ptr"),)
    assert kidx.positions == (LastOf("ptr"), four)
