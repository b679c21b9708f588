"""Every fixture script is a round-trip test, and parsed nodes point back at their source lines.

For each function of each file under tests/scripts: parse, print, parse the print, and require
the two functions to be structurally equal and the printed text to be a fixed point.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sparsetir
from sparsetir.ir import SparseIteration
from sparsetir.script import tir as T
from sparsetir.script.stage2_parser import is_stage2_text

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# Stage-I scripts only: a stage-II script ("sparse_tir_level": 1) parses to another IR.
EXAMPLES = SCRIPTS.parent.parent / "examples"
FIXTURES = sorted(
    p for p in [*SCRIPTS.glob("**/*.py"), *EXAMPLES.glob("*.py")] if not is_stage2_text(p.read_text())
)


def _functions(path: Path) -> dict[str, sparsetir.SparseFunction]:
    parsed = sparsetir.parse_file(path)
    return parsed if isinstance(parsed, dict) else {parsed.name: parsed}


def _walk(stmts):
    """Every statement, nested iterations' init and body included, in source order."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, SparseIteration):
            yield from _walk(stmt.init or [])
            yield from _walk(stmt.body)


def test_fixtures_exist():
    assert {p.parent.name for p in FIXTURES} >= {"rfc", "examples"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_roundtrip(path: Path):
    for name, func in _functions(path).items():
        printed = func.script()
        again = sparsetir.parse(printed, f"<printed {name}>")
        sparsetir.assert_structural_equal(func, again)
        assert again.script() == printed
        assert sparsetir.structural_hash(func) == sparsetir.structural_hash(again)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_spans_point_at_their_lines(path: Path):
    """Axes, buffers, iterations and stores carry spans on the line that wrote them."""
    lines = path.read_text().splitlines()
    for func in _functions(path).values():
        assert func.span.source_name.name == str(path)
        assert lines[func.span.line - 1].lstrip().startswith("def ")
        for axis in func.axes:
            assert f"{axis.name} = T." in lines[axis.span.line - 1]
        for buf in func.buffers:
            assert f"{buf.name} = T." in lines[buf.span.line - 1]
        for stmt in _walk(func.body):
            text = lines[stmt.span.line - 1]
            assert stmt.span.source_name.name == str(path)
            if isinstance(stmt, SparseIteration):
                assert "T.sp_iter(" in text[stmt.span.column - 1 :]
            elif hasattr(stmt, "buffer"):
                assert text[stmt.span.column - 1 :].startswith(f"{stmt.buffer.name}[")


def _line_of(path: Path, text: str) -> int:
    """The 1-based line of the only line of ``path`` containing ``text``."""
    hits = [k + 1 for k, line in enumerate(path.read_text().splitlines()) if text in line]
    assert len(hits) == 1, (path, text, hits)
    return hits[0]


def test_csrmm_spans_spot_check():
    path = SCRIPTS / "rfc" / "csrmm.py"
    func = sparsetir.parse_file(path)
    (it,) = func.body
    assert (it.span.line, it.span.column) == (_line_of(path, "with T.sp_iter("), 5)
    (init,) = it.init
    assert (init.span.line, init.span.column) == (_line_of(path, "C[i, k] = 0.0"), 13)
    (update,) = it.body
    assert (update.span.line, update.span.column) == (_line_of(path, "C[i, k] = C[i, k] +"), 9)
    assert update.span.end_line == update.span.line
    assert func.axis("J").span.line == _line_of(path, "J = T.sparse_variable(")
    assert func.buffer("B").span.line == _line_of(path, "B = T.match_sparse_buffer(")


def test_multiline_iteration_spans_spot_check():
    """composable_result.py splits `as [...]` over lines: the span starts at the `with`."""
    path = SCRIPTS / "rfc" / "composable_result.py"
    func = sparsetir.parse_file(path)
    by_name = {it.name: it for it in func.body}
    it = by_name["rewrite_A_16"]
    assert it.span.line == _line_of(path, '"SSSS", "rewrite_A_16"')
    assert it.span.end_line > it.span.line
    (store,) = it.body
    assert store.span.line == _line_of(path, "A_16[io_16, jo_16, ii_16, ji_16] = A[")
    multi = by_name["csrmm_32"].body[0]
    assert multi.span.line == _line_of(path, "C[io_32 * 32 + ii_32, k] = (")
    assert multi.span.end_line == multi.span.line + 2


# --- the RFC's BSR format description, written as Python that builds scripts ------------------


def bsr(block_size: int) -> sparsetir.SparseFunction:
    """RFC 000, D1: a BSR format of the given block size (block_size is captured)."""

    @T.prim_func
    def func(a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
        IO = T.dense_fixed(m)
        JO = T.sparse_variable(IO, (n, nnz), (indptr, indices), "int32")
        II = T.dense_fixed(block_size)
        JI = T.dense_fixed(block_size)
        A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
        T.evaluate(0)  # placeholder, indicates it's the end of the script.

    return func


def _bsr_symbolic() -> sparsetir.SparseFunction:
    """The same format with block_size a scalar parameter (the RFC's `bsr(block_size_symbol)`)."""

    @T.prim_func
    def func(
        a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32, block_size: T.int32
    ) -> None:
        IO = T.dense_fixed(m)
        JO = T.sparse_variable(IO, (n, nnz), (indptr, indices), "int32")
        II = T.dense_fixed(block_size)
        JI = T.dense_fixed(block_size)
        A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
        T.evaluate(0)

    return func


bsr_with_symbolic = _bsr_symbolic()


def test_bsr_captures_block_size():
    bsr4 = bsr(4)
    assert [bsr4.axis(name).length.value for name in ("II", "JI")] == [4, 4]
    assert str(bsr4.axis("II").length.ty.dtype) == "int32"
    assert bsr(16).axis("JI").length.value == 16
    assert not sparsetir.structural_equal(bsr(4), bsr(16))


def test_bsr_specialize_equals_captured():
    block_size = bsr_with_symbolic.params[-1]
    assert block_size.name == "block_size"
    by_name = bsr_with_symbolic.specialize({"block_size": 4})
    by_var = bsr_with_symbolic.specialize({block_size: 4})
    sparsetir.assert_structural_equal(by_name, bsr(4))
    sparsetir.assert_structural_equal(by_var, bsr(4))
    assert [p.name for p in by_name.params] == ["a", "indptr", "indices", "m", "n", "nnz"]
    assert not sparsetir.structural_equal(bsr_with_symbolic.specialize({"block_size": 8}), bsr(4))


def test_bsr_matches_the_fixture():
    """The fixture holds both readings of the RFC's text: the body of bsr(4), and bsr(block_size)."""
    fixture = _functions(SCRIPTS / "rfc" / "bsr_format.py")
    sparsetir.assert_structural_equal(fixture["func"], bsr(4))
    # Function names take part in equality; the fixture's symbolic version is called `bsr`.
    symbolic = fixture["bsr"].script().replace("def bsr(", "def func(", 1)
    sparsetir.assert_structural_equal(sparsetir.parse(symbolic), bsr_with_symbolic)
    specialized = fixture["bsr"].specialize({"block_size": 4}).script()
    assert specialized.replace("def bsr(", "def func(", 1) == bsr(4).script()


def test_specialize_rejects_unknown_and_handle_parameters():
    with pytest.raises(KeyError):
        bsr_with_symbolic.specialize({"bs": 4})
    with pytest.raises(TypeError):
        bsr_with_symbolic.specialize({"a": 4})
