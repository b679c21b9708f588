"""Compiling a thread-bound stage-III function for CUDA into a ``CudaProgram``.

TVM compiles the function as it always does (``tvm.compile``); a pass instrument keeps the
module right after ``SplitHostDevice``, where the host function is still plain TIR: buffer
declarations, ``let``s, conditions and one ``call_ffi_kernel`` per kernel launch, with its
arguments and launch dimensions as expressions of the entry's parameters. That host function is
read into the program's steps (``program.py``); the device functions give each kernel's
parameter kinds, and TVM's CUDA module gives the source.

Two checks run here, because TVM does not make them:

- **No host code touches an array.** A loop left unbound runs on the host, where the arrays
  are device pointers (TVM compiles it anyway, into a host function that would crash): the
  host function may only compute sizes and launch kernels.
- **No reduction races** (``transforms/lower_thread_reductions.py``), after lowering the
  cross-thread reductions kernel by kernel.
"""

from __future__ import annotations

from typing import Any, Optional

from ..._tvm import BufferType, TensorLoad, Var, structural_walk, tirx, tvm
from ...errors import LoweringError
from ...transforms.loops_from_zero import loops_from_zero
from ...transforms.lower_thread_reductions import lower_thread_reductions
from .program import BLOCK_TAGS, DYNAMIC_SHARED, GRID_TAGS, POINTER, CudaProgram, KernelSpec, Param

_SPLIT_HOST_DEVICE = "tirx.SplitHostDevice"

_BINARY_OPS = {
    "Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "floordiv", "FloorMod": "floormod", "Div": "div",
    "Mod": "mod", "Min": "min", "Max": "max", "EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">",
    "GE": ">=", "And": "and", "Or": "or",
}


def compile_program(func: "tirx.PrimFunc", target: "tvm.target.Target") -> tuple[CudaProgram, Any]:
    """``func`` (stage III, its loops bound to GPU threads; ``global_symbol`` set) compiled for
    the CUDA ``target``: the program and TVM's executable (which prints the source)."""
    symbol = str(func.attrs["global_symbol"])
    lowered = loops_from_zero(lower_thread_reductions(func))
    captured: dict[str, Any] = {}

    @tvm.instrument.pass_instrument
    class _KeepSplitModule:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            if info.name == _SPLIT_HOST_DEVICE:
                captured["mod"] = mod

    with tvm.transform.PassContext(instruments=[_KeepSplitModule()]):
        executable = tvm.compile(tvm.IRModule({symbol: lowered}), target=target)
    if "mod" not in captured:
        raise LoweringError(f"{symbol}: TVM's pipeline did not run {_SPLIT_HOST_DEVICE}; cannot read its host code")
    mod = captured["mod"]
    imports = executable.mod.imports
    source = str(imports[0].inspect_source()) if imports else ""
    kernels = tuple(_kernel_spec(gv.name_hint, f) for gv, f in mod.functions.items() if _is_kernel(f))
    host = mod[symbol]
    reader = _HostReader(symbol, host, {k.name: k for k in kernels})
    steps = reader.statement(host.body)
    params = tuple(
        Param(str(p.name), "array", str(p.ty.dtype)) if isinstance(p.ty, BufferType)
        else Param(str(p.name), "scalar", str(p.ty.dtype))
        for p in func.params
    )
    arch = str(target.attrs["arch"]) if "arch" in target.attrs else "sm_90"
    return CudaProgram(symbol, source, params, kernels, tuple(steps), arch), executable


def _is_kernel(func: Any) -> bool:
    attrs = func.attrs
    return attrs is not None and "calling_conv" in attrs and int(attrs["calling_conv"]) == 2


def _kernel_spec(name: str, func: Any) -> KernelSpec:
    kinds = []
    for p in func.params:
        if isinstance(p.ty, tvm.ir.PointerType):
            kinds.append(POINTER)
        elif isinstance(p.ty, tvm.ir.PrimType):
            kinds.append(str(p.ty.dtype))
        else:
            raise LoweringError(f"kernel {name}: parameter {p.name} has type {p.ty}, which cannot be passed to a launch")
    return KernelSpec(name, tuple(kinds))


class _HostReader:
    """Reads the host function after ``SplitHostDevice`` into program steps."""

    def __init__(self, symbol: str, host: "tirx.PrimFunc", kernels: dict[str, KernelSpec]) -> None:
        self.symbol = symbol
        self.kernels = kernels
        self.scalars = {str(p.name): p for p in host.params if not isinstance(p.ty, BufferType)}
        self.arrays = [p for p in host.params if isinstance(p.ty, BufferType)]
        self.aliases: list[tuple[Var, Var]] = [(p, p) for p in self.arrays]  # buffer var -> parameter
        self.lets: list[tuple[Var, str]] = []

    def fail(self, message: str) -> None:
        raise LoweringError(f"{self.symbol}: {message}")

    def statement(self, stmt: Any) -> list[Any]:
        if isinstance(stmt, tirx.SeqStmt):
            return [step for s in stmt.seq for step in self.statement(s)]
        if isinstance(stmt, tirx.DeclBuffer):
            self._declare(stmt)
            return []
        if isinstance(stmt, tirx.AttrStmt):
            return self.statement(stmt.body)
        if isinstance(stmt, tirx.LetStmt):  # TVM 0.27's ``Bind``: the variable is bound for what follows
            name = f"{stmt.var.name}#{len(self.lets)}"
            value = self.expr(stmt.value)
            self.lets.append((stmt.var, name))
            body = getattr(stmt, "body", None)
            return [{"let": name, "value": value}] + (self.statement(body) if body is not None else [])
        if isinstance(stmt, tirx.IfThenElse):
            step = {"if": self.expr(stmt.condition), "then": self.statement(stmt.then_case)}
            if stmt.else_case is not None:
                step["else"] = self.statement(stmt.else_case)
            return [step]
        if isinstance(stmt, tirx.AssertStmt):
            step = {"assert": self.expr(stmt.condition), "message": f"the host code's check failed: {stmt.message}"}
            body = getattr(stmt, "body", None)
            return [step] + (self.statement(body) if body is not None else [])
        if isinstance(stmt, tirx.Evaluate):
            return self._evaluate(stmt.value)
        if isinstance(stmt, tirx.BufferStore):
            self.fail(f"the host code stores into '{stmt.buffer.name}' outside every kernel; bind the loops "
                      "around it to GPU threads (sparsetir.build(..., target=\"cuda\") binds unscheduled loop nests)")
        if isinstance(stmt, tirx.For):
            self.fail(f"the host code runs loop '{stmt.loop_var.name}' around its kernels; bind it to GPU "
                      "threads (blockIdx/threadIdx)")
        self.fail(f"the host code holds a {type(stmt).__name__}, which sparsetir's CUDA launcher does not run")
        return []

    def _declare(self, decl: Any) -> None:
        sources = []
        structural_walk(decl.data, [(Var, lambda v: sources.append(v) if isinstance(v.ty, BufferType) else None)])
        root = next((self._root(s) for s in sources if self._root(s) is not None), None)
        if root is None:
            self.fail(f"buffer '{decl.buffer.name}' of the host code views no parameter")
        self.aliases.append((decl.buffer, root))

    def _root(self, buffer: Var) -> Optional[Var]:
        return next((root for alias, root in self.aliases if alias.same_as(buffer)), None)

    def _evaluate(self, call: Any) -> list[Any]:
        if isinstance(call, tirx.IntImm):
            return []
        if not (isinstance(call, tvm.ir.Call) and str(call.op.name) == "tirx.call_ffi_kernel"):
            self.fail(f"the host code evaluates {call}, which sparsetir's CUDA launcher does not run")
        name = str(call.args[0].value)
        spec = self.kernels.get(name)
        if spec is None:
            self.fail(f"the host code launches '{name}', which is not one of its kernels")
        args = list(call.args[1:])
        tags = [str(t) for t in call.attrs.launch_params]
        values, extents = args[: len(spec.params)], args[len(spec.params):]
        if len(extents) != len(tags):
            self.fail(f"launch of {name}: {len(extents)} launch values for {len(tags)} launch parameters")
        dims = dict(zip(tags, extents))
        unknown = set(tags) - set(GRID_TAGS) - set(BLOCK_TAGS) - {DYNAMIC_SHARED}
        if unknown:
            self.fail(f"launch of {name}: unknown launch parameters {sorted(unknown)}")
        one = ["int", 1]
        return [{
            "launch": name,
            "args": [self.expr(a) for a in values],
            "grid": [self.expr(dims[t]) if t in dims else one for t in GRID_TAGS],
            "block": [self.expr(dims[t]) if t in dims else one for t in BLOCK_TAGS],
            "shared": self.expr(dims[DYNAMIC_SHARED]) if DYNAMIC_SHARED in dims else ["int", 0],
        }]

    def expr(self, e: Any) -> Any:
        kind = type(e).__name__
        if isinstance(e, tirx.IntImm):
            return ["int", int(e.value)]
        if isinstance(e, tirx.FloatImm):
            return ["float", float(e.value)]
        if isinstance(e, TensorLoad):
            self.fail(f"the host code reads '{e.source.name}' outside every kernel; bind the loops around it "
                      "to GPU threads")
        if isinstance(e, Var):
            return self._var(e)
        if kind in _BINARY_OPS:
            return [_BINARY_OPS[kind], self.expr(e.a), self.expr(e.b)]
        if isinstance(e, tirx.Not):
            return ["not", self.expr(e.a)]
        if isinstance(e, tirx.Select):
            return ["select", self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)]
        if isinstance(e, tirx.Cast):
            return ["cast", str(e.ty.dtype), self.expr(e.value)]
        if isinstance(e, tvm.ir.Call) and str(e.op.name) == "tirx.buffer_data":
            root = self._root(e.args[0])
            if root is None:
                self.fail(f"a kernel argument points into '{e.args[0].name}', which is not a parameter")
            return ["data", str(root.name)]
        if isinstance(e, tvm.ir.Call) and str(e.op.name) == "tirx.if_then_else":
            return ["select", self.expr(e.args[0]), self.expr(e.args[1]), self.expr(e.args[2])]
        self.fail(f"the host code computes {e} ({kind}), which sparsetir's CUDA launcher does not evaluate")
        return None

    def _var(self, var: Var) -> Any:
        for bound, name in reversed(self.lets):
            if var.same_as(bound):
                return ["var", name]
        if str(var.name) in self.scalars and self.scalars[str(var.name)].same_as(var):
            return ["var", str(var.name)]
        for array in self.arrays:
            for axis, extent in enumerate(array.ty.shape):
                if isinstance(extent, Var) and extent.same_as(var):
                    return ["dim", str(array.name), axis]
        self.fail(f"the host code uses '{var.name}', which is neither a parameter nor an array dimension")
        return None


__all__ = ["compile_program"]
