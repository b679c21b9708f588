"""Stage II prints and reads the TIR statements TVMScript writes (issue 21 item 7).

``x: T.int32 = v`` (a ``Bind``), ``assert cond, "msg"``, ``T.alloc_buffer`` and ``T.decl_buffer``
statements in a body, ``with T.attr(node, "key", value):``, and the match_buffers of a blockized
(tensorized) block: each parses to the node, prints back to the same text, and parses back to an
equal function.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tvm
from tvm.script import tirx as T

import sparsetir
from sparsetir._tvm import tirx

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"
ANCHOR = "            for j, k in T.grid("


@pytest.fixture(scope="module")
def stage2_text() -> str:
    return sparsetir.lower_sparse_iter(sparsetir.parse_file(SCRIPT)).script()


def with_lines(text: str, lines: str) -> str:
    """``text`` with ``lines`` (indented for the outer block's body) before its inner loop."""
    assert ANCHOR in text
    return text.replace(ANCHOR, "".join(f"            {line}\n" for line in lines.splitlines()) + ANCHOR, 1)


def round_trip(text: str) -> sparsetir.Stage2Function:
    f2 = sparsetir.parse(text, "stage2.py")
    printed = f2.script()
    assert printed == text  # the script is already in the printer's spelling
    again = sparsetir.parse(printed, "stage2.py")
    sparsetir.assert_structural_equal(again, f2)
    return f2


def node_types(f2: sparsetir.Stage2Function) -> set[str]:
    """Names of the statement types in the body."""
    seen: set[str] = set()

    def walk(s):
        seen.add(type(s).__name__)
        if isinstance(s, tirx.SeqStmt):
            for sub in s.seq:
                walk(sub)
        elif isinstance(s, tvm.s_tir.SBlockRealize):
            walk(s.block.body)
        elif hasattr(s, "body") and s.body is not None:
            walk(s.body)

    walk(f2.prim.body)
    return seen


FORMS = [
    ("bind", 'nz: T.int32 = J_indptr[vi + 1] - J_indptr[vi]\nJ_indptr[vi] = nz', "Bind"),
    ("assert", 'assert J_indptr[vi] <= J_indptr[vi + 1], "indptr is not sorted"', "AssertStmt"),
    ("assert-kind-and-parts", 'assert vi < m, ("ValueError", ["row ", "out of range"])', "AssertStmt"),
    ("alloc-buffer", 'acc = T.alloc_buffer((4,), "float32", scope="local")\nacc[0] = T.float32(0)', "AllocBuffer"),
    ("alloc-buffer-annotations", 'acc = T.alloc_buffer((4,), "float32", annotations={"note": 1})\nacc[0] = T.float32(0)',
     "AllocBuffer"),
    ("decl-buffer", 'C_flat = T.decl_buffer((m * feat_size,), "float32", data=C.data)\nC_flat[vi] = T.float32(0)',
     "DeclBuffer"),
    ("attr-buffer", 'with T.attr(C, "pragma_note", 1):\n    C[vi, 0] = T.float32(0)', "AttrStmt"),
    ("attr-string", 'with T.attr("s", "pragma_note", vi + 1):\n    T.evaluate(0)', "AttrStmt"),
    ("attr-expr", 'with T.attr(0, "pragma_note", 2):\n    T.evaluate(0)', "AttrStmt"),
]


@pytest.mark.parametrize("lines,node", [f[1:] for f in FORMS], ids=[f[0] for f in FORMS])
def test_statement_round_trips(stage2_text, lines, node):
    f2 = round_trip(with_lines(stage2_text, lines))
    assert node in node_types(f2)


def test_assert_message_is_kept(stage2_text):
    f2 = round_trip(with_lines(stage2_text, 'assert vi < m, ("ValueError", ["row ", "out of range"])'))
    found = []

    def walk(s):
        if isinstance(s, tirx.AssertStmt):
            found.append(s)
        for child in ([*s.seq] if isinstance(s, tirx.SeqStmt) else [s.block.body] if isinstance(s, tvm.s_tir.SBlockRealize)
                      else [s.body] if getattr(s, "body", None) is not None else []):
            walk(child)

    walk(f2.prim.body)
    (stmt,) = found
    assert str(stmt.error_kind.value) == "ValueError"
    assert [str(p.value) for p in stmt.message_parts] == ["row ", "out of range"]


# (id, lines, message, the text the error points at)
ERRORS = [
    ("bind-without-dtype", "nz: int = 1", "a binding's type is T.<dtype>", "int"),
    ("bind-unknown-dtype", "nz: T.int33 = 1", "unknown construct 'T.int33'; did you mean 'T.int32'?", "T.int33"),
    ("bind-wrong-type", "nz: T.int32 = T.float32(1)", "binding a float32 value to 'nz' of int32", "T.float32(1)"),
    ("bind-twice", "nz: T.int32 = 1\nnz: T.int32 = 2", "'nz' is already defined", "nz: T.int32 = 2"),
    ("assert-no-message", "assert vi < m", "an assert needs a message", "assert vi < m"),
    ("assert-message-not-literal", "assert vi < m, m", "an assert needs a message", "m\n"),
    ("assert-not-bool", 'assert vi, "x"', "an assert condition must be bool", "vi,"),
    ("decl-buffer-no-data", 'X = T.decl_buffer((4,), "float32")', "needs the data it views", "T.decl_buffer("),
    ("decl-buffer-data-not-buffer", 'X = T.decl_buffer((4,), "float32", data=vi.data)', "'vi' is not a buffer", "vi.data"),
    ("decl-buffer-data-not-data", 'X = T.decl_buffer((4,), "float32", data=C)', "data= takes another buffer's data", "C)"),
    ("attr-arity", 'with T.attr(0, "k"):\n    T.evaluate(0)', 'T.attr(node, "key", value) takes', 'T.attr(0, "k")'),
    ("attr-key-not-string", "with T.attr(0, 1, 2):\n    T.evaluate(0)", "an attribute key is a string literal", "1, 2"),
]


@pytest.mark.parametrize("lines,message,at", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_malformed_statement_is_located(stage2_text, lines, message, at):
    bad = with_lines(stage2_text, lines)
    with pytest.raises(sparsetir.ScriptError) as info:
        sparsetir.parse(bad, "stage2.py")
    err = info.value
    assert message in err.message, str(err)
    start = bad.index(lines.splitlines()[0])
    offset = bad.index(at.rstrip("\n"), start) if not at.endswith("\n") else bad.index(at, start)
    line = bad[:offset].count("\n") + 1
    col = offset - (bad.rfind("\n", 0, offset) + 1) + 1
    assert (err.line, err.col) == (line, col), str(err)
    assert str(err).startswith(f"stage2.py:{line}:{col}: error:")
    assert "sparsetir/" not in str(err)


# --- tensorize at stage II ----------------------------------------------------------------------

@T.prim_func(s_tir=True)
def axpy4_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (4,), "float32", offset_factor=1)
    with T.sblock("root"):
        T.reads(C[0:4], A[0:4], B[0:4])
        T.writes(C[0:4])
        for i in T.serial(4):
            with T.sblock("update"):
                vi = T.axis.remap("S", [i])
                C[vi] = C[vi] + A[vi] * B[vi]


@T.prim_func(s_tir=True)
def axpy4_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (4,), "float32", offset_factor=1)
    with T.sblock("root"):
        T.reads(C[0:4], A[0:4], B[0:4])
        T.writes(C[0:4])
        for i in T.vectorized(4):
            C[i] = C[i] + A[i] * B[i]


AXPY = '''@T.prim_func
def axpy(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")) -> None:
    T.func_attr({"sparse_tir_level": 1})
    for i, j in T.grid(16, 8):
        with T.sblock("update"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj], A[vi, vj], B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = C[vi, vj] + A[vi, vj] * B[vi, vj]
'''


def test_tensorized_stage2_program_round_trips():
    tvm.s_tir.TensorIntrin.register("sparsetir_test_axpy4", axpy4_desc, axpy4_impl, override=True)
    sch = tvm.s_tir.Schedule(sparsetir.parse(AXPY, "axpy.py").func)
    _, j = sch.get_loops(sch.get_sblock("update"))
    _, inner = sch.split(j, [None, 4])
    sch.tensorize(inner, "sparsetir_test_axpy4")
    f2 = sparsetir.Stage2Function.from_func(sch.mod["main"])
    text = f2.script()
    assert 'T.match_buffer((4,), "float32", offset_factor=1, source=A[vi_o, vj_o * 4:vj_o * 4 + 4])' in text
    again = sparsetir.parse(text, "axpy.py")
    sparsetir.assert_structural_equal(again, f2)
    assert again.script() == text


# --- T.decl_buffer lowers and computes (issue 21 item 8, stage II) ------------------------------

FLAT = '''@T.prim_func
def flat_scale(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")) -> None:
    T.func_attr({"sparse_tir_level": 1})
    with T.sblock("root"):
        T.reads(A[0:4, 0:8])
        T.writes(C[0:4, 0:8])
        A_flat = T.decl_buffer((32,), "float32", data=A.data)
        C_flat = T.decl_buffer((32,), "float32", data=C.data)
        for k in range(32):
            C_flat[k] = A_flat[k] * T.float32(2) + T.cast(k, "float32")
'''


def test_decl_buffer_view_computes_the_reference():
    """Two 1-D views of 2-D parameters (seed 002's alias of another buffer's data) compute what
    NumPy's reshape does."""
    import numpy as np

    f2 = round_trip(FLAT)
    kernel = sparsetir.build(f2)
    a = np.random.default_rng(0).random((4, 8), dtype="float32")
    c = np.zeros((4, 8), "float32")
    kernel(a, c)
    expected = (a.reshape(32) * 2 + np.arange(32, dtype="float32")).reshape(4, 8)
    np.testing.assert_allclose(c, expected, rtol=1e-6)
