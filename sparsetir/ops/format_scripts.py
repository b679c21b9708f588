"""The stage-I scripts of ``ops.spmm`` on other formats than CSR.

They compute on a format's structure (``sparsetir.formats``: BSR blocks, ELL buckets), built once
per sparse structure, but read the values from the caller's own CSR value array ``D`` through a
position map ``S`` that the conversion also built: the stored slot ``s`` holds ``D[S[s]]``, and a
slot that stands for no entry (a zero cell of a block, a padding slot) has ``S = -1``. A call
therefore converts nothing: it passes the matrix's current values, as the CSR kernels do, and a
matrix whose values change between calls (an attention matrix) still costs no preprocess per
call. (``format_decompose`` is the compiler's general form: its preprocess iterations copy values
into the new formats; these scripts fold that copy into the compute as a gather.)

A padding slot contributes nothing at all (its product is selected away, not multiplied by 0),
so a non-finite entry of ``X`` in a padding column cannot turn into NaN. A zero cell of a BSR
block is a stored zero, as in SciPy's BSR: ``0 * inf`` there is NaN.
"""

from __future__ import annotations

from ..ir.function import SparseFunction
from ..runtime.cuda.hybrid_layout import long_width
from ..script import parse
from ..script import tir as T


def bsr_gather_spmm_script(block: int, feat: int, dtype: str) -> SparseFunction:
    """C = A @ B for A in BSR (``block`` x ``block`` blocks, values gathered from CSR values ``D``).

    The block's rows are iterated inside the block-column loop (``[IO, JO, II, JI, K]``), so a
    schedule can keep all ``block`` output rows of a block row in registers and use each loaded
    row of B for all of them (``schedule.bsr_blocked``). C and B are the padded
    matrices: ``mb * block`` rows and ``nb * block`` rows.
    """

    @T.prim_func
    def bsr_spmm(data: T.handle, src: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
                 mb: T.int32, nb: T.int32, nnzb: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_bsr_gather_spmm", "tir.noalias": True, "sparse_tir_level": 2})
        IO = T.dense_fixed(mb)
        JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices), "int32")
        II = T.dense_fixed(block)
        JI = T.dense_fixed(block)
        NZ = T.dense_fixed(nnz)
        M = T.dense_fixed(mb * block)
        N = T.dense_fixed(nb * block)
        K = T.dense_fixed(feat)
        S = T.match_sparse_buffer(src, (IO, JO, II, JI), "int32")
        D = T.match_sparse_buffer(data, (NZ,), dtype)
        B = T.match_sparse_buffer(b, (N, K), dtype)
        C = T.match_sparse_buffer(c, (M, K), dtype)
        with T.sp_iter([IO, JO, II, JI, K], "SRSRS", "bsr") as [io, jo, ii, ji, k]:
            with T.init():
                C[io * block + ii, k] = 0.0
            C[io * block + ii, k] = C[io * block + ii, k] + D[S[io, jo, ii, ji]] * B[jo * block + ji, k]

    return bsr_spmm


def csr_gather_spmm_script(feat: int, dtype: str) -> SparseFunction:
    """C = A @ B for CSR A whose values are ``D[S[p]]``: the values of another matrix with the
    same entries in another order (Aᵀ's entries read from A's value array, for the backward
    passes), so no reordered copy of the values is made per call."""

    @T.prim_func
    def csr_gather_spmm(data: T.handle, src: T.handle, b: T.handle, c: T.handle, indptr: T.handle,
                        indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32):
        T.func_attr({"global_symbol": "ops_csr_gather_spmm", "tir.noalias": True, "sparse_tir_level": 2})
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
        J_detach = T.dense_fixed(n)
        NZ = T.dense_fixed(nnz)
        K = T.dense_fixed(feat)
        S = T.match_sparse_buffer(src, (I, J), "int32")
        D = T.match_sparse_buffer(data, (NZ,), dtype)
        B = T.match_sparse_buffer(b, (J_detach, K), dtype)
        C = T.match_sparse_buffer(c, (I, K), dtype)
        with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:
            with T.init():
                C[i, k] = T.cast(0, dtype)
            C[i, k] = C[i, k] + D[S[i, j]] * B[j, k]

    return csr_gather_spmm


def hybrid_spmm_script(widths: tuple[int, ...], feat: int, dtype: str) -> SparseFunction:
    """C = A @ B for A as ELL buckets of the given ``widths``, values gathered from ``D``.

    Bucket ``w`` holds the rows whose entries fit ``w`` slots (the widest bucket also the longer
    rows, each in several pieces of ``w`` slots), three levels deep: the bucket's rows ``R_w``
    (their ids are the axis's coordinates), the pieces of each row ``P_w`` (one, except in the
    widest bucket), the ``w`` slots of a piece ``J_w`` (columns; padding slots have ``S = -1``).
    Each row is in one bucket, so each bucket's iteration is an ordinary reduction into its rows
    of C (``T.init()`` and all), scheduled like CSR SpMM; rows in no bucket (empty rows) are set
    to 0 by the first iteration. Written as text and parsed, since the number of buckets varies.
    """
    cast0 = f'T.cast(0, "{dtype}")'
    head = ["data: T.handle", "b: T.handle", "c: T.handle", "empty: T.handle", "nempty: T.int32"]
    decls = ['    E = T.sparse_fixed(O, (m, nempty), empty, "int32", sorted=False)']
    body = ['    with T.sp_iter([O, E, K], "SSS", "zero") as [o, e, k]:', f"        C[e, k] = {cast0}"]
    for w in widths:
        head += [f"rows_{w}: T.handle", f"pieces_{w}: T.handle", f"cols_{w}: T.handle", f"src_{w}: T.handle",
                 f"nrows_{w}: T.int32", f"maxp_{w}: T.int32", f"npieces_{w}: T.int32"]
        decls += [
            f'    R{w} = T.sparse_fixed(O, (m, nrows_{w}), rows_{w}, "int32", sorted=False)',
            f'    P{w} = T.dense_variable(R{w}, (maxp_{w}, npieces_{w}), pieces_{w}, "int32")',
            f'    J{w} = T.sparse_fixed(P{w}, (n, {w}), cols_{w}, "int32", sorted=False)',
            f'    S{w} = T.match_sparse_buffer(src_{w}, (O, R{w}, P{w}, J{w}), "int32")',
        ]
        body += [
            f'    with T.sp_iter([O, R{w}, P{w}, J{w}, K], "SSRRS", "ell_{w}") as [o, r, p, j, k]:',
            "        with T.init():",
            f"            C[r, k] = {cast0}",
            f"        C[r, k] = C[r, k] + T.if_then_else(S{w}[o, r, p, j] >= 0, D[S{w}[o, r, p, j]] * B[j, k], {cast0})",
        ]
    head += ["m: T.int32", "n: T.int32", "nnz: T.int32"]
    text = "\n".join([
        "from sparsetir.script import tir as T",
        "",
        "",
        "@T.prim_func",
        f"def hybrid_spmm({', '.join(head)}) -> None:",
        '    T.func_attr({"global_symbol": "ops_hybrid_spmm", "tir.noalias": True, "sparse_tir_level": 2})',
        "    O = T.dense_fixed(1)",
        "    I = T.dense_fixed(m)",
        "    N = T.dense_fixed(n)",
        f"    K = T.dense_fixed({feat})",
        "    NZ = T.dense_fixed(nnz)",
        *decls,
        f'    D = T.match_sparse_buffer(data, (NZ,), "{dtype}")',
        f'    B = T.match_sparse_buffer(b, (N, K), "{dtype}")',
        f'    C = T.match_sparse_buffer(c, (I, K), "{dtype}")',
        *body,
        "",
    ])
    return parse(text, f"<ops hybrid spmm {widths} x {feat} {dtype}>")


def hybrid_slots_spmm_script(widths: tuple[int, ...], feat: int, dtype: str) -> SparseFunction:
    """The GPU's hybrid SpMM (``runtime/cuda/hybrid_layout.py`` makes its arguments):
    ``hybrid_spmm_script``'s buckets with the values in the slot layout, so a slot is read
    without first reading where its value is, and the rows longer than the widest bucket apart,
    in pieces of ``long_width(widths)`` entries run in parallel.

    Bucket ``w`` (``R{w}`` its rows, ``J{w}`` a row's ``w`` slots) holds rows of at most ``w``
    entries; ``Q{w}`` is one piece per row (``one_{w}`` is ``0, 1, ..., nrows``), there so that
    stage II nests a row's slots in a block of their own, which the GPU schedule caches. A
    padding slot has the column -1: ``M{w}`` reads the column array again (``mask_{w}``, the same
    memory as ``cols_{w}``) to skip it, so a padding value never meets the dense operand. The
    long rows ``L`` (``LR`` their ids) have pieces ``P``; the first long iteration sums each piece
    ``PP`` into a row of the workspace ``WP``, the second each long row's pieces into ``C``
    (``LS`` its first piece, the same memory as ``long_ptr``); rows in no bucket are zeroed.
    """
    cast0 = f'T.cast(0, "{dtype}")'
    widest = long_width(widths)
    head = ["b: T.handle", "c: T.handle", "empty: T.handle", "nempty: T.int32"]
    decls = ['    E = T.sparse_fixed(O, (m, nempty), empty, "int32", sorted=False)']
    body = ['    with T.sp_iter([O, E, K], "SSS", "zero") as [o, e, k]:', f"        C[e, k] = {cast0}"]
    for w in widths:
        head += [f"rows_{w}: T.handle", f"one_{w}: T.handle", f"cols_{w}: T.handle", f"mask_{w}: T.handle",
                 f"vals_{w}: T.handle", f"nrows_{w}: T.int32"]
        decls += [
            f'    R{w} = T.sparse_fixed(O, (m, nrows_{w}), rows_{w}, "int32", sorted=False)',
            f'    Q{w} = T.dense_variable(R{w}, (1, nrows_{w}), one_{w}, "int32")',
            f'    J{w} = T.sparse_fixed(Q{w}, (n, {w}), cols_{w}, "int32", sorted=False)',
            f'    D{w} = T.match_sparse_buffer(vals_{w}, (O, R{w}, Q{w}, J{w}), "{dtype}")',
            f'    M{w} = T.match_sparse_buffer(mask_{w}, (O, R{w}, Q{w}, J{w}), "int32")',
        ]
        body += [
            f'    with T.sp_iter([O, R{w}, Q{w}, J{w}, K], "SSRRS", "ell_{w}") as [o, r, q, j, k]:',
            "        with T.init():",
            f"            C[r, k] = {cast0}",
            f"        C[r, k] = C[r, k] + T.if_then_else(M{w}[o, r, q, j] >= 0, D{w}[o, r, q, j] * B[j, k], {cast0})",
        ]
    head += ["long_rows: T.handle", "long_ptr: T.handle", "one_long: T.handle", "cols_long: T.handle",
             "mask_long: T.handle", "vals_long: T.handle", "ws: T.handle", "long_start: T.handle", "nlong: T.int32", "maxp: T.int32",
             "npieces: T.int32", "m: T.int32", "n: T.int32"]
    decls += [
        "    L = T.dense_fixed(nlong)",
        '    P = T.dense_variable(L, (maxp, npieces), long_ptr, "int32")',
        "    PP = T.dense_fixed(npieces)",
        '    QP = T.dense_variable(PP, (1, npieces), one_long, "int32")',
        f'    JL = T.sparse_fixed(QP, (n, {widest}), cols_long, "int32", sorted=False)',
        '    LR = T.match_sparse_buffer(long_rows, (L,), "int32")',
        f'    DL = T.match_sparse_buffer(vals_long, (PP, QP, JL), "{dtype}")',
        '    ML = T.match_sparse_buffer(mask_long, (PP, QP, JL), "int32")',
        f'    WP = T.match_sparse_buffer(ws, (PP, K), "{dtype}")',
        '    LS = T.match_sparse_buffer(long_start, (L,), "int32")',
    ]
    body += [
        '    with T.sp_iter([PP, QP, JL, K], "SRRS", "pieces") as [r, q, j, k]:',
        "        with T.init():",
        f"            WP[r, k] = {cast0}",
        f"        WP[r, k] = WP[r, k] + T.if_then_else(ML[r, q, j] >= 0, DL[r, q, j] * B[j, k], {cast0})",
        '    with T.sp_iter([L, P, K], "SRS", "long") as [r, p, k]:',
        "        with T.init():",
        f"            C[LR[r], k] = {cast0}",
        "        C[LR[r], k] = C[LR[r], k] + WP[LS[r] + p, k]",
    ]
    text = "\n".join([
        "from sparsetir.script import tir as T",
        "",
        "",
        "@T.prim_func",
        f"def hybrid_slots_spmm({', '.join(head)}) -> None:",
        '    T.func_attr({"global_symbol": "ops_hybrid_slots_spmm", "tir.noalias": True, "sparse_tir_level": 2})',
        "    O = T.dense_fixed(1)",
        "    I = T.dense_fixed(m)",
        "    N = T.dense_fixed(n)",
        f"    K = T.dense_fixed({feat})",
        *decls,
        f'    B = T.match_sparse_buffer(b, (N, K), "{dtype}")',
        f'    C = T.match_sparse_buffer(c, (I, K), "{dtype}")',
        *body,
        "",
    ])
    return parse(text, f"<ops hybrid slots spmm {widths} x {feat} {dtype}>")


__all__ = ["bsr_gather_spmm_script", "csr_gather_spmm_script", "hybrid_slots_spmm_script", "hybrid_spmm_script"]
