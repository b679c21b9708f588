"""An array laid out by a sparse fixed axis (ELL) is accepted in both shapes, for values and
indices alike: one dimension per axis, ``(m, nnz_cols)``, or the axes collapsed, ``(m * nnz_cols,)``;
the kernel reads (and writes) the caller's memory either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
from sparsetir._tvm import tvm
from sparsetir.errors import ArgumentError
from sparsetir.ir.stage2 import ALT_SHAPES_ATTR

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ell_spmm.py"

SCALE = '''from sparsetir.script import tir as T


@T.prim_func
def ell_scale(a: T.handle, b: T.handle, indices: T.handle, m: T.int32, n: T.int32, c: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_fixed(I, (n, c), indices)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J), "float32")
    with T.sp_iter([I, J], "SS", "scale") as [i, j]:
        B[i, j] = A[i, j] * T.float32(2) + T.cast(j, "float32")
'''


def _ell(rng, m, n, width, lengths):
    """ELL arrays (m, width): each row's real entries first, zero padding at unused columns."""
    indices = np.empty((m, width), np.int32)
    values = np.zeros((m, width), np.float32)
    for i, k in enumerate(lengths):
        cols = np.sort(rng.choice(n, width, replace=False))
        values[i, rng.permutation(width)[:k]] = rng.uniform(-1, 1, k)
        indices[i] = cols
    return values, indices


def _spmm_reference(values, indices, b):
    m, width = values.shape
    a = sp.csr_matrix((values.ravel().astype(np.float64), indices.ravel(), np.arange(0, m * width + 1, width)),
                      shape=(m, b.shape[0]))
    return a @ b.astype(np.float64)


FORMS = {"2-D": lambda x: x, "flat": lambda x: x.reshape(-1)}
ROWS = {  # (m, n, width, row lengths)
    "random": (9, 13, 4, [4, 2, 0, 3, 1, 4, 0, 2, 3]),
    "empty_rows": (5, 6, 2, [0, 2, 0, 1, 0]),
    "single_row": (1, 7, 5, [5]),
    "long_row": (3, 700, 600, [600, 1, 0]),
}


@pytest.fixture(scope="module")
def spmm():
    return sparsetir.build(sparsetir.parse_file(str(EXAMPLE)))


@pytest.mark.parametrize("rows", sorted(ROWS))
@pytest.mark.parametrize("values_form", sorted(FORMS))
@pytest.mark.parametrize("indices_form", sorted(FORMS))
def test_spmm_takes_values_and_indices_in_either_shape(spmm, rows, values_form, indices_form):
    rng = np.random.default_rng(5)
    m, n, width, lengths = ROWS[rows]
    values, indices = _ell(rng, m, n, width, lengths)
    b = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    c = np.full((m, 3), np.nan, np.float32)
    spmm(FORMS[values_form](values), b, c, FORMS[indices_form](indices), m, n, width, 3)
    np.testing.assert_allclose(c, _spmm_reference(values, indices, b), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_unchecked_calls_take_either_shape_too(spmm, form):
    rng = np.random.default_rng(6)
    values, indices = _ell(rng, 4, 5, 2, [2, 1, 0, 2])
    b = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
    c = np.full((4, 2), np.nan, np.float32)
    spmm(FORMS[form](values), b, c, FORMS[form](indices).copy(), 4, 5, 2, 2, check=False)
    np.testing.assert_allclose(c, _spmm_reference(values, indices, b), rtol=2e-5, atol=2e-5)


def test_torch_tensors_take_either_shape():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    values, indices = _ell(rng, 6, 8, 3, [3, 0, 2, 1, 3, 2])
    b = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    c = torch.full((6, 4), float("nan"))
    kernel = sparsetir.build(sparsetir.parse_file(str(EXAMPLE)))
    kernel(torch.from_numpy(values.reshape(-1)), torch.from_numpy(b), c, torch.from_numpy(indices), 6, 8, 3, 4)
    np.testing.assert_allclose(c.numpy(), _spmm_reference(values, indices, b), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_an_output_in_either_shape_is_written_in_place(form):
    kernel = sparsetir.build(sparsetir.parse(SCALE))
    rng = np.random.default_rng(8)
    values, indices = _ell(rng, 5, 6, 3, [3, 1, 0, 2, 3])
    out = FORMS[form](np.full((5, 3), np.nan, np.float32))
    kernel(values, out, indices, 5, 6, 3)
    expected = values * 2 + np.arange(6, dtype=np.float32)[indices]
    np.testing.assert_allclose(out.reshape(5, 3), expected, rtol=1e-6)


def test_a_wrong_shape_names_both_forms(spmm):
    values, indices = _ell(np.random.default_rng(9), 5, 6, 3, [3, 1, 0, 2, 3])
    b, c = np.zeros((6, 2), np.float32), np.zeros((5, 2), np.float32)
    with pytest.raises(ArgumentError, match=r"argument 'a': expected shape \(m \* nnz_cols,\) = \(15,\) "
                                            r"\(or \(m, nnz_cols\) = \(5, 3\)\), got \(14,\)"):
        spmm(values.reshape(-1)[:14], b, c, indices, 5, 6, 3, 2)
    with pytest.raises(ArgumentError, match=r"argument 'indices': expected 1 dimension\(s\) \(m \* nnz_cols,\) "
                                            r"or 2 \(m, nnz_cols\), got 3"):
        spmm(values, b, c, indices.reshape(5, 3, 1), 5, 6, 3, 2)


def test_stage3_records_the_other_shapes_and_round_trips():
    f3 = sparsetir.lower_sparse_buffer(sparsetir.lower_sparse_iter(sparsetir.parse_file(str(EXAMPLE))))
    alt = {str(k): [str(d) for d in v] for k, v in f3.attrs[ALT_SHAPES_ATTR].items()}
    assert alt == {"a": ["m * nnz_cols"], "indices": ["m", "nnz_cols"]}
    assert sparsetir.structural_equal(tvm.script.from_source(f3.script()), f3)
