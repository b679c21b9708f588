"""TVM expressions → script text that ``expr_parser`` reads back to the same tree.

Parentheses follow Python precedence; a right operand of equal precedence is parenthesized so
``a - (b - c)`` keeps its shape. Constants other than int32 and bool carry their type
(``T.float32(0)``, ``T.int64(3)``) so that no context is needed to read them back.

Like the parser, the printer walks with an explicit stack: a step for a node with operands is a
generator that yields each operand and is sent back its ``(text, precedence)``, so an
expression of any depth prints without Python recursion.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any, Callable, Union

from .._tvm import TensorLoad, Var, tirx, tvm
from ..errors import SparseTIRError
from .constructs import BINARY_MATH, UNARY_MATH

_BINARY: dict[type, tuple[str, int]] = {
    tirx.Or: ("or", 1),
    tirx.And: ("and", 2),
    tirx.EQ: ("==", 4),
    tirx.NE: ("!=", 4),
    tirx.LT: ("<", 4),
    tirx.LE: ("<=", 4),
    tirx.GT: (">", 4),
    tirx.GE: (">=", 4),
    tirx.BitwiseOr: ("|", 5),
    tirx.BitwiseXor: ("^", 6),
    tirx.BitwiseAnd: ("&", 7),
    tirx.LShift: ("<<", 8),
    tirx.RShift: (">>", 8),
    tirx.Add: ("+", 9),
    tirx.Sub: ("-", 9),
    tirx.Mul: ("*", 10),
    tirx.Div: ("/", 10),
    tirx.FloorDiv: ("//", 10),
    tirx.FloorMod: ("%", 10),
}
_ATOM = 13
_UNARY_MINUS = 11


def _op_names() -> dict[str, str]:
    """TVM op name → script construct, found by building each construct once."""
    f = tirx.Var("f", "float32")
    names = {"prim.if_then_else": "if_then_else", "tirx.fabs": "abs"}
    for name, build in UNARY_MATH.items():
        names[build(f).op.name] = name
    for name, build in BINARY_MATH.items():
        names[build(f, f).op.name] = name
    return names


_CALL_NAMES = _op_names()


Text = tuple[str, int]  # printed text and its precedence
Step = Generator[Any, Text, Text]


class ExprPrinter:
    """Prints expressions; ``name_of(var)`` gives each variable's script name.

    ``step(e)`` prints one node: it returns ``(text, precedence)``, or a generator that yields the
    node's operands and receives their ``(text, precedence)``. A subclass that prints some nodes
    its own way overrides ``step`` and defers to ``super().step(e)`` for the others.
    """

    def __init__(self, name_of: Callable[[Var], str], alias: str = "T"):
        self.name_of = name_of
        self.alias = alias

    def __call__(self, expr: Any) -> str:
        return self.text(expr)[0]

    def text(self, e: Any) -> Text:
        """(text, precedence) of an expression."""
        stack: list[Step] = []
        result: Any = None
        pending: Any = e
        while True:
            if pending is not None:
                step = self.step(pending)
                if isinstance(step, Generator):
                    stack.append(step)
                    result = None
                else:
                    result = step
            if not stack:
                return result
            try:
                pending = stack[-1].send(result)
            except StopIteration as done:
                stack.pop()
                result, pending = done.value, None

    def step(self, e: Any) -> Union[Text, Step]:
        """One node's (text, precedence), or a generator over its operands (see the class)."""
        T = self.alias
        if isinstance(e, tirx.IntImm):
            dtype = str(e.ty.dtype)
            if dtype == "bool":
                return ("True" if e.value else "False"), _ATOM
            if dtype == "int32":
                return str(e.value), (_UNARY_MINUS if e.value < 0 else _ATOM)
            return f"{T}.{dtype}({e.value})", _ATOM
        if isinstance(e, tirx.FloatImm):
            return f"{T}.{e.ty.dtype}({_float_text(e.value)})", _ATOM
        if isinstance(e, TensorLoad):
            return self.call(self.name_of(e.source), list(e.indices), "[]")
        if isinstance(e, Var):
            return self.name_of(e), _ATOM
        if type(e) in _BINARY:
            return self._binary(e)
        if isinstance(e, tirx.Not):
            return self._not(e)
        if isinstance(e, tirx.Cast):
            return self._cast(e)
        if isinstance(e, (tirx.Min, tirx.Max)):
            return self.call(f"{T}.{'min' if isinstance(e, tirx.Min) else 'max'}", [e.a, e.b])
        if isinstance(e, tirx.Select):
            return self.call(f"{T}.select", [e.condition, e.true_value, e.false_value])
        if isinstance(e, tvm.ir.Call) and e.op.name == "tirx.reinterpret":
            return self._reinterpret(e)
        if isinstance(e, tvm.ir.Call) and e.op.name in _CALL_NAMES:
            return self.call(f"{T}.{_CALL_NAMES[e.op.name]}", list(e.args))
        raise SparseTIRError(f"cannot print expression {e!r} ({type(e).__name__}) as a script")

    def call(self, head: str, operands: list[Any], brackets: str = "()") -> Step:
        """``head(a, b, ...)`` (or ``head[a, b]``) over printed operands."""
        texts = []
        for operand in operands:
            texts.append((yield operand)[0])
        return f"{head}{brackets[0]}{', '.join(texts)}{brackets[1]}", _ATOM

    def _binary(self, e: Any) -> Step:
        symbol, prec = _BINARY[type(e)]
        left, lp = yield e.a
        right, rp = yield e.b
        if lp < prec or (prec == 4 and lp <= prec):
            left = f"({left})"
        if rp <= prec:
            right = f"({right})"
        return f"{left} {symbol} {right}", prec

    def _not(self, e: Any) -> Step:
        inner, p = yield e.a
        return f"not {inner if p >= 3 else '(' + inner + ')'}", 3

    def _reinterpret(self, e: Any) -> Step:
        value, _ = yield e.args[0]
        return f'{self.alias}.reinterpret("{e.ty.dtype}", {value})', _ATOM

    def _cast(self, e: Any) -> Step:
        value, _ = yield e.value
        return f'{self.alias}.cast({value}, "{e.ty.dtype}")', _ATOM


def _float_text(value: float) -> str:
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if value == 0 and math.copysign(1.0, value) < 0:
        return "-0.0"  # str(int(-0.0)) would lose the sign
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)
