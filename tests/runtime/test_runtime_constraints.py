"""constraints_from_axes: which arrays are checked, with which sizes, per axis kind; used_by:
which of them a compiled kernel needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import Var, tirx
from sparsetir.driver import constraints_of
from sparsetir.errors import ArgumentError
from sparsetir.runtime.constraints import used_by
from sparsetir.transforms import pipeline
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


# -- used_by: the checks a compiled kernel needs ----------------------------------------------

#: The example's row sum (its answer does not depend on the coordinates).
_ROWSUM = (Path(__file__).resolve().parents[2] / "examples" / "csr_rowsum.py").read_text()

def _edited(text: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


#: The row sum made an SpMV: it gathers x by the coordinates.
_SPMV = _edited(
    _ROWSUM,
    ("    b: T.handle,\n", "    x: T.handle,\n    b: T.handle,\n"),
    ('B = T.match_sparse_buffer(b, (I,), "float32")',
     'B = T.match_sparse_buffer(b, (I,), "float32")\n    J_dense = T.dense_fixed(n)\n'
     '    X = T.match_sparse_buffer(x, (J_dense,), "float32")'),
    ("B[i] = B[i] + A[i, j]", "B[i] = B[i] + A[i, j] * X[j]"),
)


def _csr_with_a_bad_coordinate():
    indptr = np.array([0, 2, 2, 5], np.int32)
    indices = np.array([0, 3, 1, 9, 2], np.int32)  # 9: outside the 4 columns
    values = np.arange(1, 6, dtype=np.float32)
    return values, indptr, indices


@pytest.mark.parametrize("schedule", ["default", "none"])
def test_a_kernel_that_never_reads_the_coordinates_does_not_check_them(schedule):
    """A row sum's answer does not depend on the coordinates: a bad one is not refused (and the
    indices array is not read at all), while the indptr, which bounds the loops, still is."""
    func = sparsetir.parse(_ROWSUM)
    stage2 = pipeline.lower(func, until=pipeline.STAGE_II)
    assert {c.array for c in used_by(constraints_of(stage2), pipeline.lower(stage2))} == {"indptr"}
    kernel = sparsetir.build(func) if schedule == "default" else sparsetir.build(func, schedule="none")
    values, indptr, indices = _csr_with_a_bad_coordinate()
    out = np.full(3, np.nan, np.float32)
    kernel(values, out, indptr, indices, 3, 4, 5)
    np.testing.assert_array_equal(out, [3, 0, 12])
    with pytest.raises(ArgumentError, match=r"argument 'indptr': .*decreas"):
        kernel(values, out, np.array([0, 2, 1, 5], np.int32), indices, 3, 4, 5)


@pytest.mark.parametrize("schedule", ["default", "none"])
def test_a_kernel_that_gathers_by_the_coordinates_checks_them(schedule):
    func = sparsetir.parse(_SPMV)
    kernel = sparsetir.build(func) if schedule == "default" else sparsetir.build(func, schedule="none")
    values, indptr, indices = _csr_with_a_bad_coordinate()
    x = np.ones(4, np.float32)
    with pytest.raises(ArgumentError, match=r"argument 'indices': out of range at position 3 \(indices\[3\]=9, expected 0 <= value < n = 4\)"):
        kernel(values, x, np.zeros(3, np.float32), indptr, indices, 3, 4, 5)
