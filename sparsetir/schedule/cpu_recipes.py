"""CPU schedule recipes for stage-II CSR SpMM and SDDMM (TVM ``s_tir`` primitives only).

Both recipes take a ``tvm.s_tir.Schedule`` over a stage-II function in the nested-block form
(outer block over rows, inner block over the row's nonzeros ``j`` and the feature axis ``k``) and
apply the best schedule measured on a 2-core Zen CPU (see ``bench/notes/cpu_schedules.md``).
``feat`` must be a compile-time constant that is a multiple of the vector width: the feature loop
is split with ``disable_predication=True`` (predicated splits scalarize vector code).
"""

from __future__ import annotations


from .._tvm import Schedule

__all__ = [
    "bsr_register_tile",
    "schedule_bsr_blocked",
    "schedule_bsr_spmm",
    "schedule_ell_spmm",
    "schedule_rows_parallel",
    "schedule_sddmm",
    "schedule_spmm",
    "schedule_spmm_cpu",
    "spmm_register_tile",
    "vector_width_for",
]


def spmm_register_tile(feat: int, vector_width: int = 8, max_vectors: int = 8) -> int:
    """Number of vector accumulators per row tile: the largest divisor of ``feat / V`` that is
    at most ``max_vectors`` (the tile loop must divide the feature axis exactly)."""
    if feat % vector_width:
        raise ValueError(f"feat={feat} is not a multiple of the vector width {vector_width}")
    vectors = feat // vector_width
    return max(u for u in range(1, min(vectors, max_vectors) + 1) if vectors % u == 0)


def schedule_spmm_cpu(sch: Schedule, block0: str, block1: str, feat: int,
                      vector_width: int = 8, max_vectors: int = 8,
                      cache_write: bool = True, scope: str = "local", parallel: bool = True) -> None:
    """Register-tiled, row-parallel CSR SpMM.

    Before (stage II; the outermost loop is either ``i`` or a row-partition loop ``t`` whose
    body loops over that chunk's rows)::

        for [t:] i:                       block0 (vi)
            for j in range(indptr[vi+1]-indptr[vi]):
                for k in range(feat):     block1 (vj reduce, vk spatial)
                    C[vi, vk] += A[vi, vj] * B[J_indices[vi, vj], vk]

    After (U = ``spmm_register_tile``, V = ``vector_width``)::

        for [t|i] parallel:
            for ko in range(feat // (U*V)):
                C_local[U*V] = 0                      (vectorized init, decompose_reduction)
                for j in range(row length):
                    for ku in unroll(U): for kv in vectorized(V):
                        C_local[ku*V+kv] += A[vi,vj] * B[J_indices[vi,vj], ko*U*V+ku*V+kv]
                for ax in range(U): for v in vectorized(V): C[vi, ...] = C_local[...]

    ``cache_write=False`` accumulates into ``C`` directly. ``scope="global"`` is the fast
    choice: TVM 0.27 keeps a constant-size ``global`` allocation on the stack (LLVM then keeps
    the tile in registers), while a ``local`` one becomes a heap workspace.

    ``vector_width=1`` gives a tile of ``U`` scalars (no vector lanes). Several reduction loops
    between the two blocks (BSR: ``jo, ji``) all go inside the tile loop ``ko``.
    ``parallel=False`` leaves the row loop as it is (``partition_rows(parallel=True)`` made it
    parallel already).
    """
    U = spmm_register_tile(feat, vector_width, max_vectors)
    loops = sch.get_loops(block1)
    k = loops[-1]
    reductions = loops[:-1]  # get_loops stops at block0: the loops between the two blocks
    if vector_width > 1:
        ko, ku, kv = sch.split(k, [None, U, vector_width], disable_predication=True)
        sch.reorder(ko, *reductions, ku, kv)
    else:
        ko, ku = sch.split(k, [None, U], disable_predication=True)
        sch.reorder(ko, *reductions, ku)
    if cache_write:
        cw = sch.cache_write(block1, 0, scope)
        sch.reverse_compute_at(cw, ko)
        if vector_width > 1:
            _, wv = sch.split(sch.get_loops(cw)[-1], [None, vector_width], disable_predication=True)
            sch.vectorize(wv)
    if vector_width > 1:
        sch.vectorize(kv)
    sch.unroll(ku)
    if parallel:
        sch.parallel(sch.get_loops(block0)[0])
    sch.decompose_reduction(block1, reductions[0])


def vector_width_for(feat: int, lanes: int) -> int:
    """The widest power-of-two vector width up to ``lanes`` that divides ``feat`` (1: scalar)."""
    width = lanes
    while width > 1 and feat % width:
        width //= 2
    return width


def schedule_rows_parallel(sch: Schedule, block0: str) -> None:
    """Run the outermost loop above ``block0`` (rows or row chunks) in parallel."""
    sch.parallel(sch.get_loops(block0)[0])


def schedule_spmm(sch: Schedule, block0: str, block1: str, feat: int, lanes: int = 16,
                  max_vectors: int = 8, cache_write: bool = True, parallel: bool = True) -> None:
    """``schedule_spmm_cpu`` with the widest vector width that divides ``feat`` (1: a tile of
    scalars, e.g. SpMV as SpMM with one column) and a ``global``-scope (register) tile."""
    width = vector_width_for(feat, lanes)
    schedule_spmm_cpu(sch, block0, block1, feat, vector_width=width, max_vectors=max_vectors,
                      cache_write=cache_write, scope="global", parallel=parallel)


def schedule_spmm_rowwise(sch: Schedule, block0: str, block1: str, feat: int, lanes: int = 16) -> None:
    """Row-streaming SpMM-shaped reduction: the output row accumulates in memory, one input row
    at a time.

    After (V = vector width)::

        for t parallel: for i:
            C[vi, :] = 0                                   (decompose_reduction)
            for j in row vi: for ko: for kv in vectorized(V):
                C[vi, ko*V+kv] += A[vi,vj] * B[.., ko*V+kv]

    Each input row is read once, front to back, where the register tile of ``schedule_spmm``
    reads it in ``feat / (U*V)`` strided passes. The output row (``feat`` values) stays in L1.
    For rows of 2 KB and more streamed from memory (a 512-wide float32 segment sum) this is
    1.5-2x faster; narrower rows are faster register-tiled (bench/notes/cpu_schedules.md, 0c).
    """
    width = vector_width_for(feat, lanes)
    j, k = sch.get_loops(block1)[-2:]
    if width > 1:
        _, kv = sch.split(k, [None, width], disable_predication=True)
        sch.vectorize(kv)
    schedule_rows_parallel(sch, block0)
    sch.decompose_reduction(block1, j)


def schedule_sddmm(sch: Schedule, block0: str, block1: str, feat: int, lanes: int = 16,
                   tree: bool = False, parallel: bool = True, split: bool = True) -> None:
    """CSR SDDMM (nested form, ``block1`` over ``j`` spatial and ``k`` reduce): vector dot products.

    Before (stage II, the row loop partitioned)::

        for t: for i in chunk t:  block0 (vi)
            for j in row vi: for k in range(feat):  block1
                O[vi, vj] += A[vi, vj] * X[vi, vk] * Y[J_indices[vi, vj], vk]

    After (V = vector width)::

        for t parallel: for i: for j:
            rf[V] = 0; for ko: rf[0:V] += A * X[vi, ko*V:+V] * Y[.., ko*V:+V]      (vector FMA)
            acc[0] = rf[0] + ... + rf[V-1]; O[vi, vj] = acc[0]                     (lane sum)

    ``split=False``: ``block1`` already iterates ``(j, vector, lane)`` over ``lanes`` lanes (``feat``
    is then the padded width), as ``ops.scripts.sddmm_overlap_script`` does.

    Every intermediate is a ``global``-scope buffer that TVM compacts to a few elements and
    LLVM keeps in registers (a ``local`` one would become a heap workspace, see the notes).
    Build with reassociation allowed (``fast-math-reassoc``, ``-nsz``) and LLVM turns the
    lane sum into a shuffle tree. ``tree=True`` spells the tree out as a chain of
    ``rfactor``s halving the lanes; LLVM then routes it through the stack, and it measured
    no faster than the scalar chain (kept for the record).
    """
    width = vector_width_for(feat, lanes)
    if width == 1:
        if parallel:
            schedule_rows_parallel(sch, block0)
        return
    if split:
        _, k = sch.get_loops(block1)[-2:]
        _, ki = sch.split(k, [None, width], disable_predication=True)
    else:  # the script already iterates (vector, lane) with ``lanes`` lanes
        ki = sch.get_loops(block1)[-1]
    rf = sch.rfactor(ki, 0)
    levels = []
    left = width
    while tree and left > 2:
        left //= 2
        _, inner = sch.split(sch.get_loops(block1)[-1], [2, left])
        levels.append(sch.rfactor(inner, 0))
    j_rf = sch.get_loops(rf)[-3]
    for level in levels:
        sch.reverse_compute_at(level, j_rf)
    sch.reverse_compute_at(block1, j_rf)
    sch.vectorize(sch.get_loops(rf)[-1])
    sch.decompose_reduction(rf, sch.get_loops(rf)[-2])
    for level in levels:
        lane, half = sch.get_loops(level)[-2:]
        sch.reorder(half, lane)
        sch.vectorize(lane)
        sch.decompose_reduction(level, half)
    cw = sch.cache_write(block1, 0, "global")
    sch.reverse_compute_at(cw, sch.get_loops(block1)[-2])
    sch.unroll(sch.get_loops(block1)[-1])
    sch.decompose_reduction(block1, sch.get_loops(block1)[-1])
    if parallel:
        schedule_rows_parallel(sch, block0)


def schedule_bsr_spmm(sch: Schedule, block0: str, block1: str, feat: int, lanes: int = 16) -> None:
    """BSR SpMM (``block0`` over a block row's rows ``io, ii``; ``block1`` over ``jo, ji, k``):
    block rows in parallel, each output row register-tiled and vectorized as in SpMM."""
    schedule_spmm(sch, block0, block1, feat, lanes)


#: Vector accumulators a BSR tile may hold: (block rows) x (vectors per row). More spill: on
#: bcsstk16, 3 x 4 was the fastest tile at widths 128 and 512, 3 x 8 was 3-6x slower.
BSR_MAX_ACCUMULATORS = 12


def bsr_register_tile(block: int, feat: int, vector_width: int) -> int:
    """Vectors per row of a BSR register tile: the largest divisor of ``feat / V`` whose tile of
    ``block`` rows stays within ``BSR_MAX_ACCUMULATORS`` (at least 1)."""
    vectors = feat // vector_width
    fits = [u for u in range(1, vectors + 1) if vectors % u == 0 and block * u <= BSR_MAX_ACCUMULATORS]
    return max(fits) if fits else 1


def schedule_bsr_blocked(sch: Schedule, block: str, block_size: int, feat: int, lanes: int = 16) -> None:
    """BSR SpMM over ``[IO, JO, II, JI, K]`` (``format_scripts.bsr_gather_spmm_script``): a
    register tile of all ``b`` output rows of a block row by ``U`` vectors, so each row of B loaded
    for a block column serves the ``b`` rows (CSR loads it once per output row), and the ``b * U``
    independent accumulators hide the FMA latency that bounds CSR at narrow widths.

    After (V = vector width, U = ``bsr_register_tile``)::

        for io (chunked by the caller):
            for ko in range(feat // (U*V)):
                C_tile[b, U*V] = 0
                for jo in range(row's blocks): for ji in range(b):
                    for ii in unroll(b): for ku in unroll(U): for kv in vectorized(V):
                        C_tile[ii, ...] += D[S[io, jo, ii, ji]] * B[jo*b + ji, ...]
                C[io*b : io*b + b, ...] = C_tile

    Measured on bcsstk16 (b = 3, one thread) against the CSR kernel: 1.5x at width 32, 1.4x at
    128, 1.9x at 512.
    """
    width = vector_width_for(feat, lanes)
    tile = bsr_register_tile(block_size, feat, width)
    jo, ii, ji, k = sch.get_loops(block)[-4:]
    if width > 1:
        ko, ku, kv = sch.split(k, [None, tile, width], disable_predication=True)
        sch.reorder(ko, jo, ji, ii, ku, kv)
    else:
        ko, ku = sch.split(k, [None, tile], disable_predication=True)
        sch.reorder(ko, jo, ji, ii, ku)
    cw = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(cw, ko)
    if width > 1:
        _, wv = sch.split(sch.get_loops(cw)[-1], [None, width], disable_predication=True)
        sch.vectorize(wv)
        sch.vectorize(kv)
    sch.unroll(ku)
    sch.unroll(ii)
    sch.decompose_reduction(block, jo)


def schedule_ell_spmm(sch: Schedule, block: str, feat: int, lanes: int = 16, max_vectors: int = 8) -> None:
    """ELL SpMM (one block over ``i, j, k``; ``j`` has a fixed extent): rows in parallel, the
    feature axis register-tiled and vectorized as in ``schedule_spmm_cpu``."""
    i, j, k = sch.get_loops(block)[-3:]
    width = vector_width_for(feat, lanes)
    if width > 1:
        tile = spmm_register_tile(feat, width, max_vectors)
        ko, ku, kv = sch.split(k, [None, tile, width], disable_predication=True)
        sch.reorder(ko, j, ku, kv)
        sch.vectorize(kv)
        sch.unroll(ku)
    sch.parallel(i)
    if width > 1:
        sch.decompose_reduction(block, j)
