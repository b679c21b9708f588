"""Every expression the stage-I parser builds carries the span of its own source text (issue 21
item 11): loads, arithmetic, comparisons, calls, casts, selects and literals, each with the line
and the column range of what it was read from. Spans stay out of structural equality, and the
lowering keeps a load's span on the load it rewrites."""

from __future__ import annotations

from typing import Any

import pytest

import sparsetir
from sparsetir._tvm import Expr, TensorLoad, Var, structural_equal, structural_walk, tirx

SCRIPT = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (m, nnz), (indptr, indices))
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    C = T.match_sparse_buffer(c, (I,), "int64")
    with T.sp_iter([I, J], "SR", "rows") as [i, j]:
        with T.init():
            B[i] = T.float32(0)
        B[i] = B[i] + T.exp(A[i, j] - B[i]) * 2.0
    with T.sp_iter([I], "S", "misc") as [i]:
        B[i] = T.if_then_else(B[i] < 0.5 and not B[i] > 9.0, -B[i], T.max(B[i], T.min_value("float32")))
        C[i] = C[i] + T.cast(T.abs(i - 3), "int64") + i
"""
LINES = SCRIPT.splitlines()


def text_of(node: Any) -> str:
    """The script text the one-line span of ``node`` (an expression or a span) covers (columns are
    1-based, the end one past the last)."""
    span = node.span if isinstance(node, Expr) else node
    assert span is not None, node
    assert int(span.line) == int(span.end_line)
    return LINES[int(span.line) - 1][int(span.column) - 1:int(span.end_column) - 1]


def stores(func: Any) -> list[Any]:
    out: list[Any] = []
    for it in func.body:
        for stmt in [*(it.init or []), *it.body]:
            structural_walk(stmt, lambda n: out.append(n) if isinstance(n, tirx.BufferStore) else True)
    return out


def operands(expr: Any) -> list[Any]:
    fields = ("a", "b", "value", "condition", "true_value", "false_value")
    out = [c for c in (getattr(expr, f, None) for f in fields) if isinstance(c, Expr)]
    return out + [c for c in [*getattr(expr, "args", ()), *getattr(expr, "indices", ())] if isinstance(c, Expr)]


def every_expr(expr: Any) -> list[Any]:
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(operands(node))
    return out


@pytest.fixture(scope="module")
def parsed():
    return sparsetir.parse(SCRIPT, "spans.py")


def test_every_expression_node_has_a_span_on_its_own_line(parsed):
    for store in stores(parsed):
        for node in every_expr(store.value):
            if isinstance(node, Var):  # one object for every use: it keeps its declaration's span
                continue
            assert node.span is not None, f"{type(node).__name__} {node} has no span"
            assert int(node.span.line) == int(store.span.line), node
            assert str(node.span.source_name.name) == "spans.py"


def test_loads_arithmetic_and_calls_span_their_text(parsed):
    init, update, select, cast = stores(parsed)
    assert text_of(init.value) == "T.float32(0)"  # the constant spans the whole call
    value = update.value  # B[i] + T.exp(A[i, j] - B[i]) * 2.0
    assert (int(value.span.line), int(value.span.column), int(value.span.end_column)) == (14, 16, 50)
    assert text_of(value) == "B[i] + T.exp(A[i, j] - B[i]) * 2.0"
    assert isinstance(value.a, TensorLoad) and text_of(value.a) == "B[i]"
    product = value.b
    assert text_of(product) == "T.exp(A[i, j] - B[i]) * 2.0"
    assert text_of(product.b) == "2.0"  # a literal operand: its own text, not the operation's
    call = product.a
    assert text_of(call) == "T.exp(A[i, j] - B[i])"
    difference = call.args[0]
    assert text_of(difference) == "A[i, j] - B[i]"
    load = difference.a
    assert isinstance(load, TensorLoad)
    assert (int(load.span.line), int(load.span.column), int(load.span.end_column)) == (14, 29, 36)
    assert text_of(load) == "A[i, j]"


def test_selects_comparisons_logic_and_casts_span_their_text(parsed):
    _, _, select, cast = stores(parsed)
    call = select.value
    assert text_of(call) == ('T.if_then_else(B[i] < 0.5 and not B[i] > 9.0, -B[i], '
                             'T.max(B[i], T.min_value("float32")))')
    condition, negated, largest = call.args
    assert text_of(condition) == "B[i] < 0.5 and not B[i] > 9.0"
    assert text_of(condition.a) == "B[i] < 0.5"
    assert text_of(condition.a.b) == "0.5"
    assert text_of(condition.b) == "not B[i] > 9.0"
    assert text_of(condition.b.a) == "B[i] > 9.0"
    assert text_of(negated) == "-B[i]"
    assert text_of(largest) == 'T.max(B[i], T.min_value("float32"))'
    assert text_of(largest.b) == 'T.min_value("float32")'
    total = cast.value  # C[i] + T.cast(T.abs(i - 3), "int64") + i
    assert text_of(total) == 'C[i] + T.cast(T.abs(i - 3), "int64") + i'
    assert text_of(total.b) == "i"  # the int32 iterator widened: the cast spans the operand
    assert isinstance(total.b, tirx.Cast)
    converted = total.a.b
    assert text_of(converted) == 'T.cast(T.abs(i - 3), "int64")'
    assert text_of(converted.value) == "T.abs(i - 3)"
    assert text_of(converted.value.condition.a) == "i - 3"  # abs(x) is x >= 0 ? x : -x
    assert text_of(converted.value.condition.a.b) == "3"


def test_spans_stay_out_of_structural_equality(parsed):
    moved = SCRIPT.replace("B[i] + T.exp(A[i, j] - B[i]) * 2.0", "B[i]  +  T.exp( A[i, j]-B[i] )*2.0")
    other = sparsetir.parse(moved, "elsewhere.py")
    here, there = stores(parsed)[1].value.b.a.args[0].a.span, stores(other)[1].value.b.a.args[0].a.span
    assert (int(here.column), int(there.column)) == (29, 32)  # A[i, j] moved three columns right
    assert structural_equal(parsed, other)
    assert not structural_equal(parsed, sparsetir.parse(moved.replace("*2.0", "*3.0"), "elsewhere.py"))


def test_no_spans_when_parsed_without_them():
    func = sparsetir.parse(SCRIPT, "spans.py", spans=False)
    for store in stores(func):
        assert all(node.span is None for node in every_expr(store.value) if not isinstance(node, Var))


def test_lowering_keeps_the_span_of_each_load(parsed):
    prim = sparsetir.lower_sparse_iter(parsed)
    prim = getattr(prim, "prim", prim)
    loads: list[Any] = []
    structural_walk(prim.body, lambda n: loads.append(n) if isinstance(n, TensorLoad) and n.span is not None else True)
    texts = {text_of(load.span) for load in loads if str(load.span.source_name.name) == "spans.py"}
    assert {"A[i, j]", "B[i]", "C[i]"} <= texts
