"""``@T.macro``: script statements written once and expanded, while a script is read, where
another script calls them (seed 003's "macro expansion" metaprogramming).

A macro is never run. Its source is kept, and a call ``name(args)`` standing as a statement of a
stage-I script is replaced by the macro's statements with its parameters bound to the call's
arguments (axes, buffers, iterators, expressions or constants, each read where the call is).
Expansion is hygienic: the macro's body sees its parameters, the names it binds itself, and the
constants, helpers and macros of its own scope, never the calling function's other names. The
printed program shows the expanded statements, so it parses back without the macro.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

from ..errors import ScriptError, ScriptSyntaxError, VerifyError
from .args import bind_args
from .helpers import bound_names, expand_helper_calls
from .source import Source

#: how deeply macros may expand inside one another (a macro that calls itself stops here)
MAX_MACRO_DEPTH = 16


class Macro:
    """A ``@T.macro`` function: its source, where it is, and the scope its names resolve in."""

    def __init__(self, source: Source, node: ast.FunctionDef, alias: str, captures: Mapping[str, Any]):
        self.source = source
        self.node = node
        self.alias = alias
        self.captures = dict(captures)
        self.name = node.name
        self._helpers_done = False
        check_definition(source, node)

    def body(self) -> list[ast.stmt]:
        """The statements to expand (a docstring left out), helper calls already evaluated."""
        if not self._helpers_done:
            expand_helper_calls(self.source, self.node, self.captures, bound_names(self.node))
            self._helpers_done = True
        statements = list(self.node.body)
        if statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant) \
                and isinstance(statements[0].value.value, str):
            statements = statements[1:]
        return statements

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ScriptError(f"T.macro '{self.name}' is expanded where a script calls it; it cannot be called from Python")

    def __repr__(self) -> str:
        return f"<T.macro {self.name}>"


def check_definition(source: Source, node: ast.FunctionDef) -> None:
    """A macro takes plain positional parameters and has no decorator arguments."""
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        source.fail(node, f"macro '{node.name}' takes plain parameters only (no defaults, *args, **kwargs or "
                          "keyword-only parameters)", ScriptSyntaxError)
    for deco in node.decorator_list:
        if isinstance(deco, ast.Call):
            source.fail(deco, "@T.macro takes no arguments", ScriptSyntaxError)


def decorator_alias(node: ast.FunctionDef, name: str) -> str | None:
    """``T`` of a definition decorated ``@T.<name>`` (or ``@T.<name>(...)``), else ``None``."""
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == name and isinstance(target.value, ast.Name):
            return target.value.id
    return None


def is_macro_def(node: ast.stmt) -> bool:
    """Whether a top-level definition is decorated ``@<alias>.macro``."""
    return isinstance(node, ast.FunctionDef) and decorator_alias(node, "macro") is not None


def bind_call(source: Source, macro: Macro, call: ast.Call) -> dict[str, ast.AST]:
    """The macro's parameters mapped to the call's argument nodes, as Python would bind them."""
    names = [a.arg for a in macro.node.args.args]
    return bind_args(source, call, macro.name, names, [], callee=f"macro '{macro.name}'")


@contextmanager
def noted(macro: Macro, call_source: Source, call: ast.Call) -> Iterator[None]:
    """Errors inside the expansion keep their location in the macro and say where it was called."""
    try:
        yield
    except ScriptError as err:
        if err.line is None:
            raise
        line, col, _, _ = call_source.location(call)
        note = f" (in macro '{macro.name}' called at {call_source.filename}:{line}:{col})"
        raise type(err)(err.message + note, err.filename, err.line, err.col, err.source_line, err.end_col) \
            .with_traceback(None) from err.__cause__


def called_macro(call: Any, captures: Mapping[str, Any], is_local: Any) -> Macro | None:
    """The macro a call statement names: a bare name the script does not bind (``is_local``)
    that its scope binds to a ``Macro``; else ``None``."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)) or is_local(call.func.id):
        return None
    value = captures.get(call.func.id)
    return value if isinstance(value, Macro) else None


def expand_stage2(reader: Any, macro: Macro, call: ast.Call) -> list[Any]:
    """The statements of ``macro`` read by a stage-II reader (``stage2_parser.Stage2Reader``),
    its parameters bound to the call's arguments, its names its own (as at stage I)."""
    fp = reader.fp
    if fp.macro_depth >= MAX_MACRO_DEPTH:
        reader.source.fail(call, f"macros expand more than {MAX_MACRO_DEPTH} deep here (does '{macro.name}' call itself?)", VerifyError)
    names = type(reader.names)()
    for name, node in bind_call(reader.source, macro, call).items():
        if isinstance(node, ast.Name):
            names.define(name, reader._lookup(node.id, node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.define(name, node.value)
        else:
            names.define(name, reader.exprs.value(node))
    saved = (reader.source, reader.T, reader.names, reader.buffers, reader.scalars, fp.scope, fp.source, fp.alias)
    reader.source = reader.exprs.source = fp.source = macro.source
    reader.T = reader.exprs.alias = fp.alias = macro.alias
    reader.names, reader.buffers, reader.scalars = names, {}, {}
    fp.scope = type(fp.scope)(macro.captures)
    fp.macro_depth += 1
    try:
        with noted(macro, saved[0], call):
            statements = macro.body()
            fp._check_constructs(macro.node)
            out: list[Any] = []
            for node in statements:
                stmt = reader.stmt(node)
                out.extend(stmt if isinstance(stmt, list) else [] if stmt is None else [stmt])
            return out
    finally:
        fp.macro_depth -= 1
        reader.source, reader.T, reader.names, reader.buffers, reader.scalars, fp.scope, fp.source, fp.alias = saved
        reader.exprs.source, reader.exprs.alias = saved[0], saved[1]
