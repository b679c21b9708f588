"""partition_rows: visit a block's outer loop as P contiguous chunks given at run time.

No TVM schedule primitive splits a loop at data-dependent points, yet load balance of sparse
kernels needs exactly that: row chunks holding equal numbers of nonzeros
(``bench/notes/cpu_schedules.md`` §2). This stage-II transform rewrites::

    for i in range(m):                          for t in range(P):
        with T.sblock("spmm0"):          →          for i in range(Part[t + 1] - Part[t]):
            vi = T.axis.spatial(m, i)                   with T.sblock("spmm0"):
                                                            vi = T.axis.spatial(m, Part[t] + i)

adding two parameters at the end: the array ``Part`` of shape ``(P + 1,)`` (chunk boundaries,
``Part[0] = 0``, ``Part[P] = m``, non-decreasing; int32, or int64 for a loop that counts in
int64) and the int32 scalar ``P``.
TVM's schedule accepts the data-dependent binding, so ``parallel(t)`` then gives each thread a
balanced chunk. ``Part`` is a plain dense parameter, not sparse metadata: LowerSparseBuffer
passes it through unchanged.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .._tvm import Var, s_tir, structural_map, structural_walk, tirx
from ..errors import LoweringError
from ..ir.stage2 import PARTITIONS_ATTR, Partition, Stage2Function, partitions_of


def _chain(loop: "tirx.For") -> tuple[list, object]:
    """The perfectly nested loops from ``loop`` down, and what they wrap."""
    chain = []
    node = loop
    while isinstance(node, tirx.For):
        chain.append(node)
        node = node.body
    return chain, node


def _chain_tops(body: object, wanted: list[str]) -> list[Var]:
    """The loop variables of the outermost loops whose perfect nest ends at a wanted block."""
    heads: list[tirx.For] = []

    def visit(node: object) -> bool:
        if isinstance(node, tirx.For):
            _, inner = _chain(node)
            if isinstance(inner, s_tir.SBlockRealize) and str(inner.block.name_hint) in wanted:
                heads.append(node)
        return True

    structural_walk(body, visit)
    inside = [lp.loop_var for head in heads for lp in _chain(head)[0][1:]]  # loops below another head
    return [h.loop_var for h in heads if not any(h.loop_var.same_as(v) for v in inside)]


def partition_rows(f2: Stage2Function, block_name: Union[str, Sequence[str]], parts_param_name: str = "part",
                   count_param_name: str = "P", parallel: bool = False, separate: bool = False,
                   weights: Optional[str] = None) -> Stage2Function:
    """``f2`` with the loop directly above block ``block_name`` split into ``P`` chunks ``Part[t]:Part[t+1]``.

    ``block_name`` may list several blocks (the row blocks of consecutive iterations over the
    same rows, e.g. a kernel's main part and its tail): each of their loops is split at the
    same boundaries, and they share the two new parameters. Their loops must have one extent.
    With ``separate``, each block's loop gets boundaries of its own, a parameter
    ``<parts_param_name>_<block>`` (in the order the blocks are listed), and the loops may have
    different extents; they still share ``P`` (``horizontal_fusion`` then merges the chunk loops).

    A parameter an earlier ``partition_rows`` added may be named again: the chunk count is then
    shared, and boundaries of the same extent and ``weights`` are reused (another nest over the
    same rows is split at the same points).

    The loop must be a serial loop starting at 0 (the loop LowerSparseIter emits over a dense
    axis). The caller guarantees ``Part`` is a valid partition of that loop's range; the kernel
    does not check it (``runtime.partition.row_partition`` makes one). ``weights`` names the indptr
    parameter whose row lengths the boundaries balance; it is recorded with the partition.

    ``parallel=True`` makes the chunk loop parallel without TVM's dataflow check, which refuses
    blocks that read what they write (a row's scalar accumulator initialised in the row block,
    as in SpMV or softmax). It is safe when every write of the block's subtree is indexed by the
    block's row: chunks then touch disjoint rows. ``sch.parallel`` is the checked alternative
    (``Schedule.partition_rows(parallel=True)`` proves the rows independent first).
    """
    prim = f2.prim
    wanted = [block_name] if isinstance(block_name, str) else list(block_name)
    earlier = partitions_of(prim.attrs)
    earlier_counts = {p.count for p in earlier}
    params = {str(p.name): p for p in prim.params}
    names = set(params) | set(f2.param_names)
    if count_param_name in names and count_param_name not in earlier_counts:
        raise LoweringError(f"partition_rows: '{f2.name}' already has a parameter named '{count_param_name}'")
    count = params[count_param_name] if count_param_name in earlier_counts else tirx.Var(count_param_name, "int32")
    part_names = {name: f"{parts_param_name}_{name}" if separate else parts_param_name for name in wanted}
    reused: dict[str, Partition] = {}
    for new_name in set(part_names.values()):
        if new_name not in names:
            continue
        match = next((p for p in earlier if p.parts == new_name), None)
        if match is None or match.count != count_param_name:
            raise LoweringError(f"partition_rows: '{f2.name}' already has a parameter named '{new_name}'")
        reused[new_name] = match
    # Reused boundaries are the buffer parameters an earlier partition made; new ones are made
    # with the first loop they split, in its index type (int64 rows get int64 boundaries).
    part_buffers = {name: params[name] for name in reused}
    found = []
    extents: dict[str, str] = {}
    tops = _chain_tops(prim.body, wanted)

    def on_for(loop: "tirx.For") -> "tirx.For":
        if not any(loop.loop_var.same_as(v) for v in tops):
            return loop
        chain, realize = _chain(loop)
        name = str(realize.block.name_hint)
        # The row loop: the first loop of the nest that runs more than once (an iteration over a
        # dense axis of extent 1, such as ELL's O, comes before it and moves inside the chunks).
        index = next((k for k, lp in enumerate(chain) if not (isinstance(lp.extent, tirx.IntImm)
                                                                and int(lp.extent.value) == 1)), len(chain) - 1)
        units, row_loop, rest = chain[:index], chain[index], chain[index + 1:]
        if not (isinstance(row_loop.min, tirx.IntImm) and int(row_loop.min.value) == 0):
            raise LoweringError(f"partition_rows: the row loop above '{name}' does not start at 0")
        if any(lp.kind != tirx.ForKind.SERIAL for lp in chain):
            raise LoweringError(f"partition_rows: the loops above '{name}' are not serial")
        if not isinstance(row_loop.extent, (tirx.IntImm, Var)):
            raise LoweringError(
                f"partition_rows: the loop above '{name}' must run to a parameter or a constant, "
                f"not {row_loop.extent}"
            )
        extents[name] = str(row_loop.extent.value) if isinstance(row_loop.extent, tirx.IntImm) else str(row_loop.extent.name)
        dtype = str(row_loop.loop_var.ty.dtype)
        part_name = part_names[name]
        if part_name not in part_buffers:
            part_buffers[part_name] = tirx.decl_buffer((count + 1,), dtype, name=part_name, layout=None)
        part = part_buffers[part_name]
        if str(part.ty.dtype) != dtype:
            raise LoweringError(f"partition_rows: '{part_name}' holds {part.ty.dtype} boundaries, but the loop above "
                                f"'{name}' counts in {dtype}")
        t = tirx.Var("t", "int32")
        inner = tirx.Var(str(row_loop.loop_var.name), dtype)
        start = tirx.BufferLoad(part, [t])
        row = start + inner

        def on_var(var: Var) -> Var:
            return row if var.same_as(row_loop.loop_var) else var

        values = [structural_map(v, [(Var, on_var)]) for v in realize.iter_values]
        predicate = structural_map(realize.predicate, [(Var, on_var)])
        body = s_tir.SBlockRealize(values, predicate, realize.block)
        for lp in reversed(rest):
            body = tirx.For(lp.loop_var, structural_map(lp.min, [(Var, on_var)]),
                            structural_map(lp.extent, [(Var, on_var)]), lp.kind, body)
        extent = tirx.BufferLoad(part, [t + 1]) - start
        body = tirx.For(inner, tirx.const(0, dtype), extent, tirx.ForKind.SERIAL, body)
        for lp in reversed(units):
            body = tirx.For(lp.loop_var, lp.min, lp.extent, lp.kind, body)
        found.append(name)
        kind = tirx.ForKind.PARALLEL if parallel else tirx.ForKind.SERIAL
        return tirx.For(t, 0, count, kind, body)

    body = structural_map(prim.body, [(tirx.For, on_for)])
    for name in wanted:
        if found.count(name) != 1:
            raise LoweringError(
                f"partition_rows: expected one loop directly above block '{name}' in '{f2.name}', "
                f"found {found.count(name)}"
            )
    if not separate and len(set(extents.values())) > 1:
        raise LoweringError(
            f"partition_rows: the loops above {', '.join(repr(n) for n in wanted)} run to different "
            f"extents ({', '.join(extents.values())}); one partition cannot split them"
        )
    for part_name, match in reused.items():
        extent = next(extents[name] for name in wanted if part_names[name] == part_name)
        if match.extent != extent or match.weights != weights:
            raise LoweringError(
                f"partition_rows: '{part_name}' splits a loop to {match.extent}"
                f"{f' balancing {match.weights}' if match.weights else ''}; it cannot split one to {extent}"
                f"{f' balancing {weights}' if weights else ''}")
    new_parts = [part_buffers[name] for name in dict.fromkeys(part_names.values()) if name not in reused]
    added = [count] if count_param_name not in earlier_counts else []
    new = tirx.PrimFunc(list(prim.params) + new_parts + added, body, prim.ret_type)
    attrs = dict(prim.attrs) if prim.attrs is not None else {}
    # the kernel checks the boundaries like an indptr: count + 1 entries from 0 up to the extent
    checks = {part_names[name]: extents[name] for name in wanted if part_names[name] not in reused}
    tail = [weights] if weights is not None else []
    attrs[PARTITIONS_ATTR] = [list(p) for p in attrs.get(PARTITIONS_ATTR, [])] + [
        [part, count_param_name, extent] + tail for part, extent in checks.items()]
    for key, value in attrs.items():
        new = new.with_attr(key, value)
    return Stage2Function(new, list(f2.axes), list(f2.buffers),
                          list(f2.param_names) + [str(b.name) for b in new_parts] + [str(v.name) for v in added])

