"""Script expressions → TVM expressions, by an allow-list over Python's ``ast``.

Python literals stay untyped until they meet a typed operand (``x * 2`` takes x's type, a store
takes the buffer's), as in TVMScript. Mixed types are never promoted silently except integer
widening, which is written out as a cast so the printed program says what it computes.

Expressions are evaluated with an explicit stack, not by recursion: a handler for a node that
has operands is a generator that yields each operand's ``ast`` node and is sent its value. So a
sum of a thousand terms costs a thousand stack entries, not a thousand Python frames, and how
deep an expression may nest is the documented ``MAX_EXPR_DEPTH``, not Python's recursion limit.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Generator
from typing import Any, Callable, Union

from .._tvm import Expr, Var, structural_equal, tirx, tvm
from ..errors import ScriptSyntaxError, VerifyError
from ..ir.axis import Axis
from ..ir.buffer import SparseBuffer
from .args import bind_args
from .constructs import BINARY_MATH, MATH_REFUSED, MATH_VIA_FLOAT32, UNARY_MATH, VALUE_DTYPES
from .source import Source

Literal = Union[bool, int, float]
Value = Union[Expr, Literal]

_FORBIDDEN_CALLS = ("eval", "exec", "compile", "__import__", "open", "getattr", "setattr", "globals", "locals", "vars", "breakpoint", "input")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
#: How deeply the operations of one expression may nest: ``a + b + c`` nests 2 deep, ``-A[i]``
#: 2 (a load is an operation, a name or literal is not), a chain ``x and y and z`` 2 as well. TVM's C++ passes recurse over expressions, and
#: Python's own parser gives up near 3,000 levels; 1,000 keeps both far from their limits.
#: Checked twice: on the script as it is read, and on the expression built, which can be deeper
#: (a cast to the wider type, what ``T.abs`` stands for) and is what the printers write, so a
#: program that was read prints to a script that reads back.
MAX_EXPR_DEPTH = 1000
#: how many casts may nest inside one another (``T.int32(T.int64(x) + 1)`` is two)
MAX_CAST_DEPTH = 8
#: the most operations an expression may expand to when shared operands are counted each time
MAX_TREE_SIZE = 100_000
#: The keyword arguments each expression construct takes (math functions take the reference
#: implementation's ``dtype=``, which must be the type of their operands).
_KEYWORDS = {"cast": ("value", "dtype"), "reinterpret": ("dtype", "value"), **{name: ("dtype",) for name in (*UNARY_MATH, *BINARY_MATH)}}

Step = Generator[ast.AST, Value, Value]


def dtype_of(expr: Expr) -> str:
    """The scalar data type of a TVM expression, as a string."""
    return str(expr.ty.dtype)


def is_int_dtype(dtype: str) -> bool:
    """Signed or unsigned integer type."""
    return dtype.startswith("int") or dtype.startswith("uint")


def is_float_dtype(dtype: str) -> bool:
    """Floating-point type (including bfloat16)."""
    return dtype.startswith("float") or dtype == "bfloat16"


def default_dtype(value: Literal) -> str:
    """The type an untyped Python literal takes when nothing else types it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int32" if _INT32_MIN <= value <= _INT32_MAX else "int64"
    return "float32"


def literal_const(value: Literal, dtype: str | None = None, span: Any = None) -> Expr:
    """A TVM constant for a Python literal, typed ``dtype`` or by the literal's own kind."""
    if dtype is None:
        dtype = default_dtype(value)
    if is_float_dtype(dtype):
        return tirx.FloatImm(dtype, float(value), span)
    return tirx.const(value, dtype, span)


def with_span(expr: Expr, span: Any) -> Expr:
    """``expr`` with ``span``, for what TVM's helpers build without one (``tirx.exp(x)``, the
    ``Select`` or constant of ``tirx.abs``); other nodes, and any node when ``span`` is None,
    come back as they are. Spans stay out of structural equality, so this changes no program."""
    if span is None:
        return expr
    if isinstance(expr, tvm.ir.Call):
        return tvm.ir.Call(expr.op, expr.args, expr.attrs, expr.ty_args, span, expr.ty)
    if isinstance(expr, tirx.Select):
        return tirx.Select(expr.condition, expr.true_value, expr.false_value, span)
    if isinstance(expr, tirx.IntImm):
        return tirx.IntImm(dtype_of(expr), int(expr.value), span)
    if isinstance(expr, tirx.FloatImm):
        return tirx.FloatImm(dtype_of(expr), float(expr.value), span)
    return expr


def literal_text(value: Literal) -> str:
    """A literal for a message: huge integers are summarized (``str`` of one may even fail)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"{'-' if value < 0 else ''}<an integer of {value.bit_length()} bits>"
    return repr(value)


def int_range(dtype: str) -> tuple[int, int]:
    """The least and greatest value of an integer type."""
    bits = int(dtype.lstrip("uint") or 32)
    if dtype.startswith("u"):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


#: The operations a constant expression is made of (anything else, e.g. a load, is not constant).
_FOLDED = (tirx.IntImm, tirx.FloatImm, tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.FloorDiv, tirx.FloorMod,
           tirx.Min, tirx.Max, tirx.Cast)


#: Integer operations whose constant operands are checked for overflow (TVM folds them wrapping,
#: or fails inside the build for unsigned ones).
_EXACT: dict[type, Callable[[int, int], int]] = {
    ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y}


def _always_zero(expr: Expr) -> bool:
    """Whether ``expr`` is 0, or TVM's simplifier, as the build will run it, reduces it to 0
    (``2 * 3 - 6``, ``j - j``)."""
    if isinstance(expr, tirx.IntImm):
        return int(expr.value) == 0
    try:
        folded = tvm.sym.Analyzer().simplify(expr)
    except (ValueError, RuntimeError, TypeError):
        return False
    return isinstance(folded, tirx.IntImm) and int(folded.value) == 0


def constant_value(expr: Expr, memo: Memo | None = None) -> Any:
    """The value of ``expr`` when it is a constant expression (no variables, loads or calls) that
    TVM's simplifier folds to a number, as a build will; None otherwise. Parse-time checks use
    it to refuse, with a location, what would otherwise fail only inside the build. ``memo``
    (kept by the caller across calls) remembers which operands are constant, so asking about
    each operation of a long chain in turn costs each node one visit, not one per ancestor."""
    if isinstance(expr, (tirx.IntImm, tirx.FloatImm)):
        return expr.value
    if not _fold(expr, lambda node, below: int(isinstance(node, _FOLDED) and all(below)), memo):
        return None
    try:
        folded = tvm.sym.Analyzer().simplify(expr)
    except (ValueError, RuntimeError, TypeError):  # an operand already out of range: the build says so
        return None
    return folded.value if isinstance(folded, (tirx.IntImm, tirx.FloatImm)) else None


def _children(node: Any) -> list[Any]:
    fields = ("a", "b", "value", "condition", "true_value", "false_value")
    out = [c for c in (getattr(node, f, None) for f in fields) if isinstance(c, Expr)]
    out += [c for c in getattr(node, "args", []) if isinstance(c, Expr)]
    return out + [c for c in getattr(node, "indices", ()) if isinstance(c, Expr)]  # a load's


#: What a built expression's depth does not count, as the syntax's does not: names and literals.
_LEAVES = (Var, tirx.IntImm, tirx.FloatImm, tvm.ir.StringImm)


def _built_depth(node: Any, below: list[int]) -> int:
    """``_fold``'s step for the depth of a built expression in operations (``MAX_EXPR_DEPTH``)."""
    return 0 if isinstance(node, _LEAVES) else 1 + max(below, default=0)


#: Values of ``_fold`` by node handle, each with its node (kept alive, so the handle stays its own).
Memo = dict[int, tuple[Any, int]]


def _fold(expr: Any, combine: Callable[[Any, list[int]], int], memo: Memo | None = None) -> int:
    """``combine(node, values of its operands)`` bottom-up over an expression, visiting each
    distinct node once (operands shared by several parents are computed once); a ``memo`` given
    by the caller, always with the same ``combine``, carries the values over to later calls."""
    values: Memo = {} if memo is None else memo
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, done = stack.pop()
        key = node.__chandle__()
        if key in values and not done:
            continue
        children = _children(node)
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children)
            continue
        values[key] = (node, combine(node, [values[c.__chandle__()][1] for c in children]))
    return values[expr.__chandle__()][1]


def _cast_depth(expr: Any) -> int:
    """The most casts on one path from ``expr`` down to a leaf."""
    return _fold(expr, lambda node, below: max(below, default=0) + isinstance(node, tirx.Cast))


def _tree_size(expr: Any, limit: int) -> int:
    """How many nodes ``expr`` has as a tree (shared operands counted at every use), capped just
    past ``limit``."""
    return _fold(expr, lambda node, below: min(limit + 1, 1 + sum(below)))


def _nesting(node: ast.AST) -> int:
    """How many levels of operations a node adds: none for a name or a literal (``-1`` and
    ``T.float32(0.5)`` included), k - 1 for a chain of k operands, which the built expression nests."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return 0 if isinstance(node.operand, ast.Constant) else 1
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], (ast.Constant, ast.UnaryOp)):
        return 0 if isinstance(node.func, ast.Attribute) and node.func.attr in VALUE_DTYPES else 1
    if isinstance(node, (ast.Name, ast.Constant)):
        return 0
    if isinstance(node, ast.BoolOp):
        return max(1, len(node.values) - 1)
    if isinstance(node, ast.Compare):
        return len(node.ops)
    return 1


_BINOPS: dict[type, tuple[str, Callable[..., Expr]]] = {
    ast.Add: ("+", tirx.Add),
    ast.Sub: ("-", tirx.Sub),
    ast.Mult: ("*", tirx.Mul),
    ast.Div: ("/", tirx.Div),
    ast.FloorDiv: ("//", tirx.FloorDiv),
    ast.Mod: ("%", tirx.FloorMod),
}
_BITOPS: dict[type, tuple[str, Callable[..., Expr]]] = {
    ast.BitAnd: ("&", tirx.BitwiseAnd),
    ast.BitOr: ("|", tirx.BitwiseOr),
    ast.BitXor: ("^", tirx.BitwiseXor),
    ast.LShift: ("<<", tirx.LShift),
    ast.RShift: (">>", tirx.RShift),
}
_CMPOPS: dict[type, Callable[..., Expr]] = {
    ast.Eq: tirx.EQ,
    ast.NotEq: tirx.NE,
    ast.Lt: tirx.LT,
    ast.LtE: tirx.LE,
    ast.Gt: tirx.GT,
    ast.GtE: tirx.GE,
}

_UNSUPPORTED_NAMES = {
    ast.IfExp: "a conditional expression (use T.if_then_else(cond, a, b))",
    ast.Lambda: "a lambda",
    ast.ListComp: "a list comprehension",
    ast.DictComp: "a dict comprehension",
    ast.SetComp: "a set comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.JoinedStr: "an f-string",
    ast.Starred: "a starred expression",
    ast.NamedExpr: "an assignment expression (:=)",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Slice: "a slice",
}


class ExprParser:
    """Builds TVM expressions from ``ast`` expression nodes.

    ``lookup(name, node)`` resolves a name to a script entity (Var, Axis, SparseBuffer) or a
    captured Python value, raising a located error when it is undefined.

    A node handler ``_<ast class name>`` returns the node's value, or is a generator that yields
    operand nodes and receives their values (``lhs = yield node.left``), returning the value; a
    subclass may override a handler either way.
    """

    def __init__(self, source: Source, alias: str, lookup: Callable[[str, ast.AST], Any]):
        self.source = source
        self.alias = alias
        self.lookup = lookup
        self._depth = 0  # nesting depth of the node being read, for evaluations started inside one
        self._constants: Memo = {}  # which expressions built so far are constant (constant_value)
        self._depths: Memo = {}  # how deep the expressions built so far nest (_built_depth)

    # --- entry points -----------------------------------------------------------------------

    def expr(self, node: ast.AST, dtype: str | None = None) -> Expr:
        """A typed TVM expression; a bare literal takes ``dtype`` when given."""
        value = self.value(node)
        return self.typed(value, node, dtype)

    def int_expr(self, node: ast.AST, what: str) -> Expr:
        """An integer expression (an extent, an index, a length)."""
        return self._run(self._int(node, what))

    def typed(self, value: Value, node: ast.AST, dtype: str | None) -> Expr:
        """``value`` as a TVM expression, converting a literal to ``dtype`` when given."""
        if isinstance(value, Expr):
            return value
        return self._literal_as(value, dtype or default_dtype(value), node)

    def value(self, node: ast.AST) -> Value:
        """An expression or an untyped Python literal."""
        return self._run(node)

    def buffer_access(self, node: ast.Subscript) -> tuple[SparseBuffer, list[Expr]]:
        """The sparse buffer and coordinate indices of ``A[i, j]``, checked for arity."""
        return self._run(self._access(node))

    # --- evaluation -------------------------------------------------------------------------

    def _run(self, start: Union[ast.AST, Step]) -> Any:
        """The value of a node (or the result of a handler step), evaluated with an explicit
        stack of suspended handlers; nodes nested deeper than ``MAX_EXPR_DEPTH`` are refused."""
        base = self._depth
        stack: list[tuple[Step, int, Any]] = []  # a suspended handler, its depth, its node
        result: Any = None
        pending: Any = start
        try:
            while True:
                if isinstance(pending, Generator):
                    stack.append((pending, base, None))
                    result = None
                elif pending is not None:
                    depth = (stack[-1][1] if stack else base) + _nesting(pending)
                    if depth > MAX_EXPR_DEPTH:
                        self.source.fail(pending, f"this expression nests more than {MAX_EXPR_DEPTH} operations deep; split it (e.g. accumulate a long sum in several stores)", ScriptSyntaxError)
                    self._depth = depth
                    step = self._visit(pending)
                    if isinstance(step, Generator):
                        stack.append((step, depth, pending))
                        result = None
                    else:
                        result = self._checked(step, pending)
                if not stack:
                    return result
                handler, self._depth, _ = stack[-1]
                try:
                    pending = handler.send(result)
                except StopIteration as done:
                    _, _, node = stack.pop()
                    result, pending = self._checked(done.value, node), None
        finally:
            self._depth = base

    def _checked(self, value: Any, node: Any) -> Any:
        """``value``, built for ``node``, once its depth is known to be within ``MAX_EXPR_DEPTH``."""
        if node is not None and isinstance(value, Expr) and _fold(value, _built_depth, self._depths) > MAX_EXPR_DEPTH:
            self.source.fail(node, f"this expression nests more than {MAX_EXPR_DEPTH} operations deep as built (a cast "
                                   "to the wider type and T.abs add operations to what is written); split it", ScriptSyntaxError)
        return value

    def _visit(self, node: ast.AST) -> Union[Value, Step]:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            what = _UNSUPPORTED_NAMES.get(type(node), f"'{type(node).__name__}' syntax")
            self.source.fail(node, f"{what} is not supported in a script expression", ScriptSyntaxError)
        return method(node)

    def _int(self, node: ast.AST, what: str) -> Step:
        value = yield node
        if isinstance(value, bool) or isinstance(value, float):
            self.source.fail(node, f"{what} must be an integer, got {value!r}", VerifyError)
        expr = self.typed(value, node, None)
        if not is_int_dtype(dtype_of(expr)):
            self.source.fail(node, f"{what} must be an integer, got a {dtype_of(expr)} value", VerifyError)
        return expr

    # --- node handlers ----------------------------------------------------------------------

    def _Constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, float) and math.isinf(node.value):
            self.source.fail(node, "this float literal is too large (it overflows to infinity); write T.float32(\"inf\") for infinity", VerifyError)
        if isinstance(node.value, (bool, int, float)):
            return node.value
        if isinstance(node.value, str):
            self.source.fail(node, "a string is not a value here (strings name dtypes in T.cast, T.min_value...)", VerifyError)
        self.source.fail(node, f"constant {node.value!r} is not supported", ScriptSyntaxError)

    def _Name(self, node: ast.Name) -> Value:
        entity = self.lookup(node.id, node)
        if isinstance(entity, Var):
            if str(entity.ty) == "T.handle":
                self.source.fail(node, f"handle '{node.id}' cannot be used as a value; bind it with T.match_sparse_buffer", VerifyError)
            return entity
        if isinstance(entity, Axis):
            self.source.fail(node, f"axis '{node.id}' cannot be used as a value; iterate over it with T.sp_iter", VerifyError)
        if isinstance(entity, SparseBuffer):
            self.source.fail(node, f"sparse buffer '{node.id}' cannot be used as a value; index it, e.g. {node.id}[i]", VerifyError)
        if isinstance(entity, (bool, int, float)):
            return entity
        if isinstance(entity, Expr):
            return entity
        self.source.fail(node, f"'{node.id}' is a Python {type(entity).__name__}, which cannot be used in a script expression", VerifyError)

    def _Subscript(self, node: ast.Subscript) -> Step:
        buffer, indices = yield from self._access(node)
        return tirx.BufferLoad(buffer.buffer, indices, self.source.span(node))

    def _access(self, node: ast.Subscript) -> Step:
        if not isinstance(node.value, ast.Name):
            self.source.fail(node.value, "only sparse buffers can be indexed, e.g. A[i, j]", ScriptSyntaxError)
        entity = self.lookup(node.value.id, node.value)
        if not isinstance(entity, SparseBuffer):
            kind = "axis" if isinstance(entity, Axis) else "value"
            self.source.fail(node.value, f"'{node.value.id}' is a {kind}, not a sparse buffer, and cannot be indexed", VerifyError)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) != len(entity.axes):
            self.source.fail(
                node,
                f"sparse buffer '{entity.name}' has {len(entity.axes)} axes "
                f"({', '.join(a.name for a in entity.axes)}) but is indexed with {len(items)} indices",
                VerifyError,
            )
        indices = []
        for k, item in enumerate(items):
            indices.append((yield from self._int(item, f"index {k} of '{entity.name}'")))
        return entity, indices

    def _BinOp(self, node: ast.BinOp) -> Step:
        op = type(node.op)
        if op not in _BINOPS and op not in _BITOPS:
            if op is ast.Pow:
                self.source.fail(node, "'**' is not supported; use T.pow(a, b)", ScriptSyntaxError)
            self.source.fail(node, f"operator {op.__name__} is not supported", ScriptSyntaxError)
        lhs = yield node.left
        rhs = yield node.right
        if op in _BITOPS:
            symbol, build = _BITOPS[op]
            a, b = self._unify(lhs, rhs, node, symbol, (node.left, node.right))
            if not is_int_dtype(dtype_of(a)):
                self.source.fail(node, f"'{symbol}' needs integer operands, got {dtype_of(a)}", VerifyError)
            return build(a, b, self.source.span(node))
        symbol, build = _BINOPS[op]
        a, b = self._unify(lhs, rhs, node, symbol, (node.left, node.right))
        dtype = dtype_of(a)
        if op is ast.Div and not is_float_dtype(dtype):
            self.source.fail(node, "'/' divides floats only; use '//' for integer (floor) division", VerifyError)
        if op in (ast.FloorDiv, ast.Mod) and not is_int_dtype(dtype):
            self.source.fail(node, f"'{symbol}' needs integer operands, got {dtype}", VerifyError)
        if op in (ast.FloorDiv, ast.Mod) and _always_zero(b):
            self.source.fail(node.right, f"integer division by zero: the right operand of '{symbol}' is always 0", VerifyError)
        if dtype == "bool":
            self.source.fail(node, f"'{symbol}' is not defined on bool operands", VerifyError)
        if is_int_dtype(dtype) and op in _EXACT:
            x, y = constant_value(a, self._constants), constant_value(b, self._constants)
            if x is not None and y is not None:
                exact, (low, high) = _EXACT[op](int(x), int(y)), int_range(dtype)
                if not low <= exact <= high:
                    self.source.fail(node, f"{x} {symbol} {y} is {exact}, which does not fit in {dtype} "
                                           f"({low} to {high})", VerifyError)
        return build(a, b, self.source.span(node))

    def _UnaryOp(self, node: ast.UnaryOp) -> Step:
        if isinstance(node.op, ast.Invert):
            self.source.fail(node, "operator '~' is not supported", ScriptSyntaxError)
        operand = yield node.operand
        if isinstance(node.op, ast.Not):
            expr = self.typed(operand, node.operand, "bool")
            if dtype_of(expr) != "bool":
                self.source.fail(node, f"'not' needs a bool operand, got {dtype_of(expr)}", VerifyError)
            return tirx.Not(expr, self.source.span(node))
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand
        expr = self.typed(operand, node.operand, None)
        if dtype_of(expr) == "bool":
            self.source.fail(node, "unary '-' is not defined on a bool operand", VerifyError)
        if dtype_of(expr).startswith("uint"):
            self.source.fail(node, f"unary '-' is not defined on an unsigned operand ({dtype_of(expr)}); cast it to a "
                                   f"signed type first", VerifyError)
        minus_one = literal_const(-1, dtype_of(expr), self.source.span(node))
        return tirx.Mul(expr, minus_one, self.source.span(node))

    def _BoolOp(self, node: ast.BoolOp) -> Step:
        build = tirx.And if isinstance(node.op, ast.And) else tirx.Or
        word = "and" if isinstance(node.op, ast.And) else "or"
        operands = []
        for value_node in node.values:
            operand = self.typed((yield value_node), value_node, "bool")
            if dtype_of(operand) != "bool":
                self.source.fail(value_node, f"'{word}' needs bool operands, got {dtype_of(operand)}", VerifyError)
            operands.append(operand)
        result = operands[0]
        for operand in operands[1:]:
            result = build(result, operand, self.source.span(node))
        return result

    def _Compare(self, node: ast.Compare) -> Step:
        for op in node.ops:
            if type(op) not in _CMPOPS:
                self.source.fail(node, f"comparison {type(op).__name__} is not supported", ScriptSyntaxError)
        terms = [node.left, *node.comparators]
        values = []
        for term in terms:
            values.append((yield term))
        result = None
        for k, (op, left, right) in enumerate(zip(node.ops, values, values[1:])):
            a, b = self._unify(left, right, node, "comparison", (terms[k], terms[k + 1]))
            if dtype_of(a) == "bool":
                self.source.fail(node, "comparing bool values is not supported; combine them with 'and', 'or' and "
                                       "'not'", VerifyError)
            cmp = _CMPOPS[type(op)](a, b, self.source.span(node))
            result = cmp if result is None else tirx.And(result, cmp, self.source.span(node))
        return result

    def _Call(self, node: ast.Call) -> Step:
        name = self.construct_name(node.func)
        keywords = self._keywords(node, name)
        args = node.args
        if name in VALUE_DTYPES:
            self._arity(node, name, 1, 1)
            if isinstance(args[0], ast.Constant) and args[0].value in ("inf", "-inf", "nan") and name.startswith("float"):
                return literal_const(float(args[0].value), name, self.source.span(node))
            value = yield args[0]
            if isinstance(value, Expr):
                return self._cast(value, name, node)
            return self._literal_as(value, name, args[0], at=node)
        if name == "cast":
            a = bind_args(self.source, node, name, ["value", "dtype"], [])
            dtype = self.dtype_arg(a["dtype"])
            return self._cast(self.typed((yield a["value"]), a["value"], None), dtype, node)
        if name == "reinterpret":
            a = bind_args(self.source, node, name, ["dtype", "value"], [])
            dtype = self.dtype_arg(a["dtype"])
            value = self.typed((yield a["value"]), a["value"], None)
            given = dtype_of(value)
            if tvm.DataType(dtype).bits != tvm.DataType(given).bits:
                self.source.fail(a["dtype"], f"T.reinterpret reads the same bits as another type: {dtype} is "
                                             f"{tvm.DataType(dtype).bits} bits wide, the value's {given} "
                                             f"{tvm.DataType(given).bits}", VerifyError)
            return tirx.reinterpret(dtype, value, self.source.span(node))
        if name in UNARY_MATH:
            self._arity(node, name, 1, 1)
            dtype = self.dtype_arg(keywords["dtype"]) if "dtype" in keywords else None
            x = self.typed((yield args[0]), args[0], dtype or "float32")
            self._check_math_dtype(node, name, dtype, [(args[0], x)])
            return self._math(name, [x], self.source.span(node))
        if name in BINARY_MATH:
            self._arity(node, name, 2, 2)
            dtype = self.dtype_arg(keywords["dtype"]) if "dtype" in keywords else None
            lhs, rhs = (yield args[0]), (yield args[1])
            if dtype is not None:
                a, b = self.typed(lhs, args[0], dtype), self.typed(rhs, args[1], dtype)
            else:
                if not isinstance(lhs, Expr) and not isinstance(rhs, Expr):
                    # like T.exp(1): math on literals is on floats
                    lhs, rhs = self._as_float(lhs, args[0]), self._as_float(rhs, args[1])
                a, b = self._unify(lhs, rhs, node, f"T.{name}", (args[0], args[1]))
            self._check_math_dtype(node, name, dtype, [(args[0], a), (args[1], b)])
            return self._math(name, [a, b], self.source.span(node))
        if name in ("max", "min"):
            self._arity(node, name, 2, 2)
            lhs, rhs = (yield args[0]), (yield args[1])
            a, b = self._unify(lhs, rhs, node, f"T.{name}", (args[0], args[1]))
            build = tirx.Max if name == "max" else tirx.Min
            return build(a, b, self.source.span(node))
        if name == "abs":
            self._arity(node, name, 1, 1)
            x = self.typed((yield args[0]), args[0], None)
            if dtype_of(x) == "bool":
                self.source.fail(args[0], "T.abs needs a numeric operand, got bool", VerifyError)
            try:
                result = tirx.abs(x)  # folds a constant operand, checking the result's range
            except ValueError as err:
                raise self.source.error(node, f"T.abs({literal_text(constant_value(x))}) does not fit in {dtype_of(x)}",
                                        VerifyError) from err
            if _tree_size(result, MAX_TREE_SIZE) > MAX_TREE_SIZE:
                # an integer T.abs repeats its operand (x >= 0 ? x : -x): nested, the tree doubles each time
                self.source.fail(node, f"this T.abs expands to more than {MAX_TREE_SIZE} operations; compute the operand first", VerifyError)
            return self._abs_spanned(x, result, self.source.span(node))
        if name in ("select", "if_then_else"):
            self._arity(node, name, 3, 3)
            cond = self.typed((yield args[0]), args[0], "bool")
            if dtype_of(cond) != "bool":
                self.source.fail(args[0], f"the condition of T.{name} must be bool, got {dtype_of(cond)}", VerifyError)
            lhs, rhs = (yield args[1]), (yield args[2])
            a, b = self._unify(lhs, rhs, node, f"T.{name}", (args[1], args[2]))
            if name == "select":
                return tirx.Select(cond, a, b, self.source.span(node))
            return tirx.if_then_else(cond, a, b, self.source.span(node))
        if name in ("min_value", "max_value"):
            self._arity(node, name, 1, 1)
            dtype = self.dtype_arg(args[0])
            if dtype == "bool":
                self.source.fail(args[0], f"T.{name} needs a numeric dtype, got bool", VerifyError)
            span = self.source.span(node)
            return tirx.min_value(dtype, span) if name == "min_value" else tirx.max_value(dtype, span)
        self.source.fail(node.func, f"T.{name} is not an expression construct", ScriptSyntaxError)

    def _Attribute(self, node: ast.Attribute) -> Value:
        name = self.construct_name(node)
        self.source.fail(node, f"T.{name} is not a value; did you mean T.{name}(...)?", ScriptSyntaxError)

    # --- helpers ----------------------------------------------------------------------------

    def construct_name(self, func: ast.AST) -> str:
        """``name`` of ``T.name``; anything else is a located error."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.alias:
            return func.attr
        base = func
        while isinstance(base, (ast.Attribute, ast.Call, ast.Subscript)):
            base = base.func if isinstance(base, ast.Call) else base.value
        if isinstance(base, ast.Name) and base.id in _FORBIDDEN_CALLS:
            self.source.fail(base, f"'{base.id}' is not allowed: scripts are never executed", ScriptSyntaxError)
        if isinstance(func, ast.Name):
            if func.id in ("eval", "exec", "compile", "__import__", "open", "getattr", "globals", "locals"):
                self.source.fail(func, f"calling '{func.id}' is not allowed: scripts are never executed", ScriptSyntaxError)
            self.source.fail(func, f"calling '{func.id}' is not supported; only {self.alias}.<construct>(...) calls are", ScriptSyntaxError)
        self.source.fail(func, f"only {self.alias}.<construct>(...) calls are supported in a script", ScriptSyntaxError)

    def dtype_arg(self, node: ast.AST) -> str:
        """A dtype given as a string literal or a captured string."""
        value: Any = None
        if isinstance(node, ast.Constant):
            value = node.value
        elif isinstance(node, ast.Name):
            value = self.lookup(node.id, node)
        if not isinstance(value, str):
            self.source.fail(node, "expected a dtype string such as \"float32\"", VerifyError)
        if value not in VALUE_DTYPES:
            self.source.fail(node, f"unknown dtype {value!r}; expected one of {', '.join(VALUE_DTYPES)}", VerifyError)
        return value

    def _keywords(self, node: ast.Call, name: str) -> dict[str, ast.AST]:
        """The keyword arguments of an expression construct, by name; others are located errors."""
        allowed = _KEYWORDS.get(name, ())
        found: dict[str, ast.AST] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                self.source.fail(keyword, f"T.{name}() does not accept **kwargs", VerifyError)
            if not allowed:
                self.source.fail(keyword, f"T.{name}() takes no keyword arguments", VerifyError)
            if keyword.arg not in allowed:
                self.source.fail(keyword, f"T.{name}() got an unexpected keyword argument '{keyword.arg}'", VerifyError)
            if keyword.arg in found:
                self.source.fail(keyword, f"T.{name}() got multiple values for argument '{keyword.arg}'", VerifyError)
            found[keyword.arg] = keyword.value
        return found

    def _check_math_dtype(self, node: ast.Call, name: str, dtype: str | None, operands: list[tuple[ast.AST, Expr]]) -> None:
        """Math functions take floats; a ``dtype=`` keyword must name the operands' type."""
        for arg, operand in operands:
            if dtype is not None and dtype_of(operand) != dtype:
                self.source.fail(arg, f"T.{name}(..., dtype=\"{dtype}\") got a {dtype_of(operand)} operand; the dtype of a math function is the type of its operands (cast with T.cast(x, \"{dtype}\"))", VerifyError)
        got = dtype_of(operands[0][1])
        if not is_float_dtype(got):
            if len(operands) == 1:
                self.source.fail(operands[0][0], f"T.{name} needs a float operand, got {got}; cast it first", VerifyError)
            self.source.fail(node, f"T.{name} needs float operands, got {got}; cast them first", VerifyError)
        if name in MATH_REFUSED:
            self.source.fail(node, f"T.{name} cannot be compiled for the CPU (TVM has no code for it); write a - T.trunc(a / b) * b", VerifyError)

    def _math(self, name: str, operands: list[Expr], span: Any) -> Expr:
        """``T.<name>(operands)``, computed in float32 where TVM has no code for their type."""
        build = UNARY_MATH.get(name) or BINARY_MATH[name]
        dtype = dtype_of(operands[0])
        if dtype not in MATH_VIA_FLOAT32.get(name, ()):
            return with_span(build(*operands), span)
        wide = [tirx.Cast("float32", x, span) for x in operands]
        return tirx.Cast(dtype, with_span(build(*wide), span), span)

    @staticmethod
    def _abs_spanned(x: Expr, result: Expr, span: Any) -> Expr:
        """``result`` of ``tirx.abs(x)`` with ``span`` on the nodes it made: an integer's
        ``x >= 0 ? x : 0 - x`` is rebuilt with them (kept only when it is still TVM's expression)."""
        if span is None or not isinstance(result, tirx.Select):
            return with_span(result, span)
        zero = tirx.const(0, dtype_of(x), span)
        rebuilt = tirx.Select(tirx.GE(x, zero, span), x, tirx.Sub(zero, x, span), span)
        return rebuilt if structural_equal(rebuilt, result) else with_span(result, span)

    def _arity(self, node: ast.Call, name: str, low: int, high: int) -> None:
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            self.source.fail(node, f"T.{name}() does not accept *args", VerifyError)
        count = len(node.args)
        if not low <= count <= high:
            want = str(low) if low == high else f"{low} to {high}"
            plural = "" if want == "1" else "s"
            self.source.fail(node, f"T.{name}() takes {want} argument{plural} but {count} were given", VerifyError)

    def _cast(self, expr: Expr, dtype: str, node: ast.AST) -> Expr:
        if _cast_depth(expr) >= MAX_CAST_DEPTH:
            # TVM's simplifier takes time exponential in how many casts nest (20 deep: seconds)
            self.source.fail(node, f"casts nest at most {MAX_CAST_DEPTH} deep inside one another", VerifyError)
        if is_int_dtype(dtype):
            self._check_constant_cast(expr, dtype, node)
        return tirx.Cast(dtype, expr, self.source.span(node))

    def _check_constant_cast(self, expr: Expr, dtype: str, node: ast.AST) -> None:
        """A constant cast to an integer type must be representable there: the build folds it and
        fails (NaN, infinity, out of range), and a compiled float-to-int conversion of such a value
        is undefined."""
        value = constant_value(expr, self._constants)
        if value is None or isinstance(value, bool) or dtype_of(expr) == "bool":
            return
        if isinstance(value, float) and not math.isfinite(value):
            self.source.fail(node, f"cannot cast {value!r} ({dtype_of(expr)}) to the integer type {dtype}", VerifyError)
        low, high = int_range(dtype)
        if not low <= math.trunc(value) <= high:
            self.source.fail(node, f"the constant {literal_text(value)} ({dtype_of(expr)}) does not fit in {dtype}", VerifyError)

    def _as_float(self, value: Literal, node: ast.AST) -> float:
        try:
            return float(value)
        except OverflowError as err:
            raise self.source.error(node, f"literal {literal_text(value)} is too large for a float", VerifyError) from err

    def _literal_as(self, value: Literal, dtype: str, node: ast.AST, at: ast.AST | None = None) -> Expr:
        """``value`` as a ``dtype`` constant; errors point at ``node``, the constant's span is
        ``at``'s (the whole ``T.float32(0)``), else ``node``'s."""
        if dtype == "bool" and not isinstance(value, bool):
            self.source.fail(node, f"expected a bool, got {literal_text(value)}", VerifyError)
        if is_int_dtype(dtype):
            if isinstance(value, float):
                self.source.fail(node, f"float literal {value!r} used where an {dtype} is expected", VerifyError)
            low, high = int_range(dtype)
            if not low <= int(value) <= high:
                self.source.fail(node, f"literal {literal_text(value)} does not fit in {dtype}", VerifyError)
        if is_float_dtype(dtype):
            value = self._as_float(value, node)
        try:
            return literal_const(value, dtype, self.source.span(at or node))
        except ValueError as err:  # TVM's own range checks, e.g. 1e39 as a float32
            raise self.source.error(node, f"literal {literal_text(value)} does not fit in {dtype}", VerifyError) from err

    def _unify(self, lhs: Value, rhs: Value, node: ast.AST, what: str,
               operands: tuple[ast.AST, ast.AST] | None = None) -> tuple[Expr, Expr]:
        """Both operands as expressions of one type (literals adopt the other side's type).
        Errors point at ``node``; a literal operand's constant takes the span of its own node in
        ``operands`` (``node``'s when not given)."""
        at_l, at_r = operands or (None, None)
        if not isinstance(lhs, Expr) and not isinstance(rhs, Expr):
            if isinstance(lhs, float) or isinstance(rhs, float):
                dtype = "float32"
            else:
                dtype = default_dtype(lhs)
                if dtype != "bool" and default_dtype(rhs) == "int64":
                    dtype = "int64"
            return self._literal_as(lhs, dtype, node, at_l), self._literal_as(rhs, dtype, node, at_r)
        if not isinstance(lhs, Expr):
            return self._literal_as(lhs, dtype_of(rhs), node, at_l), rhs
        if not isinstance(rhs, Expr):
            return lhs, self._literal_as(rhs, dtype_of(lhs), node, at_r)
        a, b = dtype_of(lhs), dtype_of(rhs)
        if a == b:
            return lhs, rhs
        if is_int_dtype(a) and is_int_dtype(b) and a.startswith("int") == b.startswith("int"):
            wide = a if int(a.lstrip("uint")) > int(b.lstrip("uint")) else b
            span_l, span_r = (self.source.span(n) for n in (operands or (node, node)))
            return (lhs if a == wide else tirx.Cast(wide, lhs, span_l)), (rhs if b == wide else tirx.Cast(wide, rhs, span_r))
        self.source.fail(node, f"operands of {what!r} have different types {a} and {b}; cast one with T.cast(x, dtype)", VerifyError)


__all__ = ["MAX_EXPR_DEPTH", "ExprParser", "default_dtype", "dtype_of", "is_float_dtype", "is_int_dtype", "literal_const", "literal_text", "tvm", "with_span"]
