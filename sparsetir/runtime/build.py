"""Compiling a stage-III function into a callable ``Kernel``.

This is the last step of ``sparsetir.build``: once stages I and II are lowered, the stage-III
``tvm.tirx.PrimFunc`` and the structure constraints of its sparse axes come here.
"""

from __future__ import annotations

from typing import Optional, Sequence

from .._tvm import tirx, tvm
from .alignment import relax_param_alignment
from .cache import Compiled, KernelCache, default_cache
from .constraints import Constraint
from .kernel import Kernel
from .signature import signature_of
from .target import TargetLike, as_target, is_gpu
from .validate import CallValidator


def build_stage3(
    prim_func: "tirx.PrimFunc",
    constraints: Sequence[Constraint],
    target: TargetLike = "llvm",
    name: Optional[str] = None,
    cache: Optional[KernelCache] = None,
) -> Kernel:
    """Compile ``prim_func`` for ``target`` (cached) and wrap it as a validating ``Kernel``.

    ``constraints`` describe the sparse structure arrays among the parameters
    (``constraints_from_axes``). ``name`` is the symbol of the compiled function; it defaults
    to the function's ``global_symbol`` attribute, else ``"main"``.
    """
    if not isinstance(prim_func, tirx.PrimFunc):
        raise TypeError(f"build_stage3 expects a tvm.tirx.PrimFunc, got {type(prim_func).__name__}")
    tgt = as_target(target)
    symbol = name or _global_symbol(prim_func) or "main"
    func = prim_func.with_attr("global_symbol", symbol)
    signature = signature_of(func, symbol)
    device = "cuda" if is_gpu(tgt) else "cpu"
    validator = CallValidator(signature, list(constraints), device=device)
    compiled = (cache if cache is not None else default_cache).get_or_compile(func, tgt, _compile)
    return Kernel(signature, validator, compiled)


def _compile(func: "tirx.PrimFunc", target: "tvm.target.Target") -> Compiled:
    """Compile one function; looking the entry up makes LLVM generate machine code now."""
    symbol = str(func.attrs["global_symbol"])
    module = tvm.IRModule({symbol: relax_param_alignment(func)})
    executable = tvm.compile(module, target=target)
    return Compiled(func=func, target=target, executable=executable, entry=executable[symbol])


def _global_symbol(func: "tirx.PrimFunc") -> Optional[str]:
    attrs = func.attrs
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return None
