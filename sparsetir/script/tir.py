"""The ``T`` of scripts: ``from sparsetir.script import tir as T``.

``@T.prim_func`` reads the decorated function's *source* and parses it; the function is never
called. The other names here exist so that scripts are valid Python modules (annotations such
as ``T.handle`` are evaluated at definition time) and so that ``help(T.sp_iter)`` finds its
documentation; calling them outside a script raises an error saying so.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

from ..errors import ScriptError
from ..ir.function import SparseFunction
from . import constructs as _constructs
from .macro import Macro, decorator_alias
from .parser import parse_function_node
from .source import Source


def prim_func(fn: Callable[..., Any] | None = None) -> Any:
    """Parse a decorated Python function as a stage-I SparseTIR function."""
    if fn is None:
        return prim_func
    return _parse_decorated(fn)


def macro(fn: Callable[..., Any] | None = None) -> Any:
    """Keep a decorated Python function's statements to expand where a script calls it (macro.py)."""
    if fn is None:
        return macro
    source, node, captures = _read_decorated(fn)
    try:
        return Macro(source, node, decorator_alias(node, "macro") or "T", captures)
    except ScriptError as err:
        raise err.with_traceback(None) from err.__cause__


def _parse_decorated(fn: Callable[..., Any]) -> SparseFunction:
    source, node, captures = _read_decorated(fn)
    try:
        return parse_function_node(source, node, decorator_alias(node, "prim_func") or "T", captures)
    except ScriptError as err:
        raise err.with_traceback(None) from err.__cause__


def _read_decorated(fn: Callable[..., Any]) -> tuple[Source, ast.FunctionDef, dict[str, Any]]:
    """The source of a decorated function, its syntax tree and the Python values it can see."""
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<script>"
    except (OSError, TypeError) as err:
        raise ScriptError(
            f"cannot read the source of '{getattr(fn, '__name__', fn)}'; pass the script text to sparsetir.parse instead"
        ) from err
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(raw.splitlines()[0]) - len(text.splitlines()[0]) if raw.strip() else 0
    source = Source(text, filename, line_offset=first_line - 1, col_offset=indent)
    captures: dict[str, Any] = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    if code is not None and fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                captures[name] = cell.cell_contents
            except ValueError:  # an empty cell: the variable is not assigned yet
                pass
    try:
        node = source.parse().body[0]
    except ScriptError as err:
        raise err.with_traceback(None) from err.__cause__
    return source, node, captures



class _Annotation:
    """A parameter type marker (``T.handle``, ``T.int32``); only meaningful in a signature."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"T.{self.name}"

    def __call__(self, *args: Any) -> Any:
        raise ScriptError(f"T.{self.name}(...) only has meaning inside a @T.prim_func script")


def _construct(name: str) -> Callable[..., Any]:
    def stub(*args: Any, **kwargs: Any) -> Any:
        raise ScriptError(f"T.{name} is a script construct; it only has meaning inside a @T.prim_func script")

    stub.__name__ = name
    stub.__doc__ = f"Script construct T.{name}; see docs/language.md."
    return stub


handle = _Annotation("handle")
for _dtype in _constructs.VALUE_DTYPES:
    globals()[_dtype] = _Annotation(_dtype)
for _name in _constructs.all_constructs():
    if _name not in globals():
        globals()[_name] = _construct(_name)
del _dtype, _name
