"""The default GPU schedule: what ``sparsetir.build(f, target="cuda")`` does to loops left unbound.

A kernel for a GPU needs its loops bound to blocks and threads; code left outside every
thread-bound loop would run on the host, where the arrays are device pointers. For each
top-level loop nest of a stage-III function that has no thread binding yet (a nest with one is
the user's schedule and is left alone):

- its outermost loop, when its iterations can run in parallel — TVM's ``bind`` accepts it, or
  sparsetir proves that no two iterations touch the same element (``thread_binding.py``) — is
  split into blocks of ``THREADS`` threads (``blockIdx.x``, ``threadIdx.x``; a constant extent up
  to ``THREADS`` becomes one block). Everything inside runs serially in its thread: an
  unscheduled sparse kernel gets one thread per row (or per nonzero, once fused);
- otherwise, at stage III, when what keeps the iterations apart is only a set of buffers that
  several of them accumulate into (``X[e] = X[e] + v``, the elements computed from data: RGCN's
  relations adding into the same destination rows, a fused loop over nonzeros adding into its
  row), those accumulations become CUDA atomic adds (``atomic_accumulations``) and the loop is
  bound as above. Only the buffers the proof cannot assign to one iteration get atomics: rows a
  thread owns keep plain stores;
- otherwise (a max/min reduction into shared elements, a shared element also read, an init
  that would race) the nest runs on a single thread: correct, and slow; schedule it to run it
  in parallel;
- a statement that is not a loop (a block at the top level) runs on a single thread too.

Intermediate buffers of the function (``T.alloc_sparse_buffer``, allocated at the root) that
only one nest uses become ``local``: each thread keeps the elements it uses in registers (the
parallel case guarantees no element is shared between threads). Buffers that several nests
share stay global and are refused when compiled (device memory cannot be allocated inside a
kernel, and the launcher does not allocate it between kernels yet).

This is a correct schedule, not a fast one: TVM's own default GPU schedule
(``tvm.s_tir.transform.DefaultGPUSchedule``) fuses every loop of a block into one, which a
loop whose extent is read from data (a row's length) cannot take part in.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from ..ir.analysis import has_thread_binding, uses_var
from ..ir.stage2 import Stage2Function
from .._tvm import Schedule, TVMScheduleError, s_tir, structural_walk, tirx
from ..errors import LoweringError, ScheduleError
from ..transforms.atomic_updates import atomic_accumulations
from .thread_binding import bind_independent, colliding_buffers, refused_for_dataflow

#: Threads per block of the default schedule.
THREADS = 256


def default_gpu_schedule(func: Any, threads: int = THREADS) -> Any:
    """``func`` (a ``Stage2Function`` or a stage-III ``PrimFunc``) with every top-level loop
    nest not yet bound to GPU threads bound as the module documentation says; ``func`` itself
    when every nest is bound already.

    At stage II only the nests whose iterations are proven independent are bound (the sparse
    layout shows which elements each row owns); the rest wait for stage III, where flattened
    indices can show it (a fused loop over nonzeros), and run on one thread if nothing does."""
    stage2 = isinstance(func, Stage2Function)
    prim = func.func if stage2 else func
    nested = [b.name for b in func.buffers if any(a.is_variable for a in b.axes[1:])] if stage2 else []
    if not stage2:
        prim = _atomic_where_threads_collide(prim, threads, nested)
    sch = Schedule(copy.deepcopy(prim))  # TVM's Schedule may rewrite the function it is given
    nests = _unbound_nests(sch)
    if not nests:
        return func
    for loop_or_block in nests:
        _schedule_nest(sch, loop_or_block, threads, nested, single_thread=not stage2)
    _localise_intermediates(sch)
    return Stage2Function.from_func(sch.mod["main"]) if stage2 else sch.mod["main"]


def _root_block(func: "tirx.PrimFunc") -> Any:
    return func.body.block


def _unbound_nests(sch: Schedule) -> list[Any]:
    """The outermost loop (a ``LoopRV``) of each top-level nest without a thread binding, or the
    block (a ``SBlockRV``) when a top-level block has no loop above it."""
    seen: list[Any] = []
    nests: list[Any] = []
    for block in sch.get_child_blocks(sch.get_sblock("root")):
        loops = sch.get_loops(block)
        head = loops[0] if loops else block
        node = sch.get(head)
        if any(node.same_as(s) for s in seen):
            continue
        seen.append(node)
        if not has_thread_binding(node):
            nests.append(head)
    return nests


def _schedule_nest(sch: Schedule, head: Any, threads: int, nested: list[str], single_thread: bool) -> None:
    """Bind the nest headed by ``head``; when it cannot run in parallel, on one thread if
    ``single_thread`` (else leave it)."""
    if isinstance(sch.get(head), tirx.For) and _parallel(sch, head, nested):
        extent = sch.get(head).extent
        if isinstance(extent, tirx.IntImm) and int(extent.value) <= threads:
            _bind(sch, head, "threadIdx.x", nested)
            return
        outer, inner = sch.split(head, [None, threads])
        _bind(sch, inner, "threadIdx.x", nested)
        _bind(sch, outer, "blockIdx.x", nested)
        return
    if not single_thread:
        return
    unit = sch.add_unit_loop(head)
    _bind(sch, unit, "threadIdx.x", nested)


def _atomic_where_threads_collide(prim: "tirx.PrimFunc", threads: int, nested: list[str]) -> "tirx.PrimFunc":
    """``prim`` (stage III) with the accumulations into shared elements of each unbound nest
    that cannot run in parallel as it is made atomic adds, where that lets it (module docs)."""
    sch = Schedule(copy.deepcopy(prim))
    replaced: list[tuple[Any, Any]] = []
    for head in _unbound_nests(sch):
        loop = sch.get(head)
        if not isinstance(loop, tirx.For) or _parallel(sch, head, nested):
            continue
        try:
            shared = colliding_buffers(sch, head, nested)
            if not shared:
                continue
            atomic = atomic_accumulations(loop, shared, f"loop '{loop.loop_var.name}'")
        except (ScheduleError, LoweringError):
            continue  # the nest runs on one thread
        replaced.append((loop, atomic))
    if not replaced:
        return prim
    func = sch.mod["main"]
    root = _root_block(func)
    statements = list(root.body.seq) if isinstance(root.body, tirx.SeqStmt) else [root.body]
    for index, stmt in enumerate(statements):
        statements[index] = next((new for old, new in replaced if old.same_as(stmt)), stmt)
    body = statements[0] if len(statements) == 1 else tirx.SeqStmt(statements)
    block = s_tir.SBlock(root.iter_vars, root.reads, root.writes, root.name_hint, body, root.init,
                         root.alloc_buffers, root.match_buffers, root.annotations, root.span)
    return func.with_body(s_tir.SBlockRealize([], True, block))


def _parallel(sch: Schedule, loop: Any, nested: list[str]) -> bool:
    """Whether ``loop``'s iterations may run on different threads (tried on a copy)."""
    trial = sch.copy()
    try:
        _bind(trial, loop, "threadIdx.x", nested)
    except (ScheduleError, TVMScheduleError):
        return False
    return True


def _bind(sch: Schedule, loop: Any, thread: str, nested: list[str]) -> None:
    """TVM's ``bind``, or sparsetir's proven one where TVM refuses for its dataflow rule only."""
    try:
        sch.bind(loop, thread)
    except TVMScheduleError as err:
        if not refused_for_dataflow(err):
            raise
        bind_independent(sch, loop, thread, nested)


def _localise_intermediates(sch: Schedule) -> None:
    """Root allocations used by one nest only become ``local`` (module docs)."""
    root = _root_block(sch.mod["main"])
    body = root.body
    statements = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    for buffer in root.alloc_buffers:
        if str(buffer.scope()) != "global":
            continue
        users = [s for s in statements if uses_var(s, buffer)]
        if len(users) != 1:
            continue
        writer = _writer_of(sch, buffer)
        if writer is not None:
            block, index = writer
            sch.set_scope(block, index, "local")


def _writer_of(sch: Schedule, buffer: Any) -> Optional[tuple[Any, int]]:
    """A block writing ``buffer`` and the index of ``buffer`` among its writes."""
    found: list[tuple[str, int]] = []

    def visit(node: Any) -> bool:
        if isinstance(node, s_tir.SBlock) and not found:
            for index, region in enumerate(node.writes):
                if region.source.same_as(buffer):
                    found.append((str(node.name_hint), index))
        return not found

    structural_walk(sch.mod["main"].body, visit)
    if not found:
        return None
    name, index = found[0]
    return sch.get_sblock(name), index


__all__ = ["THREADS", "default_gpu_schedule"]
