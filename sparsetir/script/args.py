"""Binding a construct call's arguments to its parameter names, like Python would."""

from __future__ import annotations

import ast
from typing import Optional

from ..errors import VerifyError
from .source import Source


def bind_args(
    source: Source, call: ast.Call, construct: str, required: list[str], optional: list[str],
    callee: Optional[str] = None,
) -> dict[str, ast.AST]:
    """Map parameter names to argument nodes; wrong arity or keywords are located errors, which
    name the callee as ``callee`` (default ``T.<construct>()``; a macro is ``macro 'name'``)."""
    callee = callee or f"T.{construct}()"
    names = required + optional
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
        source.fail(call, f"{callee} does not accept *args or **kwargs", VerifyError)
    if len(call.args) > len(names):
        want = str(len(names)) if not optional else f"{len(required)} to {len(names)}"
        plural = "" if want == "1" else "s"
        source.fail(call, f"{callee} takes {want} argument{plural} but {len(call.args)} were given", VerifyError)
    bound: dict[str, ast.AST] = dict(zip(names, call.args))
    for keyword in call.keywords:
        if keyword.arg not in names:
            source.fail(keyword, f"{callee} got an unexpected keyword argument '{keyword.arg}'", VerifyError)
        if keyword.arg in bound:
            source.fail(keyword, f"{callee} got multiple values for argument '{keyword.arg}'", VerifyError)
        bound[keyword.arg] = keyword.value
    missing = [n for n in required if n not in bound]
    if missing:
        source.fail(call, f"{callee} is missing argument '{missing[0]}'", VerifyError)
    return bound
