"""What lowering refuses is a LoweringError of its own, naming the script line, not TVM's error."""

from __future__ import annotations

import pytest

import sparsetir

SCRIPT = '''from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (m, nnz), (indptr, indices){sorted})
    Jd = T.dense_fixed(m)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    C = T.match_sparse_buffer(c, (I, Jd), "float32")
{body}
'''

UNSORTED_LOOKUP = SCRIPT.format(sorted=", sorted=False", body='''\
    with T.sp_iter([I, Jd], "SS", "gather") as [i, j]:
        C[i, j] = A[i, j]''')

LOOKUP_IN_INIT = SCRIPT.format(sorted="", body='''\
    with T.sp_iter([I, Jd, J], "SSR", "acc") as [i, k, j]:
        with T.init():
            C[i, k] = A[i, k]
        C[i, k] = C[i, k] + A[i, j]''')


LOOKUP_IN_INIT_INSIDE = SCRIPT.format(sorted="", body='''\
    with T.sp_iter([I, Jd, J], "SSR", "acc") as [i, k, j]:
        with T.init():
            C[i, k] = T.float32(2) * T.exp(A[i, k]) + 1.0
        C[i, k] = C[i, k] + A[i, j]''')


# The refusal names the load it is about (line and column of ``A[...]``), not just its statement.
@pytest.mark.parametrize("text,line,col,message", [
    (UNSORTED_LOOKUP, 12, 19, "looking a coordinate up in unsorted axis 'J' is not supported"),
    (LOOKUP_IN_INIT, 13, 23, "an access to 'A' in T.init() would need a coordinate lookup in axis 'J'"),
    (LOOKUP_IN_INIT_INSIDE, 13, 44, "an access to 'A' in T.init() would need a coordinate lookup in axis 'J'"),
])
def test_a_refused_lookup_is_a_lowering_error_at_its_load(text, line, col, message):
    f = sparsetir.parse(text)
    with pytest.raises(sparsetir.LoweringError) as info:
        sparsetir.lower_sparse_iter(f)
    assert f"<script>:{line}:{col}: {message}" in str(info.value)
    assert text.splitlines()[line - 1][col - 1:].startswith("A[i, k]" if text is not UNSORTED_LOOKUP else "A[i, j]")
    assert info.value.__cause__ is None or isinstance(info.value.__cause__, sparsetir.SparseTIRError)
