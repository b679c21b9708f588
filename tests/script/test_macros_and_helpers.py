"""Seed 003's metaprogramming (issue 21 item 9, part b): ``@T.macro`` helpers expanded while a
script is read, and calls to plain Python helpers of the script's scope that compute constants.

What a script may call is checked: only ``def``/``lambda`` functions its scope provides, with
constant arguments, giving constants; everything else is an error at the call's line and column.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import sparsetir
from sparsetir import ScriptError, VerifyError
from sparsetir.script import tir as T

WIDTH = 2


def rows_of(k):
    """A plain helper: computed while the script is read."""
    return k * WIDTH


def acc_dtype():
    return "float32"


@T.macro
def accumulate(Y, A, X, i, j):
    """Y[i] += A[i, j] * X[j], with the accumulation type a helper names."""
    Y[i] = Y[i] + T.cast(A[i, j] * X[j], acc_dtype())


@T.macro
def copy_scaled(I, dst, src, factor, name):
    with T.sp_iter([I], "S", name) as [i]:
        dst[i] = src[i] * factor


@T.prim_func
def with_macros(a: T.handle, x: T.handle, y: T.handle, z: T.handle, indptr: T.handle, indices: T.handle,
                m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    X = T.match_sparse_buffer(x, (J_dense,), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    Z = T.match_sparse_buffer(z, (I,), "float32")
    with T.sp_iter([I, J], "SR", "csrmv") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        accumulate(Y, A, X, i, j)
    copy_scaled(I, Z, Y, T.float32(rows_of(3)), "scale")


WRITTEN_OUT = '''from sparsetir.script import tir as T


@T.prim_func
def with_macros(a: T.handle, x: T.handle, y: T.handle, z: T.handle, indptr: T.handle, indices: T.handle,
                m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    X = T.match_sparse_buffer(x, (J_dense,), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    Z = T.match_sparse_buffer(z, (I,), "float32")
    with T.sp_iter([I, J], "SR", "csrmv") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + T.cast(A[i, j] * X[j], "float32")
    with T.sp_iter([I], "S", "scale") as [i]:
        Z[i] = Y[i] * T.float32(6)
'''


def test_macros_and_helpers_expand_to_the_written_out_function():
    sparsetir.assert_structural_equal(with_macros, sparsetir.parse(WRITTEN_OUT))
    printed = with_macros.script()
    assert "accumulate" not in printed and "rows_of" not in printed and "T.float32(6)" in printed
    sparsetir.assert_structural_equal(sparsetir.parse(printed), with_macros)


def test_the_expanded_function_builds_and_matches_numpy():
    rng = np.random.default_rng(0)
    m, n = 6, 8
    dense = rng.uniform(-1, 1, (m, n)).astype(np.float32) * (rng.random((m, n)) < 0.5)
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]).astype(np.int32)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y, z = np.zeros(m, np.float32), np.zeros(m, np.float32)
    sparsetir.build(with_macros)(a=dense[rows, cols].copy(), x=x, y=y, z=z, indptr=indptr,
                                 indices=cols.astype(np.int32), m=m, n=n, nnz=len(cols))
    np.testing.assert_allclose(y, dense @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z, 6 * (dense @ x), rtol=1e-5, atol=1e-5)


def test_spans_of_expanded_statements_point_into_the_macro():
    store = with_macros.body[0].body[0]
    assert int(store.span.line) == accumulate.node.body[1].lineno + accumulate.source.line_offset


TEXT = '''from sparsetir.script import tir as T


@T.macro
def bump(B, i, amount):
    B[i] = B[i] + amount


@T.prim_func
def f(b: T.handle, m: T.int32) -> None:
    I = T.dense_fixed(T.int32(size()))
    B = T.match_sparse_buffer(b, (I,), dtype_name())
    with T.sp_iter([I], "S", "bump") as [i]:
        bump(B, i, T.float64(1.5))
        bump(B, i, step(2))
'''


def test_a_script_text_has_its_own_macros_and_the_helpers_its_caller_provides():
    captures = {"size": lambda: 16, "dtype_name": lambda: "float64", "step": functools.partial(lambda k, d: k / d, d=4)}
    f = sparsetir.parse(TEXT, "case.py", captures=captures)
    text = f.script()
    assert "I = T.dense_fixed(16)" in text and '"float64"' in text
    assert "B[i] = B[i] + T.float64(1.5)" in text and "B[i] = B[i] + T.float64(0.5)" in text
    sparsetir.assert_structural_equal(sparsetir.parse(text), f)


def _located(text, captures, message, line, col, kind=VerifyError):
    with pytest.raises(kind) as info:
        sparsetir.parse(text, "case.py", captures=captures)
    err = info.value
    assert message in err.message, err.message
    assert (err.filename, err.line, err.col) == ("case.py", line, col), str(err)
    assert f"case.py:{line}:{col}: error: " in str(err) and "^" in str(err)
    return err


OK_CAPTURES = {"size": lambda: 16, "dtype_name": lambda: "float64", "step": lambda k: k / 4}

# (replace this, with this, message, line, col) applied to TEXT
ERRORS = [
    ("step(2)", "step(i)", "the arguments of the Python helper 'step' must be constants", 15, 25),
    ("step(2)", "step(1, 2)", "the Python helper 'step' raised TypeError", 15, 20),
    ("step(2)", "zero(2)", "the Python helper 'zero' raised ZeroDivisionError: division by zero", 15, 20),
    ("step(2)", "listed(2)", "the Python helper 'listed' returned a list; a helper called from a script must return a constant", 15, 20),
    ("step(2)", "shown(2)", "'shown' is a Python builtin_function_or_method; a script may call only plain Python functions", 15, 20),
    ("step(2)", "Klass(2)", "'Klass' is a Python type; a script may call only plain Python functions", 15, 20),
    ("bump(B, i, step(2))", "bump(B, i)", "macro 'bump' is missing argument 'amount'", 15, 9),
    ("bump(B, i, step(2))", "bump(B, i, 1.0, 2.0)", "macro 'bump' takes 3 arguments but 4 were given", 15, 9),
    ("bump(B, i, step(2))", "bump(B, i, amount=1.0, i=i)", "macro 'bump' got multiple values for argument 'i'", 15, 32),
    ("bump(B, i, step(2))", "bump(B, q, 1.0)", "undefined name 'q'", 15, 17),
    ("T.int32(size())", "T.int32(huge())", "the Python helper 'huge' returned inf", 11, 31),
    ("dtype_name()", "surrogate()", "the Python helper 'surrogate' returned a string that is not text", 12, 40),
]
ERROR_CAPTURES = dict(OK_CAPTURES, zero=lambda k: k / 0, listed=lambda k: [k], shown=print, Klass=dict,
                      huge=lambda: float("inf"), surrogate=lambda: "\ud800")


@pytest.mark.parametrize("old, new, message, line, col", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_are_located_at_the_call(old, new, message, line, col):
    assert old in TEXT
    _located(TEXT.replace(old, new, 1), ERROR_CAPTURES, message, line, col)


def test_an_error_inside_a_macro_is_located_there_and_names_the_call():
    text = TEXT.replace("B[i] = B[i] + amount", "B[i] = B[i] + C[i]")
    err = _located(text, OK_CAPTURES, "undefined name 'C'", 6, 19)
    assert "(in macro 'bump' called at case.py:14:9)" in err.message


def test_a_macro_sees_its_parameters_only_not_the_callers_names():
    text = TEXT.replace("B[i] = B[i] + amount", "B[i] = B[i] + amount + T.float64(m)")
    _located(text, OK_CAPTURES, "undefined name 'm'", 6, 38)


def test_a_macro_that_calls_itself_stops():
    text = TEXT.replace("    B[i] = B[i] + amount\n", "    bump(B, i, amount)\n")
    err = _located(text, OK_CAPTURES, "macros expand more than 16 deep here (does 'bump' call itself?)", 6, 5)
    assert "called at case.py:14:9" in err.message


def test_without_captures_nothing_is_called():
    """A script parsed from text with no captures can call nothing: helpers are what a caller gives."""
    with pytest.raises(ScriptError, match="calling 'size' is not supported") as info:
        sparsetir.parse(TEXT, "case.py")
    assert (info.value.line, info.value.col) == (11, 31)


def test_a_macro_cannot_be_called_from_python():
    with pytest.raises(ScriptError, match="T.macro 'accumulate' is expanded where a script calls it"):
        accumulate(1, 2, 3, 4, 5)


STAGE2 = '''from sparsetir.script import tir as T


@T.macro
def scaled(A, v, factor):
    A[v] = A[v] * factor
    A[v] = A[v] + T.float32(offset())


@T.prim_func
def scale(a: T.handle, m: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1})
    I = T.dense_fixed(m)
    A = T.match_sparse_buffer(a, (I,), "float32")
    for i in range(m):
        with T.sblock("scale0"):
            vi = T.axis.spatial(m, i)
            T.reads(A[vi])
            T.writes(A[vi])
            T.sblock_attr({"sparse": True})
            scaled(A, vi, T.float32(3))
'''


def test_a_macro_expands_in_a_stage2_script():
    f2 = sparsetir.parse(STAGE2, "case.py", captures={"offset": lambda: 0.5})
    assert isinstance(f2, sparsetir.Stage2Function)
    written = STAGE2.replace("            scaled(A, vi, T.float32(3))\n",
                             "            A[vi] = A[vi] * T.float32(3)\n            A[vi] = A[vi] + T.float32(0.5)\n")
    sparsetir.assert_structural_equal(f2, sparsetir.parse(written, "case.py", captures={"offset": lambda: 0.5}))
    sparsetir.assert_structural_equal(sparsetir.parse(f2.script()), f2)
    a = np.arange(4, dtype=np.float32)
    sparsetir.build(f2)(a=a, m=4)
    np.testing.assert_allclose(a, np.arange(4) * 3 + 0.5)


def test_a_stage2_macro_sees_its_parameters_only():
    text = STAGE2.replace("A[v] = A[v] * factor", "A[v] = A[v] * factor * T.float32(i)")
    err = _located(text, {"offset": lambda: 0.5}, "undefined name 'i'", 6, 38)
    assert "(in macro 'scaled' called at case.py:21:13)" in err.message


INIT_MACRO = '''from sparsetir.script import tir as T


@T.macro
def reduce_row(Y, A, X, i, j):
    with T.init():
        Y[i] = T.float32(0)
    Y[i] = Y[i] + A[i, j] * X[j]


@T.prim_func
def csrmv(a: T.handle, x: T.handle, y: T.handle, indptr: T.handle, indices: T.handle,
          m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    X = T.match_sparse_buffer(x, (J_dense,), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    with T.sp_iter([I, J], "SR", "csrmv") as [i, j]:
        reduce_row(Y, A, X, i, j)
'''


def test_a_macro_called_in_a_sparse_iteration_may_give_its_init():
    f = sparsetir.parse(INIT_MACRO, "case.py")
    written = INIT_MACRO.replace("        reduce_row(Y, A, X, i, j)\n", "        with T.init():\n            Y[i] = T.float32(0)\n"
                                 "        Y[i] = Y[i] + A[i, j] * X[j]\n")
    sparsetir.assert_structural_equal(f, sparsetir.parse(written, "case.py"))
    assert f.body[0].init is not None


def test_a_macro_init_after_other_statements_is_located():
    text = INIT_MACRO.replace("        reduce_row(Y, A, X, i, j)\n", "        Y[i] = Y[i] + T.float32(1)\n"
                              "        reduce_row(Y, A, X, i, j)\n")
    err = _located(text, {}, "T.init() must come before the other statements of the sparse iteration", 6, 5)
    assert "(in macro 'reduce_row' called at case.py:22:9)" in err.message
    outside = INIT_MACRO.replace("    with T.sp_iter([I, J], \"SR\", \"csrmv\") as [i, j]:\n        reduce_row(Y, A, X, i, j)\n",
                                 "    reduce_row(Y, A, X, I, J)\n")
    _located(outside, {}, "T.init() is only allowed directly inside a sparse iteration", 6, 5)
