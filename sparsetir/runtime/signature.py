"""The calling signature of a stage-III function: its parameters and which ones it writes.

Parameters are buffer variables (``p.ty`` a ``BufferType``) and scalar variables (``p.ty`` a
``PrimType``), named by the user's stage-I parameter names. A buffer parameter is an *output*
when the body stores into it directly or through an alias (a ``DeclBuffer`` view of its data,
or a block's ``match_buffer`` of one of its regions).
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any, Optional, Union

from .._tvm import BufferType, Expr, Var, s_tir, structural_walk, tirx
from ..ir.stage2 import ALT_SHAPES_ATTR, NNZ_FROM_ATTR
from .sizes import size_names


@dataclass(frozen=True)
class BufferParam:
    """An array parameter: element dtype and shape in terms of the scalar parameters.

    ``alt_shape`` is another shape a caller may pass the same elements in, of another rank (an
    ELL array's ``(m * nnz_cols,)`` or ``(m, nnz_cols)``); the call reshapes it to ``shape``.
    """

    name: str
    dtype: str
    shape: tuple[Expr, ...]
    is_output: bool
    alt_shape: Optional[tuple[Expr, ...]] = None


@dataclass(frozen=True)
class ScalarParam:
    """A scalar parameter; ``is_size`` when some shape depends on it (so it is >= 0)."""

    name: str
    dtype: str
    is_size: bool


Param = Union[BufferParam, ScalarParam]


@dataclass(frozen=True)
class Signature:
    """The parameters of a stage-III function in call order.

    ``nnz_from`` pairs a size variable with the indptr parameter whose last entry it must be:
    the positions of a variable axis that declares no nnz, bound by the arrays laid out by it.
    """

    name: str
    params: tuple[Param, ...]
    nnz_from: tuple[tuple[str, str], ...] = ()

    @property
    def names(self) -> list[str]:
        """Parameter names in call order."""
        return [p.name for p in self.params]

    @property
    def outputs(self) -> list[str]:
        """Names of the arrays the function writes."""
        return [p.name for p in self.params if isinstance(p, BufferParam) and p.is_output]


def signature_of(func: "tirx.PrimFunc", name: str) -> Signature:
    """Read the signature of ``func``."""
    buffers = [p for p in func.params if isinstance(p.ty, BufferType)]
    written = written_params(func)
    attrs = func.attrs
    alt_texts = attrs[ALT_SHAPES_ATTR] if attrs is not None and ALT_SHAPES_ATTR in attrs else {}
    scalars = {str(p.name): p for p in func.params if not isinstance(p.ty, BufferType)}
    sizes = set().union(*(size_names(d) for b in buffers for d in b.ty.shape))
    params: list[Param] = []
    for p in func.params:
        pname = str(p.name)
        if isinstance(p.ty, BufferType):
            shape = tuple(p.ty.shape)
            alt = _shape_of_text(alt_texts[pname], scalars) if pname in alt_texts else None
            params.append(BufferParam(pname, str(p.ty.dtype), shape, any(p.same_as(w) for w in written), alt))
        else:
            params.append(ScalarParam(pname, str(p.ty.dtype), pname in sizes))
    nnz_from = attrs[NNZ_FROM_ATTR] if attrs is not None and NNZ_FROM_ATTR in attrs else {}
    return Signature(name, tuple(params), tuple((str(k), str(v)) for k, v in nnz_from.items()))


def _shape_of_text(texts: Any, scalars: dict[str, Var]) -> Optional[tuple[Expr, ...]]:
    """A shape from the text of its extents (``ALT_SHAPES_ATTR``): integer arithmetic over the
    scalar parameters, as TVM prints it; None where a text is anything else (no other shape)."""
    try:
        return tuple(_size_expr(ast.parse(str(text), mode="eval").body, scalars) for text in texts)
    except (SyntaxError, ValueError, KeyError):
        return None


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _size_expr(node: ast.expr, scalars: dict[str, Var]) -> Expr:
    if isinstance(node, ast.Name):
        return scalars[node.id]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return tirx.const(node.value, "int32")
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_size_expr(node.left, scalars), _size_expr(node.right, scalars))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        name, args = node.func.attr, node.args
        if name == "Cast" and len(args) == 2 and isinstance(args[0], ast.Constant):
            return tirx.Cast(str(args[0].value), _size_expr(args[1], scalars))
        if name in ("int32", "int64") and len(args) == 1 and isinstance(args[0], ast.Constant):
            return tirx.const(int(args[0].value), name)
        if name in ("min", "max") and len(args) == 2:
            return getattr(tirx, name)(_size_expr(args[0], scalars), _size_expr(args[1], scalars))
    raise ValueError(f"not a size expression: {ast.dump(node)}")


def written_params(func: "tirx.PrimFunc") -> list[Var]:
    """The buffer parameters that ``func``'s body stores into, directly or via aliases."""
    alias_of: list[tuple[Var, Var]] = []
    stored: list[Var] = []

    def on_decl(node: "tirx.DeclBuffer") -> None:
        for source in _buffers_in(node.data):
            alias_of.append((node.buffer, source))

    def on_match(node: "s_tir.MatchBufferRegion") -> None:
        for source in _buffers_in(node.source):
            alias_of.append((node.buffer, source))

    def on_store(node: "tirx.BufferStore") -> None:
        stored.append(node.buffer)

    structural_walk(
        func.body,
        [
            (tirx.DeclBuffer, on_decl),
            (s_tir.MatchBufferRegion, on_match),
            (tirx.BufferStore, on_store),
        ],
    )
    params = [p for p in func.params if isinstance(p.ty, BufferType)]
    result: list[Var] = []
    for buf in stored:
        root = _resolve(buf, alias_of, params)
        if root is not None and not any(root.same_as(r) for r in result):
            result.append(root)
    return result


def _resolve(buf: Var, alias_of: list[tuple[Var, Var]], params: list[Var]) -> Optional[Var]:
    """Follow aliases from ``buf`` to the parameter it views, if any."""
    seen: list[Var] = []
    frontier = [buf]
    while frontier:
        node = frontier.pop()
        if any(node.same_as(s) for s in seen):
            continue
        seen.append(node)
        for p in params:
            if node.same_as(p):
                return p
        frontier.extend(src for alias, src in alias_of if alias.same_as(node))
    return None


def _buffers_in(expr: object) -> list[Var]:
    found: list[Var] = []

    def on_var(var: Var) -> None:
        if isinstance(var.ty, BufferType):
            found.append(var)

    structural_walk(expr, [(Var, on_var)])
    return found
