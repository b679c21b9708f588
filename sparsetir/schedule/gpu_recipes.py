"""GPU schedule recipes for the ``sparsetir.ops`` kernels (TVM ``s_tir`` primitives through
``sparsetir.Schedule``, so every step is guarded, checked and recorded).

The designs are SparseTIR's published ones, kept simple:

- **SpMM-shaped kernels** (CSR SpMM, segment sum, BSR and ELL SpMM): *a row per group of
  lanes*, a warp for a 128-wide float32 row. The feature axis runs across the row's ``L``
  threads (``threadIdx.x``), each loading ``V`` consecutive values at once (a 16-byte vector
  where the width allows) and accumulating them in registers (``feature_layout``); every lane
  walks the row's nonzeros, so each nonzero's row of the dense operand is read as coalesced
  lines. Rows fill a block of 256 threads (``threadIdx.y``) and go to blocks in order
  (``blockIdx.x``). No atomics: each output element has one writer. Rows wider than a block's
  threads are done in passes over the row (``chunks``).
- **SpMV**: SpMM with one column, where lanes over features would idle: a warp per row with
  the row's *nonzeros* across the lanes and a warp reduction (TVM's cross-thread reduction) of
  the lanes' partial sums.
- **SDDMM**: *nonzero-balanced*, over the nonzeros in COO order (``ops/scripts.coo_sddmm_script``:
  each nonzero's row read from an array, where a fused CSR loop would search ``indptr`` for
  it); a group of ``L`` lanes computes the dot products of ``SDDMM_NONZEROS`` consecutive
  nonzeros across the feature axis (``SDDMM_RUN`` consecutive values per lane for widths up to
  128) and reduces each with warp shuffles. The scaling by ``A`` is a second, elementwise
  kernel over the nonzeros.
- **Softmax**: a thread per row (its three passes over the row in registers).

Feature widths are compile-time constants (one kernel per width, as on the CPU); matrix sizes
stay symbolic. Timings on an H200 and what they led to (SpMM's row split, SDDMM's runs of 4
values per lane): ``bench/notes/gpu.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from .schedule import Schedule

__all__ = [
    "ROWS",
    "FeatureLayout",
    "feature_layout",
    "schedule_ell_spmm",
    "schedule_hybrid_spmm",
    "schedule_rows_per_thread",
    "schedule_sddmm",
    "schedule_spmm",
    "schedule_spmv",
]

#: Threads per block the recipes aim for.
BLOCK_THREADS = 256
#: A warp.
WARP = 32
#: Rows (or nonzeros) per block when each takes a warp: ``BLOCK_THREADS // WARP``.
ROWS = BLOCK_THREADS // WARP
#: The widest load of one lane, in bytes (``float4``).
VECTOR_BYTES = 16
#: SDDMM on rows of at most ``WARP * SDDMM_RUN`` values: the consecutive values each lane sums.
SDDMM_RUN = 4
#: SDDMM: the consecutive nonzeros each group of lanes computes (two dot products in flight;
#: on an H200, 1.64x sampled_addmm against 1.40x with one and 1.54x with four).
SDDMM_NONZEROS = 2


@dataclass(frozen=True)
class FeatureLayout:
    """How a row's ``feat`` values are spread over its threads: ``lanes`` threads, each loading
    ``vector`` consecutive values, in ``chunks`` passes over the row (the last one partly idle
    unless ``lanes`` divides the vectors); ``rows`` rows per block."""

    feat: int
    vector: int
    lanes: int
    chunks: int

    @property
    def rows(self) -> int:
        """Rows per block."""
        return max(1, BLOCK_THREADS // self.lanes)


def feature_layout(feat: int, dtype: str) -> FeatureLayout:
    """The layout of a width: the widest vector (up to 16 bytes) dividing ``feat``, a lane per
    vector, in one pass while that is at most a block's threads (else passes of a block)."""
    if feat < 1:
        raise ValueError(f"feature width must be positive, got {feat}")
    itemsize = 8 if dtype == "float64" else 4
    vector = VECTOR_BYTES // itemsize
    while feat % vector:
        vector //= 2
    vectors = feat // vector
    if vectors <= BLOCK_THREADS:
        return FeatureLayout(feat, vector, vectors, 1)
    return FeatureLayout(feat, vector, BLOCK_THREADS, -(-vectors // BLOCK_THREADS))


def schedule_spmm(sch: Schedule, row_block: str, inner_block: str, feat: int, dtype: str) -> None:
    """A warp per row (module docs) for an SpMM-shaped stage-II kernel: ``row_block`` over the
    rows (one or more row loops: BSR's block row and row in the block), ``inner_block`` over the
    row's nonzeros (one or more reduction loops) and the feature axis last.

    Before::

        for i in range(m):                                  row_block
            for j in range(row length): for k in range(feat):    inner_block
                C[vi, vk] += A[vi, vj] * B[J_indices[vi, vj], vk]

    After (``feature_layout``: L lanes, V-wide vectors, C passes; R rows per block)::

        for io in blockIdx.x: for ii in threadIdx.y(R):       row vi = io * R + ii
            for kc in range(C): for kl in threadIdx.x(L):
                acc[V] = 0
                for j: for kv in vectorized(V):
                    acc[kv] += A[vi, vj] * B[.., kc*L*V + kl*V + kv]
                C[vi, kc*L*V + kl*V : +V] = acc                 (a vector store)

    The pass loop stays outside the lanes: under them, the accumulator of a lane would hold
    values ``L * V`` apart, and TVM's write-back of a cache covers the box around them, values
    of other lanes included (found by ``runtime/cuda/simulate.py``).
    """
    layout = feature_layout(feat, dtype)
    rows = sch.get_loops(row_block)
    row = rows[0] if len(rows) == 1 else sch.fuse(*rows)
    loops = sch.get_loops(inner_block)
    k = loops[-1]
    reductions = loops[:-1]  # get_loops stops at the row block: the loops between the two blocks
    kv_outer, kv = sch.split(k, [None, layout.vector], disable_predication=True)
    kc, kl = sch.split(kv_outer, [None, layout.lanes])
    sch.reorder(kc, kl, *reductions, kv)
    acc = sch.cache_write(inner_block, 0, "local")
    sch.reverse_compute_at(acc, kl)
    io, ii = sch.split(row, [None, layout.rows])
    sch.bind(io, "blockIdx.x")
    sch.bind(ii, "threadIdx.y")
    sch.bind(kl, "threadIdx.x")
    if layout.vector > 1:
        sch.vectorize(kv)
    sch.decompose_reduction(inner_block, reductions[0])
    if layout.vector > 1:
        _, wv = sch.split(sch.get_loops(acc)[-1], [None, layout.vector], disable_predication=True)
        sch.vectorize(wv)


def schedule_ell_spmm(sch: Schedule, block: str, feat: int, dtype: str) -> None:
    """ELL SpMM (one block over rows ``i``, the row's fixed number of slots ``j`` and the feature
    axis ``k``): a warp per row with the features across the lanes, as ``schedule_spmm``."""
    layout = feature_layout(feat, dtype)
    i, j, k = sch.get_loops(block)[-3:]
    kv_outer, kv = sch.split(k, [None, layout.vector], disable_predication=True)
    kc, kl = sch.split(kv_outer, [None, layout.lanes])
    sch.reorder(kc, kl, j, kv)
    acc = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(acc, kl)
    io, ii = sch.split(i, [None, layout.rows])
    sch.bind(io, "blockIdx.x")
    sch.bind(ii, "threadIdx.y")
    sch.bind(kl, "threadIdx.x")
    if layout.vector > 1:
        sch.vectorize(kv)
    sch.decompose_reduction(block, j)
    if layout.vector > 1:
        _, wv = sch.split(sch.get_loops(acc)[-1], [None, layout.vector], disable_predication=True)
        sch.vectorize(wv)


def schedule_hybrid_spmm(sch: Schedule, widths: tuple[int, ...], feat: int, dtype: str) -> None:
    """The GPU's hybrid SpMM (``ops/format_scripts.hybrid_slots_spmm_script``): the empty rows'
    zeroing a thread per element; each bucket of
    width ``w`` a row per group of lanes, as ELL SpMM, with the loop over its ``w`` slots
    unrolled (a fixed trip count: the gathers of a row's rows of the dense operand are issued
    together, where a CSR row's walk waits on each); the long rows' pieces a piece per group of
    lanes into the workspace, unrolled alike, then each long row's pieces summed as SpMM's rows.
    Every iteration is a kernel of its own; no atomics (each output element has one writer)."""
    zero = sch.fuse(*sch.get_loops("zero0"))
    outer, inner = sch.split(zero, [None, BLOCK_THREADS])
    sch.bind(outer, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    for w in widths:
        schedule_spmm(sch, f"ell_{w}0", f"ell_{w}1", feat, dtype)
        sch.unroll(sch.get_loops(f"ell_{w}1_update")[-2])  # (.., one piece, slot, vector lane)
    schedule_spmm(sch, "pieces0", "pieces1", feat, dtype)
    sch.unroll(sch.get_loops("pieces1_update")[-2])
    schedule_spmm(sch, "long0", "long1", feat, dtype)


def schedule_spmv(sch: Schedule, row_block: str, inner_block: str) -> None:
    """SpMV as SpMM with one column (module docs): rows to warps, each row's nonzeros across the
    lanes, the lanes' partial sums reduced by TVM's cross-thread reduction (whose per-thread
    start at the init value also covers an empty row).

    After::

        for io in blockIdx.x: for ii in threadIdx.y(R):           row vi = io * R + ii
            for jl in threadIdx.x(32):
                part = 0; for jo: if jo*32 + jl < row length: part += A * x[..]
                y[vi] = warp_sum(part)                             (lane 0 stores)
    """
    (row,) = sch.get_loops(row_block)
    j, k = sch.get_loops(inner_block)[-2:]
    jo, jl = sch.split(j, [None, WARP])
    sch.reorder(k, jo, jl)  # TVM reduces across threads when the reduction loops are innermost
    io, ii = sch.split(row, [None, ROWS])
    sch.bind(io, "blockIdx.x")
    sch.bind(ii, "threadIdx.y")
    sch.bind(jl, "threadIdx.x")


def schedule_sddmm(sch: Schedule, dot_block: str, scale_block: str, feat: int) -> None:
    """Nonzero-balanced SDDMM (module docs) at stage III: ``dot_block`` over (nonzero ``p``,
    feature ``k``) reducing ``k``; ``scale_block`` over ``p``, scaling the dot products in place.
    Each nonzero's row must be read, not searched for (``coo_sddmm_script``).

    After (N = ``SDDMM_NONZEROS``)::

        for po in blockIdx.x: for pi in threadIdx.y(R): for pn in range(N):
            p = (po * R + pi) * N + pn                          (if p < nnz)
            for kl in threadIdx.x(L):
                part = 0; for ko: part += X[rows[p], ko*L + kl] * Y[indices[p], ko*L + kl]
                (widths up to 128 that 4 divides: L = feat / 4 lanes, each summing
                 the 4 values kl*4 .. kl*4+3, unrolled)
                O[p] = warp_sum(part)                            (lane 0 stores)
        for qo in blockIdx.x: for qi in threadIdx.x(256):        nonzero q
            O[q] = A[q] * O[q]

    The ``pn`` loop stays a plain loop (nvcc unrolls it): TVM's cross-thread reduction inside a
    loop unrolled by the schedule leaves its shuffle buffer undeclared.
    """
    p, k = sch.get_loops(dot_block)
    if feat % SDDMM_RUN == 0 and feat // SDDMM_RUN <= WARP:
        # Narrow rows: each lane sums a run of SDDMM_RUN consecutive values, so a warp holds
        # several nonzeros and each reduction has fewer shuffle steps (2x faster at width 32
        # on an H200 than a lane per value; bench/notes/gpu.md).
        lanes = feat // SDDMM_RUN
        kl, run = sch.split(k, [lanes, SDDMM_RUN])
        sch.unroll(run)
    else:
        lanes = min(WARP, _power_of_two_at_least(feat))
        _, kl = sch.split(k, [None, lanes])
    po, pi, _ = sch.split(p, [None, BLOCK_THREADS // lanes, SDDMM_NONZEROS])
    sch.bind(po, "blockIdx.x")
    sch.bind(pi, "threadIdx.y")
    sch.bind(kl, "threadIdx.x")
    (q,) = sch.get_loops(scale_block)
    qo, qi = sch.split(q, [None, BLOCK_THREADS])
    sch.bind(qo, "blockIdx.x")
    sch.bind(qi, "threadIdx.x")


def schedule_rows_per_thread(sch: Schedule, row_block: str, locals_: tuple[str, ...] = ()) -> None:
    """A thread per row: the row loop above ``row_block`` in blocks of ``BLOCK_THREADS``; the
    row's intermediates written by ``row_block`` and named in ``locals_`` kept in registers."""
    (row,) = sch.get_loops(row_block)
    outer, inner = sch.split(row, [None, BLOCK_THREADS])
    sch.bind(outer, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    writes = [str(region.source.name) for region in sch.get(sch.get_sblock(row_block)).writes]
    for name in locals_:
        sch.set_scope(sch.get_sblock(row_block), writes.index(name), "local")


def _power_of_two_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p
