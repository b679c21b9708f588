"""Stage-II IR → script text; ``stage2_parser`` reads it back to an equal ``Stage2Function``.

The text is our own, written by walking the IR (nothing of TVM's printed output is reused):

- the header of stage I — ``def`` line with the stage-I handles and scalars, ``T.func_attr``
  (``"sparse_tir_level": 1`` says the stage), the axes, then one ``T.match_sparse_buffer`` /
  ``T.alloc_sparse_buffer`` per position-space buffer, printed by the same functions as stage I;
- the body: the root block's statements at function level, one ``for`` per loop
  (``range(n)`` for a plain serial loop, ``T.parallel(n)``, ``T.vectorized(n)``... otherwise),
  ``with T.sblock("name"):`` blocks with one ``T.axis.*`` line per iterator, ``T.where``,
  ``T.reads``/``T.writes``, ``T.sblock_attr``, allocations and ``with T.init():``, buffer stores,
  ``if``/``while`` and ``T.evaluate``.

Everything the IR holds is printed, nothing is inferred on the way back, so print → parse is the
identity: constants carry their type, un-simplified arithmetic stays as written (``1 + 1``), and a
region prints as ``lo:lo + extent`` exactly as it is stored (or ``lo:hi`` for an extent ``hi - lo``).
"""

from __future__ import annotations

from typing import Any, Optional

from .._tvm import Expr, PrimType, Var, s_tir, structural_equal, tirx, tvm
from ..errors import SparseTIRError
from ..ir.analysis import uses_any
from ..ir.stage2 import ALLOCATED, Stage2Function
from .expr_printer import ExprPrinter
from .printer import NameTable, attr_dict_text, axis_text, literal_text, sparse_buffer_text

_INDENT = "    "
_BUFFER_DATA = tvm.ir.Op.get("tirx.buffer_data")
#: attributes every stage-II function has; the printer leaves them out and the parser adds them
IMPLIED_ATTRS = {"s_tir": True}
LOOP_KINDS = {
    tirx.ForKind.SERIAL: "serial",
    tirx.ForKind.PARALLEL: "parallel",
    tirx.ForKind.VECTORIZED: "vectorized",
    tirx.ForKind.UNROLLED: "unroll",
    tirx.ForKind.THREAD_BINDING: "thread_binding",
}
REMAP_KINDS = {tirx.IterVar.DataPar: "S", tirx.IterVar.CommReduce: "R"}
ITER_KINDS = {
    tirx.IterVar.DataPar: "spatial",
    tirx.IterVar.CommReduce: "reduce",
    tirx.IterVar.Ordered: "scan",
    tirx.IterVar.Opaque: "opaque",
}


class Stage2ExprPrinter(ExprPrinter):
    """Stage-I expression printing plus the integer (truncating) division TVM may introduce."""

    def step(self, e: Any) -> Any:
        if isinstance(e, (tirx.Div, tirx.Mod)) and not str(e.ty.dtype).startswith("float"):
            name = "truncdiv" if isinstance(e, tirx.Div) else "truncmod"
            return self.call(f"{self.alias}.{name}", [e.a, e.b])
        return super().step(e)


def is_const(e: Any, value: int) -> bool:
    """``e`` is the integer constant ``value``."""
    return isinstance(e, tirx.IntImm) and int(e.value) == value


class Stage2Printer:
    """Prints one stage-II function."""

    def __init__(self, f2: Stage2Function, alias: str = "T"):
        self.f2 = f2
        self.T = alias
        self.names = NameTable((alias,))
        self.expr = Stage2ExprPrinter(self.names, alias)
        self.lines: list[str] = []
        self.loops: list[Any] = []  # enclosing loops, outermost first

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(_INDENT * depth + text)

    # --- header -----------------------------------------------------------------------------

    def run(self) -> str:
        f2, T = self.f2, self.T
        prim = f2.prim
        sparse = {_key(m.buffer): m for m in f2.buffers}
        params = []
        for p, name in zip(prim.params, f2.param_names):
            meta = sparse.get(_key(p))
            if meta is not None:
                self.names.define(("handle", name), name)
                params.append(f"{name}: {T}.handle")
            elif isinstance(p.ty, tirx.BufferType):
                params.append(None)  # a plain buffer parameter: its shape may use later scalars
            else:
                params.append(f"{self.names.define(p, p.name)}: {T}.{p.ty.dtype}")
        for k, (p, name) in enumerate(zip(prim.params, f2.param_names)):
            if params[k] is None:
                params[k] = f"{self.names.define(p, name)}: {self.buffer_decl(p, 'Buffer')}"
        self.emit(0, f"@{T}.prim_func")
        self.emit(0, f"def {f2.name}({', '.join(params)}) -> None:")
        attrs = {k: v for k, v in (prim.attrs.items() if prim.attrs is not None else [])}
        if str(attrs.get("global_symbol", "")) == f2.name:
            del attrs["global_symbol"]
        for key, value in IMPLIED_ATTRS.items():
            if key in attrs and attrs[key] == value:
                del attrs[key]
        self.emit(1, f"{T}.func_attr({attr_dict_text(attrs, T)})")
        for axis in f2.axes:
            self.emit(1, f"{self.names.define(axis, axis.name)} = {axis_text(axis, T, self.expr, self._axis_ref)}")
        root = _root_block(prim.body)
        root_allocs = list(root.alloc_buffers) if root is not None else []
        for meta in f2.buffers:
            handle = None if meta.role == ALLOCATED else meta.handle_name
            scope = meta.buffer.ty.storage_scope if meta.role == ALLOCATED else "global"
            text = sparse_buffer_text(list(meta.axes), meta.dtype, handle, scope, meta.extra_storage, T,
                                      self.expr, self.names)
            self.emit(1, f"{self.names.define(meta.buffer, meta.name)} = {text}")
        for buf in root_allocs:
            if _key(buf) not in sparse:
                self.emit(1, f"{self.names.define(buf, buf.name)} = {self.buffer_decl(buf, 'alloc_buffer')}")
        body = root.body if root is not None else prim.body
        self.stmt(body, 1)
        return "\n".join(self.lines) + "\n"

    def _axis_ref(self, obj: Any) -> str:
        """Axes print by name; an axis's structure buffer by the handle it was matched to."""
        for meta in self.f2.buffers:
            if meta.buffer.same_as(obj):
                return meta.handle_name
        return self.names(obj)

    def buffer_decl(self, buf: Var, construct: str) -> str:
        """``T.<construct>((shape), "dtype", scope=..., ...)`` with every non-default field."""
        ty = buf.ty
        shape = ", ".join(self.expr(d) for d in ty.shape)
        shape = f"({shape},)" if len(ty.shape) == 1 else f"({shape})"
        args = [shape, f'"{ty.dtype}"']
        scope = str(ty.storage_scope)
        if scope != "global":
            args.append(f"scope={literal_text(scope)}")
        default = tirx.decl_buffer(list(ty.shape), str(ty.dtype), name="d", scope=scope, layout=None).ty
        if len(ty.strides):
            args.append(f"strides=({', '.join(self.expr(s) for s in ty.strides)},)")
        # An offset of its own (a variable no one defined before, as a blockized match_buffer has)
        # is what TVM makes for a given offset_factor: printed as that, the parser makes a fresh one.
        fresh_offset = isinstance(ty.elem_offset, Var) and ty.elem_offset not in self.names
        if fresh_offset:
            pass
        elif not structural_equal(ty.elem_offset, default.elem_offset):
            args.append(f"elem_offset={self.expr(ty.elem_offset)}")
        if int(ty.data_alignment) != int(default.data_alignment):
            args.append(f"align={int(ty.data_alignment)}")
        if int(ty.offset_factor) != int(default.offset_factor) or fresh_offset:
            args.append(f"offset_factor={int(ty.offset_factor)}")
        if ty.layout is not None:
            raise SparseTIRError(f"buffer {buf.name} has a layout, which stage-II scripts cannot express")
        return f"{self.T}.{construct}({', '.join(args)})"

    # --- statements -------------------------------------------------------------------------

    def stmt(self, s: Any, depth: int) -> None:
        if isinstance(s, tirx.SeqStmt):
            for sub in s.seq:
                self.stmt(sub, depth)
        elif isinstance(s, tirx.For):
            self.loop(s, depth)
        elif isinstance(s, s_tir.SBlockRealize):
            self.block(s, depth)
        elif isinstance(s, tirx.BufferStore):
            indices = ", ".join(self.expr(i) for i in s.indices)
            self.emit(depth, f"{self.names(s.buffer)}[{indices}] = {self.expr(s.value)}")
        elif isinstance(s, tirx.IfThenElse):
            self.emit(depth, f"if {self.expr(s.condition)}:")
            self.stmt(s.then_case, depth + 1)
            if s.else_case is not None:
                self.emit(depth, "else:")
                self.stmt(s.else_case, depth + 1)
        elif isinstance(s, tirx.While):
            self.emit(depth, f"while {self.expr(s.condition)}:")
            self.stmt(s.body, depth + 1)
        elif isinstance(s, tirx.Evaluate):
            self.emit(depth, f"{self.T}.evaluate({self.expr(s.value)})")
        elif isinstance(s, tirx.Bind):
            self.bind(s, depth)
        elif isinstance(s, tirx.AssertStmt):
            self.emit(depth, f"assert {self.expr(s.condition)}, {assert_message_text(s)}")
        elif isinstance(s, tirx.AllocBuffer):
            decl = self.buffer_decl(s.buffer, "alloc_buffer")
            if s.annotations:
                decl = f"{decl[:-1]}, annotations={attr_dict_text(dict(s.annotations), self.T)})"
            self.emit(depth, f"{self.names.define(s.buffer, s.buffer.name)} = {decl}")
        elif isinstance(s, tirx.DeclBuffer):
            decl = self.buffer_decl(s.buffer, "decl_buffer")
            self.emit(depth, f"{self.names.define(s.buffer, s.buffer.name)} = {decl[:-1]}, data={self.data_text(s)})")
        elif isinstance(s, tirx.AttrStmt):
            self.emit(depth, f"with {self.T}.attr({self.attr_node_text(s)}, {literal_text(str(s.attr_key))}, "
                             f"{self.expr(s.value)}):")
            self.names.push()
            self.stmt(s.body, depth + 1)
            self.names.pop()
        else:
            raise SparseTIRError(f"stage-II scripts cannot express a {type(s).__name__} statement")

    def bind(self, s: Any, depth: int) -> None:
        """``x: T.int32 = value``: the variable is visible to the statements after it."""
        if not isinstance(s.var.ty, PrimType):
            raise SparseTIRError(f"variable {s.var.name} has type {s.var.ty}; stage-II scripts bind scalars only")
        value = self.expr(s.value)  # before the name is defined: the value cannot use it
        self.emit(depth, f"{self.names.define(s.var, s.var.name)}: {self.T}.{s.var.ty.dtype} = {value}")

    def data_text(self, s: Any) -> str:
        """``A.data``: the data a ``T.decl_buffer`` views, another buffer's."""
        data = s.data
        if isinstance(data, tvm.ir.Call) and data.op.same_as(_BUFFER_DATA) and len(data.args) == 1:
            return f"{self.names(data.args[0])}.data"
        raise SparseTIRError(f"buffer {s.buffer.name} views {data}; stage-II scripts declare views of another buffer's data")

    def attr_node_text(self, s: Any) -> str:
        """The node an ``AttrStmt`` annotates: an expression, a buffer or a string."""
        node = s.node
        if isinstance(node, tvm.ir.StringImm):
            return literal_text(str(node.value))
        if isinstance(node, Var) and isinstance(node.ty, tirx.BufferType):
            return self.names(node)
        if isinstance(node, Expr):
            return self.expr(node)
        raise SparseTIRError(f"attribute {s.attr_key} annotates a {type(node).__name__}, which stage-II scripts cannot express")

    def loop(self, s: Any, depth: int) -> None:
        T = self.T
        if str(s.loop_var.ty.dtype) != str(s.extent.ty.dtype):
            raise SparseTIRError(f"loop {s.loop_var.name}: its variable and extent have different types")
        self.names.push()
        if _plain(s):
            grid = [s]  # nested plain loops whose extents do not use each other: one T.grid line
            while _plain(grid[-1].body) and not uses_any(grid[-1].body.extent, [g.loop_var for g in grid]) \
                    and str(grid[-1].body.loop_var.ty.dtype) == str(grid[-1].body.extent.ty.dtype):
                grid.append(grid[-1].body)
            extents = ", ".join(self.expr(g.extent) for g in grid)
            names = ", ".join(self.names.define(g.loop_var, g.loop_var.name) for g in grid)
            head = f"range({extents})" if len(grid) == 1 else f"{T}.grid({extents})"
            self.emit(depth, f"for {names} in {head}:")
            self.loops.extend(grid)
            self.stmt(grid[-1].body, depth + 1)
            del self.loops[len(self.loops) - len(grid):]
            self.names.pop()
            return
        args = [self.expr(s.extent)]
        if not (is_const(s.min, 0) and s.min.ty.dtype == s.extent.ty.dtype):
            args.append(f"min={self.expr(s.min)}")
        if s.step is not None:
            args.append(f"step={self.expr(s.step)}")
        if s.thread_binding is not None:
            args.append(f"thread={literal_text(str(s.thread_binding.thread_tag))}")
        if s.annotations:
            args.append(f"annotations={attr_dict_text(dict(s.annotations), T)}")
        name = self.names.define(s.loop_var, s.loop_var.name)
        self.emit(depth, f"for {name} in {T}.{LOOP_KINDS[s.kind]}({', '.join(args)}):")
        self.loops.append(s)
        self.stmt(s.body, depth + 1)
        self.loops.pop()
        self.names.pop()

    def block(self, realize: Any, depth: int) -> None:
        T, b = self.T, realize.block
        self.emit(depth, f"with {T}.sblock({literal_text(str(b.name_hint))}):")
        self.names.push()
        inner = depth + 1
        remap = self._remap(b.iter_vars, realize.iter_values)
        if remap is not None:
            names = ", ".join(self.names.define(iv.var, iv.var.name) for iv in b.iter_vars)
            loops = ", ".join(self.expr(v) for v in realize.iter_values)
            self.emit(inner, f'{names} = {T}.axis.remap("{remap}", [{loops}])')
        for iv, value in zip(b.iter_vars, realize.iter_values) if remap is None else ():
            kind = ITER_KINDS.get(int(iv.iter_type))
            if kind is None:
                raise SparseTIRError(f"block {b.name_hint}: iterator {iv.var.name} has an iterator type stage II cannot print")
            args = [self.expr(iv.dom.extent), self.expr(value)]
            if not (is_const(iv.dom.min, 0) and iv.dom.min.ty.dtype == iv.dom.extent.ty.dtype):
                args.append(f"min={self.expr(iv.dom.min)}")
            if str(iv.var.ty.dtype) != str(iv.dom.extent.ty.dtype):
                raise SparseTIRError(f"block {b.name_hint}: iterator {iv.var.name} and its domain differ in type")
            value_text = f"{T}.axis.{kind}({', '.join(args)})"
            self.emit(inner, f"{self.names.define(iv.var, iv.var.name)} = {value_text}")
        if not is_const(realize.predicate, 1):
            self.emit(inner, f"{T}.where({self.expr(realize.predicate)})")
        for buf in b.alloc_buffers:
            self.emit(inner, f"{self.names.define(buf, buf.name)} = {self.buffer_decl(buf, 'sblock_alloc_buffer')}")
        for match in b.match_buffers:
            decl = self.buffer_decl(match.buffer, "match_buffer")
            source = self.region(match.source)
            self.emit(inner, f"{self.names.define(match.buffer, match.buffer.name)} = {decl[:-1]}, source={source})")
        self.emit(inner, f"{T}.reads({', '.join(self.region(r) for r in b.reads)})")
        self.emit(inner, f"{T}.writes({', '.join(self.region(r) for r in b.writes)})")
        if b.annotations:
            self.emit(inner, f"{T}.sblock_attr({attr_dict_text(dict(b.annotations), T)})")
        if b.init is not None:
            self.emit(inner, f"with {T}.init():")
            self.stmt(b.init, inner + 1)
        self.stmt(b.body, inner)
        self.names.pop()

    def _remap(self, iter_vars: Any, values: Any) -> Optional[str]:
        """``"SR"`` when every iterator (two or more) is bound to an enclosing loop starting at 0
        whose extent is the iterator's domain: ``T.axis.remap`` says exactly that."""
        if len(iter_vars) < 2:
            return None
        kinds = []
        for iv, value in zip(iter_vars, values):
            loop = next((lp for lp in self.loops if lp.loop_var.same_as(value)), None)
            kind = REMAP_KINDS.get(int(iv.iter_type))
            if loop is None or kind is None or not is_const(loop.min, 0) or not is_const(iv.dom.min, 0) \
                    or not iv.dom.extent.same_as(loop.extent) or iv.dom.min.ty.dtype != iv.dom.extent.ty.dtype:
                return None
            kinds.append(kind)
        return "".join(kinds)

    def region(self, r: Any) -> str:
        """``A[i, lo:lo + extent]``: an index for an extent of 1, else the slice as stored; an
        extent ``hi - lo`` (what the parser builds from ``lo:hi``) prints as ``lo:hi`` again, not
        ``lo:lo + (hi - lo)``, which would nest ``lo`` two levels deeper than the script did."""
        items = []
        for rng in r.region:
            lo, extent = rng.min, rng.extent
            if is_const(extent, 1) and extent.ty.dtype == lo.ty.dtype:
                items.append(self.expr(lo))
            elif is_const(lo, 0):
                items.append(f"{self.expr(lo)}:{self.expr(extent)}")
            elif (hi := _end_minus(extent, lo)) is not None:
                lo_text, lo_prec = self.expr.text(lo)
                lo_text = lo_text if lo_prec >= 9 else f"({lo_text})"
                items.append(f"{lo_text}:{self.expr(hi)}")
            else:
                lo_text, lo_prec = self.expr.text(lo)
                ext_text, ext_prec = self.expr.text(extent)
                lo_text = lo_text if lo_prec >= 9 else f"({lo_text})"
                ext_text = ext_text if ext_prec > 9 else f"({ext_text})"
                items.append(f"{lo_text}:{lo_text} + {ext_text}")
        return f"{self.names(r.source)}[{', '.join(items)}]"


def assert_message_text(s: Any) -> str:
    """``"msg"`` for a RuntimeError with one message part, else TVM's ``("Kind", ["part", ...])``."""
    parts = [str(p.value) for p in s.message_parts]
    if str(s.error_kind.value) == "RuntimeError" and len(parts) == 1:
        return literal_text(parts[0])
    return f"({literal_text(str(s.error_kind.value))}, [{', '.join(literal_text(p) for p in parts)}])"


def _end_minus(extent: Any, lo: Any) -> Optional[Any]:
    """``hi`` when ``extent`` is ``hi - lo`` and ``lo:hi`` reads back as exactly that: ``hi`` is
    not ``lo + e`` (read as the extent ``e``)."""
    if not (isinstance(extent, tirx.Sub) and structural_equal(extent.b, lo)):
        return None
    hi = extent.a
    if isinstance(hi, tirx.Add) and structural_equal(hi.a, lo):
        return None
    return hi


def _plain(s: Any) -> bool:
    """A serial loop from 0 with nothing attached: printed ``for i in range(n)``."""
    return (isinstance(s, tirx.For) and s.kind == tirx.ForKind.SERIAL and is_const(s.min, 0)
            and s.min.ty.dtype == s.extent.ty.dtype and not s.annotations and s.step is None
            and s.thread_binding is None)


def _key(obj: Any) -> int:
    return obj.__chandle__()


def _root_block(body: Any) -> Any:
    """The implicit root block, printed as the function body, or None when there is none."""
    if not isinstance(body, s_tir.SBlockRealize):
        return None
    b = body.block
    first = body.block.body.seq[0] if isinstance(body.block.body, tirx.SeqStmt) else body.block.body
    if isinstance(first, tirx.AllocBuffer):
        return None  # printed at function level, it would read back as a root allocation
    plain = (b.name_hint == "root" and not b.iter_vars and not b.reads and not b.writes and b.init is None
             and not b.match_buffers and not b.annotations and is_const(body.predicate, 1))
    return b if plain else None


def print_stage2(f2: Stage2Function, alias: str = "T") -> str:
    """The stage-II script of ``f2``; ``sparsetir.parse`` reads it back to an equal function."""
    return Stage2Printer(f2, alias).run()
