"""What the default schedule's rules read about a stage-II program.

A stage-II body is a sequence of loop nests, one per sparse iteration (plus the searches and
inits LowerSparseIter adds). Each nest is loops and blocks: the outermost block of a nest is its
*row block*, the blocks under it iterate the row's positions. The rules need, per block, the
loops between it and its parent block, its iterators (spatial or reduction, and the loop each is
bound to), and its stores and loads; this module reads them once from the TVM nodes into plain
frozen records, so each rule is a few readable conditions over them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..._tvm import TensorLoad, Var, s_tir, structural_walk, tirx, tvm
from ...ir.analysis import contains, reads_data, uses_var


@dataclass(frozen=True)
class LoopFacts:
    """One loop: its variable, its extent (an ``Expr``) and whether that extent is a constant."""

    var: Var
    extent: Any
    kind: Any

    @property
    def constant(self) -> Optional[int]:
        """The extent when it is a constant, else None."""
        return int(self.extent.value) if isinstance(self.extent, tirx.IntImm) else None

    @property
    def name(self) -> str:
        return str(self.var.name)


@dataclass(frozen=True)
class IterFacts:
    """A block iterator: its variable, ``"S"`` (spatial) or ``"R"`` (reduction), and its binding."""

    var: Var
    kind: str
    binding: Any


@dataclass(frozen=True)
class Access:
    """A load or store of a buffer inside one block (not inside its child blocks)."""

    buffer: str
    indices: tuple
    dtype: str


@dataclass(frozen=True)
class BlockFacts:
    """One block of a nest and what surrounds it."""

    name: str
    parent: Optional[str]  # the enclosing block (None for a row block)
    loops: tuple[LoopFacts, ...]  # from the enclosing block (or the top) down to this block
    iters: tuple[IterFacts, ...]
    stores: tuple[Access, ...]
    loads: tuple[Access, ...]
    has_init: bool
    children: tuple[str, ...]
    allocated: tuple[str, ...]  # the buffers the block allocates (searches' scratch, caches)
    #: the innermost loop holds this block alone (no sibling statement under it)
    alone: bool
    #: the block's body has a ``while`` loop (a binary search), which no vector loop may hold
    searches: bool
    #: statements and expressions in the block's body (what an unrolled copy of it costs)
    size: int
    #: the bounds ``while`` loops of the block's own body compare against (a co-iteration's
    #: merge walks each row to ``indptr[row + 1] - indptr[row]``)
    walk_bounds: tuple = ()

    @property
    def is_leaf(self) -> bool:
        """No blocks under it."""
        return not self.children

    def iter_of(self, loop: LoopFacts) -> Optional[IterFacts]:
        """The iterator bound to exactly ``loop``'s variable, if any."""
        return next((it for it in self.iters if isinstance(it.binding, Var) and it.binding.same_as(loop.var)), None)

    def uses(self, var: Var) -> list[Access]:
        """The accesses that mention ``var`` in an index."""
        return [a for a in self.stores + self.loads if any(uses_var(i, var) for i in a.indices)]

    @property
    def stores_divided(self) -> bool:
        """A store's index divides by, or takes a remainder of, a value known only at run time
        (``T.fuse`` over fixed axes: ``C[vij // cols, vij % cols]``). TVM's region analysis
        cannot bound such an index, so a cache of the stored region (``cache_write``) would
        span garbage bounds; the rules that cache a block's output leave such a block alone."""
        return any(contains(index, _divides_by_symbol) for a in self.stores for index in a.indices)


def _divides_by_symbol(node: Any) -> bool:
    return isinstance(node, (tirx.FloorDiv, tirx.FloorMod, tirx.Div, tirx.Mod)) and not isinstance(node.b, tirx.IntImm)


@dataclass(frozen=True)
class Nest:
    """The loops and blocks of one top-level statement, its blocks in pre-order."""

    index: int
    blocks: tuple[BlockFacts, ...]

    @property
    def row_block(self) -> BlockFacts:
        """The outermost block of the nest."""
        return self.blocks[0]

    def block(self, name: str) -> BlockFacts:
        return next(b for b in self.blocks if b.name == name)


def nests(prim: "tirx.PrimFunc") -> list[Nest]:
    """The nests of a stage-II (or stage-III s_tir) function's body, in program order."""
    body = prim.body
    if isinstance(body, s_tir.SBlockRealize):  # the root block
        body = body.block.body
    tops = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    found = []
    for index, top in enumerate(tops):
        blocks: list[BlockFacts] = []
        _collect(top, None, [], blocks)
        if blocks:
            found.append(Nest(index, tuple(blocks)))
    return found


def _collect(stmt: Any, parent: Optional[str], loops: list[LoopFacts], out: list[BlockFacts],
             alone: bool = True) -> list[str]:
    """Record the blocks under ``stmt`` (``loops`` lead to it from block ``parent``); return the
    names of the outermost ones. ``alone``: nothing but ``stmt`` is under the innermost loop."""
    if isinstance(stmt, tirx.For):
        return _collect(stmt.body, parent, loops + [LoopFacts(stmt.loop_var, stmt.extent, stmt.kind)], out)
    if isinstance(stmt, tirx.SeqStmt):
        return [name for s in stmt.seq for name in _collect(s, parent, loops, out, alone=False)]
    if isinstance(stmt, (tirx.IfThenElse,)):
        names = _collect(stmt.then_case, parent, loops, out, alone=False)
        if stmt.else_case is not None:
            names += _collect(stmt.else_case, parent, loops, out, alone=False)
        return names
    if isinstance(stmt, (tirx.LetStmt, tirx.While)):
        return _collect(stmt.body, parent, loops, out, alone=False)
    if isinstance(stmt, s_tir.SBlockRealize):
        block = stmt.block
        name = str(block.name_hint)
        position = len(out)
        out.append(None)  # keeps pre-order: the children are appended after it
        children = _collect(block.body, name, [], out)
        stores, loads = _accesses(block.body)
        iters = tuple(IterFacts(iv.var, "R" if iv.iter_type == tirx.IterVar.CommReduce else "S", value)
                      for iv, value in zip(block.iter_vars, stmt.iter_values))
        searches = contains(block.body, lambda n: isinstance(n, tirx.While))
        size = [0]
        structural_walk(block.body, lambda n: size.__setitem__(0, size[0] + 1))
        out[position] = BlockFacts(name, parent, tuple(loops), iters, tuple(stores), tuple(loads),
                                   block.init is not None, tuple(children), tuple(str(b.name) for b in block.alloc_buffers),
                                   alone and bool(loops), searches, size[0], _walk_bounds(block.body))
        return [name]
    return []


def _walk_bounds(stmt: Any) -> tuple:
    """The right-hand sides of the comparisons in the conditions of ``stmt``'s ``while`` loops,
    outside the blocks nested in it."""
    bounds: list = []

    def visit(node: Any) -> bool:
        if isinstance(node, s_tir.SBlockRealize) and node.block.body is not stmt:
            return False
        if isinstance(node, tirx.While):
            structural_walk(node.condition, lambda c: bounds.append(c.b) if isinstance(c, (tirx.LT, tirx.LE)) else None)
        return True

    structural_walk(stmt, visit)
    return tuple(bounds)


def _accesses(stmt: Any) -> tuple[list[Access], list[Access]]:
    """Stores and loads of ``stmt`` outside the blocks nested in it."""
    stores: list[Access] = []
    loads: list[Access] = []

    def visit(node: Any) -> bool:
        if isinstance(node, s_tir.SBlockRealize):
            return False  # a child block: its accesses are its own
        if isinstance(node, tirx.BufferStore):
            stores.append(Access(str(node.buffer.name), tuple(node.indices), str(node.buffer.dtype)))
        elif isinstance(node, TensorLoad):
            loads.append(Access(str(node.source.name), tuple(node.indices), str(node.source.dtype)))
        return True

    structural_walk(stmt, visit)
    return stores, loads


def row_extent_indptr(nest: Nest, row_loop: LoopFacts) -> Optional[str]:
    """The 1-D array whose consecutive differences are the extents of the first loop under the
    row loop (``indptr[v + 1] - indptr[v]`` with ``v`` the row), when there is one: the weight of
    each row, which an nnz-balanced partition reads at run time."""
    row = nest.row_block
    row_iter = row.iter_of(row_loop)
    row_var = row_iter.var if row_iter is not None else row_loop.var
    for block in nest.blocks:
        for loop in block.loops:
            name = _indptr_difference(loop.extent, row_var)
            if name is not None:
                return name
    for block in nest.blocks:  # a merge's walk over each row (the first merged axis's entries)
        for bound in block.walk_bounds:
            name = _indptr_difference(bound, row_var)
            if name is not None:
                return name
    return None


def _indptr_difference(extent: Any, row: Var) -> Optional[str]:
    """``P`` when ``extent`` is ``P[row + 1] - P[row]`` for a 1-D buffer ``P``."""
    if not isinstance(extent, tirx.Sub):
        return None
    hi, lo = extent.a, extent.b
    if not (isinstance(hi, TensorLoad) and isinstance(lo, TensorLoad)) or not hi.source.same_as(lo.source):
        return None
    if len(hi.indices) != 1 or not (isinstance(lo.indices[0], Var) and lo.indices[0].same_as(row)):
        return None
    upper = hi.indices[0]
    if not (isinstance(upper, tirx.Add) and isinstance(upper.a, Var) and upper.a.same_as(row)
            and isinstance(upper.b, tirx.IntImm) and int(upper.b.value) == 1):
        return None
    return str(hi.source.name)


@dataclass(frozen=True)
class InnerLoop:
    """A block's innermost loop, when its extent is a constant and an iterator is bound to it,
    and how the block's accesses use that iterator."""

    loop: LoopFacts
    iter: IterFacts
    extent: Optional[int]  # None: known only at run time (``divides`` still proves multiples)
    #: every access that mentions the iterator has it in its last index only, as ``v + c``:
    #: consecutive iterations touch consecutive elements (one vector load or store)
    contiguous: bool
    #: some access that mentions the iterator has a data-dependent index before it (a row
    #: gathered through an indices array)
    gathered: bool
    #: the loops just above it bound to reduction iterators (outermost first)
    reductions: tuple[LoopFacts, ...]

    def divides(self, n: int) -> bool:
        """Whether ``n`` provably divides the extent (``feat - feat % 16`` is a multiple of 16)."""
        if self.extent is not None:
            return self.extent % n == 0
        remainder = tvm.sym.Analyzer().simplify(tirx.floormod(self.loop.extent, n))
        return isinstance(remainder, tirx.IntImm) and int(remainder.value) == 0


def inner_loop(block: BlockFacts) -> Optional[InnerLoop]:
    """The innermost loop of ``block`` as an ``InnerLoop``, or None (also when the loop holds
    more than the block, or the block children or a search: nothing a rule could vectorize,
    or when its extent reads data)."""
    if not block.loops or not block.alone or not block.is_leaf or block.searches:
        return None
    loop = block.loops[-1]
    it = block.iter_of(loop)
    if it is None or reads_data(loop.extent) or (loop.constant is not None and loop.constant < 1):
        return None
    contiguous, gathered = True, False
    for access in block.uses(it.var):
        *lead, last = access.indices
        if any(uses_var(i, it.var) for i in lead) or not _unit_stride(last, it.var):
            contiguous = False
        if any(reads_data(i) for i in lead):
            gathered = True
    reductions: list[LoopFacts] = []
    for above in reversed(block.loops[:-1]):
        bound = block.iter_of(above)
        if bound is None or bound.kind != "R":
            break
        reductions.insert(0, above)
    return InnerLoop(loop, it, loop.constant, contiguous, gathered, tuple(reductions))


def _unit_stride(index: Any, var: Var) -> bool:
    """Whether ``index`` is ``var`` plus an expression free of ``var`` (``(k + 112) + 384`` is)."""
    if isinstance(index, Var):
        return index.same_as(var)
    return uses_var(index, var) and not uses_var(tvm.sym.Analyzer().simplify(index - var), var)


@dataclass(frozen=True)
class Gather:
    """Rows of a dense operand read at coordinates stored in a sparse axis's indices, one row
    per stored entry (SpMM's ``B[J_indices[i, j], :]``): what a prefetch can fetch ahead.
    Every name is the kernel's parameter name (the script's)."""

    dense: str
    indptr: str
    indices: str
    nnz: str
    shape: str = "tile"  # how the loop reads a row: "dot" (whole, once) or "tile" (a slice a pass)
    whole_rows: bool = True  # a "tile" loop reads each row in one pass


def gathered_rows(block: BlockFacts, func: Any, shape: str, whole_rows: bool = True) -> Optional[Gather]:
    """The dense operand ``block`` gathers rows of (a 2-D parameter indexed by a sparse axis's
    coordinates in its first dimension), with that axis's structure parameters; ``shape`` and
    ``whole_rows`` say how the scheduled loop reads each row (``prefetch.py``)."""
    names = {str(p.name): n for p, n in zip(func.prim.params, func.param_names)}
    for load in block.loads:
        if len(load.indices) != 2 or load.buffer not in names:
            continue
        lead = load.indices[0]
        if not isinstance(lead, TensorLoad):
            continue
        source = str(lead.source.name)
        axis = next((a for a in func.axes if a.is_variable and a.indices is not None
                     and str(a.indices.name) == source and a.indptr is not None and isinstance(a.nnz, Var)), None)
        if axis is None or str(axis.indptr.name) not in names or source not in names:
            continue
        return Gather(names[load.buffer], names[str(axis.indptr.name)], names[source], str(axis.nnz.name),
                      shape, whole_rows)
    return None
