"""``T.decl_buffer`` in stage-I scripts (issue 21 item 8, stage I): a dense view of a parameter's
data under another shape (seed 002's DeclBuffer) round-trips, lowers and computes NumPy's
reshape reference; its misuses are errors at the offending text."""

import numpy as np
import pytest

import sparsetir

ROW_SUM = '''from sparsetir.script import tir as T


@T.prim_func
def row_sum(a: T.handle, c: T.handle, m: T.int32, n: T.int32) -> None:
    K = T.dense_fixed(m * n)
    I = T.dense_fixed(m)
    J = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (K,), "float32")
    C = T.match_sparse_buffer(c, (I,), "float32")
    A2 = T.decl_buffer((I, J), "float32", data=A.data)
    with T.sp_iter([I, J], "SR", "row_sum") as [i, j]:
        with T.init():
            C[i] = T.float32(0)
        C[i] = C[i] + A2[i, j] * T.float32(2)
'''


def test_view_round_trips():
    f = sparsetir.parse(ROW_SUM, "row_sum.py")
    text = f.script()
    assert 'A2 = T.decl_buffer((I, J), "float32", data=A.data)' in text
    again = sparsetir.parse(text, "again.py")
    sparsetir.assert_structural_equal(again, f)
    assert again.script() == text


def test_view_lowers_to_accesses_of_the_data():
    """Stage II reads A row-major at the view's element: A[vi * n + vj]; no buffer A2 is left."""
    text = sparsetir.lower_sparse_iter(sparsetir.parse(ROW_SUM, "row_sum.py")).script()
    assert "A[vi * n + vj]" in text
    assert "A2" not in text


def test_view_computes_the_reference():
    kernel = sparsetir.build(sparsetir.parse(ROW_SUM, "row_sum.py"))
    a = np.random.default_rng(0).random(12, dtype="float32")
    c = np.zeros(3, "float32")
    kernel(a, c, 3, 4)
    np.testing.assert_allclose(c, a.reshape(3, 4).sum(1) * 2, rtol=1e-5)


BITS = '''from sparsetir.script import tir as T


@T.prim_func
def bits(a: T.handle, c: T.handle, n: T.int32) -> None:
    N = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (N,), "float32")
    C = T.match_sparse_buffer(c, (N,), "int32")
    W = T.decl_buffer((N,), "int32", data=A.data)
    with T.sp_iter([N], "S", "bits") as [i]:
        C[i] = W[i] >> 23
        W[i] = W[i] & 2147483647
'''


def test_a_view_of_another_dtype_of_the_same_width_reads_and_writes_the_bits():
    """An int32 view of float32 data (seed 002's DeclBuffer under another dtype): loads read the
    float's bits (its biased exponent and sign: bits >> 23), stores write bits back (clearing
    the sign bit is abs); round trip, and NumPy's ``view`` as the reference."""
    f = sparsetir.parse(BITS, "bits.py")
    assert 'W = T.decl_buffer((N,), "int32", data=A.data)' in f.script()
    sparsetir.assert_structural_equal(sparsetir.parse(f.script(), "again.py"), f)
    stage2 = sparsetir.lower_sparse_iter(f)
    assert 'T.reinterpret("int32", A[vi])' in stage2.script()
    sparsetir.assert_structural_equal(sparsetir.parse(stage2.script(), "stage2.py"), stage2)
    a = np.array([1.5, -2.0, 0.0, -np.inf, 3e-39, np.nan], dtype="float32")
    before = a.copy()
    c = np.zeros(a.shape, "int32")
    sparsetir.build(f)(a, c, a.shape[0])
    np.testing.assert_array_equal(c, before.view("int32") >> 23)
    np.testing.assert_array_equal(a.view("int32"), before.view("int32") & 0x7FFFFFFF)


FIXED = ROW_SUM.replace("m: T.int32, n: T.int32", "").replace(", c: T.handle, ", ", c: T.handle") \
    .replace("m * n", "12").replace("T.dense_fixed(m)", "T.dense_fixed(3)").replace("T.dense_fixed(n)", "T.dense_fixed(4)")

# (id, the header line replaced, its replacement, message, the text the error points at)
ERRORS = [
    ("larger-than-data", "K = T.dense_fixed(12)", "K = T.dense_fixed(10)", "the view has 12 elements but 'A' has only 10",
     "(I, J), \"float32\", data"),
    ("unknown-buffer", "data=A.data", "data=B.data", "undefined name 'B'", "B.data"),
    ("not-a-buffer", "data=A.data", "data=I.data", "'I' is not a sparse buffer", "I.data"),
    ("not-data", "data=A.data", "data=A", "data= takes a sparse buffer's data", "A)"),
    ("other-width", 'T.decl_buffer((I, J), "float32"', 'T.decl_buffer((I, J), "float64"',
     "float64 is 64 bits wide, the data's float32 32", '"float64"'),
]


@pytest.mark.parametrize("old,new,message,at", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_misused_view_is_located(old, new, message, at):
    assert old in FIXED
    bad = FIXED.replace(old, new)
    with pytest.raises(sparsetir.ScriptError) as info:
        sparsetir.parse(bad, "view.py")
    err = info.value
    assert message in err.message, str(err)
    offset = bad.index(at, bad.index("A2 = T.decl_buffer"))
    line = bad[:offset].count("\n") + 1
    col = offset - (bad.rfind("\n", 0, offset) + 1) + 1
    assert (err.line, err.col) == (line, col), str(err)
    assert str(err).startswith(f"view.py:{line}:{col}: error:")
    assert "sparsetir/" not in str(err)


def test_reinterpret_of_another_width_is_located():
    bad = BITS.replace("C[i] = W[i] >> 23", 'C[i] = T.reinterpret("int16", A[i])')
    with pytest.raises(sparsetir.ScriptError) as info:
        sparsetir.parse(bad, "bits.py")
    line = bad.splitlines().index('        C[i] = T.reinterpret("int16", A[i])') + 1
    assert "int16 is 16 bits wide, the value's float32 32" in info.value.message
    assert (info.value.line, info.value.col) == (line, 30)  # at "int16"
