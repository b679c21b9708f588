"""``T.intersect`` / ``T.union`` in a sparse iteration: what parses, what prints back, and every
malformed merge refused at its line and column with the rule it breaks."""

from __future__ import annotations

from pathlib import Path

import pytest
import tvm_ffi

import sparsetir
from sparsetir import ScriptError, ScriptSyntaxError, VerifyError
from sparsetir.ir import MergedAxis, SparseIteration
from sparsetir.script import tir as T

FILENAME = "merge.py"
PACKAGE_DIR = str(Path(sparsetir.__file__).resolve().parent)

HEADER = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, d: T.handle, o: T.handle, ia: T.handle, xa: T.handle, ib: T.handle,
      xb: T.handle, ic: T.handle, xc: T.handle, xu: T.handle, iq: T.handle, xq: T.handle, il: T.handle,
      xl: T.handle, id: T.handle, m: T.int32, n: T.int32, p: T.int32, na: T.int32, nb: T.int32, nc: T.int32) -> None:
    I = T.dense_fixed(m)
    Q = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, na), (ia, xa))
    JB = T.sparse_variable(I, (n, nb), (ib, xb))
    JC = T.sparse_variable(I, (n, nc), (ic, xc))
    JU = T.sparse_fixed(I, (n, 4), xu, sorted=False)
    JQ = T.sparse_variable(Q, (n, nb), (iq, xq))
    JL = T.sparse_variable(I, (p, nb), (il, xl))
    JD = T.dense_variable(I, (n, na), id)
    K = T.dense_fixed(n)
    KA = T.sparse_variable(JA, (n, nc), (ic, xc))
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    D = T.match_sparse_buffer(d, (I, K), "float32")
    O = T.match_sparse_buffer(o, (I,), "float32")
"""
L1 = HEADER.count("\n") + 1  # the line of a snippet's first line


def case(name: str, body: str, message: str, line: int, col: int, kind: type = VerifyError):
    return pytest.param(HEADER + body.lstrip("\n"), message, line, col, kind, id=name)


CASES = [
    case("one-axis", """
    with T.sp_iter([I, T.intersect(JA)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "T.intersect() merges two or more sparse axes", L1, 24),
    case("dense-axis", """
    with T.sp_iter([I, T.union(JA, K)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "T.union merges sparse axes, but 'K' is dense_fixed", L1, 36),
    case("dense-variable-axis", """
    with T.sp_iter([I, T.intersect(JD, JA)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "'JD' is dense_variable", L1, 36),
    case("unsorted-axis", """
    with T.sp_iter([I, T.intersect(JA, JU)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "axis 'JU' is declared sorted=False", L1, 40),
    case("different-parents", """
    with T.sp_iter([I, T.intersect(JA, JQ)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "'JQ' is under 'Q' but 'JA' is under 'I'", L1, 40),
    case("different-lengths", """
    with T.sp_iter([I, T.union(JA, JB, JL)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "'JL' has length p but 'JA' has length n", L1, 40),
    case("axis-twice", """
    with T.sp_iter([I, T.intersect(JA, JB, JA)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "axis 'JA' appears twice in T.intersect", L1, 44),
    case("nested-merge", """
    with T.sp_iter([I, T.intersect(T.union(JA, JB), JC)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "T.intersect merges axes, not T.union(...)", L1, 36),
    case("keyword", """
    with T.sp_iter([I, T.union(JA, JB, op="x")], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "T.union() takes axes only", L1, 40),
    case("not-an-axis", """
    with T.sp_iter([I, T.union(JA, B)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "each argument of T.union: 'B' is not an axis", L1, 36),
    case("kinds-count-one-letter-per-merge", """
    with T.sp_iter([I, T.union(JA, JB)], "SSS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "has 3 letters but the iteration has 2 iterators", L1, 42),
    case("parent-not-iterated", """
    with T.sp_iter([T.intersect(JA, JB)], "S", "s") as [j]:
        O[0] = A[0, j]
""", "depends on 'I', which must be iterated before it", L1, 21),
    case("merged-axis-iterated-again", """
    with T.sp_iter([I, T.intersect(JA, JB), JA], "SSS", "s") as [i, j, k]:
        D[i, j] = A[i, j]
""", "axis 'JA' is iterated twice", L1, 5),
    case("store-through-union", """
    with T.sp_iter([I, T.union(JA, JB)], "SS", "s") as [i, j]:
        A[i, j] = B[i, j]
""", "the store into 'A' at 'j' of T.union(JA, JB) is refused", L1 + 1, 9),
    case("augmented-store-through-union", """
    with T.sp_iter([I, T.union(JA, JB)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
        B[i, j] += A[i, j]
""", "'B' is laid out by 'JB', which does not hold every coordinate of the union", L1 + 2, 9),
    case("init-through-union", """
    with T.sp_iter([I, T.union(JA, JB), K], "SSR", "s") as [i, j, k]:
        with T.init():
            A[i, j] = T.float32(0)
        D[i, k] = D[i, k] + B[i, j]
""", "the store into 'A' at 'j' of T.union(JA, JB) is refused", L1 + 2, 13),
    case("child-of-union", """
    with T.sp_iter([I, T.union(JA, JB), KA], "SSS", "s") as [i, j, k]:
        D[i, j] = A[i, j]
""", "axis 'KA' is under 'JA', which T.union(...) merges", L1, 5),
    case("child-of-union-nested", """
    with T.sp_iter([I, T.union(JA, JB)], "SS", "s") as [i, j]:
        with T.sp_iter([KA], "S", "t") as [k]:
            D[i, j] = A[i, j]
""", "axis 'KA' is under 'JA', which T.union(...) merges", L1 + 1, 9),
    case("starred", """
    with T.sp_iter([I, T.union(*JA)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j]
""", "unpacking is not supported", L1, 32, ScriptSyntaxError),
]


@pytest.mark.parametrize("script,message,line,col,kind", CASES)
def test_malformed_merge(script: str, message: str, line: int, col: int, kind: type):
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(script, FILENAME)
    err = info.value
    assert isinstance(err, kind), type(err)
    assert message in err.message
    assert (err.filename, err.line, err.col) == (FILENAME, line, col), str(err)
    rendered = str(err).splitlines()
    assert rendered[1] == "  " + script.splitlines()[line - 1]
    assert rendered[2].startswith("  " + " " * (col - 1) + "^")
    assert PACKAGE_DIR not in str(err)


VALID = {
    "intersect": """
    with T.sp_iter([I, T.intersect(JA, JB)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j] * B[i, j]
""",
    "union-into-dense": """
    with T.sp_iter([I, T.union(JA, JB)], "SS", "s") as [i, j]:
        D[i, j] = A[i, j] + B[i, j]
""",
    "union-into-third-axis": """
    with T.sp_iter([I, T.union(JA, JB)], "SS", "s") as [i, j]:
        C[i, j] = A[i, j] - B[i, j]
""",
    "three-way-with-reduction": """
    with T.sp_iter([I, T.intersect(JA, JB, JC)], "SR", "s") as [i, j]:
        with T.init():
            O[i] = T.float32(0)
        O[i] = O[i] + A[i, j] * B[i, j] * C[i, j]
""",
    "nested-under-a-row": """
    with T.sp_iter([I], "S", "rows") as [i]:
        with T.sp_iter([T.union(JA, JB, JC)], "S", "s") as [j]:
            D[i, j] = A[i, j] + B[i, j] + C[i, j]
""",
    "child-of-intersect": """
    with T.sp_iter([I, T.intersect(JA, JB), KA], "SSS", "s") as [i, j, k]:
        D[i, j] = D[i, j] + B[i, j]
""",
}


@pytest.mark.parametrize("body", VALID.values(), ids=VALID.keys())
def test_round_trip_stage1(body: str):
    f = sparsetir.parse(HEADER + body.lstrip("\n"), FILENAME)
    text = f.script()
    assert "T.intersect(" in text or "T.union(" in text
    again = sparsetir.parse(text)
    sparsetir.assert_structural_equal(again, f)
    assert again.script() == text


def test_merged_entry_is_one_node_with_its_span():
    f = sparsetir.parse(HEADER + VALID["union-into-third-axis"].lstrip("\n"), FILENAME)
    it = f.body[0]
    assert isinstance(it, SparseIteration)
    entry = it.axes[1]
    assert isinstance(entry, MergedAxis)
    assert entry.op == "union" and [a.name for a in entry.axes] == ["JA", "JB"]
    assert (int(entry.span.line), int(entry.span.column)) == (L1, 24)
    assert len(it.iter_vars) == 2 and it.kinds == "SS"


def test_op_and_axes_take_part_in_equality():
    union = sparsetir.parse(HEADER + VALID["union-into-dense"].lstrip("\n"), FILENAME)
    swapped = VALID["union-into-dense"].replace("T.union(JA, JB)", "T.union(JB, JA)")
    intersect = VALID["union-into-dense"].replace("T.union", "T.intersect")
    for other in (swapped, intersect):
        assert not sparsetir.structural_equal(union, sparsetir.parse(HEADER + other.lstrip("\n"), FILENAME))


def test_verifier_holds_code_built_merges_to_the_rules():
    f = sparsetir.parse(HEADER + VALID["intersect"].lstrip("\n"), FILENAME)
    it = f.body[0]
    axes = {a.name: a for a in f.axes}
    bad = MergedAxis("intersect", [axes["JA"], axes["JU"]], it.axes[1].span)
    broken = SparseIteration(it.name, [it.axes[0], bad], it.kinds, it.iter_vars, it.init, it.body, it.attrs, it.span)
    with pytest.raises(VerifyError, match="axis 'JU' is declared sorted=False") as info:
        sparsetir.ir.verify(tvm_ffi.dataclasses.replace(f, body=[broken]))
    assert (info.value.line, info.value.col) == (L1, 24)


@pytest.mark.parametrize("construct", ["intersect", "union"])
def test_constructs_have_no_meaning_outside_a_script(construct: str):
    with pytest.raises(ScriptError, match=f"T.{construct} is a script construct"):
        getattr(T, construct)()


def test_merge_in_an_expression_is_an_error():
    script = HEADER + """\
    with T.sp_iter([I, JA], "SS", "s") as [i, j]:
        O[i] = T.union(JA, JB)
"""
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(script, FILENAME)
    assert (info.value.line, info.value.col) == (L1 + 1, 16)
