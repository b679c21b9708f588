"""Integer size expressions (buffer shapes, nnz, axis lengths) evaluated at call time.

Shapes of a stage-III function are TVM expressions over its scalar parameters (``m + 1``,
``nnz * 4``). They are compiled once into Python closures that read scalar values by *name*,
so expressions taken from stage-I axes evaluate against stage-III arguments of the same name.
"""

from __future__ import annotations

from typing import Callable, Mapping, Union

from .._tvm import Expr, Var, tirx

Env = Mapping[str, int]
SizeFn = Callable[[Env], int]
SizeLike = Union[int, Expr]


def _trunc_div(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _trunc_mod(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


_BINARY: dict[type, Callable[[int, int], int]] = {
    tirx.Add: lambda a, b: a + b,
    tirx.Sub: lambda a, b: a - b,
    tirx.Mul: lambda a, b: a * b,
    tirx.FloorDiv: lambda a, b: a // b,
    tirx.FloorMod: lambda a, b: a % b,
    tirx.Div: _trunc_div,
    tirx.Mod: _trunc_mod,
    tirx.Min: min,
    tirx.Max: max,
}


#: compile_size's memo: id of the expression -> (the expression, kept alive; its closure).
_COMPILED: dict[int, tuple[SizeLike, SizeFn]] = {}
_COMPILED_LIMIT = 4096


def compile_size(expr: SizeLike) -> SizeFn:
    """A closure computing the integer value of ``expr`` from scalar values by name.

    Memoized by object identity, so repeated calls with the same expression object cost a
    dictionary lookup (a lookup by equality would build a TVM comparison expression per call).
    """
    entry = _COMPILED.get(id(expr))
    if entry is not None and entry[0] is expr:
        return entry[1]
    fn = _compile_size(expr)
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    _COMPILED[id(expr)] = (expr, fn)
    return fn


def _compile_size(expr: SizeLike) -> SizeFn:
    if isinstance(expr, int):
        return lambda env: expr
    if isinstance(expr, tirx.IntImm):
        value = int(expr.value)
        return lambda env: value
    if isinstance(expr, Var):
        name = str(expr.name)
        return lambda env: env[name]
    if isinstance(expr, tirx.Cast):
        return compile_size(expr.value)
    op = _BINARY.get(type(expr))
    if op is not None:
        lhs, rhs = compile_size(expr.a), compile_size(expr.b)
        return lambda env: op(lhs(env), rhs(env))
    raise NotImplementedError(f"cannot evaluate size expression {expr} ({type(expr).__name__})")


def size_names(expr: SizeLike) -> set[str]:
    """Names of the scalars ``expr`` reads."""
    if isinstance(expr, Var):
        return {str(expr.name)}
    if isinstance(expr, tirx.Cast):
        return size_names(expr.value)
    if type(expr) in _BINARY:
        return size_names(expr.a) | size_names(expr.b)
    return set()


def size_text(expr: SizeLike) -> str:
    """``expr`` as the user would write it (``m + 1``)."""
    return str(expr)
