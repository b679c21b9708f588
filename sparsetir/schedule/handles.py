"""Block and loop handles as plain data, so that a TVM schedule step can be recorded and replayed.

TVM's ``SBlockRV`` / ``LoopRV`` are valid only inside the schedule that made them. A history
records them by where they are in the program instead, which is the same in a replay because
the replay rebuilds the same program step by step:

- a block is ``{"handle": "sblock", "name": "csr_spmm1"}``; when several blocks share the name,
  ``"nth"`` says which one in program order;
- a loop is ``{"handle": "loop", "sblock": "csr_spmm1", "index": 1}``: the ``index``-th entry of
  ``get_loops`` of the first block under the loop (``"nth"`` as for blocks).

Buffers are recorded by name (TVM's primitives accept names), TVM integer and float constants
as Python numbers; anything else that is not JSON data is refused.
"""

from __future__ import annotations

from typing import Any

from .._tvm import FloatImm, IntImm, LoopRV, SBlockRV, BufferType, Schedule, Var, s_tir, structural_walk
from ..errors import ScheduleError

_PLAIN = (str, int, float, bool, type(None))


def encode(sch: Schedule, value: Any) -> Any:
    """The JSON form of a primitive argument (handles by position, buffers by name)."""
    if isinstance(value, SBlockRV):
        return {"handle": "sblock", **_block_ref(sch, value)}
    if isinstance(value, LoopRV):
        return _encode_loop(sch, value)
    if isinstance(value, (list, tuple)):
        return [encode(sch, v) for v in value]
    if isinstance(value, dict):
        if "handle" in value:
            raise ScheduleError("a dictionary argument cannot use the key 'handle' (it marks recorded handles)")
        return {str(k): encode(sch, v) for k, v in value.items()}
    if isinstance(value, IntImm):
        return int(value.value)
    if isinstance(value, FloatImm):
        return float(value.value)
    if isinstance(value, Var) and isinstance(value.ty, BufferType):
        return value.name
    if isinstance(value, _PLAIN):
        return value
    raise ScheduleError(f"cannot record an argument of type {type(value).__name__} ({value!r}); pass plain values or handles")


def decode(sch: Schedule, value: Any) -> Any:
    """The inverse of ``encode`` against ``sch``: recorded handles become live ones."""
    if isinstance(value, dict) and value.get("handle") == "sblock":
        return _resolve_block(sch, value["name"], value.get("nth", 0))
    if isinstance(value, dict) and value.get("handle") == "loop":
        block = _resolve_block(sch, value["sblock"], value.get("nth", 0))
        return sch.get_loops(block)[value["index"]]
    if isinstance(value, list):
        return [decode(sch, v) for v in value]
    if isinstance(value, dict):
        return {k: decode(sch, v) for k, v in value.items()}
    return value


def _encode_loop(sch: Schedule, loop: LoopRV) -> dict[str, Any]:
    children = sch.get_child_blocks(loop)
    if not children:
        raise ScheduleError(f"loop '{sch.get(loop).loop_var.name}' has no block under it, so it cannot be recorded")
    block = children[0]
    index = [sch.get(lp).same_as(sch.get(loop)) for lp in sch.get_loops(block)].index(True)
    ref = _block_ref(sch, block)
    return {"handle": "loop", "sblock": ref["name"], **({"nth": ref["nth"]} if "nth" in ref else {}), "index": index}


def _block_ref(sch: Schedule, block: SBlockRV) -> dict[str, Any]:
    node = sch.get(block)
    name = str(node.name_hint)
    if _count_named(sch, name) == 1:
        return {"name": name}
    same = [rv for rv in _blocks_in_order(sch) if sch.get(rv).name_hint == name]
    nth = [sch.get(rv).same_as(node) for rv in same].index(True)
    return {"name": name, "nth": nth}


def _resolve_block(sch: Schedule, name: str, nth: int) -> SBlockRV:
    if _count_named(sch, name) == 1 and nth == 0:
        return sch.get_sblock(name)
    same = [rv for rv in _blocks_in_order(sch) if sch.get(rv).name_hint == name]
    if nth >= len(same):
        raise ScheduleError(f"the program has no block '{name}' number {nth} (it has {len(same)})")
    return same[nth]


def _count_named(sch: Schedule, name: str) -> int:
    count = [0]

    def visit(node: Any) -> bool:
        if isinstance(node, s_tir.SBlock) and node.name_hint == name:
            count[0] += 1
        return True

    structural_walk(sch.mod["main"].body, visit)
    return count[0]


def _blocks_in_order(sch: Schedule) -> list[SBlockRV]:
    """Every block below the root, in program order (pre-order)."""
    out: list[SBlockRV] = []

    def visit(block: SBlockRV) -> None:
        for child in sch.get_child_blocks(block):
            out.append(child)
            visit(child)

    visit(sch.get_sblock("root"))
    return out
