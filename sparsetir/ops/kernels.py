"""Building the scheduled kernels of ``sparsetir.ops``, once per configuration.

Every kernel goes the way a user's script goes: a stage-I script (``scripts.py``) is scheduled
by the default CPU rules (``schedule/default``: nnz-balanced row chunks, register tiles, vector
dot products), every step through ``sparsetir.Schedule`` with the same sparse guards and
checks as a user's, and ``sparsetir.build`` compiles it. What the rules cannot know comes on
top: SDDMM's scaling iteration fused into the dot product's row loop and store
(``fuse_rows.py``), the gathered BSR format's block tile (``schedule/bsr_blocked.py``), and
prefetching chosen per matrix (``KernelKey.prefetch``). A ``KernelLibrary`` keeps the resulting ``Kernel`` per
configuration (operation, dtype, constant widths), so a configuration is scheduled and
compiled on its first use only; the compiled code itself also lives in the build cache.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Optional, Union


from ..driver import build, constraints_of
from ..ir.function import SparseFunction
from ..ir.stage2 import Stage2Function
from .._tvm import tvm
from ..runtime.build import kernel_of, load_stored
from ..runtime.cache import KernelCache, default_cache
from ..runtime.disk_cache import DiskCache
from ..runtime.kernel import Kernel
from ..runtime.target import host_target
from ..schedule.bsr_blocked import schedule_bsr_blocked
from ..schedule.default import Choices, default_schedule
from ..schedule.default.dot_product import REASSOCIATING as DOT_PRODUCT_OPTIONS, dot_product
from ..schedule.default.register_tile import vector_width
from ..schedule.schedule import Schedule
from ..transforms import pipeline
from ..transforms.horizontal_fusion import horizontal_fusion
from ..transforms.partition import partition_rows
from ..transforms.prefetch_gathered_rows import prefetch_gathered_rows
from . import format_scripts, scripts
from .fuse_rows import fold_row_epilogue, fuse_row_loops


@dataclass(frozen=True)
class KernelKey:
    """One kernel configuration: the operation and its compile-time constants."""

    op: str
    dtype: str
    feat: int = 0
    block: tuple[int, int] = (0, 0)
    prefetch: bool = False
    prefetch_lines: int = 0  # with ``prefetch``: the first lines of each row only (0: all)
    widths: tuple[int, ...] = ()  # ELL bucket widths (``hybrid_spmm``)
    target: str = "llvm"  # "cuda": the GPU kernel (``ops/cuda/kernels.py``)
    #: The default rules' parameters (``spmm``: what ``ops.tune_spmm`` chose). Only what acts on
    #: the schedule is read here (and how far ahead rows are prefetched, ``prefetch_distance``);
    #: whether to prefetch is ``prefetch`` above, and the chunks per thread
    #: are the launch's (its partition), so keys hold those two at their defaults.
    choices: Choices = Choices()


def vector_lanes(dtype: str) -> int:
    """SIMD lanes of one 512-bit vector (AVX-512) for ``dtype``."""
    return 64 // (8 if dtype == "float64" else 4)


def _stage2(script: SparseFunction) -> Stage2Function:
    """A kernel script at stage II, as LowerSparseIter writes it."""
    return pipeline.lower(script, until=pipeline.STAGE_II)


#: Where a maker leaves the ``Schedule`` it scheduled with (``schedule_of``); ``None``: nowhere.
Kept = Optional[list[Schedule]]


def _keep(sch: Schedule, kept: Kept) -> Schedule:
    if kept is not None:
        kept.append(sch)
    return sch


def _default(script: Union[SparseFunction, Stage2Function], kept: Kept = None, choices: Choices = Choices()) -> Stage2Function:
    """``script`` (stage I, or stage II) scheduled by the default CPU rules (``schedule/default``):
    exactly what ``sparsetir.build`` does with a user's script of the same computation."""
    return _keep(default_schedule(script, choices).schedule, kept).func


def _partitioned(f2: Stage2Function, block: Union[str, list[str]], parallel: bool = False) -> Stage2Function:
    return partition_rows(f2, block, "part", "P", parallel=parallel)


def _scheduled(f2: Stage2Function, apply: Callable[[Schedule], None], kept: Kept = None) -> Stage2Function:
    """``f2`` scheduled by ``apply`` through ``sparsetir.Schedule``: each step is guarded,
    checked and recorded as a user's is."""
    sch = Schedule(f2, round_trip=False)  # tests/script/test_stage2_roundtrip.py round-trips every ops kernel
    apply(sch)
    return _keep(sch, kept).func


#: LLVM may reassociate floating-point sums (and ignore the sign of zero) in kernels built with
#: this target: the lane sum of a vector dot product then becomes a shuffle tree
#: (``llvm.vector.reduce.fadd``) instead of a chain of scalar adds, 2x faster for SDDMM.
#: NaN and infinity semantics are kept (no ``nnan``/``ninf``).
REASSOCIATING = DOT_PRODUCT_OPTIONS


def make_spmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """CSR SpMM by the default rules under ``key.choices``: nnz-balanced row chunks,
    register-tiled over the feature axis (an awkward width as whole tiles plus a tail:
    ``split_width``)."""
    return _default(scripts.spmm_script(key.feat, key.dtype), kept, key.choices)


def make_sddmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """CSR SDDMM: nnz-balanced row chunks, vector dot products (the ``dot_product`` rule's
    steps), each scaled by ``A`` once as it is stored (the scaling iteration joins the row
    loop, ``fuse_row_loops``, and then the store of the lane sum, ``fold_row_epilogue``); a
    width that is not a multiple of the vector (and whose widest dividing vector is under half
    of one) as whole vectors, the last one overlapping (``scripts.sddmm_overlap_script``)."""
    lanes = vector_lanes(key.dtype)
    blocks = ("sddmm0", "sddmm_scale0")
    width = vector_width(key.feat, lanes)
    if key.feat > lanes and width < lanes // 2:
        script = scripts.sddmm_overlap_script(key.feat, key.dtype, lanes)
        width, split = lanes, False
    else:
        script = scripts.sddmm_script(key.feat, key.dtype)
        split = True
    f2 = fuse_row_loops(_partitioned(_stage2(script), list(blocks), parallel=True), *blocks)
    if width > 1:
        f2 = _scheduled(f2, lambda s: dot_product(s, "sddmm1", width, split=split), kept)
    # With vectors, the schedule leaves one store of each dot product (the lane sum's copy out):
    # the scaling folds into it. Scalar dot products accumulate in O, so the scaling stays a loop.
    return fold_row_epilogue(f2, "sddmm_scale0", "O") if width > 1 else f2


def make_segment_sum(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """Segment sum by the default rules: balanced segment chunks; wide rows streamed
    (``streamed_rows``), narrower ones register-tiled; awkward widths split (``split_width``)."""
    return _default(scripts.segment_sum_script(key.feat, key.dtype), kept)


def make_bsr_spmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """BSR SpMM by the default rules: block rows in chunks of equal blocks, each output row
    register-tiled over the block's columns (awkward widths split: ``split_width``)."""
    br, bc = key.block
    return _default(scripts.bsr_spmm_script(br, bc, key.feat, key.dtype), kept)


def make_ell_spmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """ELL SpMM by the default rules: rows in parallel, register-tiled over the feature axis
    (awkward widths split: ``split_width``)."""
    return _default(scripts.ell_spmm_script(key.feat, key.dtype), kept)


def make_bsr_gather_spmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """BSR SpMM with values gathered from CSR (``format_scripts``): chunks of block rows with
    equal work in parallel, the block row's output tile in registers (``schedule_bsr_blocked``)."""
    b = key.block[0]
    f2 = _partitioned(_stage2(format_scripts.bsr_gather_spmm_script(b, key.feat, key.dtype)), "bsr0", parallel=True)
    return _scheduled(f2, lambda s: schedule_bsr_blocked(s, "bsr1", b, key.feat, vector_lanes(key.dtype)), kept)


def make_csr_gather_spmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """CSR SpMM with values gathered through a position map (``format_scripts``), by the default
    rules (scheduled as CSR SpMM)."""
    return _default(format_scripts.csr_gather_spmm_script(key.feat, key.dtype), kept)


def make_hybrid_spmm(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """ELL-bucket SpMM (``format_scripts.hybrid_spmm_script``): the empty rows' zeroing and every
    bucket fused into one parallel loop over owner chunks (``horizontal_fusion``), then the
    default rules (each bucket register-tiled as CSR SpMM is, the zeroing vectorized)."""
    if not key.widths:
        raise ValueError("hybrid_spmm needs at least one bucket width")
    blocks = ["zero0"] + [f"ell_{w}0" for w in key.widths]
    return _default(horizontal_fusion(_stage2(format_scripts.hybrid_spmm_script(key.widths, key.feat, key.dtype)),
                                      blocks), kept)


def make_softmax(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """Sparse softmax in one kernel, by the default rules: nnz-balanced row chunks in parallel
    (the GPU path's; the CPU ops run ``softmax_shift``, NumPy's exp, ``softmax_scale``: see
    ``ops._softmax_values``)."""
    return _default(scripts.softmax_script(key.dtype), kept)


def make_softmax_shift(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """Each stored entry minus its row's maximum, by the default rules: nnz-balanced row chunks."""
    return _default(scripts.softmax_shift_script(key.dtype), kept)


def make_softmax_scale(key: KernelKey, kept: Kept = None) -> Stage2Function:
    """Each stored entry over its row's sum, in place, by the default rules: nnz-balanced row chunks."""
    return _default(scripts.softmax_scale_script(key.dtype), kept)


#: Operations whose kernels are built with ``REASSOCIATING`` target options.
REASSOCIATED_OPS = frozenset({"sddmm"})
#: Operations that can prefetch the rows of a gathered dense operand (``KernelKey.prefetch``):
#: the operand's parameter name.
PREFETCHED_OPERAND = {"sddmm": "y", "spmm": "b"}

#: Each operation's maker: the kernel of a configuration at stage II, scheduled; given a list,
#: it appends the ``Schedule`` it scheduled with (``schedule_of``).
MAKERS: dict[str, Callable[[KernelKey, Kept], Stage2Function]] = {
    "spmm": make_spmm,
    "sddmm": make_sddmm,
    "segment_sum": make_segment_sum,
    "bsr_spmm": make_bsr_spmm,
    "ell_spmm": make_ell_spmm,
    "softmax": make_softmax,
    "softmax_shift": make_softmax_shift,
    "softmax_scale": make_softmax_scale,
    "bsr_gather_spmm": make_bsr_gather_spmm,
    "hybrid_spmm": make_hybrid_spmm,
    "csr_gather_spmm": make_csr_gather_spmm,
}


def schedule_of(key: KernelKey) -> Schedule:
    """The ``sparsetir.Schedule`` the kernel of ``key`` is scheduled with, its ``history`` the
    steps (scheduled again, not compiled: a few milliseconds), for ``sparsetir.explore``.

    Its ``func`` is the kernel's stage II for the operations the default rules schedule alone.
    Where ops rewrite around the schedule it is the schedule's part only: SDDMM's and the
    gathered BSR's ``initial`` is the row-partitioned stage II the steps start from, and
    SDDMM's scaling is folded in after them (``fold_row_epilogue``); prefetching
    (``KernelKey.prefetch``) is a stage-III rewrite after lowering. An SDDMM too narrow for a
    vector has no steps (no schedule is made)."""
    if key.op not in MAKERS:
        raise ValueError(f"no ops kernel '{key.op}'; the operations are {', '.join(sorted(MAKERS))}")
    kept: list[Schedule] = []
    f2 = MAKERS[key.op](key, kept)
    return kept[-1] if kept else Schedule(f2, round_trip=False)


def _target(key: KernelKey) -> "tvm.target.Target":
    return host_target(**(REASSOCIATING if key.op in REASSOCIATED_OPS else {}))


def _build(key: KernelKey, cache: Optional[KernelCache]) -> Kernel:
    """Schedule and compile the kernel of ``key``."""
    target = _target(key)
    f2 = MAKERS[key.op](key)
    if not key.prefetch:
        return build(f2, target=target, cache=cache)
    # The prefetch is a stage-III rewrite, so lower here and keep stage II's structure checks.
    f3 = prefetch_gathered_rows(pipeline.lower(f2), PREFETCHED_OPERAND[key.op], "indptr", "indices", "nnz",
                                distance=key.choices.prefetch_distance, max_lines=key.prefetch_lines)
    return build(f3, target=target, constraints=constraints_of(f2), cache=cache)


class KernelLibrary:
    """Compiled ops kernels by configuration; thread-safe, one build per configuration.

    A configuration compiled by an earlier process is loaded from the disk cache without being
    scheduled again: the cache keeps an alias from the configuration (and the target, which
    names the CPU) to the compiled program's entry."""

    def __init__(self, cache: Optional[KernelCache] = None):
        self.cache = cache
        self._kernels: dict[KernelKey, Kernel] = {}
        self._lock = threading.Lock()
        self.loads = 0

    def get(self, key: KernelKey) -> Kernel:
        """The kernel for ``key``: loaded from disk, or scheduled and compiled, on first use."""
        kernel = self._kernels.get(key)
        if kernel is not None:
            return kernel
        with self._lock:
            kernel = self._kernels.get(key)
            if kernel is None:
                disk = (self.cache if self.cache is not None else default_cache).disk
                name = f"sparsetir.ops {key!r} for {_target(key)}"
                kernel = self._load(disk, name, key)
                if kernel is None:
                    kernel = _build(key, self.cache)
                    if disk is not None and kernel.compiled.key is not None:
                        disk.alias(name, kernel.compiled.key)
                self._kernels[key] = kernel
            return kernel

    def _load(self, disk: Optional[DiskCache], name: str, key: KernelKey) -> Optional[Kernel]:
        stored_key = disk.resolve(name) if disk is not None else None
        stored = disk.load(stored_key) if stored_key is not None else None
        if stored is None:
            return None
        self.loads += 1
        return kernel_of(load_stored(stored, stored.func, _target(key)), stored.constraints)

    def __len__(self) -> int:
        return len(self._kernels)

    def clear(self) -> None:
        """Forget the kernels (the build cache keeps the compiled code)."""
        with self._lock:
            self._kernels.clear()
