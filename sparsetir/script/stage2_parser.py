"""Parsing stage-II scripts: rewrite the sparse header for TVM's parser, then rebuild the metadata.

Scheme (stage2.md §5): axis lines are blanked (line numbers stay), each
``A = T.match_sparse_buffer(a, [I, J], dtype=...)`` becomes ``A = T.match_buffer(a, (m, n), ...)``
on the same line with the axes' position-space extents, ``@T.prim_func`` becomes
``@T.prim_func(s_tir=True)``, and TVM parses the text. The axes and sparse buffers are then
rebuilt from the header with a small allow-list evaluator (names, integers, tuples, + - * //),
resolving handle names to the parsed parameter buffers. The RFC's spellings ``T.block`` and
``T.block_attr`` are read as ``T.sblock`` / ``T.sblock_attr``; ``T.assume_buffer_domain`` lines
are dropped.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Optional

from .._tvm import tirx, tvm, tvm_ffi, tvmscript_tirx
from ..errors import ScriptSyntaxError
from ..ir.axis import DENSE_FIXED, DENSE_VARIABLE, SPARSE_FIXED, SPARSE_VARIABLE, Axis
from ..ir.stage2 import ALLOCATED, INDICES, INDPTR, VALUE, Stage2Buffer, Stage2Function

_AXIS_CALLS = {"dense_fixed": DENSE_FIXED, "dense_variable": DENSE_VARIABLE,
               "sparse_fixed": SPARSE_FIXED, "sparse_variable": SPARSE_VARIABLE}
_BUFFER_CALLS = ("match_sparse_buffer", "alloc_sparse_buffer")


def is_stage2_text(text: str) -> bool:
    """True when a script's ``T.func_attr`` says ``"sparse_tir_level": 1``."""
    return re.search(r"[\"']sparse_tir_level[\"']\s*:\s*1\b", text) is not None


def _call_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        return node.func.attr
    return None


def _kw(call: ast.Call, name: str, pos: int) -> Optional[ast.AST]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[pos] if len(call.args) > pos else None


_TVM_LOCATION = re.compile(r"-->\s*\S*?:(\d+):(\d+)")


def parse_stage2(text: str, filename: str = "<script>") -> Stage2Function:
    """Parse a stage-II script (as ``Stage2Function.script()`` prints it, or the RFC's).

    Every problem is a ``ScriptSyntaxError`` at the line and column it concerns: Python's
    syntax errors, TVM's diagnostics (the rewritten text keeps every line where it was), and
    a malformed sparse header, located at the header statement being read.
    """
    lines = text.splitlines()
    at: list[ast.AST] = []  # the construct being read, for errors without a location of their own

    def located(message: str, line: Optional[int], col: Optional[int]) -> ScriptSyntaxError:
        source_line = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
        return ScriptSyntaxError(message, filename, line, col, source_line)

    try:
        return _parse_stage2(text, filename, at)
    except ScriptSyntaxError as err:
        if err.line is not None or not at:
            raise
        raise located(err.message, at[-1].lineno, at[-1].col_offset + 1) from None
    except SyntaxError as err:
        raise located(err.msg, err.lineno, err.offset) from None
    except tvm.error.DiagnosticError as err:
        message = str(err).strip().splitlines()[0].removeprefix("error:").strip()
        where = _TVM_LOCATION.search(str(err))
        line, col = (int(where.group(1)), int(where.group(2))) if where else (None, None)
        raise located(message, line, col) from None
    except Exception as err:  # noqa: BLE001 - TVM and the header walk raise many kinds
        node = at[-1] if at else None
        raise located(
            f"malformed stage-II script: {type(err).__name__}: {err}".splitlines()[0],
            node.lineno if node is not None else None,
            node.col_offset + 1 if node is not None else None,
        ) from err


def _parse_stage2(text: str, filename: str, at: list[ast.AST]) -> Stage2Function:
    tree = ast.parse(text, filename=filename)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        raise ScriptSyntaxError("no function in the stage-II script", filename, 1, 1)
    at.append(fn)
    lines = text.splitlines()
    src = lambda node: ast.get_source_segment(text, node)  # noqa: E731
    axes_src: dict[str, tuple[str, ast.Call]] = {}
    buffers_src: list[tuple[str, str, ast.Call]] = []
    param = [a.arg for a in fn.args.args]
    for stmt in fn.body:
        at.append(stmt)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, call = stmt.targets[0].id, stmt.value
            kind = _call_name(call)
            if kind in _AXIS_CALLS:
                _check_header_names(call, set(param) | set(axes_src), at)
                axes_src[name] = (kind, call)
                _blank(lines, stmt)
            elif kind in _BUFFER_CALLS:
                buffers_src.append((name, kind, call))
                if kind == "alloc_sparse_buffer":
                    _blank(lines, stmt)
                else:
                    dims = _dims_text(call, axes_src, src, 1)
                    dtype = _kw(call, "dtype", 2)
                    indent = " " * stmt.col_offset
                    _blank(lines, stmt)
                    lines[stmt.lineno - 1] = (
                        f"{indent}{name} = T.match_buffer({src(call.args[0])}, ({dims},), {src(dtype)})"
                    )
        elif isinstance(stmt, ast.Expr) and _call_name(stmt.value) == "assume_buffer_domain":
            _blank(lines, stmt)
    for dec in fn.decorator_list:
        lines[dec.lineno - 1] = lines[dec.lineno - 1][: max(dec.col_offset - 1, 0)] + "@T.prim_func(s_tir=True)"
    at.append(fn)
    body = "\n".join(lines)
    body = re.sub(r"\bT\.block\(", "T.sblock(", body)
    body = re.sub(r"\bT\.block_attr\(", "T.sblock_attr(", body)
    prim = tvm.script.from_source(body, extra_vars={"T": tvmscript_tirx})
    if isinstance(prim, tvm.IRModule):
        prim = prim["main"]
    return _rebuild(prim, fn, axes_src, buffers_src, src, at)


def _check_header_names(call: ast.Call, known: set[str], at: list) -> None:
    """Every name an axis definition uses is a parameter or an earlier axis."""
    for arg in call.args:
        for node in ast.walk(arg):
            if isinstance(node, ast.Name) and node.id not in known:
                at.append(node)
                raise ScriptSyntaxError(f"unknown name '{node.id}' in the stage-II header")


def _blank(lines: list[str], stmt: ast.stmt) -> None:
    for k in range(stmt.lineno - 1, stmt.end_lineno):
        lines[k] = ""


def _pos_text(kind: str, call: ast.Call, src) -> str:
    if kind == "dense_fixed":
        return src(call.args[0])
    sizes = call.args[1]
    if kind == "sparse_fixed":
        return src(sizes.elts[1])
    return src(sizes.elts[0]) if isinstance(sizes, ast.Tuple) else src(sizes)


def _dims_text(call: ast.Call, axes_src: dict, src, axes_pos: int) -> str:
    axes_node = call.args[axes_pos]
    dims = [f"{_pos_text(*axes_src[a.id], src)}" for a in axes_node.elts]
    extra = _kw(call, "extra_storage", 99)
    if extra is not None:
        dims[-1] = f"{dims[-1]} + {src(extra)}"
    return ", ".join(dims)


class _Eval:
    """Allow-list evaluator of header expressions: names, ints, tuples, + - * //.

    ``at`` is the parser's location stack: the expression being read is pushed so an error is
    reported at it.
    """

    def __init__(self, names: dict[str, Any], at: list):
        self.names = names
        self.at = at

    def __call__(self, node: ast.AST) -> Any:
        self.at.append(node)
        value = self._eval(node)
        self.at.pop()
        return value

    def _eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise ScriptSyntaxError(f"unknown name '{node.id}' in the stage-II header")
            return self.names[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return tirx.const(node.value, "int32")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(self(e) for e in node.elts)
        if isinstance(node, ast.BinOp):
            lhs, rhs = self(node.left), self(node.right)
            if isinstance(node.op, ast.Add):
                return lhs + rhs
            if isinstance(node.op, ast.Sub):
                return lhs - rhs
            if isinstance(node.op, ast.Mult):
                return lhs * rhs
            if isinstance(node.op, ast.FloorDiv):
                return tirx.floordiv(lhs, rhs)
        raise ScriptSyntaxError(f"unsupported expression in the stage-II header: {ast.dump(node)}")


def _rebuild(prim, fn: ast.FunctionDef, axes_src: dict, buffers_src: list, src, at: list) -> Stage2Function:
    attrs = prim.attrs
    for key, value in (attrs.items() if attrs is not None else []):
        if not _is_literal(value):
            raise ScriptSyntaxError(f"attribute '{key}' must be a literal (str, int, float, bool, list, dict)")
    if attrs is None or "sparse_tir_level" not in attrs or int(attrs["sparse_tir_level"]) != 1:
        raise ScriptSyntaxError('a stage-II script sets "sparse_tir_level": 1 in its T.func_attr')
    param_names = [a.arg for a in fn.args.args]
    names: dict[str, Any] = {}
    handle_buffer: dict[str, Any] = {}
    by_name = {p.name: p for p in prim.params}
    for buf_name, kind, call in buffers_src:
        if kind == "match_sparse_buffer":
            handle_buffer[call.args[0].id] = by_name[buf_name]
    for pname, p in zip(param_names, prim.params):
        names[pname] = handle_buffer.get(pname, p)
    ev = _Eval(names, at)
    axes: list[Axis] = []
    for name, (kind, call) in axes_src.items():
        at.append(call)
        idtype = _kw(call, "idtype", {"dense_fixed": 1, "dense_variable": 3, "sparse_fixed": 3, "sparse_variable": 3}[kind])
        idtype = ev(idtype) if idtype is not None else "int32"
        sorted_node = next((kw.value for kw in call.keywords if kw.arg == "sorted"), None)
        is_sorted = bool(sorted_node.value) if sorted_node is not None else True
        if kind == "dense_fixed":
            axis = Axis(name, DENSE_FIXED.value, None, ev(call.args[0]), None, None, None, None, idtype, True, None)
        else:
            parent = names[call.args[0].id]
            sizes = ev(call.args[1])
            length, second = (sizes if isinstance(sizes, tuple) else (sizes, None))
            if kind == "dense_variable":
                axis = Axis(name, DENSE_VARIABLE.value, parent, length, second, None, ev(call.args[2]), None, idtype, True, None)
            elif kind == "sparse_fixed":
                axis = Axis(name, SPARSE_FIXED.value, parent, length, None, second, None, ev(call.args[2]), idtype, is_sorted, None)
            else:
                indptr, indices = ev(call.args[2])
                axis = Axis(name, SPARSE_VARIABLE.value, parent, length, second, None, indptr, indices, idtype, is_sorted, None)
        for array in (axis.indptr, axis.indices):
            if array is not None and not any(array.same_as(b) for b in handle_buffer.values()):
                raise ScriptSyntaxError(
                    f"axis {name}: '{array.name}' is not matched to a buffer; stage II declares "
                    "structure arrays with T.match_sparse_buffer"
                )
        names[name] = axis
        axes.append(axis)
    roles: dict[str, str] = {}
    for axis in axes:
        for var, role in ((axis.indptr, INDPTR), (axis.indices, INDICES)):
            if var is not None:
                roles.setdefault(var.name, role)
    allocs = {b.name: b for b in _root_allocs(prim)}
    buffers: list[Stage2Buffer] = []
    for buf_name, kind, call in buffers_src:
        at.append(call)
        axes_of = [names[a.id] for a in call.args[0 if kind == "alloc_sparse_buffer" else 1].elts]
        extra_node = _kw(call, "extra_storage", 99)
        extra = ev(extra_node) if extra_node is not None else None
        if kind == "alloc_sparse_buffer":
            buffers.append(Stage2Buffer(allocs[buf_name], axes_of, "", extra, ALLOCATED, None))
        else:
            var = by_name[buf_name]
            buffers.append(Stage2Buffer(var, axes_of, call.args[0].id, extra, roles.get(buf_name, VALUE), None))
    return Stage2Function(prim, axes, buffers, param_names)


def _is_literal(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool, tirx.IntImm, tirx.FloatImm)):
        return True
    if isinstance(value, tvm_ffi.Map) or isinstance(value, dict):
        return all(_is_literal(k) and _is_literal(v) for k, v in value.items())
    if isinstance(value, (tvm_ffi.Array, list, tuple)):
        return all(_is_literal(v) for v in value)
    return False


def _root_allocs(prim) -> list:
    body = prim.body
    block = getattr(body, "block", None)
    return list(block.alloc_buffers) if block is not None else []
