"""LowerSparseIter: stage I (sparse iterations, coordinate space) → stage II (loops and blocks).

Each sparse iteration becomes a loop nest in *position space* (stage2.md §1):

- one ``T.sblock`` per *level*; a level ends where the next loop's extent depends on an
  iterator of the current level (``for j in range(J_indptr[vi + 1] - J_indptr[vi])`` starts a
  new block). Blocks are named ``<iteration>0``, ``<iteration>1``...; a block iter var's domain
  is the axis's maximum length (``vj = T.axis.reduce(n, j)``) and its kind is the iterator's.
- a buffer index that *is* the iterator of the buffer's axis becomes the iterator's position;
  a dense axis takes the coordinate as position; a sparse axis indexed by anything else needs
  a *lookup*: a helper block ``<block>_search<k>`` binary-searches the row's indices and writes
  the position (or -1) into a scratch buffer. A read of an unstored coordinate is zero; a write
  to one is dropped (docs/lowering.md).
- ``T.fuse(P, C)`` is one loop over the positions of C below P's current row; the P position of
  a fused position is found by a binary search over C's indptr (helper block ``..._search``),
  so fused loops stay parallel-safe (no carried row variable).
- ``T.attach(U, E)``: U's row is the coordinate of E.
- ``T.init()`` goes into the outermost block where all its indices are bound; when that block
  has no reduction iterator, it becomes a plain store at the top of the block body (or before the
  loop nest). Inits left under a data-dependent reduction loop are hoisted by
  ``auto_decompose_reduction`` before LowerSparseBuffer.

Every generated statement carries the span of the stage-I construct it comes from, and the
``sparsetir.spans`` attribute maps each block name to its script lines (TVM drops spans on
loops and blocks).
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any, Optional

from .._tvm import Span, TensorLoad, Var, s_tir, structural_equal, structural_map, tirx, tvm
from ..errors import LoweringError
from ..ir.axis import (
    DENSE_FIXED,
    DENSE_VARIABLE,
    AttachedAxis,
    Axis,
    FusedAxis,
    make_axis,
)
from ..ir.analysis import contains, uses_any
from ..ir.buffer import SparseBuffer
from ..ir.function import SparseFunction
from ..ir.iteration import REDUCE, SparseIteration
from ..ir.stage2 import (
    ALLOCATED,
    INDICES,
    INDPTR,
    SEARCHED_ATTR,
    SPANS_ATTR,
    STAGE_II_LEVEL,
    VALUE,
    Stage2Buffer,
    Stage2Function,
)
from ..ir.verifier import verify
from ..trace.spans import span_texts

Range = tvm.ir.Range
SPATIAL_KIND = 0
REDUCE_KIND = 2


def lower_sparse_iter(func: SparseFunction) -> Stage2Function:
    """Lower a stage-I function to stage II (loops and blocks over position-space buffers)."""
    verify(func)
    return _Lowering(func).run()


# ---------------------------------------------------------------------------------------------
# small helpers


def _i32(value: int, dtype: str = "int32") -> Any:
    return tirx.const(value, dtype)


def _substitute(expr: Any, mapping: list[tuple[Var, Any]]) -> Any:
    if not mapping:
        return expr

    def on_var(v: Var) -> Any:
        for old, new in mapping:
            if v.same_as(old):
                return new
        return v

    return structural_map(expr, [(Var, on_var)])


def _seq(stmts: list[Any], span: Optional[Span] = None) -> Any:
    stmts = [s for s in stmts if s is not None]
    if len(stmts) == 1:
        return stmts[0]
    return tirx.SeqStmt(stmts, span=span)


def block_regions(block: Any, buffers: list[Var]) -> Any:
    """``block`` with the read/write regions TVM's analysis computes (as the parser would)."""
    own = list(block.alloc_buffers)
    visible = [b for b in buffers if not any(b.same_as(o) for o in own)]
    reads, writes = s_tir.analysis.get_sblock_read_write_region(block, {b: b for b in visible})
    reads = [_bound_region(r) for r in reads if not any(r.source.same_as(o) for o in own)]
    writes = [_bound_region(w) for w in writes if not any(w.source.same_as(o) for o in own)]
    return s_tir.SBlock(
        block.iter_vars, reads, writes, block.name_hint, block.body, block.init,
        block.alloc_buffers, block.match_buffers, block.annotations, block.span,
    )


def _is_load(node: Any) -> bool:
    return isinstance(node, TensorLoad)


def _bound_region(region: Any) -> Any:
    """Widen data-dependent ranges (``0:J_indptr[vi + 1] - J_indptr[vi]``) to the buffer's bound.

    TVM's dependence analysis cannot bound a range whose extent loads from a buffer (it fails
    with ``relaxed.HasUpperBound()`` once two blocks share the buffer), so stage II states the
    upper bound, as the RFC's stage II does (``A[vi, 0:mb, vbi, vbj]``). Points stay points.
    """
    ranges = []
    changed = False
    for r, dim in zip(region.region, region.source.ty.shape):
        one = isinstance(r.extent, tirx.IntImm) and int(r.extent.value) == 1
        if contains(r.extent, _is_load) or (not one and contains(r.min, _is_load)):
            ranges.append(Range(0, dim))
            changed = True
        else:
            ranges.append(r)
    return tirx.BufferRegion(region.source, ranges) if changed else region


def pos_extent(axis: Axis) -> Any:
    """The position-space extent of one axis (its maximum number of positions per row)."""
    return axis.positions


# ---------------------------------------------------------------------------------------------
# per-iterator state


@dataclass
class _Iter:
    """An iterator during lowering: its axis, position and coordinate in stage-II terms."""

    axis: Axis
    kind: str
    var: Var  # the stage-I iterator
    pos: Any = None
    coord: Any = None
    row: list = dc_field(default_factory=list)  # position vector: parent's row + [pos]


@dataclass
class _Loop:
    name: str
    loop_var: Var
    block_var: Var
    extent: Any
    dom: Any
    kind: str  # "S" or "R"


@dataclass
class _Search:
    """A helper block computing a position into a scratch buffer."""

    name: str
    depth: int  # how many loops of the level enclose it
    out: Var  # scratch buffer
    body_fn: Any  # (subst mapping) -> (stmt writing out at given index)
    span: Optional[Span]
    key: Any = None


@dataclass
class _Level:
    loops: list[_Loop]
    searches: list[_Search] = dc_field(default_factory=list)
    explicit_init: list = dc_field(default_factory=list)
    init: Any = None
    allocs: list = dc_field(default_factory=list)  # scratch allocated in this level's block


class _Lowering:
    def __init__(self, func: SparseFunction):
        self.f = func
        self.span_table: dict[str, list[str]] = {}
        self.searched_axes: list[str] = []
        self.all_buffers: list[Var] = []
        self.sb2: dict[Any, Stage2Buffer] = {}  # stage-I buffer var -> stage-II metadata
        self.axes2: dict[str, Axis] = {}  # stage-I axis name -> stage-II axis
        self.twins: dict[str, Axis] = {}  # sparse axis name -> its dense twin
        self.struct_bufs: dict[str, Var] = {}  # handle name -> stage-II structure buffer
        self.metadata: list[Stage2Buffer] = []
        self.root_allocs: list[Var] = []
        self.block_names: set[str] = set()
        # names a generated axis or structure buffer must not take: everything the script names
        self.taken: set[str] = {a.name for a in func.axes} | {b.name for b in func.buffers}
        self.taken |= {str(p.name) for p in func.params}

    # -- header ---------------------------------------------------------------------------

    def _chain_dims(self, axis: Axis) -> list[Any]:
        return [pos_extent(a) for a in axis.ancestors()] + [pos_extent(axis)]

    def _twin_chain(self, axes: list[Axis]) -> list[Axis]:
        return [self.twins.get(a.name, self.axes2[a.name]) if a.is_sparse else self.axes2[a.name] for a in axes]

    def build_header(self) -> list[Any]:
        f = self.f
        uses: dict[str, tuple[str, Any]] = {}
        for sb in f.buffers:
            if sb.handle is not None:
                uses.setdefault(sb.handle.name, (VALUE, sb))
        for axis in f.axes:
            if axis.indptr is not None:
                uses.setdefault(axis.indptr.name, (INDPTR, axis))
            if axis.indices is not None:
                uses.setdefault(axis.indices.name, (INDICES, axis))
        # structure buffers first: axes refer to them
        for handle, (role, axis) in uses.items():
            if role == INDPTR:
                dims = [pos_extent(a) for a in axis.ancestors()]
                dims[-1] = dims[-1] + 1
                self.struct_bufs[handle] = tirx.decl_buffer(dims, axis.idtype, name=self._fresh(f"{axis.name}_indptr"), layout=None)
            elif role == INDICES:
                dims = self._chain_dims(axis)
                self.struct_bufs[handle] = tirx.decl_buffer(dims, axis.idtype, name=self._fresh(f"{axis.name}_indices"), layout=None)
        axes_out: list[Axis] = []
        for axis in f.axes:
            parent = self.axes2[axis.parent.name] if axis.parent is not None else None
            indptr = self.struct_bufs[axis.indptr.name] if axis.indptr is not None else None
            indices = self.struct_bufs[axis.indices.name] if axis.indices is not None else None
            new = Axis(axis.name, axis.kind_name, parent, axis.length, axis.nnz, axis.nnz_cols, indptr, indices,
                       axis.idtype, axis.sorted, axis.span)
            self.axes2[axis.name] = new
            axes_out.append(new)
            if axis.is_sparse:
                tparent = None
                if axis.parent is not None:
                    tparent = self.twins.get(axis.parent.name, self.axes2[axis.parent.name])
                if axis.is_variable:
                    twin = make_axis(self._fresh(axis.name + "_dense"), DENSE_VARIABLE, tparent, length=axis.length,
                                     nnz=axis.nnz, indptr=indptr, idtype=axis.idtype, span=axis.span)
                else:
                    twin = make_axis(self._fresh(axis.name + "_dense"), DENSE_FIXED, length=axis.nnz_cols,
                                     idtype=axis.idtype, span=axis.span)
                self.twins[axis.name] = twin
                axes_out.append(twin)
        self.axes_out = axes_out
        # metadata of structure buffers
        for handle, (role, axis) in uses.items():
            if role == INDPTR:
                chain = self._twin_chain(axis.ancestors())
                self.metadata.append(Stage2Buffer(self.struct_bufs[handle], chain, handle, _i32(1), INDPTR, axis.span))
            elif role == INDICES:
                chain = self._twin_chain(axis.ancestors()) + [self.twins[axis.name]]
                self.metadata.append(Stage2Buffer(self.struct_bufs[handle], chain, handle, None, INDICES, axis.span))
        params = []
        for p in f.params:
            role_obj = uses.get(p.name)
            if role_obj is None:
                params.append(p)
            elif role_obj[0] == VALUE:
                params.append(self._value_buffer(role_obj[1]))
            else:
                params.append(self.struct_bufs[p.name])
        for sb in f.buffers:
            if sb.handle is None:
                buf = self._value_buffer(sb)
                self.root_allocs.append(buf)
        # value buffers after structure buffers in metadata, in declaration order
        values = [self.sb2[sb.buffer] for sb in f.buffers]
        self.metadata = values + self.metadata
        self.all_buffers = [p for p in params if isinstance(p.ty, tirx.BufferType)] + list(self.root_allocs)
        return params

    def _value_buffer(self, sb: SparseBuffer) -> Var:
        dims = [pos_extent(a) for a in sb.axes]
        if sb.extra_storage is not None:
            dims[-1] = dims[-1] + sb.extra_storage
        scope = sb.scope if sb.scope else "global"
        if sb.handle is None:
            buf = tirx.decl_buffer(dims, sb.dtype, name=sb.name, scope=scope, layout=None)
        else:
            buf = tirx.decl_buffer(dims, sb.dtype, name=sb.name, layout=None)
        axes = [self.axes2[a.name] for a in sb.axes]
        role = ALLOCATED if sb.handle is None else VALUE
        if role == ALLOCATED and sb.span is not None:
            self.span_table[sb.name] = span_texts(sb.span)
        handle = sb.handle.name if sb.handle is not None else ""
        self.sb2[sb.buffer] = Stage2Buffer(buf, axes, handle, sb.extra_storage, role, sb.span)
        return buf

    # -- driver ---------------------------------------------------------------------------

    def run(self) -> Stage2Function:
        params = self.build_header()
        allocs: list[Var] = []
        stmts = [self.lower_stmt(s, {}, allocs) for s in self.f.body]
        allocs = list(self.root_allocs) + allocs
        root = s_tir.SBlock([], [], [], "root", _seq(stmts), None, allocs, span=self.f.span)
        body = s_tir.SBlockRealize([], True, root, span=self.f.span)
        prim = tirx.PrimFunc(params, body)
        attrs = dict(self.f.attrs) if self.f.attrs else {}
        attrs["sparse_tir_level"] = STAGE_II_LEVEL
        attrs.setdefault("global_symbol", self.f.name)
        for key, value in attrs.items():
            prim = prim.with_attr(key, value)
        prim = prim.with_attr("s_tir", True)
        prim = prim.with_attr(SPANS_ATTR, {k: list(v) for k, v in self.span_table.items()})
        if self.searched_axes:
            prim = prim.with_attr(SEARCHED_ATTR, list(self.searched_axes))
        return Stage2Function(prim, self.axes_out, self.metadata, [p.name for p in self.f.params])

    def lower_stmt(self, stmt: Any, env: dict, allocs: list) -> Any:
        if isinstance(stmt, SparseIteration):
            return self.lower_iteration(stmt, env, allocs)
        if isinstance(stmt, tirx.Evaluate):
            return tirx.Evaluate(self.rewrite_expr(stmt.value, env, None, stmt.span), span=stmt.span)
        raise LoweringError(f"{type(stmt).__name__} outside a sparse iteration cannot be lowered")

    # -- iterations -----------------------------------------------------------------------

    def _fresh(self, name: str) -> str:
        """``name``, or ``name_1``, ``name_2``...: the first not taken by the script or earlier."""
        base, k = name, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def _unique(self, name: str) -> str:
        base, k = name, 0
        while name in self.block_names:
            k += 1
            name = f"{base}_{k}"
        self.block_names.add(name)
        return name

    def _extent(self, axis: Axis, parent_row: list) -> Any:
        if not axis.is_variable:
            return axis.positions
        ip = self.axes2[axis.name].indptr
        end_row = parent_row[:-1] + [parent_row[-1] + 1]
        return tirx.BufferLoad(ip, end_row) - tirx.BufferLoad(ip, parent_row)

    def _coord(self, axis: Axis, row: list) -> Any:
        if axis.is_dense:
            return row[-1]
        return tirx.BufferLoad(self.axes2[axis.name].indices, row)

    def _parent_row(self, axis: Axis, env: dict, it: SparseIteration, attach_parent: Optional[Axis] = None) -> list:
        if attach_parent is not None:
            if axis.parent is None or axis.parent.parent is not None:
                raise LoweringError(f"T.attach({axis.name}, ...) needs {axis.name}'s parent to be a dense fixed axis")
            return [env[attach_parent.name].coord]
        if axis.parent is None:
            return []
        parent = env.get(axis.parent.name)
        if parent is None:
            raise LoweringError(f"axis {axis.name} is iterated before its parent {axis.parent.name}")
        return list(parent.row)

    def lower_iteration(self, it: SparseIteration, outer_env: dict, enclosing_allocs: list) -> Any:
        env = dict(outer_env)
        kinds = iter(zip(it.kinds, it.iter_vars))
        levels: list[_Level] = [_Level([])]
        level_of: dict[Any, int] = {}
        iters: list[_Iter] = []

        def current_vars() -> list[Var]:
            return [lp.block_var for lp in levels[-1].loops]

        def new_level_if(expr: Any) -> None:
            if levels[-1].loops and uses_any(expr, current_vars()):
                levels.append(_Level([]))

        for entry in it.axes:
            if isinstance(entry, FusedAxis):
                self._fused_entry(it, entry, kinds, env, levels, new_level_if, iters, level_of)
                continue
            attach = entry.new_parent if isinstance(entry, AttachedAxis) else None
            axis = entry.axis if isinstance(entry, AttachedAxis) else entry
            kind, var = next(kinds)
            prow = self._parent_row(axis, env, it, attach)
            extent = self._extent(axis, prow)
            new_level_if(extent)
            name = var.name
            lv = Var(name, "int32")
            bv = Var("v" + name, "int32")
            loop = _Loop(name, lv, bv, extent, pos_extent(axis), kind)
            levels[-1].loops.append(loop)
            rec = _Iter(axis, kind, var, bv, None, prow + [bv])
            rec.coord = self._coord(axis, rec.row)
            env[axis.name] = rec
            env[var] = rec
            level_of[var] = len(levels) - 1
            iters.append(rec)
        self.cur_env = env
        block_names = [self._unique(f"{it.name}{k}") for k in range(len(levels))]
        for name in block_names:
            self.span_table[name] = span_texts(it.span)
        # body of the innermost level
        inner = levels[-1]
        inner_allocs: list[Var] = []
        body_stmts = []
        for stmt in it.body:
            if isinstance(stmt, tirx.BufferStore):
                self.pending, self.pending_name = inner, block_names[-1]
                body_stmts.append(self.lower_store(stmt, env, allow_search=True))
                table = self.span_table[block_names[-1]]
                table.extend(x for x in span_texts(stmt.span) if x not in table)
            else:
                body_stmts.append(self.lower_stmt(stmt, env, inner_allocs))
        # init placement
        init_level = -1
        pre: list = []
        if it.init:
            for store in it.init:
                for index in store.indices:
                    for var, lvl in level_of.items():
                        if uses_any(index, [var]):
                            init_level = max(init_level, lvl)
            reduce_levels = [level_of[v] for v, k in zip(it.iter_vars, it.kinds) if k == REDUCE and v in level_of]
            if init_level >= 0 and any(r < init_level for r in reduce_levels):
                # A reduction loop encloses some init index: initialise in a loop nest of its own
                # over the spatial iterators, before the iteration.
                return _seq([self._separate_init(it, outer_env, enclosing_allocs), self.lower_iteration(
                    SparseIteration(it.name, it.axes, it.kinds, it.iter_vars, None, it.body, it.attrs, it.span),
                    outer_env, enclosing_allocs)], it.span)
            init_stmts = [self.lower_store(s, env, allow_search=False) for s in it.init]
            init_stmt = _seq(init_stmts)
            init_lines = span_texts(it.span) + [x for s in it.init for x in span_texts(s.span)]
            if init_level >= 0:
                self.span_table[f"{block_names[init_level]}_init"] = init_lines
            if init_level >= 0 and any(lp.kind == REDUCE for lp in levels[init_level].loops):
                levels[init_level].init = init_stmt
            elif init_level >= 0:
                levels[init_level].explicit_init = init_stmts
            else:
                pre = init_stmts
        # build from the innermost level outwards
        stmt = _seq(body_stmts, it.span)
        own_allocs = inner_allocs
        for k in range(len(levels) - 1, -1, -1):
            level = levels[k]
            stmt = _seq(level.explicit_init + [stmt])
            realize, scratch = self._build_level(level, block_names[k], stmt, own_allocs, it)
            stmt = realize
            own_allocs = scratch  # scratch of level k is allocated in the block of level k-1
        enclosing_allocs.extend(own_allocs)
        return _seq(pre + [stmt], it.span)

    def _separate_init(self, it: SparseIteration, outer_env: dict, allocs: list) -> Any:
        entries, kinds, vars_ = [], "", []
        flat = iter(zip(it.kinds, it.iter_vars))
        for entry in it.axes:
            group = [next(flat) for _ in (entry.axes if isinstance(entry, FusedAxis) else [entry])]
            if isinstance(entry, Axis) and group[0][0] != REDUCE:
                entries.append(entry)
                kinds += "S"
                vars_.append(group[0][1])
        visible = {a.name for a in entries} | {k for k in outer_env if isinstance(k, str)}
        for a in entries:
            if a.parent is not None and a.parent.name not in visible:
                raise LoweringError(f"sparse iteration '{it.name}': cannot hoist its T.init() (axis '{a.name}' needs '{a.parent.name}')")
        sub = SparseIteration(f"{it.name}_init", entries, kinds, vars_, None, list(it.init), {}, it.span)
        return self.lower_iteration(sub, outer_env, allocs)

    def _fused_entry(self, it, entry, kinds, env, levels, new_level_if, iters, level_of) -> None:
        axes = list(entry.axes)
        if len(axes) != 2:
            raise LoweringError(f"sparse iteration '{it.name}': T.fuse of {len(axes)} axes is not supported (fuse two)")
        p_axis, c_axis = axes
        if c_axis.parent is None or not c_axis.parent.same_as(p_axis) or not c_axis.is_variable:
            raise LoweringError(f"sparse iteration '{it.name}': T.fuse(P, C) needs C to be a variable axis under P")
        (pk, pvar), (ck, cvar) = next(kinds), next(kinds)
        if pk != ck:
            raise LoweringError(f"sparse iteration '{it.name}': the iterators of one T.fuse must have the same kind")
        pp_row = self._parent_row(p_axis, env, it)
        p_len = self._extent(p_axis, pp_row) if p_axis.parent is not None else p_axis.length
        ip = self.axes2[c_axis.name].indptr

        def c_ptr(r: Any) -> Any:
            return tirx.BufferLoad(ip, pp_row + [r])

        if p_axis.parent is None and c_axis.nnz is not None:
            extent = c_axis.nnz
            base = _i32(0)
        else:
            base = c_ptr(_i32(0))
            extent = c_ptr(p_len) - base
        new_level_if(extent)
        name = pvar.name + cvar.name
        lv, bv = Var(name, "int32"), Var("v" + name, "int32")
        dom = c_axis.nnz if c_axis.nnz is not None else extent
        levels[-1].loops.append(_Loop(name, lv, bv, extent, dom, pk))
        depth = len(levels[-1].loops)
        # row search: last r in [0, p_len) with C_indptr[r] - base <= p
        target = bv + base
        search = self._make_search(
            f"{it.name}_{name}", levels[-1], depth, lambda mid: c_ptr(mid) <= target, _i32(0), p_len,
            lambda lo: lo - 1, it.span,
        )
        p_pos = search
        p_rec = _Iter(p_axis, pk, pvar, p_pos, None, pp_row + [p_pos])
        p_rec.coord = self._coord(p_axis, p_rec.row)
        c_pos = bv + base - c_ptr(p_pos)
        c_rec = _Iter(c_axis, ck, cvar, c_pos, None, p_rec.row + [c_pos])
        c_rec.coord = self._coord(c_axis, c_rec.row)
        for rec in (p_rec, c_rec):
            env[rec.axis.name] = rec
            env[rec.var] = rec
            level_of[rec.var] = len(levels) - 1
            iters.append(rec)

    # -- searches -------------------------------------------------------------------------

    def _make_search(self, label: str, level: _Level, depth: int, go_right, lo, hi, result, span,
                     key: Any = None) -> Any:
        """Register a binary search in ``level``; return the load of its result in block-var terms.

        The search finds the first ``mid`` in ``[lo, hi)`` where ``go_right(mid)`` is false and
        stores ``result(lo)``.
        """
        if key is not None:
            for s in level.searches:
                if s.key is not None and structural_equal(s.key, key, map_free_vars=False):
                    return s.result_load
        k = len(level.searches)
        vars_ = [lp.block_var for lp in level.loops[:depth]]
        doms = [lp.dom for lp in level.loops[:depth]] or [_i32(1)]
        out = tirx.decl_buffer(doms, "int32", name=f"{label}_pos{k}", scope="local", layout=None)
        idx = vars_ or [_i32(0)]
        search = _Search(self._unique(f"{label}_search{k}"), depth, out, None, span, key)

        def body(mapping: list) -> Any:
            lohi = tirx.decl_buffer((2,), "int32", name="lohi", scope="local", layout=None)
            lo_v = tirx.BufferLoad(lohi, [_i32(0)])
            hi_v = tirx.BufferLoad(lohi, [_i32(1)])
            mid = tirx.floordiv(lo_v + hi_v, 2)
            cond = _substitute(go_right(mid), mapping)
            loop = tirx.While(
                lo_v < hi_v,
                tirx.IfThenElse(
                    cond,
                    tirx.BufferStore(lohi, mid + 1, [_i32(0)], span=span),
                    tirx.BufferStore(lohi, mid, [_i32(1)], span=span),
                    span=span,
                ),
                span=span,
            )
            new_idx = [_substitute(v, mapping) for v in idx]
            stmts = [
                tirx.BufferStore(lohi, _substitute(lo, mapping), [_i32(0)], span=span),
                tirx.BufferStore(lohi, _substitute(hi, mapping), [_i32(1)], span=span),
                loop,
                tirx.BufferStore(out, _substitute(result(lo_v), mapping), new_idx, span=span),
            ]
            return _seq(stmts, span), lohi

        search.body_fn = body
        search.result_load = tirx.BufferLoad(out, idx)
        level.searches.append(search)
        level.allocs.append(out)
        return search.result_load

    def _lookup(self, axis: Axis, row: list, coord: Any, span: Optional[Span]) -> Any:
        """Position of ``coord`` in ``row`` of sparse ``axis`` (-1 when not stored), via a search block."""
        level = self.pending
        lvars = [lp.block_var for lp in level.loops]
        deps = [i for i, v in enumerate(lvars) if uses_any(row, [v]) or uses_any(coord, [v])]
        depth = max(deps) + 1 if deps else 0
        ax2 = self.axes2[axis.name]
        length = self._extent(axis, row) if axis.is_variable else axis.nnz_cols
        indices = ax2.indices

        def key_at(mid: Any) -> Any:
            return tirx.BufferLoad(indices, row + [mid])

        if axis.sorted:
            if axis.name not in self.searched_axes:
                self.searched_axes.append(axis.name)
            go_right = lambda mid: key_at(mid) < coord  # noqa: E731
        else:
            raise LoweringError(f"looking a coordinate up in unsorted axis '{axis.name}' is not supported")

        def result(lo: Any) -> Any:
            return tirx.if_then_else(
                lo < length, tirx.if_then_else(key_at(lo) == coord, lo, _i32(-1)), _i32(-1)
            )

        label = f"{self.pending_name}_{axis.name}"
        return self._make_search(label, level, depth, go_right, _i32(0), length, result, span, key=[*row, coord])

    # -- accesses -------------------------------------------------------------------------

    def positions(self, sb: SparseBuffer, indices: list, env: dict, span, allow_search: bool) -> tuple[list, list]:
        """Stage-II indices of an access ``sb[indices]`` (coordinate space) and its guards."""
        pos: list = []
        guards: list = []
        for axis, index in zip(sb.axes, indices):
            rec = env.get(index) if isinstance(index, Var) else None
            if rec is not None and rec.axis.same_as(axis) and (
                axis.parent is None or self._rows_equal(rec.row[:-1], pos)
            ):
                pos.append(rec.pos)
                continue
            coord = self.coord_expr(index, env)
            if axis.is_dense:
                pos.append(coord)
                continue
            if not allow_search:
                raise LoweringError(f"an access to '{sb.name}' in T.init() would need a coordinate lookup in axis '{axis.name}'")
            found = self._lookup(axis, list(pos), coord, span)
            pos.append(found)
            guards.append(found >= 0)
        return pos, guards

    @staticmethod
    def _rows_equal(a: list, b: list) -> bool:
        if len(a) != len(b):
            return False
        return all(structural_equal(x, y, map_free_vars=False) for x, y in zip(a, b))

    def coord_expr(self, expr: Any, env: dict) -> Any:
        mapping = [(k, v.coord) for k, v in env.items() if isinstance(k, Var)]
        return _substitute(expr, mapping)

    def rewrite_expr(self, expr: Any, env: dict, guards_out: Optional[list], span, allow_search: bool = True) -> Any:
        def on_load(load: Any) -> Any:
            sb = self._stage1_buffer(load.source)
            if sb is None:
                return load
            b2 = self.sb2[sb.buffer]
            pos, guards = self.positions(sb, list(load.indices), env, span, allow_search)
            new = tirx.BufferLoad(b2.buffer, pos, span=load.span)
            if guards:
                cond = guards[0]
                for g in guards[1:]:
                    cond = tirx.And(cond, g)
                new = tirx.if_then_else(cond, new, tirx.const(0, b2.dtype))
            return new

        out = structural_map(expr, [(TensorLoad, on_load)])
        return self.coord_expr(out, env)

    def _stage1_buffer(self, var: Any) -> Optional[SparseBuffer]:
        for sb in self.f.buffers:
            if sb.buffer.same_as(var):
                return sb
        return None

    def lower_store(self, store: Any, env: dict, allow_search: bool) -> Any:
        sb = self._stage1_buffer(store.buffer)
        if sb is None:
            raise LoweringError(f"store into '{store.buffer.name}', which is not a sparse buffer")
        value = self.rewrite_expr(store.value, env, None, store.span, allow_search)
        indices = [self.rewrite_expr(i, env, None, store.span, allow_search) if contains(i, lambda n: isinstance(n, TensorLoad)) else i for i in store.indices]
        pos, guards = self.positions(sb, indices, env, store.span, allow_search)
        new = tirx.BufferStore(self.sb2[sb.buffer].buffer, value, pos, span=store.span)
        if guards:
            cond = guards[0]
            for g in guards[1:]:
                cond = tirx.And(cond, g)
            new = tirx.IfThenElse(cond, new, None, span=store.span)
        return new

    # -- building blocks ------------------------------------------------------------------

    def _build_level(self, level: _Level, name: str, body: Any, own_allocs: list, it: SparseIteration):
        loops = level.loops
        span = it.span
        bufs = self.all_buffers + own_allocs + level.allocs
        iter_vars = [
            tirx.IterVar(Range(0, lp.dom), lp.block_var, REDUCE_KIND if lp.kind == REDUCE else SPATIAL_KIND)
            for lp in loops
        ]
        block = s_tir.SBlock(iter_vars, [], [], name, body, level.init, list(own_allocs), None,
                             {"sparse": True}, span)
        block = block_regions(block, self.all_buffers + list(self._known_allocs()) + own_allocs + level.allocs)
        stmt = s_tir.SBlockRealize([lp.loop_var for lp in loops], True, block, span=span)
        by_depth: dict[int, list] = {}
        for s in level.searches:
            by_depth.setdefault(s.depth, []).append(self._search_block(s, loops, bufs))
            self.span_table[s.name] = span_texts(s.span) or span_texts(span)
            self.span_table[s.out.name] = self.span_table[s.name]
        for d in range(len(loops), 0, -1):
            stmt = _seq(by_depth.get(d, []) + [stmt])
            lp = loops[d - 1]
            stmt = tirx.For(lp.loop_var, _i32(0), lp.extent, tirx.ForKind.SERIAL, stmt, span=span)
        stmt = _seq(by_depth.get(0, []) + [stmt])
        self._alloc_registry.extend(level.allocs)
        return stmt, list(level.allocs)

    @property
    def _alloc_registry(self) -> list:
        if not hasattr(self, "_allocs_seen"):
            self._allocs_seen = []
        return self._allocs_seen

    def _known_allocs(self) -> list:
        return self._alloc_registry

    def _search_block(self, s: _Search, loops: list[_Loop], bufs: list) -> Any:
        used = loops[: s.depth]
        fresh = [Var(lp.block_var.name, "int32") for lp in used]
        mapping = list(zip([lp.block_var for lp in used], fresh))
        body, lohi = s.body_fn(mapping)
        iter_vars = [tirx.IterVar(Range(0, lp.dom), v, SPATIAL_KIND) for lp, v in zip(used, fresh)]
        block = s_tir.SBlock(iter_vars, [], [], s.name, body, None, [lohi], None, {"sparse": True}, s.span)
        block = block_regions(block, bufs + self._known_allocs() + [lohi, s.out])
        # The probe index depends on the block-local lo/hi buffer, which must not leak into
        # the regions of enclosing blocks: widen such ranges to the whole dimension.
        reads = []
        for region in block.reads:
            if region.source.same_as(lohi):
                continue
            ranges = [
                Range(0, dim) if uses_any([r.min, r.extent], [lohi]) or contains(
                    [r.min, r.extent], lambda n: isinstance(n, TensorLoad) and n.source.same_as(lohi)
                ) else r
                for r, dim in zip(region.region, region.source.ty.shape)
            ]
            reads.append(tirx.BufferRegion(region.source, ranges))
        writes = [w for w in block.writes if not w.source.same_as(lohi)]
        block = s_tir.SBlock(block.iter_vars, reads, writes, block.name_hint, block.body, None,
                             block.alloc_buffers, None, block.annotations, block.span)
        return s_tir.SBlockRealize([lp.loop_var for lp in used], True, block, span=s.span)
