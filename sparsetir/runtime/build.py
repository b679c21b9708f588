"""Compiling a stage-III function into a callable ``Kernel``.

This is the last step of ``sparsetir.build``: once stages I and II are lowered, the stage-III
``tvm.tirx.PrimFunc`` and the structure constraints of its sparse axes come here. TVM compiles
the function; for the CPU, the result is linked into a kernel library (the disk cache's entry,
``disk_cache.py``), loaded, and its parallel loops pointed at sparsetir's launcher
(``parallel.py``). Without a C compiler the kernel stays in memory as TVM compiled it. For
a GPU target, TVM's CUDA source and host code become a ``runtime.cuda`` program and launcher.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .._tvm import structural_walk, tirx, tvm, tvm_ffi
from ..errors import ArgumentError, DeviceError, LoweringError
from .cache import Compiled, KernelCache, default_cache
from .constraints import Constraint, used_by
from .cpu_form import cpu_module
from . import cuda
from .disk_cache import DiskCache, StoredKernel, default_root
from .kernel import Kernel
from .parallel import launcher
from .signature import signature_of
from .target import TargetLike, as_target, is_gpu
from .threads import call_off_workers
from .toolchain import ToolchainError, c_compiler
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
    check_expansion(prim_func)
    constraints = used_by(constraints, prim_func)
    symbol = name or _global_symbol(prim_func) or "main"
    func = prim_func.with_attr("global_symbol", symbol)
    compiled = (cache if cache is not None else default_cache).get_or_compile(
        func, tgt, list(constraints), compile_function, load_stored)
    return kernel_of(compiled, constraints, func)


#: The most statements and expressions that a kernel may have once its unrolled loops are expanded
#: (a copy of the body per iteration, nested loops multiplied). TVM's and LLVM's time grows faster
#: than linearly in it: ``T.unroll(1024)`` of a 300-node row loop (300,000 nodes) took 23 s to
#: compile, ``T.unroll(4096)`` over 5 minutes, 100,000 nodes 7 s. The ops' largest kernel (the
#: fused hybrid SpMM) has 20,000. Vectorized loops are not copied (TVM makes vector operations).
MAX_EXPANDED_NODES = 100_000


def check_expansion(func: "tirx.PrimFunc") -> None:
    """Refuse a kernel whose unrolled loops would expand it to more than ``MAX_EXPANDED_NODES``
    nodes, naming the loop that contributes the most."""
    size, loop, loop_size = expanded_size(func.body)
    if size > MAX_EXPANDED_NODES and loop is not None:
        raise LoweringError(
            f"the unrolled loop '{loop.loop_var.name}' of extent {int(loop.extent.value)}{_span_text(loop.span)} expands "
            f"to {loop_size} statements and expressions (a copy of its body per iteration, nested unrolled loops "
            f"multiplied), and the kernel to {size}, more than the {MAX_EXPANDED_NODES} that "
            f"sparsetir compiles; unroll a split of it instead")


def expanded_size(stmt: Any) -> tuple[int, Any, int]:
    """(the number of nodes of ``stmt`` once its unrolled loops of constant extent are expanded,
    the outermost such loop that expands to the most, and that loop's size)."""
    total, worst = [0], [None, 0]

    def on_node(node: Any) -> Any:
        total[0] += 1
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.UNROLLED and isinstance(node.extent, tirx.IntImm):
            size = max(int(node.extent.value), 1) * expanded_size(node.body)[0]
            total[0] += size
            if size > worst[1]:
                worst[:] = [node, size]
            return tvm_ffi.WalkResult.SKIP  # the body is counted in size
        return None

    structural_walk(stmt, on_node, order="pre")
    return total[0], worst[0], worst[1]


def _span_text(span: Any) -> str:
    """`` (file:line)`` for a span with a source, else ``""``."""
    source = getattr(getattr(span, "source_name", None), "name", None) if span is not None else None
    return f" ({source}:{span.line})" if source else ""


def kernel_of(compiled: Compiled, constraints: Sequence[Constraint], func: Optional["tirx.PrimFunc"] = None) -> Kernel:
    """The validating ``Kernel`` around ``compiled``, with the parameter names of ``func`` (a
    function equal to the compiled one, whose names may differ; default: the compiled one)."""
    func = func if func is not None else compiled.func
    symbol = str(func.attrs["global_symbol"])
    signature = signature_of(func, symbol)
    device = "cuda" if is_gpu(compiled.target) else "cpu"
    return Kernel(signature, CallValidator(signature, list(constraints), device=device), compiled, func)


def compile_function(func: "tirx.PrimFunc", target: "tvm.target.Target", constraints: Sequence[Constraint],
                     disk: Optional[DiskCache], key: str) -> Compiled:
    """Compile one function. For the CPU with a C compiler at hand, link it into a library
    (stored in ``disk`` under ``key`` when there is a disk) and load that; else keep TVM's
    in-memory module, whose entry lookup makes LLVM generate machine code now."""
    symbol = str(func.attrs["global_symbol"])
    if is_gpu(target):
        return compile_cuda(func, target)
    executable = tvm.compile(cpu_module(func, symbol), target=target)
    if not is_gpu(target) and c_compiler() is not None:
        try:
            library = (disk if disk is not None else DiskCache(enabled=False)).store(key, executable, func, constraints)
        except ToolchainError:
            pass  # linking failed: run the in-memory module
        else:
            return _loaded(library, func, target, key, executable)
    entry = executable[symbol]
    return Compiled(func=func, target=target, entry=entry, invoke=_off_workers(entry), executable=executable)


def compile_cuda(func: "tirx.PrimFunc", target: "tvm.target.Target") -> Compiled:
    """Compile a thread-bound function for CUDA: its ``CudaProgram`` (source, kernels, launch
    steps) and a launcher that compiles the source with nvcc for the device it first runs on
    (kept in the cache directory) and launches the kernels on the current torch stream."""
    program, executable = cuda.compile_program(func, target)
    directory = default_root() / "cuda"
    launcher = cuda.Launcher(program, lambda arch: cuda.cached_image(program.source, arch, directory))
    return Compiled(func=func, target=target, entry=launcher, invoke=_on_device(launcher), executable=executable,
                    program=program)


def _on_device(launcher: Any) -> Any:
    """``launcher`` with its errors as sparsetir's: a launch its arguments do not allow is an
    ``ArgumentError``, a device that cannot run it (no driver or nvcc, a driver call failing) a
    ``DeviceError``."""
    name = launcher.program.name

    def invoke(args: Any) -> None:
        try:
            launcher(args)
        except cuda.ProgramError as err:
            raise ArgumentError(f"{name}(): {err}") from err
        except (cuda.CudaError, cuda.NvccError) as err:
            raise DeviceError(f"{name}(): {err}") from err

    return invoke


def load_stored(stored: StoredKernel, func: "tirx.PrimFunc", target: "tvm.target.Target") -> Compiled:
    """A kernel found on disk, loaded (``func`` is the program asked for: equal to the stored
    one, with the caller's source spans)."""
    return _loaded(stored.library, func, target, stored.key, None)


def _loaded(library: Any, func: "tirx.PrimFunc", target: "tvm.target.Target", key: str, executable: Any) -> Compiled:
    module = tvm.runtime.load_module(str(library))
    entry = module[str(func.attrs["global_symbol"])]
    active = launcher()
    invoke = _direct(entry) if active is not None and active.attach(library) else _off_workers(entry)
    return Compiled(func=func, target=target, entry=entry, invoke=invoke, executable=executable,
                    library=library, key=key)


def _direct(entry: Any) -> Any:
    return lambda args: entry(*args)


def _off_workers(entry: Any) -> Any:
    return lambda args: call_off_workers(entry, args)


def _global_symbol(func: "tirx.PrimFunc") -> Optional[str]:
    attrs = func.attrs
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return None
