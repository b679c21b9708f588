"""The block register tile of the gathered BSR SpMM (``ops.format_scripts.bsr_gather_spmm_script``).

Every other CPU kernel of ``sparsetir.ops`` is scheduled by the default rules
(``schedule/default``), as a user's script is. This recipe stays hand-written because its gain
comes from the format: all ``b`` output rows of a block row share each row of B loaded for a
block column, which the default rules (one output row per tile) do not see.
"""

from __future__ import annotations

from .._tvm import Schedule
from .default.register_tile import tile_row, vector_width

__all__ = ["BSR_MAX_ACCUMULATORS", "bsr_register_tile", "schedule_bsr_blocked"]


#: Vector accumulators a BSR tile may hold: (block rows) x (vectors per row). More spill: on
#: bcsstk16, 3 x 4 was the fastest tile at widths 128 and 512, 3 x 8 was 3-6x slower.
BSR_MAX_ACCUMULATORS = 12


def bsr_register_tile(block: int, feat: int, width: int) -> int:
    """Vectors per row of a BSR register tile: the largest divisor of ``feat / width`` whose tile
    of ``block`` rows stays within ``BSR_MAX_ACCUMULATORS`` (at least 1)."""
    vectors = feat // width
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
    width = vector_width(feat, lanes)
    tile = bsr_register_tile(block_size, feat, width)
    jo, ii, ji, k = sch.get_loops(block)[-4:]
    tile_row(sch, block, k, [jo, ji, ii], width, tile)
    sch.unroll(ii)
    sch.decompose_reduction(block, jo)
