"""Small questions about TVM expressions that several passes and the schedule guards ask."""

from __future__ import annotations

from typing import Any, Callable

from .._tvm import TensorLoad, Var, s_tir, structural_equal, structural_walk, tirx


def contains(expr: Any, pred: Callable[[Any], bool]) -> bool:
    """True when some node of ``expr`` (``expr`` included) satisfies ``pred``."""
    found = [False]

    def visit(node: Any) -> bool:
        if pred(node):
            found[0] = True
        return not found[0]

    structural_walk(expr, visit)
    return found[0]


def reads_data(expr: Any) -> bool:
    """True when ``expr`` loads from a buffer: its value is known only at run time."""
    return contains(expr, lambda n: isinstance(n, TensorLoad))


def uses_var(expr: Any, var: Var) -> bool:
    """True when ``expr`` mentions ``var``."""
    return contains(expr, lambda n: isinstance(n, Var) and n.same_as(var))


def vars_of(expr: Any) -> list[Var]:
    """The variables ``expr`` mentions."""
    found: list[Var] = []
    structural_walk(expr, lambda n: found.append(n) if isinstance(n, Var) else None)
    return found


def uses_any(expr: Any, vars_: list[Var]) -> bool:
    """True when ``expr`` mentions any of ``vars_``."""
    return contains(expr, lambda n: isinstance(n, Var) and any(n.same_as(v) for v in vars_))


def has_thread_binding(stmt: Any) -> bool:
    """True when ``stmt`` holds a loop bound to a GPU thread axis."""
    return contains(stmt, lambda n: isinstance(n, tirx.For) and n.thread_binding is not None)


def same_indices(a: Any, b: Any) -> bool:
    """Whether two index lists are the same expressions, one by one."""
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def bound_within(stmt: Any) -> list[Var]:
    """The variables ``stmt`` binds itself: its loops', blocks' (iterators, allocations, matched
    buffers), lets' and buffer declarations' (TVM's ``undefined_vars`` counts a block's
    iterators as free)."""
    found: list[Var] = []

    def on_node(node: Any) -> Any:
        if isinstance(node, tirx.For):
            found.append(node.loop_var)
        elif isinstance(node, s_tir.SBlock):
            found.extend(iv.var for iv in node.iter_vars)
            found.extend(node.alloc_buffers)
            found.extend(m.buffer for m in node.match_buffers)
        elif isinstance(node, (tirx.Bind, tirx.Let)):
            found.append(node.var)
        elif isinstance(node, (tirx.AllocBuffer, tirx.DeclBuffer)):
            found.append(node.buffer)
        return None

    structural_walk(stmt, on_node)
    return found
