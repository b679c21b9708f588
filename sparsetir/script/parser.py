"""Script text → stage-I IR, by an allow-list over Python's ``ast``; nothing is executed.

Names in a script resolve, innermost first, to: iterators, sparse buffers, axes, parameters,
then values captured from the Python scope around a decorated function (ints, floats, bools,
dtype strings). Every construct builds its IR node directly, with the span of its source.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from .._tvm import Expr, Var, tirx, tvm
from ..errors import ScriptError, ScriptSyntaxError, VerifyError
from ..ir.axis import (
    DENSE_FIXED,
    DENSE_VARIABLE,
    INDEX_DTYPES,
    MERGE_OPS,
    SPARSE_FIXED,
    SPARSE_VARIABLE,
    AttachedAxis,
    Axis,
    AxisKind,
    FusedAxis,
    MergedAxis,
    iter_axes,
    make_axis,
)
from ..ir.buffer import SparseBuffer
from ..ir.coiteration import merge_problem
from ..ir.function import STAGE_I_LEVEL, SparseFunction
from ..ir.iteration import SparseIteration
from ..ir.stage2 import STAGE_II_LEVEL, func_attr_problem
from . import constructs as C
from .args import bind_args
from .expr_parser import ExprParser, dtype_of, literal_const
from .helpers import bound_names, expand_helper_calls
from .macro import MAX_MACRO_DEPTH, Macro, bind_call, called_macro, decorator_alias, is_macro_def, noted
from .source import Source

_STATEMENT_NAMES = {
    ast.For: "a for loop (iterate with T.sp_iter)",
    ast.While: "a while loop",
    ast.If: "an if statement (use T.if_then_else in an expression)",
    ast.Return: "return",
    ast.Import: "an import inside a function",
    ast.ImportFrom: "an import inside a function",
    ast.FunctionDef: "a nested function definition",
    ast.ClassDef: "a class definition",
    ast.Try: "try",
    ast.Raise: "raise",
    ast.Delete: "del",
    ast.Global: "global",
    ast.Nonlocal: "nonlocal",
    ast.Assert: "assert",
    ast.AnnAssign: "an annotated assignment",
    ast.AsyncFunctionDef: "an async function",
    ast.AsyncWith: "async with",
    ast.AsyncFor: "async for",
    ast.Match: "match",
    ast.Break: "break",
    ast.Continue: "continue",
}

_CAPTURABLE = (bool, int, float, str)
#: how deep lists and dicts may nest in an attribute value
MAX_ATTR_DEPTH = 8
#: How many iterators the sparse iterations around a statement may bind together. Lowered, each
#: becomes a loop and a block, two levels of indentation in the stage-II script, of the 99 that
#: Python reads: 32 leaves a third of them to schedules, and the printed program parses back.
MAX_NESTED_ITERATORS = 32
#: the function attribute that says which stage a script is written at
LEVEL_ATTR = "sparse_tir_level"


class _Scope:
    """Nested name bindings with the line each name was defined at."""

    def __init__(self, captures: Mapping[str, Any]):
        self.frames: list[dict[str, tuple[Any, int]]] = [{}]
        self.captures = captures

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def find(self, name: str) -> Optional[tuple[Any, int]]:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def define(self, name: str, value: Any, line: int) -> None:
        self.frames[-1][name] = (value, line)


@dataclass
class _IterationBody:
    """What the body of a sparse iteration read so far holds: its ``T.init()`` statements and the
    others. ``macro_depth`` is where the iteration itself was written: a ``T.init()`` deeper (in
    a macro called in its body) is the iteration's init as well."""

    macro_depth: int
    init: Optional[list[Any]] = None
    body: list[Any] = field(default_factory=list)


class FunctionParser:
    """Parses one ``@T.prim_func`` definition into a ``SparseFunction``."""

    def __init__(self, source: Source, alias: str, captures: Mapping[str, Any]):
        self.source = source
        self.alias = alias
        self.scope = _Scope(captures)
        self.exprs = ExprParser(source, alias, self._lookup)
        self.used_handles: dict[str, int] = {}
        self.nested_iterators = 0  # bound by the sparse iterations around the statement being read
        self.macro_depth = 0  # how many macro expansions the statement being read is inside
        self.iteration_body: Optional[_IterationBody] = None  # of the innermost sparse iteration being read

    # --- names ------------------------------------------------------------------------------

    def _lookup(self, name: str, node: ast.AST) -> Any:
        found = self.scope.find(name)
        if found is not None:
            return found[0]
        if name in self.scope.captures:
            value = self.scope.captures[name]
            if isinstance(value, _CAPTURABLE):
                return value
            self.source.fail(node, f"'{name}' is a Python {type(value).__name__} from the enclosing scope; only ints, floats, bools and dtype strings can be captured", VerifyError)
        self.source.fail(node, f"undefined name '{name}'", VerifyError)

    def _define(self, name: str, value: Any, node: ast.AST) -> None:
        self.check_not_alias(name, node)
        previous = self.scope.find(name)
        if previous is not None:
            self.source.fail(node, f"'{name}' is already defined (line {previous[1]})", VerifyError)
        line, _, _, _ = self.source.location(node)
        self.scope.define(name, value, line)

    def check_not_alias(self, name: str, node: ast.AST) -> None:
        """Refuse ``name`` when it is the module's name in scripts (the script's own alias, or
        ``T``, which the printers write): printed, the name would have to change."""
        if name in (self.alias, "T"):
            self.source.fail(node, f"'{name}' names the sparsetir.script module in scripts (from sparsetir.script "
                                   f"import tir as {name}); choose another name", VerifyError)

    def _axis(self, node: ast.AST, what: str) -> Axis:
        if not isinstance(node, ast.Name):
            self.source.fail(node, f"{what} must be an axis name", VerifyError)
        entity = self._lookup(node.id, node)
        if not isinstance(entity, Axis):
            self.source.fail(node, f"{what}: '{node.id}' is not an axis", VerifyError)
        return entity

    def _handle(self, node: ast.AST, what: str) -> Var:
        if not isinstance(node, ast.Name):
            self.source.fail(node, f"{what} must be a T.handle parameter", VerifyError)
        entity = self._lookup(node.id, node)
        if not (isinstance(entity, Var) and str(entity.ty) == "T.handle"):
            self.source.fail(node, f"{what}: '{node.id}' is not a T.handle parameter", VerifyError)
        return entity

    # --- function ---------------------------------------------------------------------------

    def function(self, node: ast.FunctionDef) -> Any:
        """The whole function: signature, header and body; a ``Stage2Function`` when its
        ``T.func_attr`` says ``"sparse_tir_level": 1``, else a stage-I ``SparseFunction``."""
        self._check_decorators(node)
        self._check_constructs(node)
        if self.stage_of(node) == STAGE_II_LEVEL:
            from .stage2_parser import Stage2Reader

            return Stage2Reader(self).function(node)
        params = self._params(node)
        self._check_return(node)
        attrs: dict[str, Any] = {}
        axes: list[Axis] = []
        buffers: list[SparseBuffer] = []
        body: list[Any] = []
        statements = list(node.body)
        if statements and _is_docstring(statements[0]):
            statements = statements[1:]
        for stmt in statements:
            if isinstance(stmt, ast.Assign) and (self._is_header(stmt) or self._is_view(stmt)):
                entity = self._header(stmt)
                (axes if isinstance(entity, Axis) else buffers).append(entity)
            elif _is_construct_call(stmt, self.alias, "func_attr"):
                if attrs:
                    self.source.fail(stmt, "T.func_attr may appear only once", VerifyError)
                attrs = self._func_attrs(stmt.value, node)
            else:
                body.extend(self._statement(stmt, in_iteration=False))
        return SparseFunction(node.name, params, attrs, axes, buffers, body, self.source.span(node))

    def _check_constructs(self, node: ast.FunctionDef) -> None:
        """Every ``T.<name>`` in the function is a construct of the language, checked before
        anything is read, at stage I and II alike: a misspelled declaration would otherwise be
        read as some other statement (``L = T.dense_fixd(m)`` as an assignment to a name) and
        refused for that. The first one in the text is reported, with the closest construct."""
        known = C.known_constructs()
        unknown = [n for n in ast.walk(node)
                   if isinstance(n, ast.Attribute) and _is_alias(n.value, self.alias) and n.attr not in known]
        if unknown:
            first = min(unknown, key=lambda n: (n.lineno, n.col_offset))
            self.source.fail(first, C.unknown_construct(self.alias, first.attr), ScriptSyntaxError)

    def _check_decorators(self, node: ast.FunctionDef) -> None:
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            ok = isinstance(target, ast.Attribute) and target.attr == "prim_func" and isinstance(target.value, ast.Name)
            if not ok or (isinstance(deco, ast.Call) and (deco.args or deco.keywords)):
                self.source.fail(deco, "only the @T.prim_func decorator is supported", ScriptSyntaxError)

    def stage_of(self, node: ast.FunctionDef) -> int:
        """The stage a function is written at, from the ``"sparse_tir_level"`` of its
        ``T.func_attr`` (2, stage I, when absent)."""
        for stmt in node.body:
            if _is_construct_call(stmt, self.alias, "func_attr") and stmt.value.args:
                mapping = stmt.value.args[0]
                if isinstance(mapping, ast.Dict):
                    self._check_unique_keys(mapping)  # which of two levels would count?
                for key, value in zip(getattr(mapping, "keys", []), getattr(mapping, "values", [])):
                    if isinstance(key, ast.Constant) and key.value == LEVEL_ATTR:
                        level = self._attr_value(value)
                        if level not in (STAGE_II_LEVEL, STAGE_I_LEVEL) or isinstance(level, bool):
                            self.source.fail(value, f'"{LEVEL_ATTR}" is {STAGE_I_LEVEL} (stage I) or {STAGE_II_LEVEL} (stage II); stage III is TVM\'s TensorIR and is not read as a script', VerifyError)
                        return level
        return STAGE_I_LEVEL

    def _params(self, node: ast.FunctionDef) -> list[Var]:
        self._check_signature(node)
        return [self._param(arg) for arg in node.args.args]

    def _check_signature(self, node: ast.FunctionDef) -> None:
        args = node.args
        for extra, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
            if extra is not None:
                self.source.fail(extra, f"{what} parameters are not supported", ScriptSyntaxError)
        if args.kwonlyargs or args.posonlyargs:
            self.source.fail(node, "keyword-only and positional-only parameters are not supported", ScriptSyntaxError)
        if args.defaults:
            self.source.fail(args.defaults[0], "parameters cannot have default values", ScriptSyntaxError)

    def _param(self, arg: ast.arg) -> Var:
        """One ``name: T.handle`` or ``name: T.<scalar type>`` parameter, defined in the scope."""
        if arg.annotation is None:
            self.source.fail(arg, f"parameter '{arg.arg}' needs a type: T.handle or a scalar type such as T.int32", VerifyError)
        kind = self.exprs.construct_name(arg.annotation) if isinstance(arg.annotation, ast.Attribute) else None
        if kind == C.HANDLE:
            var = tirx.Var(arg.arg, "handle", self.source.span(arg))
        elif kind in C.SCALAR_PARAM_DTYPES:
            var = tirx.Var(arg.arg, kind, self.source.span(arg))
        else:
            self.source.fail(arg.annotation, f"parameter '{arg.arg}' has an unknown type; use T.handle or a scalar type such as T.int32", VerifyError)
        self._define(arg.arg, var, arg)
        return var

    def _check_return(self, node: ast.FunctionDef) -> None:
        ret = node.returns
        if ret is not None and not (isinstance(ret, ast.Constant) and ret.value is None):
            self.source.fail(ret, "a script function returns nothing: write '-> None' or leave it out", VerifyError)

    # --- header -----------------------------------------------------------------------------

    def _is_header(self, stmt: ast.Assign) -> bool:
        call = stmt.value
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return False
        return call.func.attr in C.AXIS_CONSTRUCTS + C.BUFFER_CONSTRUCTS and _is_alias(call.func.value, self.alias)

    def _is_view(self, stmt: ast.Assign) -> bool:
        """``B = T.decl_buffer(...)``: a stage-I header declaration (a statement at stage II)."""
        call = stmt.value
        return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == C.VIEW_CONSTRUCT and _is_alias(call.func.value, self.alias))

    def _header(self, stmt: ast.Assign) -> Any:
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            self.source.fail(stmt, "an axis or buffer declaration must assign one name, e.g. I = T.dense_fixed(m)", ScriptSyntaxError)
        name = stmt.targets[0].id
        call = stmt.value
        construct = call.func.attr
        if construct in C.AXIS_CONSTRUCTS:
            entity = self._axis_decl(name, construct, call)
        elif construct == C.VIEW_CONSTRUCT:
            entity = self._view_decl(name, call)
        else:
            entity = self._buffer_decl(name, construct, call)
        self._define(name, entity, stmt.targets[0])
        return entity

    def _idtype(self, node: Optional[ast.AST]) -> str:
        if node is None:
            return "int32"
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(node, ast.Name):
            value = self._lookup(node.id, node)
        if value not in INDEX_DTYPES:
            self.source.fail(node, f"unknown index dtype {value!r}; an axis index type is \"int32\" or \"int64\"", VerifyError)
        return value

    def _bool_arg(self, node: Optional[ast.AST], what: str, default: bool) -> bool:
        if node is None:
            return default
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(node, ast.Name):
            value = self._lookup(node.id, node)
        if not isinstance(value, bool):
            self.source.fail(node, f"{what} must be True or False", VerifyError)
        return value

    def _pair(self, node: ast.AST, what: str) -> tuple[ast.AST, ast.AST]:
        if not isinstance(node, (ast.Tuple, ast.List)) or len(node.elts) != 2:
            self.source.fail(node, f"{what} must be a pair ({what.split(' ')[0]}...)", VerifyError)
        return node.elts[0], node.elts[1]

    def _axis_decl(self, name: str, construct: str, call: ast.Call) -> Axis:
        """``T.<kind>(parent, shape, structure arrays, idtype=..., sorted=...)``: the one reader of
        axis declarations, for every stage."""
        kind = AxisKind.of_construct(construct)
        required = ["parent"] if kind.has_parent else []
        required.append("length" if kind is DENSE_FIXED else "shape")
        if kind is not DENSE_FIXED:
            required.append({DENSE_VARIABLE: "indptr", SPARSE_FIXED: "indices", SPARSE_VARIABLE: "data"}[kind])
        optional = ["idtype"] if kind.is_dense else ["idtype", "sorted"]
        if kind is SPARSE_VARIABLE:
            optional.append("assembled")
        a = bind_args(self.source, call, construct, required, optional)
        parent = self._axis(a["parent"], "the parent") if kind.has_parent else None
        fields: dict[str, Any] = {}
        if kind is DENSE_FIXED:
            fields["length"] = self.exprs.int_expr(a["length"], "the axis length")
        elif kind is DENSE_VARIABLE and not isinstance(a["shape"], (ast.Tuple, ast.List)):
            fields["length"] = self.exprs.int_expr(a["shape"], "the axis length")
        else:
            second = "nnz_cols" if kind is SPARSE_FIXED else "nnz"
            len_node, second_node = self._pair(a["shape"], f"(length, {second})")
            fields["length"] = self.exprs.int_expr(len_node, "the axis length")
            fields[second] = self.exprs.int_expr(second_node, second)
        if kind is SPARSE_VARIABLE:
            ptr_node, idx_node = self._pair(a["data"], "(indptr, indices)")
            fields["indptr"] = self._handle(ptr_node, "indptr")
            fields["indices"] = self._handle(idx_node, "indices")
        elif kind is DENSE_VARIABLE:
            fields["indptr"] = self._handle(a["indptr"], "indptr")
        elif kind is SPARSE_FIXED:
            fields["indices"] = self._handle(a["indices"], "indices")
        sorted_ = self._bool_arg(a.get("sorted"), "sorted", True)
        assembled = self._bool_arg(a.get("assembled"), "assembled", False)
        if assembled and not sorted_:
            self.source.fail(a["sorted"], f"axis '{name}' is assembled: the kernel lists each row's coordinates in "
                             "ascending order, so it is sorted (leave sorted=False out)", VerifyError)
        return make_axis(name, kind, parent, idtype=self._idtype(a.get("idtype")), sorted=sorted_,
                         span=self.source.span(call), assembled=assembled, **fields)

    def _buffer_decl(self, name: str, construct: str, call: ast.Call) -> SparseBuffer:
        span = self.source.span(call)
        if construct == "match_sparse_buffer":
            a = bind_args(self.source, call, construct, ["handle", "axes"], ["dtype", "scope", "extra_storage"])
            handle = self._handle(a["handle"], "the buffer's data")
            if handle.name in self.used_handles:
                self.source.fail(a["handle"], f"handle '{handle.name}' is already bound to a sparse buffer (line {self.used_handles[handle.name]})", VerifyError)
            self.used_handles[handle.name] = self.source.location(call)[0]
        else:
            a = bind_args(self.source, call, construct, ["axes"], ["dtype", "scope"])
            handle = None
        axes_node = a["axes"]
        if not isinstance(axes_node, (ast.Tuple, ast.List)) or not axes_node.elts:
            self.source.fail(axes_node, "the axes of a sparse buffer must be a non-empty tuple or list, e.g. (I, J)", VerifyError)
        axes = [self._axis(item, "each entry of the axes") for item in axes_node.elts]
        dtype = self.exprs.dtype_arg(a["dtype"]) if "dtype" in a else "float32"
        scope = self._string_arg(a.get("scope"), "scope", "global")
        extra = a.get("extra_storage")
        if isinstance(extra, ast.Constant) and extra.value is None:
            extra = None  # extra_storage=None, the documented default, spelt out
        extra_expr = self.exprs.int_expr(extra, "extra_storage") if extra is not None else None
        shape = [axis.length for axis in axes]
        buffer = tirx.decl_buffer(shape, dtype, name=name, scope=scope, span=span)
        return SparseBuffer(buffer, axes, handle, scope, extra_expr, span)

    def _view_decl(self, name: str, call: ast.Call) -> SparseBuffer:
        """``T.decl_buffer((I, J), dtype, data=A.data)``: a dense view of the data of ``A``, a
        buffer matched to a parameter over dense fixed axes (seed 002's alias of another buffer's
        data under another shape), read row-major; it may not be larger than that data."""
        a = bind_args(self.source, call, C.VIEW_CONSTRUCT, ["axes", "dtype", "data"], [])
        data = a["data"]
        if not (isinstance(data, ast.Attribute) and data.attr == "data" and isinstance(data.value, ast.Name)):
            self.source.fail(data, "data= takes a sparse buffer's data, e.g. data=A.data", VerifyError)
        target = self._lookup(data.value.id, data.value)
        if not isinstance(target, SparseBuffer):
            self.source.fail(data.value, f"'{data.value.id}' is not a sparse buffer; T.decl_buffer views a buffer's data", VerifyError)
        if target.handle is None:
            self.source.fail(data.value, f"'{target.name}' is not matched to a parameter; T.decl_buffer views a parameter's data", VerifyError)
        if not all(ax.kind is DENSE_FIXED for ax in target.axes):
            self.source.fail(data.value, f"'{target.name}' is laid out by sparse or variable axes; T.decl_buffer views dense data only", VerifyError)
        axes_node = a["axes"]
        if not isinstance(axes_node, (ast.Tuple, ast.List)) or not axes_node.elts:
            self.source.fail(axes_node, "the axes of a view must be a non-empty tuple or list, e.g. (I, J)", VerifyError)
        axes = [self._axis(item, "each entry of the axes") for item in axes_node.elts]
        for item, ax in zip(axes_node.elts, axes):
            if ax.kind is not DENSE_FIXED:
                self.source.fail(item, f"axis '{ax.name}' is not dense fixed; a view's axes are dense (T.dense_fixed)", VerifyError)
        dtype = self.exprs.dtype_arg(a["dtype"])
        if tvm.DataType(dtype).bits != tvm.DataType(target.dtype).bits:
            # Another dtype reads the same bits (T.reinterpret); another width would need byte
            # addressing, which TVM's buffers do not have at this level.
            self.source.fail(a["dtype"], f"a view reads the bits of the data it views: {dtype} is "
                                         f"{tvm.DataType(dtype).bits} bits wide, the data's {target.dtype} "
                                         f"{tvm.DataType(target.dtype).bits}; give it a dtype of the same width",
                             VerifyError)
        size, data_size = _product([ax.length for ax in axes]), _product([ax.length for ax in target.axes])
        if _analyzer().can_prove(size > data_size):
            self.source.fail(axes_node, f"the view has {size} elements but '{target.name}' has only {data_size}", VerifyError)
        buffer = tirx.decl_buffer([ax.length for ax in axes], dtype, name=name, span=self.source.span(call))
        return SparseBuffer(buffer, axes, None, "global", None, self.source.span(call), target.buffer)

    def _string_arg(self, node: Optional[ast.AST], what: str, default: str) -> str:
        if node is None:
            return default
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            self.source.fail(node, f"{what} must be a string", VerifyError)
        return node.value

    def _func_attrs(self, call: ast.Call, node: ast.FunctionDef) -> dict[str, Any]:
        """The function's ``T.func_attr`` dict, its ``global_symbol`` and ``sparsetir.*`` keys
        checked (``func_attr_problem``) and an error located at the offending key."""
        attrs = self._attr_dict(call, "func_attr")
        handles = {a.arg for a in node.args.args if not (isinstance(a.annotation, ast.Attribute)
                                                         and a.annotation.attr != "handle")}
        scalars = {a.arg for a in node.args.args} - handles
        for key_node in call.args[0].keys:
            problem = func_attr_problem(key_node.value, attrs[key_node.value], handles, scalars)
            if problem is not None:
                self.source.fail(key_node, problem, VerifyError)
        return attrs

    def _attr_dict(self, call: ast.Call, construct: str) -> dict[str, Any]:
        if len(call.args) != 1 or call.keywords:
            self.source.fail(call, f"T.{construct}() takes 1 argument, a dict literal", VerifyError)
        node = call.args[0]
        if not isinstance(node, ast.Dict):
            self.source.fail(node, f"T.{construct}() takes a dict literal such as {{\"key\": value}}", VerifyError)
        return self._literal_dict(node, 0)

    def _literal_dict(self, node: ast.Dict, depth: int) -> dict[str, Any]:
        """The attributes of a dict literal; a key written twice is an error at its second
        occurrence (Python would keep the last value silently)."""
        self._check_unique_keys(node)
        out: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                self.source.fail(key if key is not None else node, "attribute keys must be string literals", VerifyError)
            out[key.value] = self._attr_value(value, depth)
        return out

    def _check_unique_keys(self, node: ast.Dict) -> None:
        first: dict[Any, ast.AST] = {}
        for key in node.keys:
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if key.value in first:
                    self.source.fail(key, f"attribute key {key.value!r} is given twice (first on line "
                                          f"{first[key.value].lineno})", VerifyError)
                first[key.value] = key

    def _attr_value(self, node: ast.AST, depth: int = 0) -> Any:
        """A literal attribute value: str, int, float, bool, a typed constant ``T.int64(3)``, or a
        list or dict of them (nested at most ``MAX_ATTR_DEPTH`` deep)."""
        if depth > MAX_ATTR_DEPTH:
            self.source.fail(node, f"attribute values nest at most {MAX_ATTR_DEPTH} deep", VerifyError)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = node.operand  # a signed number is a literal too: {"offset": -1}
            if isinstance(operand, ast.Constant) and type(operand.value) in (int, float):
                return -operand.value if isinstance(node.op, ast.USub) else operand.value
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float, str)):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._attr_value(item, depth + 1) for item in node.elts]
        if isinstance(node, ast.Dict):
            return self._literal_dict(node, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_alias(node.func.value, self.alias) \
                and node.func.attr in C.VALUE_DTYPES and len(node.args) == 1 and not node.keywords:
            value = self.exprs.expr(node)  # T.int64(3), T.float32(0.5): a typed constant
            if isinstance(value, (tirx.IntImm, tirx.FloatImm)):
                return value
        self.source.fail(node, "attribute values must be literals (str, int, float, bool, T.<dtype>(number), or lists and dicts of them)", VerifyError)

    # --- statements -------------------------------------------------------------------------

    def _statement(self, stmt: ast.stmt, in_iteration: bool) -> list[Any]:
        if isinstance(stmt, ast.With):
            read = self.iteration_body
            if read is not None and self.macro_depth > read.macro_depth and _is_init(stmt, self.alias):
                self._take_init(read, stmt)  # a macro called right in a sparse iteration gives its T.init()
                return []
            return [self._with(stmt, in_iteration)]
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            if isinstance(stmt, ast.Assign) and self._is_header(stmt):
                what = stmt.value.func.attr
                self.source.fail(stmt, f"T.{what} declares a function-level name and must be written before the sparse iterations, outside any T.sp_iter", VerifyError)
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if not in_iteration and isinstance(target, ast.Name):
                self.source.fail(target, f"assigning to a name ('{target.id}') is not supported; a script names only axes and buffers (I = T.dense_fixed(m), A = T.match_sparse_buffer(...))", ScriptSyntaxError)
            if not in_iteration:
                self.source.fail(stmt, "a buffer store must be inside a sparse iteration (with T.sp_iter(...))", VerifyError)
            return [self._store(stmt)]
        if isinstance(stmt, ast.Expr):
            return self._expr_statement(stmt, in_iteration)
        if isinstance(stmt, ast.Pass):
            return []
        what = _STATEMENT_NAMES.get(type(stmt), f"'{type(stmt).__name__}' statement")
        self.source.fail(stmt, f"{what} is not supported in a script", ScriptSyntaxError)

    def _expr_statement(self, stmt: ast.Expr, in_iteration: bool) -> list[Any]:
        call = stmt.value
        if not isinstance(call, ast.Call):
            if isinstance(call, ast.Constant) and isinstance(call.value, str):
                return []  # a string statement is a comment
            self.source.fail(stmt, "an expression on its own does nothing; only T.evaluate(...) and T.<construct>(...) calls may stand alone", ScriptSyntaxError)
        macro = called_macro(call, self.scope.captures, lambda name: self.scope.find(name) is not None)
        if macro is not None:
            return self._expand(macro, call, in_iteration)
        name = self.exprs.construct_name(call.func)
        if name == "evaluate":
            a = bind_args(self.source, call, name, ["value"], [])
            return [tirx.Evaluate(self.exprs.expr(a["value"]), self.source.span(stmt))]
        if name == "sp_iter_attr":
            self.source.fail(stmt, "T.sp_iter_attr must be the first statement of a T.sp_iter body", VerifyError)
        if name == "func_attr":
            self.source.fail(stmt, "T.func_attr must be at function level", VerifyError)
        if name in ("init", "sp_iter"):
            self.source.fail(stmt, f"T.{name}() is a scope: write 'with T.{name}(...):'", ScriptSyntaxError)
        if name in C.AXIS_CONSTRUCTS + C.BUFFER_CONSTRUCTS:
            self.source.fail(stmt, f"the result of T.{name} must be assigned to a name", ScriptSyntaxError)
        # Unknown names never get here (_check_constructs); a stage-II construct may.
        hint = "is not a statement" if name in C.all_constructs() else "is not a construct of stage-I scripts"
        self.source.fail(call.func, f"T.{name} {hint}", ScriptSyntaxError)

    # --- macros -----------------------------------------------------------------------------

    def _expand(self, macro: Macro, call: ast.Call, in_iteration: bool) -> list[Any]:
        """The statements of ``macro`` read with its parameters bound to the call's arguments
        (read here), in the macro's own file and scope (``macro.py``)."""
        if self.macro_depth >= MAX_MACRO_DEPTH:
            self.source.fail(call, f"macros expand more than {MAX_MACRO_DEPTH} deep here (does '{macro.name}' call itself?)", VerifyError)
        values = {name: self._macro_arg(node) for name, node in bind_call(self.source, macro, call).items()}
        scope = _Scope(macro.captures)
        for param in macro.node.args.args:
            scope.define(param.arg, values[param.arg], macro.source.location(param)[0])
        saved = (self.source, self.alias, self.scope)
        self.source, self.alias, self.scope = macro.source, macro.alias, scope
        self.exprs.source, self.exprs.alias = macro.source, macro.alias
        self.macro_depth += 1
        try:
            with noted(macro, saved[0], call):
                statements = macro.body()
                self._check_constructs(macro.node)
                return [out for stmt in statements for out in self._statement(stmt, in_iteration)]
        finally:
            self.macro_depth -= 1
            self.source, self.alias, self.scope = saved
            self.exprs.source, self.exprs.alias = saved[0], saved[1]

    def _macro_arg(self, node: ast.AST) -> Any:
        """A macro argument, read where the call is: a name stands for what it names (an axis,
        a buffer, an iterator...), a string literal for itself, anything else for its value."""
        if isinstance(node, ast.Name):
            return self._lookup(node.id, node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return self.exprs.value(node)

    def _store(self, stmt: ast.Assign | ast.AugAssign) -> Any:
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                self.source.fail(stmt, "chained assignment is not supported", ScriptSyntaxError)
            target = stmt.targets[0]
        else:
            target = stmt.target
        if not isinstance(target, ast.Subscript):
            if isinstance(target, ast.Name):
                self.source.fail(target, f"assigning to a name ('{target.id}') is not supported inside a sparse iteration; store into a sparse buffer", ScriptSyntaxError)
            self.source.fail(target, "only stores into sparse buffers (A[i, j] = ...) are supported", ScriptSyntaxError)
        buffer, indices = self.exprs.buffer_access(target)
        dtype = buffer.dtype
        if isinstance(stmt, ast.AugAssign):
            aug = ast.BinOp(left=target, op=stmt.op, right=stmt.value)
            ast.copy_location(aug, stmt)
            aug.end_lineno, aug.end_col_offset = stmt.end_lineno, stmt.end_col_offset
            value_node: ast.AST = aug
        else:
            value_node = stmt.value
        value = self.exprs.expr(value_node, dtype)
        if dtype_of(value) != dtype:
            self.source.fail(value_node, f"storing a {dtype_of(value)} value into '{buffer.name}' of dtype {dtype}; cast it with T.cast(x, \"{dtype}\")", VerifyError)
        return tirx.BufferStore(buffer.buffer, value, indices, self.source.span(stmt))

    def _with(self, stmt: ast.With, in_iteration: bool) -> Any:
        if len(stmt.items) != 1:
            self.source.fail(stmt, "a with statement takes exactly one T.sp_iter(...) or T.init()", ScriptSyntaxError)
        item = stmt.items[0]
        call = item.context_expr
        if not isinstance(call, ast.Call):
            self.source.fail(call, "expected T.sp_iter(...) or T.init()", ScriptSyntaxError)
        name = self.exprs.construct_name(call.func)
        if name == "init":
            self.source.fail(stmt, "T.init() is only allowed directly inside a sparse iteration (with T.sp_iter(...))", VerifyError)
        if name != "sp_iter":
            self.source.fail(call.func, f"'with T.{name}(...)' is not a scope of the language; use T.sp_iter or T.init", ScriptSyntaxError)
        return self._sp_iter(stmt, call, item.optional_vars)

    def _sp_iter(self, stmt: ast.With, call: ast.Call, targets: Optional[ast.AST]) -> SparseIteration:
        a = bind_args(self.source, call, "sp_iter", ["axes", "kinds", "name"], [])
        axes_node = a["axes"]
        if not isinstance(axes_node, (ast.List, ast.Tuple)) or not axes_node.elts:
            self.source.fail(axes_node, "the first argument of T.sp_iter is a non-empty list of axes", VerifyError)
        entries = [self._iter_entry(e) for e in axes_node.elts]
        count = sum(len(e.axes) if isinstance(e, FusedAxis) else 1 for e in entries)
        kinds_node = a["kinds"]
        if not (isinstance(kinds_node, ast.Constant) and isinstance(kinds_node.value, str)):
            self.source.fail(kinds_node, "the iterator kinds must be a string literal such as \"SRS\"", VerifyError)
        kinds = kinds_node.value
        bad = [ch for ch in kinds if ch not in "SR"]
        if bad:
            self.source.fail(kinds_node, f"iterator kind {bad[0]!r} is not 'S' (spatial) or 'R' (reduction)", VerifyError)
        if len(kinds) != count:
            self.source.fail(kinds_node, f"kinds string {kinds!r} has {len(kinds)} letters but the iteration has {count} iterator{'s' if count != 1 else ''}", VerifyError)
        name_node = a["name"]
        if isinstance(name_node, ast.Name):  # a macro's parameter or a captured string
            named = self._lookup(name_node.id, name_node)
            if isinstance(named, str):
                name_node = ast.copy_location(ast.Constant(value=named), name_node)
        if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
            self.source.fail(name_node, "the name of a sparse iteration must be a string literal such as \"csrmm\"", VerifyError)
        if not C.is_iteration_name(name_node.value):
            self.source.fail(name_node, f"the name of a sparse iteration is letters, digits, '_', '-' and '.' (at most {C.MAX_NAME_LENGTH}), e.g. \"rgcn-homo-forward\"", VerifyError)
        if targets is None:
            self.source.fail(stmt, f"T.sp_iter needs 'as [{', '.join('i' + str(k) for k in range(count))}]' naming its {count} iterators", VerifyError)
        names_nodes = targets.elts if isinstance(targets, (ast.List, ast.Tuple)) else [targets]
        if not all(isinstance(n, ast.Name) for n in names_nodes):
            self.source.fail(targets, "iterators must be plain names", ScriptSyntaxError)
        if len(names_nodes) != count:
            self.source.fail(targets, f"T.sp_iter binds {count} iterators but {len(names_nodes)} names are given", VerifyError)
        if self.nested_iterators + count > MAX_NESTED_ITERATORS:
            self.source.fail(stmt, f"the sparse iterations nested here bind {self.nested_iterators + count} iterators; at most "
                                   f"{MAX_NESTED_ITERATORS} may nest (lowered, each is a loop and a block, and Python reads "
                                   "at most 99 levels of indentation)", VerifyError)
        flat = [ax for e in entries for ax in iter_axes(e)]
        self.scope.push()
        iter_vars = []
        for axis, name_n in zip(flat, names_nodes):
            var = tirx.Var(name_n.id, axis.idtype, self.source.span(name_n))
            self._define(name_n.id, var, name_n)
            iter_vars.append(var)
        body_stmts = list(stmt.body)
        attrs: dict[str, Any] = {}
        if body_stmts and _is_construct_call(body_stmts[0], self.alias, "sp_iter_attr"):
            attrs = self._attr_dict(body_stmts[0].value, "sp_iter_attr")
            body_stmts = body_stmts[1:]
        read = _IterationBody(self.macro_depth)
        outer, self.iteration_body = self.iteration_body, read
        self.nested_iterators += count
        for sub in body_stmts:
            if isinstance(sub, ast.With) and _is_init(sub, self.alias):
                self._take_init(read, sub)
            else:
                read.body.extend(self._statement(sub, in_iteration=True))
        self.nested_iterators -= count
        self.iteration_body = outer
        self.scope.pop()
        return SparseIteration(name_node.value, entries, kinds, iter_vars, read.init, read.body, attrs, self.source.span(stmt))

    def _take_init(self, read: "_IterationBody", stmt: ast.With) -> None:
        """The ``T.init()`` block of the sparse iteration being read: one, before its other statements."""
        if read.init is not None:
            self.source.fail(stmt, "a sparse iteration has at most one T.init() block", VerifyError)
        if read.body:
            self.source.fail(stmt, "T.init() must come before the other statements of the sparse iteration", VerifyError)
        read.init = self._init_body(stmt)

    def _init_body(self, stmt: ast.With) -> list[Any]:
        if stmt.items[0].optional_vars is not None:
            self.source.fail(stmt, "T.init() binds no names", VerifyError)
        call = stmt.items[0].context_expr
        if call.args or call.keywords:
            self.source.fail(call, "T.init() takes no arguments", VerifyError)
        out = []
        for sub in stmt.body:
            if not isinstance(sub, (ast.Assign, ast.AugAssign, ast.Pass)):
                self.source.fail(sub, "a T.init() block may contain only buffer stores", VerifyError)
            out.extend(self._statement(sub, in_iteration=True))
        if not out:
            self.source.fail(stmt, "this T.init() block is empty; leave it out", VerifyError)
        return out

    def _iter_entry(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Call):
            name = self.exprs.construct_name(node.func)
            if name == "fuse":
                if node.keywords or len(node.args) < 2:
                    self.source.fail(node, "T.fuse() takes two or more axes", VerifyError)
                return FusedAxis([self._axis(x, "each argument of T.fuse") for x in node.args], self.source.span(node))
            if name == "attach":
                a = bind_args(self.source, node, "attach", ["axis", "new_parent"], [])
                axis = self._axis(a["axis"], "the attached axis")
                parent = self._axis(a["new_parent"], "the new parent")
                if axis.parent is None:
                    self.source.fail(node, f"axis '{axis.name}' has no parent, so it cannot be attached to another", VerifyError)
                return AttachedAxis(axis, parent, self.source.span(node))
            if name in MERGE_OPS:
                return self._merged_axis(node, name)
            self.source.fail(node.func, f"T.{name} cannot appear in the axes of T.sp_iter; use an axis, T.fuse(...), "
                                        "T.attach(...), T.intersect(...) or T.union(...)", VerifyError)
        return self._axis(node, "each entry of the axes of T.sp_iter")

    def _merged_axis(self, node: ast.Call, op: str) -> MergedAxis:
        """``T.intersect(X, Y, ...)`` / ``T.union(X, Y, ...)``: co-iteration of sparse axes
        (``ir/coiteration.py`` has the rules; a broken one is reported at its argument)."""
        if node.keywords:
            self.source.fail(node.keywords[0], f"T.{op}() takes axes only, no keyword arguments", VerifyError)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.source.fail(arg, f"T.{op}() takes axis names; unpacking is not supported", ScriptSyntaxError)
            if isinstance(arg, ast.Call):
                inner = self.exprs.construct_name(arg.func)
                self.source.fail(arg, f"T.{op} merges axes, not T.{inner}(...): co-iterations do not nest; list every "
                                      f"axis in one T.{op}(...)", VerifyError)
        axes = [self._axis(x, f"each argument of T.{op}") for x in node.args]
        problem = merge_problem(op, axes)
        if problem is not None:
            index, message = problem
            self.source.fail(node.args[index] if index >= 0 else node, message, VerifyError)
        return MergedAxis(op, axes, self.source.span(node))


def _product(exprs: list[Any]) -> Any:
    out = exprs[0]
    for e in exprs[1:]:
        out = out * e
    return out


def _analyzer() -> Any:
    from .._tvm import tvm

    return tvm.sym.Analyzer()


def _is_alias(node: ast.AST, alias: str) -> bool:
    return isinstance(node, ast.Name) and node.id == alias


def _is_construct_call(stmt: ast.stmt, alias: str, name: str) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == name
        and _is_alias(stmt.value.func.value, alias)
    )


def _is_init(stmt: ast.With, alias: str) -> bool:
    call = stmt.items[0].context_expr if len(stmt.items) == 1 else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "init" and _is_alias(call.func.value, alias)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


# --- module level -------------------------------------------------------------------------

_SCRIPT_MODULES = ("sparsetir.script", "tvm.script")


def parse_module(source: Source, captures: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every ``@T.prim_func`` of a script file, and every ``@I.ir_module`` class (as a
    ``tvm.IRModule``, ``ir/module.py``), by name, in file order. The file's ``@T.macro``
    definitions are visible to all its functions."""
    tree = source.parse()
    alias: Optional[str] = None
    ir_alias: Optional[str] = None
    scope = dict(captures or {})
    for stmt in tree.body:  # macros first, so a function may use one defined below it
        if is_macro_def(stmt):
            if stmt.name in scope and isinstance(scope[stmt.name], Macro):
                source.fail(stmt, f"macro '{stmt.name}' is defined twice", VerifyError)
            scope[stmt.name] = Macro(source, stmt, decorator_alias(stmt, "macro"), scope)
    for name, value in scope.items():
        if isinstance(value, Macro) and value.source is source:
            value.captures.update(scope)  # macros of the file see each other
    functions: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module in _SCRIPT_MODULES:
            for name in stmt.names:
                if name.name in ("tir", "tirx", "sparse"):
                    alias = name.asname or name.name
                if name.name == "ir":
                    ir_alias = name.asname or name.name
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue  # other imports are inert: nothing of them is used or run
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue
        if is_macro_def(stmt):
            continue
        if isinstance(stmt, ast.FunctionDef):
            if stmt.name in functions:
                source.fail(stmt, f"function '{stmt.name}' is defined twice", VerifyError)
            functions[stmt.name] = _function_of_file(source, stmt, alias, scope)
            continue
        if isinstance(stmt, ast.ClassDef):
            if stmt.name in functions:
                source.fail(stmt, f"'{stmt.name}' is defined twice", VerifyError)
            functions[stmt.name] = _module_class(source, stmt, alias, ir_alias, scope)
            continue
        source.fail(stmt, "a script file holds imports, @T.prim_func functions, @T.macro helpers and "
                          "@I.ir_module classes only", ScriptSyntaxError)
    if not functions:
        raise ScriptError("no @T.prim_func function found in the script", source.filename, 1, 1)
    return functions


def _function_of_file(source: Source, stmt: ast.FunctionDef, alias: Optional[str], scope: Mapping[str, Any]) -> Any:
    deco_alias = _decorator_alias(stmt)
    if deco_alias is None:
        source.fail(stmt, f"function '{stmt.name}' is not decorated with @T.prim_func", ScriptSyntaxError)
    if alias is not None and deco_alias != alias:
        source.fail(stmt.decorator_list[0], f"'{deco_alias}' is not the script module; it was imported as '{alias}'", ScriptSyntaxError)
    return parse_function_node(source, stmt, deco_alias, scope)


def _module_class(source: Source, node: ast.ClassDef, alias: Optional[str], ir_alias: Optional[str],
                  scope: Mapping[str, Any]) -> Any:
    """``@I.ir_module class M:`` holding ``@T.prim_func`` methods: a ``tvm.IRModule``."""
    from ..ir.module import make_module

    decorators = [d for d in node.decorator_list if isinstance(d, ast.Attribute) and d.attr == "ir_module"
                  and isinstance(d.value, ast.Name) and (ir_alias is None or d.value.id == ir_alias)]
    if len(node.decorator_list) != 1 or not decorators:
        source.fail(node, f"class '{node.name}' must be decorated with @{ir_alias or 'I'}.ir_module (and nothing else)", ScriptSyntaxError)
    if node.bases or node.keywords:
        source.fail(node, f"an @I.ir_module class has no base classes", ScriptSyntaxError)
    functions: dict[str, Any] = {}
    for stmt in node.body:
        if _is_docstring(stmt):
            continue
        if not isinstance(stmt, ast.FunctionDef):
            source.fail(stmt, "an @I.ir_module class holds @T.prim_func functions only", ScriptSyntaxError)
        if stmt.name in functions:
            source.fail(stmt, f"function '{stmt.name}' is defined twice in '{node.name}'", VerifyError)
        functions[stmt.name] = _function_of_file(source, stmt, alias, scope)
    if not functions:
        source.fail(node, f"module '{node.name}' holds no @T.prim_func function", VerifyError)
    return make_module(functions)


def _decorator_alias(stmt: ast.FunctionDef) -> Optional[str]:
    for deco in stmt.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == "prim_func" and isinstance(target.value, ast.Name):
            return target.value.id
    return None


def parse_function_node(source: Source, node: ast.FunctionDef, alias: str, captures: Mapping[str, Any]) -> SparseFunction:
    """One function definition to IR, verified."""
    from ..ir.verifier import verify

    try:
        expand_helper_calls(source, node, captures, bound_names(node))
        func = FunctionParser(source, alias, captures).function(node)
        if not isinstance(func, SparseFunction):
            return func  # stage II: checked while it was read, and by TVM's well-formedness check
        verify(func)
    except ScriptError as err:
        if err.source_line is None and err.line is not None and err.filename == source.filename:
            err.source_line = source._line_text(err.line - source.line_offset)
            err.args = (err.render(),)
        raise
    except RecursionError as err:  # every way in (parse, @T.prim_func, specialize) comes through here
        raise source.too_deep(node) from err
    return func


def specialize(func: SparseFunction, bindings: Mapping[Any, Any]) -> SparseFunction:
    """Bind scalar parameters to constants by reading the function's script again.

    The bound names become captured constants, exactly as if the script had been written inside
    a Python function that closes over them; the parameters leave the signature. The script
    read is the function's own file when it still holds the function as parsed (so every span
    of the result points into the user's file, as the explorer needs), else the printed function.
    """
    from .printer import print_function

    values: dict[str, Any] = {}
    for key, value in bindings.items():
        name = key if isinstance(key, str) else getattr(key, "name", None)
        param = next((p for p in func.params if p.name == name), None)
        if param is None or (isinstance(key, Var) and not key.same_as(param)):
            raise KeyError(f"{func.name} has no parameter {key!r} to specialize")
        if str(param.ty) == "T.handle":
            raise TypeError(f"parameter '{name}' is a handle; only scalar parameters can be specialized")
        if isinstance(value, Expr):
            value = value.value
        if not isinstance(value, (int, float, bool)):
            raise TypeError(f"parameter '{name}' can only be bound to a number, got {type(value).__name__}")
        values[name] = value
    found = _original(func)
    if found is None:
        source = Source(print_function(func), f"<specialized {func.name}>", spans=func.span is not None)
        found = source, source.parse().body[0]
    source, node = found
    node.args.args = [a for a in node.args.args if a.arg not in values]
    return parse_function_node(source, node, _decorator_alias(node) or "T", values)


def _original(func: SparseFunction) -> Optional[tuple[Source, ast.FunctionDef]]:
    """The script file ``func`` was parsed from and its definition there, when reading that
    definition again (without captures) gives ``func``: a file edited since, or a function
    that closed over Python values, is not its own script any more."""
    import linecache

    from ..ir import structural_equal

    span = func.span
    filename = str(span.source_name.name) if span is not None and span.source_name is not None else None
    if not filename or filename.startswith("<"):
        return None
    text = "".join(linecache.getlines(filename))
    if not text:
        return None
    try:
        source = Source(text, filename)
        nodes = [stmt for stmt in source.parse().body if isinstance(stmt, ast.FunctionDef) and stmt.name == func.name
                 and stmt.lineno <= int(span.line) <= (stmt.end_lineno or stmt.lineno)]
        if len(nodes) != 1 or _decorator_alias(nodes[0]) is None:
            return None
        # reading leaves the tree as it is, so no copy (copy.deepcopy recurses per level of a deep expression)
        again = parse_function_node(source, nodes[0], _decorator_alias(nodes[0]), {})
    except ScriptError:
        return None
    return (source, nodes[0]) if structural_equal(again, func) else None


__all__ = ["FunctionParser", "parse_function_node", "parse_module", "specialize", "literal_const"]
