"""Stage-II script text → ``Stage2Function``, by an allow-list over Python's ``ast``.

The reader of stage-I scripts (``parser.FunctionParser``) reads the signature, ``T.func_attr``
and the axis and sparse-buffer declarations, exactly as at stage I; this module turns those
into the position-space buffers and axes of stage II and reads the body — loops, blocks,
stores, ``if``/``while`` — building each TVM node directly. Nothing of the text is handed to
TVM's TVMScript parser, so nothing in it is ever executed; every problem is a located
``ScriptError``. ``stage2_printer`` writes exactly what this reads back.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

from .._tvm import Expr, Var, s_tir, structural_equal, tirx, tvm
from ..errors import ScriptSyntaxError, VerifyError
from ..ir.axis import Axis, AxisKind, after_sibling, make_axis
from ..ir.buffer import SparseBuffer
from ..ir.stage2 import ALLOCATED, INDICES, INDPTR, VALUE, Stage2Buffer, Stage2Function
from ..ir.verifier import verify_extents
from .expr_parser import ExprParser, dtype_of, is_int_dtype
from .macro import called_macro, expand_stage2
from .source import same_syntax
from .stage2_printer import IMPLIED_ATTRS, ITER_KINDS, LOOP_KINDS

_LOOP_KIND_OF = {name: kind for kind, name in LOOP_KINDS.items()}
_ITER_TYPE_OF = {name: kind for kind, name in ITER_KINDS.items()}
_REMAP_KINDS = {"S": tirx.IterVar.DataPar, "R": tirx.IterVar.CommReduce}
_BLOCK_PRELUDE = ("where", "reads", "writes", "sblock_attr", "block_attr")
_TRUE = tirx.const(True, "bool")


class Stage2ExprParser(ExprParser):
    """Stage-I expressions over stage-II names: buffers are indexed by positions."""

    def _Name(self, node: ast.Name) -> Any:
        entity = self.lookup(node.id, node)
        if isinstance(entity, Var) and isinstance(entity.ty, tirx.BufferType):
            self.source.fail(node, f"buffer '{node.id}' cannot be used as a value; index it, e.g. {node.id}[i]", VerifyError)
        return super()._Name(node)

    def _Subscript(self, node: ast.Subscript) -> Expr:
        buffer, indices = self.buffer_access(node)
        return tirx.BufferLoad(buffer, indices, self.source.span(node))

    def buffer_access(self, node: ast.Subscript) -> tuple[Var, list[Expr]]:
        """The buffer and position indices of ``A[i, j]``, checked for arity."""
        buffer = self.buffer_of(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) != len(buffer.ty.shape):
            self.source.fail(node, f"buffer '{buffer.name}' has {len(buffer.ty.shape)} dimensions but is indexed with {len(items)} indices", VerifyError)
        return buffer, [self.int_expr(item, f"index {k} of '{buffer.name}'") for k, item in enumerate(items)]

    def buffer_of(self, node: ast.AST) -> Var:
        """The stage-II buffer a name refers to."""
        if not isinstance(node, ast.Name):
            self.source.fail(node, "only buffers can be indexed, e.g. A[i, j]", ScriptSyntaxError)
        entity = self.lookup(node.id, node)
        if not (isinstance(entity, Var) and isinstance(entity.ty, tirx.BufferType)):
            self.source.fail(node, f"'{node.id}' is not a buffer and cannot be indexed", VerifyError)
        return entity

    def _Call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("truncdiv", "truncmod") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == self.alias:
            name = node.func.attr
            self._arity(node, name, 2, 2)
            if node.keywords:
                self.source.fail(node.keywords[0], f"T.{name}() takes no keyword arguments", VerifyError)
            a, b = self._unify(self.value(node.args[0]), self.value(node.args[1]), node, f"T.{name}", (node.args[0], node.args[1]))
            if not is_int_dtype(dtype_of(a)):
                self.source.fail(node, f"T.{name} needs integer operands, got {dtype_of(a)}", VerifyError)
            build = tirx.Div if name == "truncdiv" else tirx.Mod
            return build(a, b, self.source.span(node))
        return super()._Call(node)


class _Names:
    """Names the body defines (loop and block variables, block buffers), in nested frames."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = [{}]
        self.hidden = 0  # frames at the top not visible (a block's own iterators, to its bindings)

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> None:
        self.frames.pop()

    def define(self, name: str, value: Any) -> None:
        self.frames[-1][name] = value

    def find(self, name: str) -> Any:
        visible = self.frames[: len(self.frames) - self.hidden]
        for frame in reversed(visible):
            if name in frame:
                return frame[name]
        return None


@dataclass
class _Declarations:
    """What the header declares at stage II: axes over buffers, the sparse buffers' metadata,
    the allocated sparse buffers (the root block's) and each handle's (or buffer parameter's)
    buffer."""

    axes: list[Axis] = field(default_factory=list)
    metadata: list[Stage2Buffer] = field(default_factory=list)
    sparse_allocs: list[Var] = field(default_factory=list)
    param_buffers: dict[str, Var] = field(default_factory=dict)


class Stage2Reader:
    """Reads one stage-II ``@T.prim_func``, with ``fp`` (a ``FunctionParser``) for the header."""

    def __init__(self, fp: Any):
        self.fp = fp
        self.source = fp.source
        self.T = fp.alias
        self.buffers: dict[str, Var] = {}  # stage-II buffers by script name
        self.scalars: dict[str, Var] = {}
        self.names = _Names()
        self.exprs = Stage2ExprParser(fp.source, fp.alias, self._lookup)
        self.loops: list[tuple[Var, Expr, Expr]] = []  # enclosing loops: var, min, extent

    def fail(self, node: ast.AST, message: str, kind: type = VerifyError) -> Any:
        self.source.fail(node, message, kind)

    # --- names ------------------------------------------------------------------------------

    def _lookup(self, name: str, node: ast.AST) -> Any:
        found = self.names.find(name)
        if found is not None:
            return found
        return self._outer_lookup(name, node)

    def _outer_lookup(self, name: str, node: ast.AST) -> Any:
        if name in self.buffers:
            return self.buffers[name]
        if name in self.scalars:
            return self.scalars[name]
        entity = self.fp.scope.find(name)
        if entity is not None:
            what = "an axis" if isinstance(entity[0], Axis) else "a handle"
            self.fail(node, f"'{name}' is {what}; the stage-II body uses buffers, loop and block variables and scalars only")
        self.fail(node, f"undefined name '{name}'")

    def _define(self, name: str, value: Any, node: ast.AST) -> None:
        self.fp.check_not_alias(name, node)
        taken = self.names.frames[-1].get(name) is not None or name in self.buffers or name in self.scalars
        if taken or self.fp.scope.find(name) is not None:
            self.fail(node, f"'{name}' is already defined")
        self.names.define(name, value)

    # --- function ---------------------------------------------------------------------------

    def function(self, node: ast.FunctionDef) -> Stage2Function:
        fp = self.fp
        fp._check_signature(node)
        fp._check_return(node)
        buffer_params = self._params(node)
        statements = list(node.body)
        if statements and _is_docstring(statements[0]):
            statements = statements[1:]
        attrs: Optional[dict[str, Any]] = None
        header: list[tuple[Any, ast.stmt]] = []
        rest: list[ast.stmt] = []
        for stmt in statements:
            if _is_call_stmt(stmt, self.T, "func_attr"):
                if attrs is not None:
                    self.fail(stmt, "T.func_attr may appear only once")
                attrs = fp._func_attrs(stmt.value, node)
            elif isinstance(stmt, ast.Assign) and fp._is_header(stmt):
                if rest:
                    self.fail(stmt, "axes and sparse buffers are declared before the body and its allocations")
                header.append((fp._header(stmt), stmt))
            else:
                rest.append(stmt)
        decl = self._declare(header, buffer_params)
        root_allocs: list[Var] = []
        while rest and self._alloc_call(rest[0]) == "alloc_buffer":
            root_allocs.append(self._alloc(rest.pop(0), "alloc_buffer"))
        if not rest:
            self.fail(node, "a stage-II function needs a body")
        prim_body = self._root(rest, decl.sparse_allocs + root_allocs, node)
        params = [self._param_var(arg, decl.param_buffers) for arg in node.args.args]
        prim = tirx.PrimFunc(params, prim_body, span=self.source.span(node))
        attrs = dict(attrs or {})
        attrs.setdefault("global_symbol", node.name)
        attrs.update({k: v for k, v in IMPLIED_ATTRS.items() if k not in attrs})
        for key, value in attrs.items():
            prim = prim.with_attr(key, value)
        _check_well_formed(prim, self.source, node)
        return Stage2Function(prim, decl.axes, decl.metadata, [a.arg for a in node.args.args])

    def _params(self, node: ast.FunctionDef) -> dict[str, ast.arg]:
        """Handles and scalars as at stage I; the ``name: T.Buffer(shape, dtype)`` parameters
        (plain position-space buffers) are returned, to be declared once every scalar their
        shape may use is known."""
        buffer_params = {}
        for arg in node.args.args:
            ann = arg.annotation
            if isinstance(ann, ast.Call) and isinstance(ann.func, ast.Attribute) and ann.func.attr == "Buffer" \
                    and isinstance(ann.func.value, ast.Name) and ann.func.value.id == self.T:
                buffer_params[arg.arg] = arg
                continue
            var = self.fp._param(arg)
            if str(var.ty) != "T.handle":
                self.scalars[arg.arg] = var
        return buffer_params

    def _param_var(self, arg: ast.arg, param_buffers: dict[str, Var]) -> Var:
        """The PrimFunc parameter for a signature entry: a scalar, or the buffer of a handle."""
        if arg.arg in self.scalars:
            return self.scalars[arg.arg]
        if arg.arg in param_buffers:
            return param_buffers[arg.arg]
        self.fail(arg, f"handle '{arg.arg}' is not matched to a buffer; stage II declares every array with T.match_sparse_buffer")

    def _declare(self, header: list[tuple[Any, ast.stmt]], buffer_params: dict[str, ast.arg]) -> "_Declarations":
        """The stage-I declarations as stage-II position-space buffers and axes."""
        for entity, _ in header:
            verify_extents(entity)  # as stage I's verifier does: literal extents are int32 and not negative
        decl = _Declarations()
        for name, arg in buffer_params.items():
            decl.param_buffers[name] = self.buffers[name] = self._buffer_from(arg.annotation, name, "Buffer")
        by_handle: dict[str, Var] = {}
        positioned: list[tuple[SparseBuffer, Var, ast.stmt]] = []
        for sb, stmt in ((e, st) for e, st in header if isinstance(e, SparseBuffer)):
            dims = [axis.positions for axis in sb.axes]
            if sb.extra_storage is not None:
                dims[-1] = dims[-1] + sb.extra_storage
            if sb.handle is None:
                var = tirx.decl_buffer(dims, sb.dtype, name=sb.name, scope=sb.scope, layout=None)
            else:
                if sb.scope != "global":
                    self.fail(stmt, "a matched sparse buffer lives in global memory; scope is for T.alloc_sparse_buffer")
                var = tirx.decl_buffer(dims, sb.dtype, name=sb.name, layout=None)
                by_handle[sb.handle.name] = decl.param_buffers[sb.handle.name] = var
            self.buffers[sb.name] = var
            positioned.append((sb, var, stmt))
        axes: dict[str, Axis] = {}
        roles: dict[str, str] = {}
        for entity, stmt in ((e, st) for e, st in header if isinstance(e, Axis)):
            arrays = {}
            for array, role in (("indptr", INDPTR), ("indices", INDICES)):
                handle = getattr(entity, array)
                if handle is None:
                    continue
                if handle.name not in by_handle:
                    self.fail(stmt, f"axis {entity.name}: '{handle.name}' is not matched to a buffer; stage II declares structure arrays with T.match_sparse_buffer")
                arrays[array] = by_handle[handle.name]
                roles.setdefault(handle.name, role)
            parent = axes[entity.parent.name] if entity.parent is not None else None
            axes[entity.name] = make_axis(
                entity.name, entity.kind, parent, length=entity.length, nnz=entity.nnz, nnz_cols=entity.nnz_cols,
                idtype=entity.idtype, sorted=entity.sorted, span=entity.span, assembled=entity.assembled, **arrays)
        decl.axes = list(axes.values())
        for sb, var, stmt in positioned:
            axes_of = [axes[a.name] for a in sb.axes]
            for k, axis in enumerate(axes_of):
                # Flattening the buffer's indices (``flatten_sparse_buffers``) reads an axis's
                # position under its parent's, so the parent (or its twin) must come right before.
                # A dense variable axis may also follow a sibling (a batch's (B, I, IJ)).
                if axis.parent is not None and (k == 0 or not _same_positions(axes_of[k - 1], axis.parent)) \
                        and not after_sibling(axes_of, k):
                    self.fail(stmt, f"buffer '{sb.name}': axis '{axis.name}' must come right after its parent "
                                    f"'{axis.parent.name}', as (..., {axis.parent.name}, {axis.name}, ...)")
            if sb.handle is None:
                decl.metadata.append(Stage2Buffer(var, axes_of, "", sb.extra_storage, ALLOCATED, sb.span))
                decl.sparse_allocs.append(var)
            else:
                role = roles.get(sb.handle.name, VALUE)
                decl.metadata.append(Stage2Buffer(var, axes_of, sb.handle.name, sb.extra_storage, role, sb.span))
        return decl

    def _root(self, body: list[ast.stmt], allocs: list[Var], node: ast.FunctionDef) -> Any:
        """The function body: the implicit root block around the statements, or the one written."""
        if len(body) == 1 and isinstance(body[0], ast.With) and _block_name(body[0], self.T) == "root" and not allocs:
            return self.stmt(body[0])
        stmts = self.stmts(body, node)
        root = s_tir.SBlock([], [], [], "root", stmts, None, allocs, span=self.source.span(node))
        return s_tir.SBlockRealize([], True, root, span=self.source.span(node))

    # --- buffers ----------------------------------------------------------------------------

    def _alloc_call(self, stmt: ast.stmt) -> Optional[str]:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.T \
                    and func.attr in ("alloc_buffer", "sblock_alloc_buffer", "match_buffer", "decl_buffer"):
                return func.attr
        return None

    def _alloc(self, stmt: ast.Assign, construct: str) -> Var:
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            self.fail(stmt, f"T.{construct} must be assigned to one name", ScriptSyntaxError)
        name = stmt.targets[0].id
        var = self._buffer_from(stmt.value, name, construct)
        self._define(name, var, stmt.targets[0])
        return var

    def _buffer_from(self, call: ast.Call, name: str, construct: str) -> Var:
        """A buffer from ``T.<construct>(shape, dtype, scope=..., align=..., ...)``."""
        from .args import bind_args

        optional = ["dtype", "scope", "strides", "elem_offset", "align", "offset_factor"]
        optional += {"match_buffer": ["source"], "alloc_buffer": ["annotations"], "decl_buffer": ["data"]}.get(construct, [])
        a = bind_args(self.source, call, construct, ["shape"], optional)
        shape_node = a["shape"]
        items = shape_node.elts if isinstance(shape_node, (ast.Tuple, ast.List)) else [shape_node]
        shape = [self.exprs.int_expr(item, "a buffer dimension") for item in items]
        dtype = self.exprs.dtype_arg(a["dtype"]) if "dtype" in a else "float32"
        scope = self.fp._string_arg(a.get("scope"), "scope", "global")
        extra: dict[str, Any] = {}
        if "strides" in a:
            node = a["strides"]
            items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
            extra["strides"] = [self.exprs.int_expr(item, "a stride") for item in items]
        if "elem_offset" in a:
            extra["elem_offset"] = self.exprs.int_expr(a["elem_offset"], "elem_offset")
        for key, ffi_name in (("align", "data_alignment"), ("offset_factor", "offset_factor")):
            if key in a:
                value = a[key].value if isinstance(a[key], ast.Constant) else None
                if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= 4096:
                    self.fail(a[key], f"{key} must be a positive integer up to 4096")
                extra[ffi_name] = value
        try:
            return tirx.decl_buffer(shape, dtype, name=name, scope=scope, layout=None, **extra)
        except Exception as err:  # noqa: BLE001 - TVM checks the fields it is given
            raise self.source.error(call, f"invalid buffer declaration: {_first_line(err)}", VerifyError) from None

    # --- statements -------------------------------------------------------------------------

    def stmts(self, body: list[ast.stmt], owner: ast.AST) -> Any:
        """A statement list as one statement (a ``SeqStmt`` when there are several)."""
        out = []
        for node in body:
            stmt = self.stmt(node)  # a macro's expansion is a list of statements
            out.extend(stmt if isinstance(stmt, list) else [] if stmt is None else [stmt])
        if not out:
            self.fail(owner, "a body needs at least one statement (T.evaluate(0) does nothing)")
        return out[0] if len(out) == 1 else tirx.SeqStmt(out, span=self.source.span(owner))

    def stmt(self, node: ast.stmt) -> Any:
        span = self.source.span(node)
        if isinstance(node, ast.For):
            return self.loop(node)
        if isinstance(node, ast.With):
            if _is_with_call(node, self.T, "attr"):
                return self.attr_stmt(node)
            name = _block_name(node, self.T)
            if name is None:
                self.fail(node, "only 'with T.sblock(\"name\"):' and 'with T.attr(node, \"key\", value):' open a scope "
                                "in stage II (T.init() goes inside a block)", ScriptSyntaxError)
            return self.block(node)
        if isinstance(node, ast.AnnAssign):
            return self.bind(node)
        if isinstance(node, ast.Assert):
            return self.assert_stmt(node)
        if isinstance(node, ast.Assign) and self._alloc_call(node) in ("alloc_buffer", "decl_buffer"):
            return self.buffer_stmt(node, self._alloc_call(node))
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
                self.fail(node, "only buffer stores (A[i] = value) assign in a stage-II body; declare buffers in a block", ScriptSyntaxError)
            return self.store(node.targets[0], node.value, span)
        if isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Subscript) or not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
                self.fail(node, "only A[i] += / -= / *= value is supported", ScriptSyntaxError)
            # read as A[i] = A[i] + value, as the printer writes it back (and as stage I reads it),
            # so the depth limit counts the operation it adds
            value = ast.BinOp(left=node.target, op=node.op, right=node.value)
            ast.copy_location(value, node)
            value.end_lineno, value.end_col_offset = node.end_lineno, node.end_col_offset
            return self.store(node.target, value, span)
        if isinstance(node, ast.If):
            cond = self._cond(node.test, "an if condition")
            then = self.scoped(node.body, node)
            other = self.scoped(node.orelse, node) if node.orelse else None
            return tirx.IfThenElse(cond, then, other, span=span)
        if isinstance(node, ast.While):
            if node.orelse:
                self.fail(node, "while ... else is not supported", ScriptSyntaxError)
            return tirx.While(self._cond(node.test, "a while condition"), self.scoped(node.body, node), span=span)
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return None  # a string statement is a comment
            macro = called_macro(node.value, self.fp.scope.captures, lambda name: self.names.find(name) is not None
                                 or name in self.buffers or name in self.scalars or self.fp.scope.find(name) is not None)
            if macro is not None:
                return expand_stage2(self, macro, node.value)
            if _is_call_stmt(node, self.T, "evaluate"):
                from .args import bind_args

                a = bind_args(self.source, node.value, "evaluate", ["value"], [])
                return tirx.Evaluate(self.exprs.expr(a["value"]), span=span)
            if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                    and node.value.func.attr in _BLOCK_PRELUDE + ("init",):
                self.fail(node, f"T.{node.value.func.attr} belongs at the top of a block, before its body", VerifyError)
            self.fail(node, "an expression on its own does nothing; only T.evaluate(...) may stand alone", ScriptSyntaxError)
        if isinstance(node, ast.Pass):
            return None
        self.fail(node, f"'{type(node).__name__}' statements are not supported in a stage-II script", ScriptSyntaxError)

    def bind(self, node: ast.AnnAssign) -> Any:
        """``x: T.int32 = value``: a ``Bind``, its variable visible to the statements after it."""
        if not isinstance(node.target, ast.Name) or node.value is None:
            self.fail(node, "a binding is name: T.<dtype> = value", ScriptSyntaxError)
        ann = node.annotation
        if not (isinstance(ann, ast.Attribute) and isinstance(ann.value, ast.Name) and ann.value.id == self.T):
            self.fail(ann, f"a binding's type is {self.T}.<dtype>, e.g. {self.T}.int32", ScriptSyntaxError)
        dtype = ann.attr
        try:
            tvm.DataType(dtype)
        except Exception:  # noqa: BLE001 - TVM's own reading of a dtype name
            self.fail(ann, f"'{dtype}' is not a data type")
        if dtype == "handle":
            self.fail(ann, "stage-II scripts bind scalars only, not handles")
        value = self.exprs.expr(node.value, dtype)
        if dtype_of(value) != dtype:
            self.fail(node.value, f"binding a {dtype_of(value)} value to '{node.target.id}' of {dtype}; "
                                  f"cast it with T.cast(x, \"{dtype}\")")
        var = tirx.Var(node.target.id, dtype, self.source.span(node.target))
        self._define(node.target.id, var, node.target)
        return tirx.Bind(var, value, span=self.source.span(node))

    def assert_stmt(self, node: ast.Assert) -> Any:
        """``assert cond, "msg"`` (a RuntimeError) or ``assert cond, ("Kind", ["part", ...])``."""
        cond = self._cond(node.test, "an assert condition")
        msg = node.msg
        if _is_str(msg):
            kind, parts = "RuntimeError", [msg.value]
        elif isinstance(msg, ast.Tuple) and len(msg.elts) == 2 and _is_str(msg.elts[0]) \
                and isinstance(msg.elts[1], ast.List) and all(_is_str(e) for e in msg.elts[1].elts):
            kind, parts = msg.elts[0].value, [e.value for e in msg.elts[1].elts]
        else:
            self.fail(msg if msg is not None else node,
                      'an assert needs a message: assert cond, "message" or assert cond, ("Kind", ["part", ...])',
                      ScriptSyntaxError)
        # TVM 0.27's wrapper names its first two parameters (kind, condition) but the node takes them
        # as (condition, kind): passed by position, in the order the node takes
        return tirx.AssertStmt(cond, tvm.ir.StringImm(kind), [tvm.ir.StringImm(p) for p in parts],
                               span=self.source.span(node))

    def buffer_stmt(self, node: ast.Assign, construct: str) -> Any:
        """``B = T.alloc_buffer(...)`` or ``B = T.decl_buffer(..., data=A.data)`` in a body."""
        call = node.value
        extra = {kw.arg: kw.value for kw in call.keywords if kw.arg in ("annotations", "data")}
        if construct == "decl_buffer" and "data" not in extra:
            self.fail(call, "T.decl_buffer(shape, dtype, data=A.data) needs the data it views")
        data = self._data_of(extra["data"]) if construct == "decl_buffer" else None
        annotations = {}
        if "annotations" in extra:
            if not isinstance(extra["annotations"], ast.Dict):
                self.fail(extra["annotations"], "annotations= takes a dict literal")
            annotations = self.fp._attr_dict(ast.Call(func=call.func, args=[extra["annotations"]], keywords=[]),
                                             "annotations")
        var = self._alloc(node, construct)
        span = self.source.span(node)
        if construct == "decl_buffer":
            return tirx.DeclBuffer(var, data=data, span=span)
        return tirx.AllocBuffer(var, annotations, span)

    def _data_of(self, node: ast.AST) -> Expr:
        """``A.data``: the data of buffer ``A``."""
        if not (isinstance(node, ast.Attribute) and node.attr == "data"):
            self.fail(node, "data= takes another buffer's data, e.g. data=A.data", ScriptSyntaxError)
        return self.exprs.buffer_of(node.value).data

    def attr_stmt(self, node: ast.With) -> Any:
        """``with T.attr(node, "key", value):``: an ``AttrStmt`` around the body."""
        call = node.items[0].context_expr
        if node.items[0].optional_vars is not None or len(call.args) != 3 or call.keywords:
            self.fail(call, 'T.attr(node, "key", value) takes the annotated node, the key and the value')
        target, key, value = call.args
        if _is_str(target):
            annotated = tvm.ir.StringImm(target.value)
        elif isinstance(target, ast.Name) and isinstance(self._lookup(target.id, target), Var) \
                and isinstance(self._lookup(target.id, target).ty, tirx.BufferType):
            annotated = self._lookup(target.id, target)
        else:
            annotated = self.exprs.expr(target)
        if not _is_str(key):
            self.fail(key, "an attribute key is a string literal")
        body = self.scoped(node.body, node)
        return tirx.AttrStmt(annotated, key.value, self.exprs.expr(value), body, span=self.source.span(node))

    def scoped(self, body: list[ast.stmt], owner: ast.AST) -> Any:
        self.names.push()
        try:
            return self.stmts(body, owner)
        finally:
            self.names.pop()

    def _cond(self, node: ast.AST, what: str) -> Expr:
        cond = self.exprs.expr(node, "bool")
        if dtype_of(cond) != "bool":
            self.fail(node, f"{what} must be bool, got {dtype_of(cond)}")
        return cond

    def store(self, target: ast.Subscript, value_node: ast.AST, span: Any) -> Any:
        buffer, indices = self.exprs.buffer_access(target)
        dtype = str(buffer.ty.dtype)
        value = self.exprs.expr(value_node, dtype)
        if dtype_of(value) != dtype:
            self.fail(value_node, f"storing a {dtype_of(value)} value into '{buffer.name}' of {dtype}; cast it with T.cast(x, \"{dtype}\")")
        return tirx.BufferStore(buffer, value, indices, span=span)

    # --- loops ------------------------------------------------------------------------------

    def loop(self, node: ast.For) -> Any:
        if node.orelse:
            self.fail(node, "for ... else is not supported", ScriptSyntaxError)
        call = node.iter
        if not isinstance(call, ast.Call):
            self.fail(call, "a loop iterates over range(n), T.serial/parallel/vectorized/unroll/thread_binding(n) or T.grid(...)", ScriptSyntaxError)
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.value.id == self.T and call.func.attr == "grid":
            return self._grid(node, call)
        kind, kwargs = self._loop_kind(call)
        lo, extent = self._loop_range(call, kind)
        if "step" in kwargs:
            kwargs["step"] = self.exprs.int_expr(kwargs["step"], "the loop step")
            if not (isinstance(kwargs["step"], tirx.IntImm) and int(kwargs["step"].value) > 0):
                self.fail(call, "a loop step is a positive integer constant")
        if kind in (tirx.ForKind.VECTORIZED, tirx.ForKind.UNROLLED) and not isinstance(extent, tirx.IntImm):
            what = "a vectorized" if kind == tirx.ForKind.VECTORIZED else "an unrolled"
            self.fail(call.args[0], f"{what} loop needs a constant extent")
        if not isinstance(node.target, ast.Name):
            self.fail(node.target, "a loop binds one name (several with T.grid)", ScriptSyntaxError)
        var = tirx.Var(node.target.id, dtype_of(extent), self.source.span(node.target))
        binding = None
        if kind == tirx.ForKind.THREAD_BINDING:
            thread = kwargs.get("thread")
            if thread is None:
                self.fail(call, "T.thread_binding needs thread=\"threadIdx.x\" (or another thread tag)")
            # As TVM's ``bind`` and TVMScript make it: the binding has a variable of its own,
            # named by the tag and typed as the loop (the loop variable stays the loop's).
            binding = tirx.IterVar(None, tirx.Var(thread, dtype_of(extent)), tirx.IterVar.ThreadIndex, thread)
        elif "thread" in kwargs:
            self.fail(call, "thread= belongs to T.thread_binding only")
        self.names.push()
        self._define(node.target.id, var, node.target)
        self.loops.append((var, lo, extent))
        try:
            body = self.stmts(node.body, node)
        finally:
            self.loops.pop()
            self.names.pop()
        return self._for(node, var, lo, extent, kind, body, binding, kwargs)

    def _for(self, node: ast.AST, var: Var, lo: Expr, extent: Expr, kind: Any, body: Any, binding: Any,
             kwargs: dict) -> Any:
        try:
            return tirx.For(var, lo, extent, kind, body, binding, kwargs.get("annotations"), kwargs.get("step"),
                            span=self.source.span(node))
        except Exception as err:  # noqa: BLE001 - TVM's own checks of a loop
            raise self.source.error(node, f"invalid loop: {_first_line(err)}", VerifyError) from None

    def _loop_kind(self, call: ast.Call) -> tuple[Any, dict]:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "range":
            if call.keywords:
                self.fail(call.keywords[0], "range() takes no keyword arguments", ScriptSyntaxError)
            return tirx.ForKind.SERIAL, {}
        name = self.exprs.construct_name(func)
        if name not in _LOOP_KIND_OF:
            self.fail(func, f"T.{name} is not a loop kind; use range, T.serial, T.parallel, T.vectorized, T.unroll, T.thread_binding or T.grid", ScriptSyntaxError)
        kwargs: dict[str, Any] = {}
        for kw in call.keywords:
            if kw.arg == "annotations":
                if not isinstance(kw.value, ast.Dict):
                    self.fail(kw.value, "annotations= takes a dict literal")
                kwargs["annotations"] = self.fp._attr_dict(ast.Call(func=func, args=[kw.value], keywords=[]), "annotations")
            elif kw.arg == "thread":
                if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)):
                    self.fail(kw.value, "thread= takes a string such as \"threadIdx.x\"")
                kwargs["thread"] = kw.value.value
            elif kw.arg in ("min", "step"):
                kwargs[kw.arg] = kw.value
            else:
                self.fail(kw, f"T.{name}() has no argument '{kw.arg}'", VerifyError)
        return _LOOP_KIND_OF[name], kwargs

    def _loop_range(self, call: ast.Call, kind: Any) -> tuple[Expr, Expr]:
        """(min, extent): ``(n)``, ``(n, min=m)``; two positional arguments are (start, stop)."""
        args = call.args
        if not 1 <= len(args) <= 2:
            self.fail(call, "a loop takes its extent (or start and stop)", VerifyError)
        if len(args) == 2:
            if "min" in [kw.arg for kw in call.keywords]:
                self.fail(call, "give either (start, stop) or (extent, min=...)", VerifyError)
            lo = self.exprs.int_expr(args[0], "the loop start")
            stop = self.exprs.int_expr(args[1], "the loop end")
            lo, stop = self.exprs._unify(lo, stop, call, "the loop range")
            extent = stop if _is_zero(lo) else tirx.Sub(stop, lo)
            return lo, extent
        extent = self.exprs.int_expr(args[0], "the loop extent")
        min_node = next((kw.value for kw in call.keywords if kw.arg == "min"), None)
        lo = self.exprs.int_expr(min_node, "the loop start") if min_node is not None else tirx.const(0, dtype_of(extent))
        if dtype_of(lo) != dtype_of(extent):
            self.fail(call, f"the loop start is {dtype_of(lo)} but its extent {dtype_of(extent)}")
        return lo, extent

    def _grid(self, node: ast.For, call: ast.Call) -> Any:
        targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if call.keywords or len(targets) != len(call.args) or not call.args:
            self.fail(call, "T.grid(a, b, ...) binds one name per extent", VerifyError)
        if not all(isinstance(t, ast.Name) for t in targets):
            self.fail(node.target, "T.grid binds plain names", ScriptSyntaxError)
        extents = [self.exprs.int_expr(a, "a loop extent") for a in call.args]
        variables = [tirx.Var(t.id, dtype_of(e), self.source.span(t)) for t, e in zip(targets, extents)]
        self.names.push()
        for t, v, e in zip(targets, variables, extents):
            self._define(t.id, v, t)
            self.loops.append((v, tirx.const(0, dtype_of(e)), e))
        try:
            body = self.stmts(node.body, node)
        finally:
            del self.loops[len(self.loops) - len(variables):]
            self.names.pop()
        for v, e in reversed(list(zip(variables, extents))):
            body = self._for(node, v, tirx.const(0, dtype_of(e)), e, tirx.ForKind.SERIAL, body, None, {})
        return body

    # --- blocks -----------------------------------------------------------------------------

    def block(self, node: ast.With) -> Any:
        span = self.source.span(node)
        name = _block_name(node, self.T)
        iter_vars: list[Any] = []
        values: list[Expr] = []
        predicate: Expr = _TRUE
        reads = writes = None
        annotations: dict[str, Any] = {}
        allocs: list[Var] = []
        matches: list[Any] = []
        init = None
        body: list[ast.stmt] = []
        self.names.push()
        try:
            for stmt in node.body:
                construct = _construct(stmt, self.T)
                if body:
                    prelude_alloc = self._alloc_call(stmt) in ("sblock_alloc_buffer", "match_buffer")
                    if construct in _BLOCK_PRELUDE or construct in ("axis", "remap", "init") or prelude_alloc:
                        self.fail(stmt, f"T.{construct or self._alloc_call(stmt)} belongs at the top of the block, before its body")
                    body.append(stmt)
                elif construct in ("axis", "remap"):
                    for var, value, iv in self._iter_vars(stmt, construct):
                        iter_vars.append(iv)
                        values.append(value)
                elif construct == "where":
                    predicate = self._cond(_single_arg(self, stmt.value, "where"), "T.where")
                elif construct in ("reads", "writes"):
                    regions = [self.region(r) for r in _region_args(stmt.value)]
                    if construct == "reads":
                        reads = regions
                    else:
                        writes = regions
                elif construct in ("sblock_attr", "block_attr"):
                    annotations = self.fp._attr_dict(stmt.value, construct)
                elif construct == "init":
                    if init is not None:
                        self.fail(stmt, "a block has one T.init()")
                    if stmt.items[0].optional_vars is not None or stmt.items[0].context_expr.args:
                        self.fail(stmt, "T.init() takes no arguments and binds no names")
                    init = self.scoped(stmt.body, stmt)
                elif self._alloc_call(stmt) == "sblock_alloc_buffer":
                    allocs.append(self._alloc(stmt, "sblock_alloc_buffer"))
                elif self._alloc_call(stmt) == "match_buffer":
                    matches.append(self._match(stmt))
                else:
                    body.append(stmt)
            if not body:
                self.fail(node, f"block '{name}' has no body")
            stmts = self.stmts(body, node)
            if reads is None or writes is None:
                self.fail(node, f"block '{name}' needs T.reads(...) and T.writes(...) (either may be empty)")
        finally:
            self.names.pop()
        try:
            block = s_tir.SBlock(iter_vars, reads, writes, name, stmts, init, allocs, matches, annotations, span)
            return s_tir.SBlockRealize(values, predicate, block, span=span)
        except Exception as err:  # noqa: BLE001 - TVM's own checks of a block
            raise self.source.error(node, f"invalid block: {_first_line(err)}", VerifyError) from None

    def _iter_vars(self, stmt: ast.Assign, construct: str) -> list[tuple[Var, Expr, Any]]:
        """``v = T.axis.<kind>(extent, binding[, min=...])`` or ``a, b = T.axis.remap("SR", [i, j])``."""
        call = stmt.value
        out = []
        self.names.hidden = 1  # bindings are read outside the block: its own iterators are not visible
        try:
            if construct == "remap":
                targets = stmt.targets[0].elts if isinstance(stmt.targets[0], ast.Tuple) else [stmt.targets[0]]
                if len(call.args) != 2 or call.keywords or not isinstance(call.args[0], ast.Constant) \
                        or not isinstance(call.args[0].value, str) or not isinstance(call.args[1], (ast.List, ast.Tuple)):
                    self.fail(call, "T.axis.remap(\"SR\", [i, j]) takes the kinds and the loop variables")
                kinds, loops = call.args[0].value, call.args[1].elts
                if not (len(kinds) == len(loops) == len(targets)) or set(kinds) - set(_REMAP_KINDS):
                    self.fail(call, "T.axis.remap needs one kind (S or R) and one target per loop variable")
                for kind, loop, target in zip(kinds, loops, targets):
                    value = self.exprs.int_expr(loop, "a remapped loop variable")
                    found = next(((lo, ext) for v, lo, ext in self.loops if v.same_as(value)), None)
                    if found is None or not _is_zero(found[0]):
                        self.fail(loop, "T.axis.remap takes the variables of enclosing loops that start at 0")
                    out.append((target, value, tirx.const(0, dtype_of(found[1])), found[1], _REMAP_KINDS[kind]))
            else:
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    self.fail(stmt, "T.axis.<kind>(...) is assigned to one name", ScriptSyntaxError)
                from .args import bind_args

                kind = call.func.attr
                if kind not in _ITER_TYPE_OF:
                    self.fail(call.func, f"T.axis.{kind} is not an iterator kind; use {', '.join('T.axis.' + k for k in _ITER_TYPE_OF)}")
                a = bind_args(self.source, call, f"axis.{kind}", ["dom", "value"], ["min"])
                extent = self.exprs.int_expr(a["dom"], "the iterator's extent")
                value = self.exprs.int_expr(a["value"], "the iterator's binding")
                lo = self.exprs.int_expr(a["min"], "the iterator's start") if "min" in a else tirx.const(0, dtype_of(extent))
                out.append((stmt.targets[0], value, lo, extent, _ITER_TYPE_OF[kind]))
        finally:
            self.names.hidden = 0
        result = []
        for target, value, lo, extent, iter_type in out:
            if not isinstance(target, ast.Name):
                self.fail(target, "an iterator is bound to a plain name", ScriptSyntaxError)
            if dtype_of(value) != dtype_of(extent) or dtype_of(lo) != dtype_of(extent):
                self.fail(target, f"iterator '{target.id}': its binding is {dtype_of(value)} but its domain {dtype_of(extent)}")
            if not dtype_of(extent).startswith("int"):
                self.fail(target, f"iterator '{target.id}': its domain is {dtype_of(extent)}; an iterator is a signed "
                                  f"integer (cast the extent, T.int32(m))")
            var = tirx.Var(target.id, dtype_of(extent), self.source.span(target))
            self._define(target.id, var, target)
            iv = tirx.IterVar(tvm.ir.Range.from_min_extent(lo, extent), var, iter_type)
            result.append((var, value, iv))
        return result

    def region(self, node: ast.AST) -> Any:
        """``A[i, lo:hi]`` in ``T.reads``/``T.writes``: an index is an extent of 1; ``lo:lo + e``
        has extent ``e`` as written, ``0:e`` extent ``e``, any other ``lo:hi`` extent ``hi - lo``."""
        if not isinstance(node, ast.Subscript):
            self.fail(node, "a region is a buffer with indices or slices, e.g. A[i, 0:n]", ScriptSyntaxError)
        buffer = self.exprs.buffer_of(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) != len(buffer.ty.shape):
            self.fail(node, f"buffer '{buffer.name}' has {len(buffer.ty.shape)} dimensions but the region has {len(items)}")
        ranges = []
        for item in items:
            if isinstance(item, ast.Slice):
                if item.lower is None or item.upper is None or item.step is not None:
                    self.fail(item, "a region slice is lo:hi, both given, without a step")
                lo = self.exprs.int_expr(item.lower, "a region start")
                upper = item.upper
                if isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add) \
                        and same_syntax(upper.left, item.lower):
                    extent = self.exprs.int_expr(upper.right, "a region extent")
                elif _is_zero(lo):
                    extent = self.exprs.int_expr(upper, "a region end")
                else:
                    end = self.exprs.int_expr(upper, "a region end")
                    if dtype_of(end) != dtype_of(lo):
                        self.fail(item, f"a region's start is {dtype_of(lo)} but its end {dtype_of(end)}")
                    extent = tirx.Sub(end, lo)
            else:
                lo = self.exprs.int_expr(item, "a region index")
                extent = tirx.const(1, dtype_of(lo))
            if dtype_of(lo) != dtype_of(extent):
                self.fail(item, f"a region's start is {dtype_of(lo)} but its extent {dtype_of(extent)}")
            ranges.append(tvm.ir.Range.from_min_extent(lo, extent))
        return tirx.BufferRegion(buffer, ranges)

    def _match(self, stmt: ast.Assign) -> Any:
        call = stmt.value
        source = next((kw.value for kw in call.keywords if kw.arg == "source"), None)
        if source is None:
            self.fail(call, "T.match_buffer(shape, dtype, source=A[region]) needs the region it views")
        region = self.region(source)
        var = self._alloc(stmt, "match_buffer")
        try:
            return s_tir.MatchBufferRegion(var, region)
        except Exception as err:  # noqa: BLE001
            raise self.source.error(stmt, f"invalid T.match_buffer: {_first_line(err)}", VerifyError) from None


def _same_positions(a: Axis, b: Axis) -> bool:
    """Whether axis ``a`` has the positions of axis ``b``: ``b`` itself, or its stage-II twin
    (``J_dense = T.dense_variable(I, ..., indptr)`` for ``J = T.sparse_variable(I, ..., (indptr, ...))``,
    ``J_dense = T.dense_fixed(c)`` for ``J = T.sparse_fixed(I, (n, c), indices)``)."""
    if a.same_as(b):
        return True
    if b.kind is AxisKind.SPARSE_FIXED and a.kind is AxisKind.DENSE_FIXED:
        return structural_equal(a.length, b.nnz_cols)
    if not (a.is_variable and b.is_variable) or a.parent is None or b.parent is None:
        return False
    return a.indptr is not None and b.indptr is not None and a.indptr.same_as(b.indptr) \
        and _same_positions(a.parent, b.parent)


def _is_zero(e: Any) -> bool:
    return isinstance(e, tirx.IntImm) and int(e.value) == 0


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return next((line for line in text if line.strip() and not line.startswith("Traceback")), type(err).__name__)


def _is_str(node: Any) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_with_call(node: ast.With, alias: str, name: str) -> bool:
    """``with T.<name>(...):``."""
    if len(node.items) != 1:
        return False
    call = node.items[0].context_expr
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name
            and isinstance(call.func.value, ast.Name) and call.func.value.id == alias)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _is_call_stmt(stmt: ast.stmt, alias: str, name: str) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == name
            and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == alias)


def _construct(stmt: ast.stmt, alias: str) -> Optional[str]:
    """Which block-prelude construct a statement is, if any."""
    if isinstance(stmt, ast.Expr):
        for name in _BLOCK_PRELUDE:
            if _is_call_stmt(stmt, alias, name):
                return name
    if isinstance(stmt, ast.With) and len(stmt.items) == 1:
        call = stmt.items[0].context_expr
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "init" \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == alias:
            return "init"
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) and func.value.attr == "axis" \
                and isinstance(func.value.value, ast.Name) and func.value.value.id == alias:
            return "remap" if func.attr == "remap" else "axis"
    return None


def _block_name(node: ast.With, alias: str) -> Optional[str]:
    """The name of ``with T.sblock("name"):`` (or the RFC's ``T.block``), else None."""
    if len(node.items) != 1 or node.items[0].optional_vars is not None:
        return None
    call = node.items[0].context_expr
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in ("sblock", "block")
            and isinstance(call.func.value, ast.Name) and call.func.value.id == alias):
        return None
    if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Constant) \
            or not isinstance(call.args[0].value, str):
        return None
    return call.args[0].value


def _single_arg(reader: Stage2Reader, call: ast.Call, name: str) -> ast.AST:
    if len(call.args) != 1 or call.keywords:
        reader.fail(call, f"T.{name}() takes one argument")
    return call.args[0]


def _region_args(call: ast.Call) -> list[ast.AST]:
    if len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)):
        return list(call.args[0].elts)
    return list(call.args)


def _check_well_formed(prim: Any, source: Any, node: ast.AST) -> None:
    """TVM's own well-formedness check of the function we built, as a located error."""
    try:
        ok = s_tir.analysis.verify_well_formed(prim, assert_mode=True)
    except Exception as err:  # noqa: BLE001 - TVM reports what is malformed
        raise source.error(node, f"malformed stage-II function: {_first_line(err)}", VerifyError) from None
    if not ok:
        raise source.error(node, "malformed stage-II function", VerifyError)


def is_stage2_text(text: str) -> bool:
    """True when a script's functions are written at stage II (read from the parsed
    ``T.func_attr``; a text that is not valid Python is not stage II)."""
    try:
        with warnings.catch_warnings():  # Python's own warnings about odd literals: the text is data here
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for stmt in fn.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "func_attr" \
                    and call.args and isinstance(call.args[0], ast.Dict):
                for key, value in zip(call.args[0].keys, call.args[0].values):
                    if isinstance(key, ast.Constant) and key.value == "sparse_tir_level" \
                            and isinstance(value, ast.Constant) and value.value == 1:
                        return True
    return False


__all__ = ["Stage2Reader", "is_stage2_text"]
