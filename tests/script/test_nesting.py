"""How deeply scripts may nest, at both stages: past each limit a located error, the project's own
printed programs far inside the limits, and nothing that reads a script recursing once per level
(or spending time quadratic in it).

The limits (docs/language.md, "Limits"): ``source.MAX_SYNTAX_DEPTH`` levels of syntax in one
expression, checked over the whole tree before anything reads it; ``expr_parser.MAX_EXPR_DEPTH``
operations in what reaches TVM; Python's 100 levels of indentation for statements, and
``parser.MAX_NESTED_ITERATORS`` at stage I, so that the lowered program fits in them. Python's
recursion limit reached all the same (statements recurse; a caller may be deep in its own stack)
is a located ``ScriptSyntaxError`` too, never sparsetir's ``InternalError``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from typing import Iterator

import pytest

import sparsetir
from sparsetir import ScriptError, ScriptSyntaxError, VerifyError
from sparsetir.schedule.default import default_schedule
from sparsetir.script import expr_parser
from sparsetir.script.expr_parser import MAX_EXPR_DEPTH
from sparsetir.script.parser import MAX_NESTED_ITERATORS
from sparsetir.script.source import MAX_SYNTAX_DEPTH

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

STAGE1 = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    K = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([I, J, K], "SRS", "s") as [i, j, k]:
        C[i, k] = C[i, k] + A[i, j]
"""


@pytest.fixture(scope="module")
def stage2() -> str:
    """The printed stage II of examples/csr_spmm.py."""
    return sparsetir.lower_sparse_iter(sparsetir.parse_file(EXAMPLES / "csr_spmm.py")).script()


def _error(text: str) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(text, "case.py")
    err = info.value
    assert err.filename == "case.py" and err.line is not None and err.col is not None, str(err)
    assert "sparsetir/" not in str(err), str(err)
    return err


def _position(text: str, needle: str, start: str = "") -> tuple[int, int]:
    """(line, col), 1-based, of the first ``needle`` after the first ``start`` in ``text``."""
    offset = text.index(needle, text.index(start) if start else 0)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _roundtrip(text: str) -> None:
    func = sparsetir.parse(text, "<case>")
    again = sparsetir.parse(func.script(), "<printed>")
    sparsetir.assert_structural_equal(func, again)


def _after_line(text: str, needle: str, new: str) -> str:
    """``text`` with ``new`` inserted after the line holding ``needle``, indented like it."""
    lines = text.splitlines()
    k = next(k for k, line in enumerate(lines) if needle in line)
    indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
    return "\n".join(lines[: k + 1] + [indent + new] + lines[k + 1 :]) + "\n"


def _sum(term: str, count: int) -> str:
    return " + ".join([term] * count)


@contextlib.contextmanager
def _recursion_headroom(frames: int) -> Iterator[None]:
    """Python's recursion limit set to ``frames`` above the current depth, then restored."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# --- the fuzzer's finding: a deep region bound in the lowered csr_to_bsr ----------------------


@pytest.fixture(scope="module")
def csr_to_bsr_stage2() -> str:
    return sparsetir.lower_sparse_iter(sparsetir.parse_file(EXAMPLES / "csr_to_bsr.py")).script()


REGION = "JO_indptr[vi // 4:vi // 4 + 2]"


def test_fuzz_finding_deep_region_bound_is_a_located_error(csr_to_bsr_stage2: str):
    """``python -m fuzz --count 10000 --seed 31337 --schedules 200``, mutant 2021: a region bound
    multiplied by 1 a thousand times was compared with ``ast.dump``, whose recursion ran out
    before the depth limit was checked (an InternalError)."""
    assert REGION in csr_to_bsr_stage2
    text = csr_to_bsr_stage2.replace(REGION, "JO_indptr[vi // 4:vi // 4" + " * 1" * 1000 + " + 2]")
    err = _error(text)
    assert isinstance(err, ScriptSyntaxError), f"{type(err).__name__}: {err}"
    assert f"this expression nests more than {MAX_EXPR_DEPTH} operations deep" in err.message
    assert (err.line, err.col) == _position(text, "vi // 4 * 1", "JO_indptr[vi // 4:")


def test_deep_region_bound_within_the_limit_round_trips(csr_to_bsr_stage2: str):
    """``lo:lo + e`` is recognised however deep ``lo`` is (no recursion over it)."""
    deep = "vi // 4" + " * 1" * (MAX_EXPR_DEPTH - 10)
    text = csr_to_bsr_stage2.replace(REGION, f"JO_indptr[{deep}:{deep} + 2]")
    _roundtrip(text)


def test_a_region_lo_hi_prints_as_written_not_deeper(stage2: str):
    """``lo:hi`` is stored as the extent ``hi - lo`` and printed as ``lo:hi`` again: printed as
    ``lo:lo + (hi - lo)`` it nested ``lo`` two levels deeper than the script, past the operation
    limit, and did not parse back (``python -m fuzz --count 10000 --seed 4009 --schedules 200``,
    mutant 8927, a round-trip mismatch)."""
    deep = "vi" + " * 1" * (MAX_EXPR_DEPTH - 2)
    text = stage2.replace("J_indptr[vi:vi + 2]", f"J_indptr[{deep}:2]")
    printed = sparsetir.parse(text, "<case>").script()
    assert f"J_indptr[{deep}:2]" in printed
    _roundtrip(text)


# --- what is built may be deeper than what is written; the limit holds for both ---------------

STORE2 = "C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]"


def test_a_stage2_augmented_store_counts_the_operation_it_adds(stage2: str):
    """``C[i] += v`` is ``C[i] = C[i] + v``, as printed: a ``v`` at the limit is one too deep
    (read as written, its print did not parse back)."""
    at_limit = stage2.replace(STORE2, "C[vi, vk] += " + _sum("A[vi, vj]", MAX_EXPR_DEPTH - 1))
    _roundtrip(at_limit)
    text = stage2.replace(STORE2, "C[vi, vk] += " + _sum("A[vi, vj]", MAX_EXPR_DEPTH))
    err = _error(text)
    assert isinstance(err, ScriptSyntaxError), f"{type(err).__name__}: {err}"
    assert err.message.startswith(f"this expression nests more than {MAX_EXPR_DEPTH} operations deep;"), err.message
    assert (err.line, err.col) == _position(text, "A[vi, vj] + A")


def test_casts_to_the_wider_type_count_toward_the_limit(stage2: str):
    """``T.int64(1) + vk`` is built as ``T.int64(1) + T.cast(vk, "int64")``: one operation more
    than written, which the print shows; at the limit it is refused at the node whose built
    value passes it (here the outer cast, one level above the deepest addition)."""
    def widened(terms: int) -> str:
        return stage2.replace(STORE2, f"C[vi, vk] = T.float32(T.int64(1) + {_sum('vk', terms)})")

    _roundtrip(widened(MAX_EXPR_DEPTH - 2))  # the float32 cast, 998 additions, the cast of a vk
    text = widened(MAX_EXPR_DEPTH - 1)
    err = _error(text)
    assert isinstance(err, ScriptSyntaxError), f"{type(err).__name__}: {err}"
    assert err.message.startswith(f"this expression nests more than {MAX_EXPR_DEPTH} operations deep as built"), err.message
    assert (err.line, err.col) == _position(text, "T.float32(T.int64(1)")


# --- MAX_SYNTAX_DEPTH: checked before anything reads the script, at both stages ----------------


def _stage1_with(expr: str) -> str:
    return STAGE1 + f"    T.evaluate({expr})\n"


def _stage2_with(stage2: str, expr: str) -> str:
    return _after_line(stage2, "C[vi, vk] = C[vi, vk] +", f"T.evaluate({expr})")


@pytest.mark.parametrize("stage", [1, 2])
def test_an_expression_deeper_than_max_syntax_depth_is_refused_at_its_deepest_node(stage: int, stage2: str):
    # T.evaluate(a sum of k names) nests k + 1 levels: the call, k - 1 additions, the first name
    expr = _sum("m", MAX_SYNTAX_DEPTH)
    text = _stage1_with(expr) if stage == 1 else _stage2_with(stage2, expr)
    err = _error(text)
    assert isinstance(err, ScriptSyntaxError), f"{type(err).__name__}: {err}"
    assert err.message.startswith(f"expression nested deeper than {MAX_SYNTAX_DEPTH} levels"), err.message
    assert (err.line, err.col) == _position(text, "m + m", "T.evaluate(")  # the first name, one level too deep


@pytest.mark.parametrize("stage", [1, 2])
def test_an_expression_at_max_syntax_depth_is_left_to_the_operation_limit(stage: int, stage2: str):
    expr = _sum("m", MAX_SYNTAX_DEPTH - 1)
    text = _stage1_with(expr) if stage == 1 else _stage2_with(stage2, expr)
    err = _error(text)
    assert f"nests more than {MAX_EXPR_DEPTH} operations deep" in err.message, err.message


def test_the_syntax_limit_covers_what_no_reader_evaluates():
    """A default value is never read as an expression, yet is measured like one."""
    text = STAGE1.replace("nnz: T.int32)", f"nnz: T.int32 = {'-' * MAX_SYNTAX_DEPTH}1)")
    err = _error(text)
    assert err.message.startswith(f"expression nested deeper than {MAX_SYNTAX_DEPTH} levels"), err.message
    assert (err.line, err.col) == _position(text, "1)", "T.int32 = -")  # the literal under the minuses


def test_a_decorated_function_nesting_too_deep_is_located_in_its_file(tmp_path: Path):
    path = tmp_path / "deep_kernel.py"
    path.write_text("from sparsetir.script import tir as T\n\n\n@T.prim_func\n"
                    f"def f(m: T.int32) -> None:\n    T.evaluate({_sum('m', MAX_SYNTAX_DEPTH + 1)})\n")
    spec = importlib.util.spec_from_file_location("deep_kernel", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ScriptSyntaxError) as info:
        spec.loader.exec_module(module)
    err = info.value
    assert (err.filename, err.line, err.col) == (str(path), 6, 16), str(err)
    assert "nested deeper than" in err.message


# --- nothing that reads or prints a script recurses once per level of an expression -----------


def _deep_cases(stage2: str, depth: int) -> dict[str, str]:
    return {
        "stage1-store": STAGE1.replace("C[i, k] + A[i, j]", _sum("A[i, j]", depth)),
        "stage2-store": stage2.replace("A[vi, vj] * B[J_indices[vi, vj], vk]", _sum("A[vi, vj]", depth)),
        "stage2-negations": stage2.replace("A[vi, vj] * B[J_indices[vi, vj], vk]", "-" * depth + "A[vi, vj]"),
        "stage2-region": stage2.replace("J_indptr[vi:vi + 2]", f"J_indptr[vi:{_sum('vi', depth)} + 2]"),
        "stage2-extent": stage2.replace("T.grid(J_indptr[vi + 1] - J_indptr[vi], feat_size)",
                                        f"T.grid(J_indptr[vi + 1] - J_indptr[vi], {_sum('feat_size', depth)})"),
    }


@pytest.mark.parametrize("case", ["stage1-store", "stage2-store", "stage2-negations", "stage2-region", "stage2-extent"])
def test_reading_and_printing_need_no_frame_per_level(case: str, stage2: str):
    """600 levels read and printed with 250 frames to spare: any per-level recursion (``ast.dump``,
    ``copy.deepcopy``, a recursive visitor) would run out of them."""
    text = _deep_cases(stage2, 600)[case]
    with _recursion_headroom(250):
        func = sparsetir.parse(text, "<case>")
        printed = func.script()
    sparsetir.assert_structural_equal(func, sparsetir.parse(printed, "<printed>"))


def test_constant_and_depth_checks_visit_each_operation_a_few_times():
    """Each ``+`` of a constant sum asks whether its operands are constant and how deep they
    nest; remembered answers keep that linear (it was quadratic: a 1,000-term sum took seconds,
    a fuzzer hang)."""
    children = expr_parser._children
    counts = {}
    for terms in (200, 800):
        visits = []

        def counting(node):
            visits.append(node)
            return children(node)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(expr_parser, "_children", counting)
            sparsetir.parse(STAGE1.replace("C[i, k] + A[i, j]", f"T.float32({_sum('1', terms)})"))
        counts[terms] = len(visits)
    assert counts[800] < 20 * 800 and counts[800] < 5 * counts[200], counts  # quadratic: 16x


# --- Python's recursion limit reached anyway: a located error -----------------------------------


def _nested_loops(stage2: str, count: int) -> str:
    lines = stage2.splitlines()
    k = next(k for k, line in enumerate(lines) if line.lstrip().startswith("for "))
    indent = len(lines[k]) - len(lines[k].lstrip())
    nest = [" " * (indent + 4 * d) + f"for fz{d} in range(2):" for d in range(count)]
    nest.append(" " * (indent + 4 * count) + "T.evaluate(0)")
    return "\n".join(lines[:k] + nest + lines[k:]) + "\n"


def _nested_iterations(count: int) -> str:
    """``count`` sparse iterations, one inside the other, each over an axis of its own."""
    header, _ = STAGE1.split("    with T.sp_iter")
    lines = [f"    L{d} = T.dense_fixed(2)" for d in range(count)]
    lines += ["    " * (d + 1) + f'with T.sp_iter([L{d}], "S", "s{d}") as [l{d}]:' for d in range(count)]
    lines.append("    " * (count + 1) + "C[0, 0] = C[0, 0] + 1.0")
    return header + "\n".join(lines) + "\n"


@pytest.mark.parametrize("stage", [1, 2])
def test_recursion_limit_reached_while_reading_is_located_at_the_deepest_part(stage: int, stage2: str):
    """Statements recurse; with few frames to spare, the reader's recursion runs out, and the
    error points at the innermost statement."""
    text = _nested_iterations(MAX_NESTED_ITERATORS) if stage == 1 else _nested_loops(stage2, 90)
    sparsetir.parse(text)  # fine with Python's usual limit
    with _recursion_headroom(80 if stage == 1 else 200):
        err = _error(text)
    assert isinstance(err, ScriptSyntaxError), f"{type(err).__name__}: {err}"
    assert re.match(r"reading this reached Python's recursion limit \(\d+\); this part of the function nests "
                    r"\d+ levels deep: simplify it", err.message), err.message
    innermost = "C[0, 0] = C[0, 0] + 1.0" if stage == 1 else "T.evaluate(0)"
    line, _ = _position(text, innermost, "fz89" if stage == 2 else f"s{MAX_NESTED_ITERATORS - 1}")
    assert err.line == line, str(err)


# --- nested sparse iterations: their lowered program fits in Python's indentation -------------


def _nested_pairs(count: int) -> str:
    """``count`` sparse iterations, one inside the other, each over a CSR-like pair of axes of its
    own (a loop and a block per axis when lowered), each with a T.init()."""
    params = ", ".join(f"p{d}: T.handle, q{d}: T.handle" for d in range(count))
    lines = ["    D = T.dense_fixed(2)"]
    for d in range(count):
        lines += [f"    I{d} = T.dense_fixed(4)", f"    J{d} = T.sparse_variable(I{d}, (4, 8), (p{d}, q{d}))"]
    lines.append('    C = T.match_sparse_buffer(c, (D,), "float32")')
    for d in range(count):
        lines.append("    " * (d + 1) + f'with T.sp_iter([I{d}, J{d}], "SR", "s{d}") as [i{d}, j{d}]:')
        lines += ["    " * (d + 2) + "with T.init():", "    " * (d + 3) + "C[0] = 0.0"]
    lines.append("    " * (count + 1) + "C[0] = C[0] + 1.0")
    return (f"from sparsetir.script import tir as T\n\n\n@T.prim_func\ndef f(c: T.handle, {params}) -> None:\n"
            + "\n".join(lines) + "\n")


@pytest.mark.parametrize("text", [_nested_iterations(MAX_NESTED_ITERATORS), _nested_pairs(MAX_NESTED_ITERATORS // 2)],
                         ids=["single-axes", "csr-pairs"])
def test_the_most_nested_iterations_lower_to_stage2_that_parses_back(text: str):
    stage2 = sparsetir.lower_sparse_iter(sparsetir.parse(text)).script()
    assert max(len(line) - len(line.lstrip()) for line in stage2.splitlines()) // 4 <= 2 * MAX_NESTED_ITERATORS + 2
    _roundtrip(stage2)


def test_one_iterator_more_is_refused_at_its_iteration():
    text = _nested_iterations(MAX_NESTED_ITERATORS + 1)
    err = _error(text)
    assert isinstance(err, VerifyError), f"{type(err).__name__}: {err}"
    assert err.message.startswith(f"the sparse iterations nested here bind {MAX_NESTED_ITERATORS + 1} iterators; "
                                  f"at most {MAX_NESTED_ITERATORS} may nest"), err.message
    assert (err.line, err.col) == _position(text, f'with T.sp_iter([L{MAX_NESTED_ITERATORS}]')


# --- the project's own output is far inside the limits, and parses back ----------------------


def _expression_depth(text: str) -> int:
    """The deepest nesting of expressions in a script (as ``MAX_SYNTAX_DEPTH`` counts it)."""
    deepest, stack = 0, [(ast.parse(text), 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1 if isinstance(child, ast.expr) else 0 if isinstance(child, ast.stmt) else depth))
    return deepest


REALISTIC_CSR_TO_BSR = {"m": 65536, "n": 65536, "nnz": 2_000_000, "mb": 16384, "nb": 16384, "nnzb": 500_000}


def _own_programs() -> Iterator[tuple[str, str]]:
    for path in sorted(EXAMPLES.glob("*.py")):
        func = sparsetir.parse_file(path)
        for f in func.values() if isinstance(func, dict) else [func]:
            yield f"{path.name}:lowered", sparsetir.lower_sparse_iter(f).script()
    csr_to_bsr = sparsetir.parse_file(EXAMPLES / "csr_to_bsr.py").specialize(REALISTIC_CSR_TO_BSR)
    yield "csr_to_bsr:specialized:lowered", sparsetir.lower_sparse_iter(csr_to_bsr).script()
    yield "csr_to_bsr:specialized:default-schedule", default_schedule(csr_to_bsr).schedule.func.script()
    spmm = sparsetir.parse_file(EXAMPLES / "csr_spmm.py").specialize({"feat_size": 512})
    yield "csr_spmm:feat_size=512:default-schedule", default_schedule(spmm).schedule.func.script()


def test_own_printed_programs_are_far_inside_the_limit_and_parse_back():
    for name, text in _own_programs():
        assert _expression_depth(text) <= MAX_SYNTAX_DEPTH // 20, name
        _roundtrip(text)
