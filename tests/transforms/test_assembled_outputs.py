"""Assembled axes: sparse outputs whose pattern the kernel computes, against SciPy.

``examples/csr_add_assembled.py`` / ``csr_multiply_assembled.py`` and generated variants (three
merged operands, int64 indices, float64, a dense axis under the output) are built with the default
schedule and serially; both must return SciPy's pattern (sorted rows) and values, on edge cases:
empty rows and matrices, no rows, disjoint and identical patterns, rectangular shapes. The rules of
``ir/assembly.py`` are refused at their line and column, and bad input at the call is named.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
from sparsetir import ArgumentError, VerifyError
from sparsetir.runtime.assembling import AssemblingKernel
from sparsetir.transforms import pipeline
from sparsetir.transforms.assemble import symbolic_function

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _random(m, n, density, seed, dtype=np.float32, empty_rows=(), index=np.int32) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((m, n)) < density, rng.standard_normal((m, n)) + 3.0, 0.0)  # no zero sums
    dense[list(empty_rows), :] = 0.0
    out = sp.csr_matrix(dense.astype(dtype))
    out.sort_indices()
    out.indptr, out.indices = out.indptr.astype(index), out.indices.astype(index)
    return out


def _call(kernel, A, B):
    m, n = A.shape
    out = kernel(a=A.data, b=B.data, indptr_a=A.indptr, indices_a=A.indices, indptr_b=B.indptr,
                 indices_b=B.indices, m=m, n=n, nnz_a=A.nnz, nnz_b=B.nnz)
    return out


def _check(out, expected: sp.csr_matrix, rtol=1e-6):
    expected = sp.csr_matrix(expected)
    expected.sort_indices()
    assert out["nnz_c"] == expected.nnz
    np.testing.assert_array_equal(out["indptr_c"], expected.indptr)
    np.testing.assert_array_equal(out["indices_c"], expected.indices)
    np.testing.assert_allclose(out["c"], expected.data, rtol=rtol)


@pytest.fixture(scope="module")
def kernels():
    built = {}
    for name in ("csr_add_assembled", "csr_multiply_assembled"):
        f = sparsetir.parse_file(EXAMPLES / f"{name}.py")
        built[name] = [sparsetir.build(f), sparsetir.build(f, schedule="none")]
    return built


CASES = {
    "random": lambda: (_random(120, 90, 0.1, 1), _random(120, 90, 0.1, 2)),
    "empty rows": lambda: (_random(60, 40, 0.2, 3, empty_rows=range(0, 60, 3)),
                           _random(60, 40, 0.2, 4, empty_rows=range(1, 60, 4))),
    "empty matrices": lambda: (_random(20, 30, 0.0, 5), _random(20, 30, 0.0, 6)),
    "one empty": lambda: (_random(20, 30, 0.3, 5), _random(20, 30, 0.0, 6)),
    "no rows": lambda: (_random(0, 7, 0.5, 7), _random(0, 7, 0.5, 8)),
    "identical patterns": lambda: (lambda a: (a, sp.csr_matrix((a.data * 2, a.indices, a.indptr), shape=a.shape)))(
        _random(50, 50, 0.2, 9)),
    "disjoint patterns": lambda: (lambda d: (_canonical_from(np.where(d > 0, d, 0)), _canonical_from(np.where(d < 0, -d, 0))))(
        np.random.default_rng(10).standard_normal((40, 60)) * (np.random.default_rng(11).random((40, 60)) < 0.3)),
    "one column": lambda: (_random(80, 1, 0.5, 12), _random(80, 1, 0.5, 13)),
    "full rows": lambda: (_random(5, 64, 1.0, 14), _random(5, 64, 1.0, 15)),
}


def _canonical_from(dense) -> sp.csr_matrix:
    out = sp.csr_matrix(dense.astype(np.float32))
    out.sort_indices()
    out.indptr, out.indices = out.indptr.astype(np.int32), out.indices.astype(np.int32)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_assembled_add_and_multiply_equal_scipy(kernels, case):
    A, B = CASES[case]()
    for kernel in kernels["csr_add_assembled"]:
        _check(_call(kernel, A, B), A + B)
    for kernel in kernels["csr_multiply_assembled"]:
        _check(_call(kernel, A, B), A.multiply(B))


def test_on_a_shared_matrix_and_its_transpose(kernels):
    A = sparsetir.data.load("cora").tocsr().astype(np.float32)
    A.sum_duplicates()
    A.data = np.random.default_rng(0).standard_normal(A.nnz).astype(np.float32) + 3
    B = A.T.tocsr()
    B.sort_indices()
    default, serial = kernels["csr_add_assembled"]
    out = _call(default, A, B)
    _check(out, A + B)
    again = _call(serial, A, B)
    for name in ("indptr_c", "indices_c", "c"):
        np.testing.assert_array_equal(out[name], again[name])
    _check(_call(kernels["csr_multiply_assembled"][0], A, B), A.multiply(B))


def test_the_call_takes_the_other_parameters_and_returns_the_assembled_ones(kernels):
    kernel = kernels["csr_add_assembled"][0]
    assert isinstance(kernel, AssemblingKernel)
    assert kernel.params == ["a", "b", "indptr_a", "indices_a", "indptr_b", "indices_b", "m", "n", "nnz_a", "nnz_b"]
    A, B = CASES["random"]()
    out = kernel(A.data, B.data, A.indptr, A.indices, B.indptr, B.indices, *A.shape, A.nnz, B.nnz)
    assert sorted(out) == ["c", "indices_c", "indptr_c", "nnz_c"]
    assert out["indptr_c"].dtype == np.int32 and out["c"].dtype == np.float32
    # the inputs are not modified
    A2, B2 = CASES["random"]()
    for x, y in ((A, A2), (B, B2)):
        np.testing.assert_array_equal(x.data, y.data)
        np.testing.assert_array_equal(x.indices, y.indices)


def test_symbolic_program_counts_each_row_and_round_trips():
    f = sparsetir.parse_file(EXAMPLES / "csr_add_assembled.py")
    g = symbolic_function(f)
    assert sparsetir.parse(g.script()).script() == g.script()
    assert [p.name for p in g.params] == ["indptr_a", "indices_a", "indptr_b", "indices_b", "m", "n", "nnz_a",
                                          "nnz_b", "jc_count"]
    A, B = CASES["empty rows"]()
    counts = np.full(A.shape[0], -1, np.int32)
    sparsetir.build(g)(A.indptr, A.indices, B.indptr, B.indices, *A.shape, A.nnz, B.nnz, counts)
    np.testing.assert_array_equal(counts, np.diff((A + B).tocsr().indptr))


def test_stages_print_and_parse_back_with_the_assembled_axis():
    f = sparsetir.parse_file(EXAMPLES / "csr_multiply_assembled.py")
    text = f.script()
    assert "assembled=True" in text
    assert sparsetir.parse(text).script() == text
    f2 = pipeline.lower(f, until=pipeline.STAGE_II)
    text2 = f2.script()
    assert "assembled=True" in text2 and "JC_indices[vi, " in text2  # the merge writes the coordinates
    assert sparsetir.parse(text2).script() == text2


THREE = '''
from sparsetir.script import tir as T


@T.prim_func
def three(a: T.handle, b: T.handle, d: T.handle, c: T.handle, ia: T.handle, ja: T.handle, ib: T.handle,
          jb: T.handle, id_: T.handle, jd: T.handle, ic: T.handle, jc: T.handle, m: T.int32, n: T.int32,
          k: T.int32, na: T.int32, nb: T.int32, nd: T.int32, nc: T.int32) -> None:
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, na), (ia, ja), "{idx}")
    JB = T.sparse_variable(I, (n, nb), (ib, jb), "{idx}")
    JD = T.sparse_variable(I, (n, nd), (id_, jd), "{idx}")
    JC = T.sparse_variable(I, (n, nc), (ic, jc), "{idx}", assembled=True)
    K = T.dense_fixed(k)
    A = T.match_sparse_buffer(a, (I, JA), "{dtype}")
    B = T.match_sparse_buffer(b, (I, JB), "{dtype}")
    D = T.match_sparse_buffer(d, (I, JD), "{dtype}")
    C = T.match_sparse_buffer(c, (I, JC, K), "{dtype}")
    with T.sp_iter([I, T.{op}(JA, JB, JD), K], "SSS", "three") as [i, j, kk]:
        C[i, j, kk] = (A[i, j] + B[i, j] * D[i, j]) * T.cast(kk + 1, "{dtype}")
'''


@pytest.mark.parametrize("op", ["union", "intersect"])
@pytest.mark.parametrize("dtype,idx", [("float32", "int32"), ("float64", "int64")])
def test_three_operands_a_dense_axis_under_the_output_and_wide_types(op, dtype, idx):
    f = sparsetir.parse(THREE.format(op=op, dtype=dtype, idx=idx))
    index = np.dtype(idx)
    A, B, D = (_random(70, 50, 0.25, s, dtype=dtype, index=index) for s in (21, 22, 23))
    k = 3
    if op == "union":
        pattern = ((abs(A) + abs(B) + abs(D)) != 0).astype(np.int8).tocsr()
    else:
        pattern = abs(A).multiply(abs(B)).multiply(abs(D)).tocsr()
    pattern.sort_indices()
    rows = np.repeat(np.arange(70), np.diff(pattern.indptr))
    base = np.asarray(A[rows, pattern.indices] + B[rows, pattern.indices].A1 * D[rows, pattern.indices].A1).ravel()
    expected = base[:, None] * (np.arange(k) + 1)[None, :]
    for kernel in (sparsetir.build(f), sparsetir.build(f, schedule="none")):
        out = kernel(a=A.data, b=B.data, d=D.data, ia=A.indptr, ja=A.indices, ib=B.indptr, jb=B.indices,
                     id_=D.indptr, jd=D.indices, m=70, n=50, k=k, na=A.nnz, nb=B.nnz, nd=D.nnz)
        assert out["ic"].dtype == index and out["c"].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(out["ic"], pattern.indptr)
        np.testing.assert_array_equal(out["jc"], pattern.indices)
        assert out["c"].shape == (pattern.nnz, k)
        np.testing.assert_allclose(out["c"], expected, rtol=1e-5)


def test_unsorted_rows_and_bad_structure_are_named_at_the_call(kernels):
    kernel = kernels["csr_add_assembled"][0]
    A, B = CASES["random"]()
    row = int(np.argmax(np.diff(A.indptr) >= 2))
    indices = A.indices.copy()
    lo = A.indptr[row]
    indices[lo], indices[lo + 1] = indices[lo + 1], indices[lo]
    with pytest.raises(ArgumentError, match="indices_a.*not strictly increasing within row"):
        kernel(A.data, B.data, A.indptr, indices, B.indptr, B.indices, *A.shape, A.nnz, B.nnz)
    bad = A.indices.copy()
    bad[0] = A.shape[1]
    with pytest.raises(ArgumentError, match="indices_a.*out of range"):
        kernel(A.data, B.data, A.indptr, bad, B.indptr, B.indices, *A.shape, A.nnz, B.nnz)
    with pytest.raises(ArgumentError, match="'a'.*shape"):
        kernel(A.data[:-1], B.data, A.indptr, A.indices, B.indptr, B.indices, *A.shape, A.nnz, B.nnz)
    with pytest.raises(ArgumentError, match="'m'.*integer"):
        kernel(A.data, B.data, A.indptr, A.indices, B.indptr, B.indices, 1.5, A.shape[1], A.nnz, B.nnz)


HEADER = '''
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, ia: T.handle, ja: T.handle, ib: T.handle, jb: T.handle,
      ic: T.handle, jc: T.handle, m: T.int32, n: T.int32, na: T.int32, nb: T.int32, nc: T.int32) -> None:
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, na), (ia, ja))
    JB = T.sparse_variable(I, (n, nb), (ib, jb))
    JC = T.sparse_variable(I, ({jc_shape}), (ic, jc){jc_extra})
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
'''


def _script(body: str, jc_shape="n, nc", jc_extra=", assembled=True") -> str:
    return HEADER.format(jc_shape=jc_shape, jc_extra=jc_extra) + body


REFUSED = {
    "not a merge": ('''    with T.sp_iter([I, JA], "SS", "g") as [i, j]:
        C[i, j] = A[i, j]
''', "must be the iterator of a T.union or T.intersect", 16, 9),
    "not at the merge": ('''    with T.sp_iter([I, T.union(JA, JB)], "SS", "g") as [i, j]:
        C[i, 0] = A[i, j]
''', "is at '0' of assembled axis 'JC'", 16, 9),
    "read": ('''    with T.sp_iter([I, T.union(JA, JB)], "SS", "g") as [i, j]:
        C[i, j] = A[i, j] + C[i, j]
''', "cannot be read", 16, 29),
    "iterated": ('''    with T.sp_iter([I, JC], "SS", "g") as [i, j]:
        C[i, j] = T.float32(1)
''', "iterates assembled axis 'JC'", 15, 5),
    "never stored": ('''    with T.sp_iter([I, T.intersect(JA, JB)], "SS", "g") as [i, j]:
        A[i, j] = A[i, j] * B[i, j]
''', "no iteration stores into 'C'", 11, 10),
    "unsorted": ('''    with T.sp_iter([I, T.union(JA, JB)], "SS", "g") as [i, j]:
        C[i, j] = A[i, j]
''', "is assembled: the kernel lists", 11, 57),
    "nnz expression": ('''    with T.sp_iter([I, T.union(JA, JB)], "SS", "g") as [i, j]:
        C[i, j] = A[i, j] + B[i, j]
''', "must be a scalar parameter of its own", 11, 10),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_rules_are_refused_at_their_place(case):
    body, message, line, column = REFUSED[case]
    extra = {"unsorted": dict(jc_extra=", sorted=False, assembled=True"),
             "nnz expression": dict(jc_shape="n, na + nb")}.get(case, {})
    with pytest.raises(VerifyError, match=message) as err:
        sparsetir.parse(_script(body, **extra))
    assert (err.value.line, err.value.col) == (line, column), str(err.value)


def test_stage_two_programs_with_an_assembled_axis_are_refused_by_build():
    f = sparsetir.parse_file(EXAMPLES / "csr_add_assembled.py")
    with pytest.raises(ValueError, match="build its stage-I program"):
        sparsetir.build(pipeline.lower(f, until=pipeline.STAGE_II))


def test_an_int32_total_over_the_index_range_is_refused(kernels, monkeypatch):
    kernel = kernels["csr_add_assembled"][0]
    A, B = CASES["random"]()
    real = kernel.symbolic

    class Huge:
        params = real.params

        def __call__(self, *args, check):
            real(*args, check=check)
            args[-1][:] = 2**30

    monkeypatch.setattr(kernel, "symbolic", Huge())
    with pytest.raises(ArgumentError, match="more than its index type int32 can address"):
        _call(kernel, A, B)


def test_the_numeric_kernel_alone_stays_inside_a_row_pointer_too_short(kernels):
    """``kernel.numeric`` called with a row pointer other than the symbolic kernel's: each row's
    writes stop at its end (no access leaves the arrays), the rows it has room for are right."""
    kernel = kernels["csr_add_assembled"][0]
    A, B = CASES["random"]()
    full = _call(kernel, A, B)
    short = full["indptr_c"].copy()
    short[1:] = np.cumsum(np.maximum(np.diff(full["indptr_c"]) - 1, 0))  # one place short in every row
    nnz = int(short[-1])
    indices, c = np.full(nnz + 1, -5, np.int32), np.full(nnz + 1, -5.0, np.float32)  # one guard element
    m, n = A.shape
    kernel.numeric(A.data, B.data, c[:nnz], A.indptr, A.indices, B.indptr, B.indices, short, indices[:nnz],
                   m, n, A.nnz, B.nnz, nnz)
    assert indices[nnz] == -5 and c[nnz] == -5.0
    for i in range(m):
        lo, hi = short[i], short[i + 1]
        start = full["indptr_c"][i]
        np.testing.assert_array_equal(indices[lo:hi], full["indices_c"][start:start + hi - lo])
        np.testing.assert_array_equal(c[lo:hi], full["c"][start:start + hi - lo])


def test_the_explorer_offers_the_symbolic_program_beside_the_function():
    from sparsetir.explorer.compiler import compile_script

    exploration = sparsetir.explore(sparsetir.parse_file(EXAMPLES / "csr_add_assembled.py"))
    assert exploration.document["functions"] == ["csr_add_assembled", "csr_add_assembled_symbolic"]
    status, document = compile_script(exploration.script, exploration.script.text, "csr_add_assembled_symbolic")
    assert status == "ok" and document["func"] == "csr_add_assembled_symbolic"
    assert "JC_count" in json.dumps(document["lines"])  # its stages show the counts, not C


TWO = '''
from sparsetir.script import tir as T


@T.prim_func
def two(a: T.handle, b: T.handle, c: T.handle, d: T.handle, e: T.handle, ia: T.handle, ja: T.handle, ib: T.handle,
        jb: T.handle, ic: T.handle, jc: T.handle, id_: T.handle, jd: T.handle, m: T.int32, n: T.int32,
        na: T.int32, nb: T.int32, nc: T.int32, nd: T.int32) -> None:
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, na), (ia, ja))
    JB = T.sparse_variable(I, (n, nb), (ib, jb))
    JC = T.sparse_variable(I, (n, nc), (ic, jc), assembled=True)
    JD = T.sparse_variable(I, (n, nd), (id_, jd), assembled=True)
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    D = T.match_sparse_buffer(d, (I, JD), "float32")
    E = T.match_sparse_buffer(e, (I, JD), "float32")
    with T.sp_iter([I, T.union(JA, JB)], "SS", "first") as [i, j]:
        C[i, j] = A[i, j] + B[i, j]
{second}
'''
SEPARATE = '''    with T.sp_iter([I, T.intersect(JA, JB)], "SS", "second") as [i, j]:
        D[i, j] = A[i, j] * B[i, j]
        E[i, j] = A[i, j] - B[i, j]'''
SHARED = '''        D[i, j] = A[i, j] * B[i, j]
        E[i, j] = A[i, j] - B[i, j]'''


@pytest.mark.parametrize("second", ["separate", "shared"])
def test_two_assembled_axes_by_two_merges_or_by_one(second):
    """Two assembled axes, each with its own merge (a union and an intersection), or both
    assembled by the union; an axis with two buffers over it."""
    f = sparsetir.parse(TWO.format(second=SEPARATE if second == "separate" else SHARED))
    A, B = CASES["empty rows"]()
    union = (A + B).tocsr()
    union.sort_indices()
    pattern_d = A.multiply(B).tocsr() if second == "separate" else union
    pattern_d.sort_indices()
    rows = np.repeat(np.arange(A.shape[0]), np.diff(pattern_d.indptr))
    at = (rows, pattern_d.indices)
    expected_d = np.asarray(A[at]).ravel() * np.asarray(B[at]).ravel()
    expected_e = np.asarray(A[at]).ravel() - np.asarray(B[at]).ravel()
    for kernel in (sparsetir.build(f), sparsetir.build(f, schedule="none")):
        out = kernel(a=A.data, b=B.data, ia=A.indptr, ja=A.indices, ib=B.indptr, jb=B.indices, m=A.shape[0],
                     n=A.shape[1], na=A.nnz, nb=B.nnz)
        np.testing.assert_array_equal(out["ic"], union.indptr)
        np.testing.assert_array_equal(out["jc"], union.indices)
        np.testing.assert_allclose(out["c"], union.data, rtol=1e-6)
        np.testing.assert_array_equal(out["id_"], pattern_d.indptr)
        np.testing.assert_array_equal(out["jd"], pattern_d.indices)
        np.testing.assert_allclose(out["d"], expected_d, rtol=1e-6)
        np.testing.assert_allclose(out["e"], expected_e, rtol=1e-6)
