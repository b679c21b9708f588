"""The stage-I scripts behind ``sparsetir.ops``, one factory per kernel.

Each factory returns a ``SparseFunction`` whose compile-time constants (value dtype, feature
width, block shape) are captured from the factory's arguments, so the scheduler sees constant
loop extents; matrix sizes and nnz stay symbolic, so one kernel serves every matrix.
"""

from __future__ import annotations

from ..ir.function import SparseFunction
from ..script import tir as T


def spmm_script(feat: int, dtype: str) -> SparseFunction:
    """C = A @ B, A in CSR (m x n), B dense (n x feat)."""

    @T.prim_func
    def spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
             m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_spmm", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        J_detach = T.dense_fixed(n)
        K = T.dense_fixed(feat)
        A = T.match_sparse_buffer(a, (I, J), dtype)
        B = T.match_sparse_buffer(b, (J_detach, K), dtype)
        C = T.match_sparse_buffer(c, (I, K), dtype)
        with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:
            with T.init():
                C[i, k] = 0.0
            C[i, k] = C[i, k] + A[i, j] * B[j, k]

    return spmm


def split_spmm_script(feat: int, dtype: str) -> SparseFunction:
    """C = A @ B with each row of CSR A cut into pieces of consecutive nonzeros (the GPU's answer
    to long rows, ``runtime/cuda/row_split.py``): the first iteration sums each piece into a row
    of the workspace ``W`` (one per piece), the second sums each row's pieces into ``C``.

    ``pieces`` (m + 1) points each row to its pieces, ``piece_ptr`` (npieces + 1) each piece to
    its nonzeros; the values and column indices are A's own, in A's order, since a row's pieces
    are consecutive runs of its nonzeros. A row without nonzeros has one empty piece.
    """

    @T.prim_func
    def split_spmm(a: T.handle, b: T.handle, c: T.handle, w: T.handle, pieces: T.handle, piece_ptr: T.handle,
                   indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32, npieces: T.int32, maxp: T.int32):
        T.func_attr({"global_symbol": "ops_split_spmm", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        P = T.dense_variable(I, (maxp, npieces), pieces, "int32")
        J = T.sparse_variable(P, (n, nnz), (piece_ptr, indices), "int32")
        J_detach = T.dense_fixed(n)
        K = T.dense_fixed(feat)
        A = T.match_sparse_buffer(a, (I, P, J), dtype)
        B = T.match_sparse_buffer(b, (J_detach, K), dtype)
        C = T.match_sparse_buffer(c, (I, K), dtype)
        W = T.match_sparse_buffer(w, (I, P, K), dtype)
        with T.sp_iter([I, P, J, K], "SSRS", "pieces") as [i, p, j, k]:
            with T.init():
                W[i, p, k] = 0.0
            W[i, p, k] = W[i, p, k] + A[i, p, j] * B[j, k]
        with T.sp_iter([I, P, K], "SRS", "rows") as [i, p, k]:
            with T.init():
                C[i, k] = 0.0
            C[i, k] = C[i, k] + W[i, p, k]

    return split_spmm


def sddmm_script(feat: int, dtype: str) -> SparseFunction:
    """O[i, j] = A[i, j] * dot(X[i, :], Y[j, :]) on the stored entries of CSR A.

    The dot product is summed first and scaled by ``A[i, j]`` once, in an iteration of its own:
    multiplying ``A`` into every partial product would turn ``A = inf`` with a zero partial
    product (or partial products of both signs) into NaN where the definition gives ``inf``.
    The two iterations share the row partition, so each part scales the rows it just summed.
    """

    @T.prim_func
    def sddmm(a: T.handle, x: T.handle, y: T.handle, o: T.handle, indptr: T.handle, indices: T.handle,
              m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_sddmm", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        J_detach = T.dense_fixed(n)
        K = T.dense_fixed(feat)
        A = T.match_sparse_buffer(a, (I, J), dtype)
        X = T.match_sparse_buffer(x, (I, K), dtype)
        Y = T.match_sparse_buffer(y, (J_detach, K), dtype)
        O = T.match_sparse_buffer(o, (I, J), dtype)
        with T.sp_iter([I, J, K], "SSR", "sddmm") as [i, j, k]:
            with T.init():
                O[i, j] = 0.0
            O[i, j] = O[i, j] + X[i, k] * Y[j, k]
        with T.sp_iter([I, J], "SS", "sddmm_scale") as [i, j]:
            O[i, j] = A[i, j] * O[i, j]

    return sddmm


def coo_sddmm_script(feat: int, dtype: str) -> SparseFunction:
    """SDDMM as ``sddmm_script`` with the matrix's entries in COO order: each nonzero's row is
    read from ``rows`` (``rows[p]``: the row of nonzero ``p``, made once per matrix) instead of
    searched for in ``indptr``. The GPU kernel gives nonzeros to lanes in any order, and on an
    H200 the binary search per nonzero cost half its time (``bench/notes/gpu.md``).
    """

    @T.prim_func
    def coo_sddmm(a: T.handle, x: T.handle, y: T.handle, o: T.handle, rows: T.handle, indices: T.handle,
                  m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_sddmm", "tir.noalias": True, "sparse_tir_level": 2})
        NZ = T.dense_fixed(nnz)
        M = T.dense_fixed(m)
        N = T.dense_fixed(n)
        K = T.dense_fixed(feat)
        R = T.match_sparse_buffer(rows, (NZ,), "int32")
        C = T.match_sparse_buffer(indices, (NZ,), "int32")
        A = T.match_sparse_buffer(a, (NZ,), dtype)
        X = T.match_sparse_buffer(x, (M, K), dtype)
        Y = T.match_sparse_buffer(y, (N, K), dtype)
        O = T.match_sparse_buffer(o, (NZ,), dtype)
        with T.sp_iter([NZ, K], "SR", "sddmm") as [p, k]:
            with T.init():
                O[p] = 0.0
            O[p] = O[p] + X[R[p], k] * Y[C[p], k]
        with T.sp_iter([NZ], "S", "sddmm_scale") as [p]:
            O[p] = A[p] * O[p]

    return coo_sddmm


def sddmm_overlap_script(feat: int, dtype: str, lanes: int) -> SparseFunction:
    """SDDMM for a width that is not a multiple of ``lanes`` (but at least ``lanes``): the dot
    product runs over whole vectors, the last one shifted back to end at the row's end.

    Vector ``ko`` of ``last + 1`` covers columns ``[ko * lanes, ko * lanes + lanes)``, except the
    last, which covers ``[feat - lanes, feat)`` and overlaps the one before it by ``shift``
    columns; those lanes are selected away (a select, not a multiply by 0, so an infinity there
    cannot become NaN). Every load stays inside the row, and the shift is the same for all lanes
    of a vector (it depends on ``ko`` only), so each vector is one contiguous load. Split into a
    main part and a tail pass instead, SDDMM at width 127 took 3x as long: the tail re-gathers Y.
    As in ``sddmm_script``, ``A`` scales the finished dot product.
    """
    tail = feat % lanes
    last = feat // lanes
    shift = lanes - tail

    @T.prim_func
    def sddmm(a: T.handle, x: T.handle, y: T.handle, o: T.handle, indptr: T.handle, indices: T.handle,
              m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_sddmm", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        J_detach = T.dense_fixed(n)
        K = T.dense_fixed(feat)
        K_vector = T.dense_fixed(last + 1)
        K_lane = T.dense_fixed(lanes)
        A = T.match_sparse_buffer(a, (I, J), dtype)
        X = T.match_sparse_buffer(x, (I, K), dtype)
        Y = T.match_sparse_buffer(y, (J_detach, K), dtype)
        O = T.match_sparse_buffer(o, (I, J), dtype)
        with T.sp_iter([I, J, K_vector, K_lane], "SSRR", "sddmm") as [i, j, ko, kl]:
            with T.init():
                O[i, j] = 0.0
            O[i, j] = O[i, j] + T.select(
                ko < last or kl >= shift,
                X[i, ko * lanes + kl - shift * T.cast(ko == last, "int32")]
                * Y[j, ko * lanes + kl - shift * T.cast(ko == last, "int32")],
                T.cast(0.0, dtype),
            )
        with T.sp_iter([I, J], "SS", "sddmm_scale") as [i, j]:
            O[i, j] = A[i, j] * O[i, j]

    return sddmm


def segment_sum_script(feat: int, dtype: str) -> SparseFunction:
    """out[i, k] = sum of values[offsets[i]:offsets[i+1], k]."""

    @T.prim_func
    def segment_sum(x: T.handle, out: T.handle, offsets: T.handle, m: T.int32, max_len: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_segment_sum", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.dense_variable(I, (max_len, nnz), offsets, "int32")
        K = T.dense_fixed(feat)
        X = T.match_sparse_buffer(x, (I, J, K), dtype)
        OUT = T.match_sparse_buffer(out, (I, K), dtype)
        with T.sp_iter([I, J, K], "SRS", "segment_sum") as [i, j, k]:
            with T.init():
                OUT[i, k] = 0.0
            OUT[i, k] = OUT[i, k] + X[i, j, k]

    return segment_sum


def bsr_spmm_script(br: int, bc: int, feat: int, dtype: str) -> SparseFunction:
    """C = A @ B, A in BSR with (br x bc) blocks (mb x nb blocks), B dense (nb*bc x feat)."""

    @T.prim_func
    def bsr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
                 mb: T.int32, nb: T.int32, nnzb: T.int32):
        T.func_attr({"global_symbol": "ops_bsr_spmm", "tir.noalias": True, "sparse_tir_level": 2})
        IO = T.dense_fixed(mb)
        JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices), "int32")
        II = T.dense_fixed(br)
        JI = T.dense_fixed(bc)
        M = T.dense_fixed(mb * br)
        N = T.dense_fixed(nb * bc)
        K = T.dense_fixed(feat)
        A = T.match_sparse_buffer(a, (IO, JO, II, JI), dtype)
        B = T.match_sparse_buffer(b, (N, K), dtype)
        C = T.match_sparse_buffer(c, (M, K), dtype)
        with T.sp_iter([IO, II, JO, JI, K], "SSRRS", "bsr_spmm") as [io, ii, jo, ji, k]:
            with T.init():
                C[io * br + ii, k] = 0.0
            C[io * br + ii, k] = C[io * br + ii, k] + A[io, jo, ii, ji] * B[jo * bc + ji, k]

    return bsr_spmm


def ell_spmm_script(feat: int, dtype: str) -> SparseFunction:
    """C = A @ B, A in ELL: ``width`` stored (column, value) pairs in every row."""

    @T.prim_func
    def ell_spmm(a: T.handle, b: T.handle, c: T.handle, indices: T.handle,
                 m: T.int32, n: T.int32, width: T.int32):
        T.func_attr({"global_symbol": "ops_ell_spmm", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_fixed(I, (n, width), indices, "int32", sorted=False)
        J_detach = T.dense_fixed(n)
        K = T.dense_fixed(feat)
        A = T.match_sparse_buffer(a, (I, J), dtype)
        B = T.match_sparse_buffer(b, (J_detach, K), dtype)
        C = T.match_sparse_buffer(c, (I, K), dtype)
        with T.sp_iter([I, J, K], "SRS", "ell_spmm") as [i, j, k]:
            with T.init():
                C[i, k] = 0.0
            C[i, k] = C[i, k] + A[i, j] * B[j, k]

    return ell_spmm


def softmax_shift_script(dtype: str) -> SparseFunction:
    """B[i, j] = A[i, j] - max(A[i, :]) on the stored entries of CSR A: the first step of the CPU
    softmax (``ops._softmax_values``), which exponentiates the result with NumPy."""

    @T.prim_func
    def softmax_shift(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle,
                      m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_softmax_shift", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        A = T.match_sparse_buffer(a, (I, J), dtype)
        B = T.match_sparse_buffer(b, (I, J), dtype)
        ROW_MAX = T.alloc_sparse_buffer((I,), dtype=dtype)
        with T.sp_iter([I], "S", "softmax") as [i]:
            with T.sp_iter([J], "R", "row_max") as [j]:
                with T.init():
                    ROW_MAX[i] = T.min_value(dtype)
                ROW_MAX[i] = T.max(ROW_MAX[i], A[i, j])
            with T.sp_iter([J], "S", "shift") as [j]:
                B[i, j] = A[i, j] - ROW_MAX[i]

    return softmax_shift


def softmax_scale_script(dtype: str) -> SparseFunction:
    """B[i, j] = B[i, j] / sum(B[i, :]) on the stored entries of CSR B, in place: the last step
    of the CPU softmax."""

    @T.prim_func
    def softmax_scale(b: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_softmax_scale", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        B = T.match_sparse_buffer(b, (I, J), dtype)
        ROW_SUM = T.alloc_sparse_buffer((I,), dtype=dtype)
        with T.sp_iter([I], "S", "softmax") as [i]:
            with T.sp_iter([J], "R", "row_sum") as [j]:
                with T.init():
                    ROW_SUM[i] = 0.0
                ROW_SUM[i] = ROW_SUM[i] + B[i, j]
            with T.sp_iter([J], "S", "normalize") as [j]:
                B[i, j] = B[i, j] / ROW_SUM[i]

    return softmax_scale


def softmax_script(dtype: str) -> SparseFunction:
    """Row-wise softmax over the stored entries of CSR A (same pattern out)."""

    @T.prim_func
    def softmax(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle,
                m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_softmax", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        A = T.match_sparse_buffer(a, (I, J), dtype)
        B = T.match_sparse_buffer(b, (I, J), dtype)
        ROW_MAX = T.alloc_sparse_buffer((I,), dtype=dtype)
        ROW_SUM = T.alloc_sparse_buffer((I,), dtype=dtype)
        # Each exponential is computed once, into B, then summed and scaled there: exp is the
        # costly step (a libm call per entry), and a row's entries stay in L1 between passes.
        with T.sp_iter([I], "S", "softmax") as [i]:
            with T.sp_iter([J], "R", "row_max") as [j]:
                with T.init():
                    ROW_MAX[i] = T.min_value(dtype)
                ROW_MAX[i] = T.max(ROW_MAX[i], A[i, j])
            with T.sp_iter([J], "S", "exp") as [j]:
                B[i, j] = T.exp(A[i, j] - ROW_MAX[i])
            with T.sp_iter([J], "R", "row_sum") as [j]:
                with T.init():
                    ROW_SUM[i] = 0.0
                ROW_SUM[i] = ROW_SUM[i] + B[i, j]
            with T.sp_iter([J], "S", "normalize") as [j]:
                B[i, j] = B[i, j] / ROW_SUM[i]

    return softmax
