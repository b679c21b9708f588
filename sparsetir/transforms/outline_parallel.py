"""The body of each parallel loop as a function of its own, whose arrays do not alias (a
stage-III rewrite for the CPU code generator).

TVM compiles a parallel loop's body into a closure that reads the function's arrays from a
struct, and LLVM then no longer knows what the function's ``tir.noalias`` said: that no two
arrays share memory. Every store may change every array, so the body reloads row pointers after
each store, keeps an accumulated value in memory, and checks at run time whether the arrays
overlap before it vectorizes (per row, on rows of ten entries). The rules ``register_accumulator``
and the rewrite ``hoist_invariant_loads`` recover part of this by hand.

Here the body goes into a private function of the module, with the arrays as pointer parameters
and ``tir.noalias``, called once per iteration::

    for t in T.parallel(P):                 for t in T.parallel(P):
        <body using A, B, part, m, ...>  →      main_parallel0(A.data, B.data, part.data, t, m, ...)

    @T.prim_func(private=True)
    def main_parallel0(a: T.handle("float32"), ..., t: T.int32, m: T.int32, ...):
        T.func_attr({"tir.noalias": True})
        A = T.decl_buffer(..., data=a)
        ...
        <body>

TVM's code generator gives each array of a ``tir.noalias`` function an alias class of its own
(LLVM's type-based alias metadata), as it does for the serial kernel, and the arrays and sizes
arrive as values rather than loads from the closure; LLVM inlines the call back into the
closure and keeps both. Measured on the 2-core VM: a CSR elementwise kernel on email_enron,
309 µs a call with the body in the loop and 247 µs called as a function (TVM's thread pool);
every example's default build over its serial one, ``sparsetir bench --scripts`` on cora,
email_enron and soc_slashdot0902 at width 64, geomean 3.35x before and 4.04x after (RGCN over
relations 2.1x to 9.5-13x, the hypergraph 7.7-13x to 19-27x, the ragged batched matmul 1.5x to
2.0x, the CSR elementwise product 1.3-1.5x to 1.65-2.0x).

A loop is outlined only when its function says ``tir.noalias``, every array its body uses is a
parameter of the function (an array declared in the body, a stack scratch, stays in it; a view
declared outside the loop may share another array's memory), and every allocation in the body
goes on the stack (TVM allocates a larger one through the kernel's device, which only the
kernel's entry knows); other loops are left as they are.

The call must keep the callee's parameter types through TVM's ``NarrowDataType``, which turns
an int64 variable whose values fit in 32 bits into an int32 one in the caller, never in a
function's parameters (a fused loop over the entries of an int64-indexed axis runs over
``Cast("int64", nnz)``). So an int64 loop whose extent fits in 32 bits is made an int32 loop
here first, its body reading the int64 value as a cast; a loop whose body needs another int64
variable of the caller's (not a parameter) stays in place.
"""

from __future__ import annotations

from typing import Any

from .._tvm import BufferType, PrimType, Var, s_tir, structural_map, structural_walk, tirx, tvm
from ..ir.analysis import bound_within
from .sparse_iter.context import substitute


def outline_parallel_loops(func: "tirx.PrimFunc", symbol: str) -> tuple["tirx.PrimFunc", dict[Any, "tirx.PrimFunc"]]:
    """``func`` with each parallel loop's body replaced by a call, and the called functions by
    their ``GlobalVar`` (``<symbol>_parallel<k>``); ``func`` and no functions where nothing is
    outlined."""
    attrs = func.attrs if func.attrs is not None else {}
    if not bool(attrs.get("tir.noalias", False)):
        return func, {}
    params = [p for p in func.params if isinstance(p.ty, BufferType)]
    scalar_params = [p for p in func.params if not isinstance(p.ty, BufferType)]
    outlined: dict[Any, tirx.PrimFunc] = {}

    def on_for(loop: Any) -> Any:
        if loop.kind != tirx.ForKind.PARALLEL or loop.thread_binding is not None:
            return loop
        if not stack_only(loop.body):
            return loop  # a workspace allocation needs the device the kernel's entry knows
        loop = _int32_loop(loop)
        inner = bound_within(loop.body)
        free = [v for v in tirx.analysis.undefined_vars(loop.body, []) if not any(v.same_as(b) for b in inner)]
        buffers = [v for v in free if isinstance(v.ty, BufferType)]
        if not all(any(b.same_as(p) for p in params) for b in buffers):
            return loop  # an array the function does not take: maybe a view of another
        scalars = [v for v in free if not isinstance(v.ty, BufferType)]
        if any(str(v.ty.dtype) == "int64" and not any(v.same_as(p) for p in scalar_params) for v in scalars):
            return loop  # NarrowDataType may make it int32 at the call, not in the callee
        for b in buffers:  # the sizes their declarations need
            for v in _vars_of_type(b.ty):
                if not any(v.same_as(s) for s in scalars):
                    scalars.append(v)
        callee = tvm.ir.GlobalVar(f"{symbol}_parallel{len(outlined)}")
        pointers = [Var(f"{b.name}_data", tvm.ir.PointerType(PrimType(str(b.ty.dtype)), "global")) for b in buffers]
        declared = [tirx.DeclBuffer(b, data=p) for b, p in zip(buffers, pointers)]
        body = tirx.SeqStmt([*declared, loop.body]) if declared else loop.body
        outlined[callee] = tirx.PrimFunc([*pointers, *scalars], body, attrs=tvm.ir.make_node("ir.DictAttrs", **{"tir.noalias": True}))
        call = tvm.ir.Call(callee, [b.data for b in buffers] + scalars)
        return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, tirx.Evaluate(call), loop.thread_binding,
                        loop.annotations, loop.step, loop.span)

    body = structural_map(func.body, [(tirx.For, on_for)], order="post")
    if not outlined:
        return func, {}
    return func.with_body(body), outlined


def _int32_loop(loop: Any) -> Any:
    """``loop`` over an int32 variable when its variable is int64, it starts at 0 and its extent
    fits in 32 bits (what ``NarrowDataType`` would make of it); else ``loop`` itself."""
    var = loop.loop_var
    if (str(var.ty.dtype) != "int64" or loop.step is not None
            or not (isinstance(loop.min, tirx.IntImm) and loop.min.value == 0)):
        return loop
    bound = tvm.sym.Analyzer().const_int_bound(loop.extent)
    if bound.min_value < -0x80000000 or bound.max_value > 0x7FFFFFFF:
        return loop
    narrow = Var(var.name, "int32")
    wide = tirx.Cast("int64", narrow)
    return tirx.For(narrow, tirx.IntImm("int32", 0), tirx.Cast("int32", loop.extent), loop.kind,
                    substitute(loop.body, [(var, wide)]),
                    loop.thread_binding, loop.annotations, loop.step, loop.span)


def _vars_of_type(ty: Any) -> list[Var]:
    """The variables in a buffer type's shape, strides and offset."""
    found: list[Var] = []

    def note(node: Any) -> None:
        if isinstance(node, Var) and not isinstance(node.ty, BufferType) and not any(node.same_as(f) for f in found):
            found.append(node)

    for part in (list(ty.shape), list(ty.strides or []), [ty.elem_offset] if ty.elem_offset is not None else []):
        for expr in part:
            structural_walk(expr, note)
    return found


#: The largest allocation TVM's CPU back end puts on the stack (``runtime::kMaxStackAlloca``);
#: a larger one, or one of another scope or of a size known only at run time, becomes a
#: ``TVMBackendAllocWorkspace`` call, which needs the device only the kernel's entry has.
MAX_STACK_BYTES = 1024


def stack_only(stmt: Any) -> bool:
    """Whether every allocation in ``stmt`` becomes a stack slot."""
    ok = [True]

    def check(buffer: Any) -> None:
        ty = buffer.ty
        size = 1
        for extent in ty.shape:
            if not isinstance(extent, tirx.IntImm):
                ok[0] = False
                return
            size *= int(extent.value)
        if str(ty.storage_scope) != "global" or size * tvm.DataType(str(ty.dtype)).bits // 8 > MAX_STACK_BYTES:
            ok[0] = False

    def on_node(node: Any) -> Any:
        if isinstance(node, s_tir.SBlock):
            for b in node.alloc_buffers:
                check(b)
        elif isinstance(node, tirx.AllocBuffer):
            check(node.buffer)
        return None

    structural_walk(stmt, on_node)
    return ok[0]
