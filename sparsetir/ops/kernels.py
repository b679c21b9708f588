"""Building the scheduled kernels of ``sparsetir.ops``, once per configuration.

Every kernel goes the normal way: a stage-I script (``scripts.py``) is lowered to stage II,
its row loop is split into nnz-balanced chunks (``partition_rows``), the stage-II function is
scheduled through ``sparsetir.Schedule`` (the recipes of ``sparsetir/schedule/cpu_recipes.py``;
every step passes the same sparse guards and checks as a user's, and is recorded), and
``sparsetir.build`` compiles it. A ``KernelLibrary`` keeps the resulting ``Kernel`` per
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
from ..schedule import cpu_recipes as recipes
from ..schedule.schedule import Schedule
from ..transforms import pipeline
from ..transforms.horizontal_fusion import horizontal_fusion
from ..transforms.partition import partition_rows
from . import format_scripts, scripts
from .fuse_rows import fold_row_epilogue, fuse_row_loops
from .prefetch import prefetch_gathered_rows


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


def vector_lanes(dtype: str) -> int:
    """SIMD lanes of one 512-bit vector (AVX-512) for ``dtype``."""
    return 64 // (8 if dtype == "float64" else 4)


def _stage2(script: SparseFunction) -> Stage2Function:
    """A kernel script at stage II, as LowerSparseIter writes it (where the recipes start)."""
    return pipeline.lower(script, until=pipeline.STAGE_II)


def _partitioned(f2: Stage2Function, block: Union[str, list[str]], parallel: bool = False) -> Stage2Function:
    return partition_rows(f2, block, "part", "P", parallel=parallel)


def _scheduled(f2: Stage2Function, apply: Callable[[Schedule], None]) -> Stage2Function:
    """``f2`` scheduled by ``apply`` through ``sparsetir.Schedule``: the recipes call TVM's
    primitives by name on it, and each step is guarded, checked and recorded as a user's is."""
    sch = Schedule(f2, round_trip=False)  # tests/script/test_stage2_roundtrip.py round-trips every ops kernel
    apply(sch)
    return sch.func


#: LLVM may reassociate floating-point sums (and ignore the sign of zero) in kernels built with
#: this target: the lane sum of a vector dot product then becomes a shuffle tree
#: (``llvm.vector.reduce.fadd``) instead of a chain of scalar adds, 2x faster for SDDMM.
#: NaN and infinity semantics are kept (no ``nnan``/``ninf``).
REASSOCIATING = {"fast-math-reassoc": True, "fast-math-nsz": True, "fast-math-contract": True}


def split_width(feat: int, lanes: int, max_vectors: int = 8) -> Optional[tuple[int, int]]:
    """``(main, tail)`` when the feature axis should run as a multiple of full vectors plus a
    tail; None when ``feat`` tiles in one pass over a row (16, 20, 24, 40, 128, 512, ...).

    A single tiling uses the widest vector dividing ``feat`` and a tile that divides it
    exactly: at an awkward width that means narrow vectors or scalars and many passes over each
    row's nonzeros (127: one scalar per pass, 127 passes, 10x slower than at 128). Split, the
    main part gets full vectors and the tail (under one vector) a tile of its own: one extra
    pass. Measured on cora SpMM: 127 0.79 -> 0.08 ms, 100 0.083 -> 0.053, 33 0.110 -> 0.031."""
    width = recipes.vector_width_for(feat, lanes)
    if feat <= lanes or width == lanes:
        return None
    vectors = feat // width
    if vectors == recipes.spmm_register_tile(feat, width, max_vectors):
        return None  # one pass already
    return feat - feat % lanes, feat % lanes


def _split_spmm_like(script: SparseFunction, name: str, main: int, tail: int,
                     lanes: int) -> Stage2Function:
    """An SpMM-shaped main + tail script (row iterations ``name`` and ``name_tail``): one
    nnz-balanced partition for both, each part register-tiled at its own width."""
    f2 = _partitioned(_stage2(script), [f"{name}0", f"{name}_tail0"], parallel=True)

    def schedule(s: Schedule) -> None:
        recipes.schedule_spmm(s, f"{name}0", f"{name}1", main, lanes, parallel=False)
        recipes.schedule_spmm(s, f"{name}_tail0", f"{name}_tail1", tail, lanes, max_vectors=lanes, parallel=False)

    return _scheduled(f2, schedule)


def make_spmm(key: KernelKey) -> Stage2Function:
    """CSR SpMM: nnz-balanced row chunks, register-tiled over the feature axis."""
    lanes = vector_lanes(key.dtype)
    split = split_width(key.feat, lanes)
    if split is None:
        f2 = _partitioned(_stage2(scripts.spmm_script(key.feat, key.dtype)), "spmm0")
        return _scheduled(f2, lambda s: recipes.schedule_spmm(s, "spmm0", "spmm1", key.feat, lanes))
    main, tail = split
    return _split_spmm_like(scripts.spmm_split_script(main, tail, key.dtype), "spmm", main, tail, lanes)


def make_sddmm(key: KernelKey) -> Stage2Function:
    """CSR SDDMM: nnz-balanced row chunks, vector dot products, each scaled by ``A`` once as it
    is stored (the scaling iteration joins the row loop, ``fuse_row_loops``, and then the store
    of the lane sum, ``fold_row_epilogue``); a width that is not a multiple of the vector (and
    whose widest dividing vector is under half of one) as whole vectors, the last one
    overlapping (``scripts.sddmm_overlap_script``)."""
    lanes = vector_lanes(key.dtype)
    blocks = ("sddmm0", "sddmm_scale0")
    width = recipes.vector_width_for(key.feat, lanes)
    if key.feat > lanes and width < lanes // 2:
        script = scripts.sddmm_overlap_script(key.feat, key.dtype, lanes)
        padded, width = lanes * (key.feat // lanes + 1), lanes
        schedule = lambda s: recipes.schedule_sddmm(s, "sddmm0", "sddmm1", padded, lanes, split=False, parallel=False)
    else:
        script = scripts.sddmm_script(key.feat, key.dtype)
        schedule = lambda s: recipes.schedule_sddmm(s, "sddmm0", "sddmm1", key.feat, lanes, parallel=False)
    f2 = _scheduled(fuse_row_loops(_partitioned(_stage2(script), list(blocks), parallel=True), *blocks),
                    schedule)
    # With vectors, the schedule leaves one store of each dot product (the lane sum's copy out):
    # the scaling folds into it. Scalar dot products accumulate in O, so the scaling stays a loop.
    return fold_row_epilogue(f2, "sddmm_scale0", "O") if width > 1 else f2


#: Rows at least this wide (bytes) are summed streaming (``schedule_spmm_rowwise``), narrower
#: ones register-tiled: measured crossover between 1 KB (tile 1.5x faster) and 2 KB (streaming
#: 1.5x faster on cora, 1.3x on pubmed).
STREAMED_ROW_BYTES = 2048


def make_segment_sum(key: KernelKey) -> Stage2Function:
    """Segment sum: balanced segment chunks, vectorized over the feature axis; wide rows streamed,
    awkward widths as full vectors plus a tail (``split_width``)."""
    lanes = vector_lanes(key.dtype)
    if key.feat * (64 // lanes) >= STREAMED_ROW_BYTES:
        f2 = _partitioned(_stage2(scripts.segment_sum_script(key.feat, key.dtype)), "segment_sum0")
        return _scheduled(f2, lambda s: recipes.schedule_spmm_rowwise(s, "segment_sum0", "segment_sum1", key.feat, lanes))
    split = split_width(key.feat, lanes)
    if split is None:
        f2 = _partitioned(_stage2(scripts.segment_sum_script(key.feat, key.dtype)), "segment_sum0")
        return _scheduled(f2, lambda s: recipes.schedule_spmm(s, "segment_sum0", "segment_sum1", key.feat, lanes))
    main, tail = split
    return _split_spmm_like(scripts.segment_sum_split_script(main, tail, key.dtype), "segment_sum", main, tail,
                            lanes)


def make_bsr_spmm(key: KernelKey) -> Stage2Function:
    """BSR SpMM: block rows in parallel, the feature axis vectorized (awkward widths as full
    vectors plus a tail)."""
    br, bc = key.block
    lanes = vector_lanes(key.dtype)
    split = split_width(key.feat, lanes)
    if split is None:
        f2 = _stage2(scripts.bsr_spmm_script(br, bc, key.feat, key.dtype))
        return _scheduled(f2, lambda s: recipes.schedule_bsr_spmm(s, "bsr_spmm0", "bsr_spmm1", key.feat, lanes))
    main, tail = split
    f2 = _stage2(scripts.bsr_spmm_split_script(br, bc, main, tail, key.dtype))

    def schedule(s: Schedule) -> None:
        recipes.schedule_bsr_spmm(s, "bsr_spmm0", "bsr_spmm1", main, lanes)
        recipes.schedule_spmm(s, "bsr_spmm_tail0", "bsr_spmm_tail1", tail, lanes, max_vectors=lanes)

    return _scheduled(f2, schedule)


def make_ell_spmm(key: KernelKey) -> Stage2Function:
    """ELL SpMM: rows in parallel, register-tiled over the feature axis (awkward widths as full
    vectors plus a tail)."""
    lanes = vector_lanes(key.dtype)
    split = split_width(key.feat, lanes)
    if split is None:
        f2 = _stage2(scripts.ell_spmm_script(key.feat, key.dtype))
        return _scheduled(f2, lambda s: recipes.schedule_ell_spmm(s, "ell_spmm0", key.feat, lanes))
    main, tail = split
    f2 = _stage2(scripts.ell_spmm_split_script(main, tail, key.dtype))

    def schedule(s: Schedule) -> None:
        recipes.schedule_spmm(s, "ell_spmm0", "ell_main0", main, lanes)
        recipes.schedule_spmm(s, "ell_spmm_tail0", "ell_tail0", tail, lanes, max_vectors=lanes)

    return _scheduled(f2, schedule)


def make_bsr_gather_spmm(key: KernelKey) -> Stage2Function:
    """BSR SpMM with values gathered from CSR (``format_scripts``): chunks of block rows with
    equal work in parallel, the block row's output tile in registers (``schedule_bsr_blocked``)."""
    b = key.block[0]
    f2 = _partitioned(_stage2(format_scripts.bsr_gather_spmm_script(b, key.feat, key.dtype)), "bsr0", parallel=True)
    return _scheduled(f2, lambda s: recipes.schedule_bsr_blocked(s, "bsr1", b, key.feat, vector_lanes(key.dtype)))


def make_csr_gather_spmm(key: KernelKey) -> Stage2Function:
    """CSR SpMM with values gathered through a position map (``format_scripts``): scheduled as
    CSR SpMM (nnz-balanced chunks, register tiles)."""
    f2 = _partitioned(_stage2(format_scripts.csr_gather_spmm_script(key.feat, key.dtype)), "spmm0")
    return _scheduled(f2, lambda s: recipes.schedule_spmm(s, "spmm0", "spmm1", key.feat, vector_lanes(key.dtype)))


def make_hybrid_spmm(key: KernelKey) -> Stage2Function:
    """ELL-bucket SpMM (``format_scripts.hybrid_spmm_script``): the empty rows' zeroing and every
    bucket fused into one parallel loop over owner chunks (``horizontal_fusion``), each bucket
    register-tiled as CSR SpMM is."""
    if not key.widths:
        raise ValueError("hybrid_spmm needs at least one bucket width")
    lanes = vector_lanes(key.dtype)
    blocks = ["zero0"] + [f"ell_{w}0" for w in key.widths]
    f2 = horizontal_fusion(_stage2(format_scripts.hybrid_spmm_script(key.widths, key.feat, key.dtype)), blocks)

    def schedule(s: Schedule) -> None:
        width = recipes.vector_width_for(key.feat, lanes)
        if width > 1:
            _, kv = s.split(s.get_loops("zero0")[-1], [None, width], disable_predication=True)
            s.vectorize(kv)
        for w in key.widths:
            recipes.schedule_spmm(s, f"ell_{w}0", f"ell_{w}1", key.feat, lanes, parallel=False)

    return _scheduled(f2, schedule)


def make_softmax(key: KernelKey) -> Stage2Function:
    """Sparse softmax in one kernel: nnz-balanced row chunks in parallel (the GPU path's; the
    CPU ops run ``softmax_shift``, NumPy's exp, ``softmax_scale``: see ``ops._softmax_values``)."""
    return _partitioned(_stage2(scripts.softmax_script(key.dtype)), "softmax0", parallel=True)


def make_softmax_shift(key: KernelKey) -> Stage2Function:
    """Each stored entry minus its row's maximum: nnz-balanced row chunks in parallel."""
    return _partitioned(_stage2(scripts.softmax_shift_script(key.dtype)), "softmax0", parallel=True)


def make_softmax_scale(key: KernelKey) -> Stage2Function:
    """Each stored entry over its row's sum, in place: nnz-balanced row chunks in parallel."""
    return _partitioned(_stage2(scripts.softmax_scale_script(key.dtype)), "softmax0", parallel=True)


#: Operations whose kernels are built with ``REASSOCIATING`` target options.
REASSOCIATED_OPS = frozenset({"sddmm"})
#: Operations that can prefetch the rows of a gathered dense operand (``KernelKey.prefetch``):
#: the operand's parameter name.
PREFETCHED_OPERAND = {"sddmm": "y", "spmm": "b"}

MAKERS: dict[str, Callable[[KernelKey], Stage2Function]] = {
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
                                max_lines=key.prefetch_lines)
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
