"""Refusals for TVM primitives that TVM accepts on sparse loops but that compute wrong results.

Each case is measured in ``shared/notes/stage2.md`` §2-§3:

- ``split(..., disable_predication=True)`` of a loop whose extent is read from data (a row
  length): the split assumes the extent is a multiple of the factor, which nothing can check
  for row lengths, and the last partial tile of every row reads and writes past the row (§2.1 #14).
- ``rfactor`` of a block under a data-dependent ``T.where`` (a predicated split of a row loop):
  TVM puts the rf block's ``T.init`` under that predicate, so the accumulators of a row
  shorter than the factor, or empty, are never initialised (§2.1 #11, a TVM bug).
- a cache of a sparse buffer (one laid out by a variable axis) at the root, outside the row
  block: the cache is the whole position-space box, copied with reads past each row's end (and
  past nnz), and ``cache_write`` there crashes TVM (§3).

- ``fuse`` of a data-dependent reduction loop (the row's nonzeros) with a spatial loop of a
  block that has a ``T.init``: the fused loop is empty for an empty row, so the spatial points
  of that row are never initialised, and LowerSparseBuffer cannot hoist the init out of the
  fused loop (found by ``tests/schedule/test_guards.py``; ``decompose_reduction`` first is fine).

``check_before`` runs before a primitive, ``check_after`` on its result (the caller rolls the
schedule back when it raises, and prefixes the primitive's name to the message).
"""

from __future__ import annotations

from typing import Any, Optional

from .._tvm import Schedule, SBlockRV, s_tir, structural_walk
from ..errors import ScheduleError
from ..ir.analysis import reads_data, uses_var
from ..ir.iteration import ITER_TYPE, REDUCE, SPATIAL
from ..ir.stage2 import ALLOCATED, Stage2Function
from .tvm_primitives import CACHES


def check_before(sch: Schedule, name: str, arguments: dict[str, Any]) -> None:
    """Refuse ``name(**arguments)`` if it is one of the unsafe sparse patterns."""
    if name == "split" and arguments.get("disable_predication"):
        _refuse_unpredicated_split(sch, arguments["loop"])
    if name == "rfactor":
        _refuse_predicated_rfactor(sch, arguments["loop"])
    if name == "fuse":
        _refuse_fused_row_reduction(sch, arguments["loops"])


def check_after(sch: Schedule, f2: Optional[Stage2Function], name: str, result: Any) -> None:
    """Refuse the step that returned ``result`` if it placed a sparse cache at the root (stage II)."""
    if f2 is None or name not in CACHES:
        return
    for block in result if isinstance(result, list) else [result]:
        _refuse_root_sparse_cache(sch, f2, block)


def _refuse_unpredicated_split(sch: Schedule, loop: Any) -> None:
    node = sch.get(loop)
    if reads_data(node.extent):
        raise ScheduleError(
            f"disable_predication=True on loop '{node.loop_var.name}' is refused: its extent "
            f"{node.extent} is read from data (a row length), which need not be a multiple of the "
            "factors, so the last tile of a row would run past its end; split it with predication"
        )


def _refuse_predicated_rfactor(sch: Schedule, loop: Any) -> None:
    node = sch.get(loop)
    for block in sch.get_child_blocks(loop):
        predicate = _realize_of(sch, block).predicate
        if reads_data(predicate):
            raise ScheduleError(
                f"loop '{node.loop_var.name}' is refused: block '{sch.get(block).name_hint}' "
                f"runs under the data-dependent predicate T.where({predicate}) (a predicated split of "
                "a row loop), and TVM would put the rf init under it, leaving the accumulators of short "
                "or empty rows uninitialised (a TVM bug); leave the row loop unsplit when using rfactor"
            )


def _refuse_fused_row_reduction(sch: Schedule, loops: list[Any]) -> None:
    nodes = [sch.get(loop) for loop in loops]
    rows = [n for n in nodes if reads_data(n.extent)]
    if not rows or not loops:
        return
    for block in sch.get_child_blocks(loops[0]):
        realize = _realize_of(sch, block)
        if realize.block.init is None:
            continue
        bound = list(zip(realize.block.iter_vars, realize.iter_values))

        def drives(loop: Any, kind: int) -> bool:
            return any(int(iv.iter_type) == kind and uses_var(value, loop.loop_var) for iv, value in bound)

        row = next((r for r in rows if drives(r, ITER_TYPE[REDUCE])), None)
        spatial = next((n for n in nodes if not reads_data(n.extent) and drives(n, ITER_TYPE[SPATIAL])), None)
        if row is not None and spatial is not None:
            raise ScheduleError(
                f"fusing the row loop '{row.loop_var.name}' with the spatial loop '{spatial.loop_var.name}' is "
                f"refused: block '{realize.block.name_hint}' initialises its output in T.init, and the fused "
                "loop is empty for an empty row, so that row's output would never be initialised; call "
                f"decompose_reduction on '{realize.block.name_hint}' first"
            )


def _realize_of(sch: Schedule, block: SBlockRV) -> Any:
    target = sch.get(block)
    found: list[Any] = []

    def visit(node: Any) -> bool:
        if isinstance(node, s_tir.SBlockRealize) and node.block.same_as(target):
            found.append(node)
        return not found

    structural_walk(sch.mod["main"].body, visit)
    return found[0]


def _refuse_root_sparse_cache(sch: Schedule, f2: Stage2Function, block: SBlockRV) -> None:
    if not _is_under_root(sch, block):
        return
    node = sch.get(block)
    sparse = {b.name for b in f2.buffers if b.role != ALLOCATED and any(a.is_variable for a in b.axes)}
    touched = [r.source.name for r in list(node.reads) + list(node.writes) if r.source.name in sparse]
    if touched:
        raise ScheduleError(
            f"the cache of sparse buffer '{touched[0]}' is refused: it would sit at the root, "
            "outside the row block, as a copy of the whole position-space box that reads past the "
            "end of every row; cache it from the inner block (or compute_at a loop inside the row block)"
        )


def _is_under_root(sch: Schedule, block: SBlockRV) -> bool:
    """True when the nearest enclosing block of ``block`` is the function's root block."""
    parent = sch.get_sref(block).parent
    while parent is not None and not isinstance(parent.stmt, s_tir.SBlock):
        parent = parent.parent
    return parent is not None and parent.parent is None
