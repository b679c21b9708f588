"""TVM expressions → script text that ``expr_parser`` reads back to the same tree.

Parentheses follow Python precedence; a right operand of equal precedence is parenthesized so
``a - (b - c)`` keeps its shape. Constants other than int32 and bool carry their type
(``T.float32(0)``, ``T.int64(3)``) so that no context is needed to read them back.
"""

from __future__ import annotations

import math
from typing import Any, Callable

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


class ExprPrinter:
    """Prints expressions; ``name_of(var)`` gives each variable's script name."""

    def __init__(self, name_of: Callable[[Var], str], alias: str = "T"):
        self.name_of = name_of
        self.alias = alias

    def __call__(self, expr: Any) -> str:
        return self.text(expr)[0]

    def text(self, e: Any) -> tuple[str, int]:
        """(text, precedence) of an expression."""
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
            indices = ", ".join(self(i) for i in e.indices)
            return f"{self.name_of(e.source)}[{indices}]", _ATOM
        if isinstance(e, Var):
            return self.name_of(e), _ATOM
        if type(e) in _BINARY:
            symbol, prec = _BINARY[type(e)]
            left, lp = self.text(e.a)
            right, rp = self.text(e.b)
            if lp < prec or (prec == 4 and lp <= prec):
                left = f"({left})"
            if rp <= prec:
                right = f"({right})"
            return f"{left} {symbol} {right}", prec
        if isinstance(e, tirx.Not):
            inner, p = self.text(e.a)
            return f"not {inner if p >= 3 else '(' + inner + ')'}", 3
        if isinstance(e, tirx.Cast):
            return f'{T}.cast({self(e.value)}, "{e.ty.dtype}")', _ATOM
        if isinstance(e, (tirx.Min, tirx.Max)):
            name = "min" if isinstance(e, tirx.Min) else "max"
            return f"{T}.{name}({self(e.a)}, {self(e.b)})", _ATOM
        if isinstance(e, tirx.Select):
            return f"{T}.select({self(e.condition)}, {self(e.true_value)}, {self(e.false_value)})", _ATOM
        if isinstance(e, tvm.ir.Call) and e.op.name in _CALL_NAMES:
            args = ", ".join(self(a) for a in e.args)
            return f"{T}.{_CALL_NAMES[e.op.name]}({args})", _ATOM
        raise SparseTIRError(f"cannot print expression {e!r} ({type(e).__name__}) as a script")


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
