"""Calls to Python helpers in a script, evaluated while it is read (seed 003's metaprogramming).

A script may call a plain Python function that its scope provides (the globals and closure of a
decorated function, or ``sparsetir.parse(..., captures=...)``), with constant arguments, to
compute a constant: ``T.dense_fixed(rows(4))``, ``T.cast(x, acc_dtype())``. Each such call is
replaced in the syntax tree by the constant it returns before the script is read, so the rest
of the parser, and the printed program, see only a literal.

What is called is checked first: only ``def`` or ``lambda`` functions (and ``functools.partial``
of them) found in the scope by a bare name; never builtins, classes, methods or anything the
script text itself could name. Arguments must be constants (literals, signed numbers, names of
captured constants, other helper calls); the result must be an int, float, bool or str.
Anything else is an error located at the call.
"""

from __future__ import annotations

import ast
import functools
import math
import types
from typing import Any, Mapping

from ..errors import VerifyError
from .source import Source

#: what a helper may return, and what its arguments may be
CONSTANT_TYPES = (bool, int, float, str)


def is_helper(value: Any) -> bool:
    """Whether ``value`` is something a script may call: a Python function or a partial of one."""
    if isinstance(value, functools.partial):
        return is_helper(value.func)
    return isinstance(value, types.FunctionType)


def expand_helper_calls(source: Source, root: ast.AST, captures: Mapping[str, Any], local_names: set[str]) -> None:
    """Replace, in place, every call under ``root`` whose callee is a bare name bound in
    ``captures`` (and not by the script itself, ``local_names``) by the constant it returns.
    Inner calls are evaluated first; nothing else in the tree is touched."""
    sites = []  # (depth, parent, field, index, call), for calls to names the scope provides
    stack: list[tuple[ast.AST, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        for field, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for index, child in enumerate(children):
                if not isinstance(child, ast.AST):
                    continue
                if _is_capture_call(child, captures, local_names):
                    sites.append((depth, node, field, index if isinstance(value, list) else None, child))
                stack.append((child, depth + 1))
    for _, parent, field, index, call in sorted(sites, key=lambda site: -site[0]):
        constant = ast.copy_location(ast.Constant(value=_call(source, call, captures, local_names)), call)
        constant.end_lineno, constant.end_col_offset = call.end_lineno, call.end_col_offset
        if index is None:
            setattr(parent, field, constant)
        else:
            getattr(parent, field)[index] = constant


def _is_capture_call(node: ast.AST, captures: Mapping[str, Any], local_names: set[str]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id not in local_names and node.func.id in captures
            and callable(captures[node.func.id]) and not _is_macro(captures[node.func.id]))


def _is_macro(value: Any) -> bool:
    from .macro import Macro

    return isinstance(value, Macro)


def _call(source: Source, call: ast.Call, captures: Mapping[str, Any], local_names: set[str]) -> Any:
    name = call.func.id
    fn = captures[name]
    if not is_helper(fn):
        source.fail(call.func, f"'{name}' is a Python {type(fn).__name__}; a script may call only plain Python "
                               "functions (def or lambda) from its scope", VerifyError)
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
        source.fail(call, f"a call to the Python helper '{name}' does not accept *args or **kwargs", VerifyError)
    args = [_constant_arg(source, arg, name, captures, local_names) for arg in call.args]
    kwargs = {k.arg: _constant_arg(source, k.value, name, captures, local_names) for k in call.keywords}
    try:
        result = fn(*args, **kwargs)
    except Exception as err:  # the helper's own failure, shown where the script called it
        raise source.error(call, f"the Python helper '{name}' raised {type(err).__name__}: {err}", VerifyError) from err
    if isinstance(result, CONSTANT_TYPES):  # a subclass (numpy.float64 is a float) gives its plain value
        value = _plain(result)
    else:
        source.fail(call, f"the Python helper '{name}' returned a {type(result).__name__}; a helper called from a "
                          "script must return a constant (int, float, bool or str)", VerifyError)
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            source.fail(call, f"the Python helper '{name}' returned a string that is not text (a lone surrogate); "
                              "TVM stores strings as UTF-8", VerifyError)
    if isinstance(value, float) and not math.isfinite(value):
        source.fail(call, f"the Python helper '{name}' returned {value}; write T.float32(\"inf\") or "
                          "T.float32(\"nan\") for a non-finite value", VerifyError)
    return value


def _plain(value: Any) -> Any:
    for kind in CONSTANT_TYPES:
        if isinstance(value, kind):
            return kind(value)
    return value


def _constant_arg(source: Source, node: ast.AST, name: str, captures: Mapping[str, Any], local_names: set[str]) -> Any:
    """The value of a helper's argument: a literal, a signed number or a captured constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, CONSTANT_TYPES):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    if isinstance(node, ast.Name) and node.id not in local_names and node.id in captures \
            and isinstance(captures[node.id], CONSTANT_TYPES):
        return captures[node.id]
    what = f"'{node.id}' is not a constant of the script's scope" if isinstance(node, ast.Name) else "this is not a constant"
    source.fail(node, f"the arguments of the Python helper '{name}' must be constants (literals or captured "
                      f"numbers and strings): {what}", VerifyError)


def bound_names(node: ast.FunctionDef) -> set[str]:
    """Every name a script function binds itself (parameters, assignment targets, ``as`` names):
    those shadow the scope's helpers and constants."""
    names = {arg.arg for arg in node.args.args}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
    return names
