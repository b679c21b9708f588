from sparsetir.script import tir as T


# C = A @ B with A in BSR (4x4 blocks); B and C are plain 2-D matrices addressed through
# block and in-block coordinates.
@T.prim_func
def bsr_spmm(
    a: T.handle,
    b: T.handle,
    c: T.handle,
    indptr: T.handle,
    indices: T.handle,
    mb: T.int32,
    nb: T.int32,
    nnzb: T.int32,
    feat_size: T.int32,
) -> None:
    T.func_attr({"global_symbol": "bsr_spmm", "tir.noalias": True, "sparse_tir_level": 2})
    IO = T.dense_fixed(mb)
    JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices), "int32")
    II = T.dense_fixed(4)
    JI = T.dense_fixed(4)
    M = T.dense_fixed(mb * 4)
    N = T.dense_fixed(nb * 4)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
    B = T.match_sparse_buffer(b, (N, K), "float32")
    C = T.match_sparse_buffer(c, (M, K), "float32")
    with T.sp_iter([IO, II, JO, JI, K], "SSRRS", "bsr_spmm") as [io, ii, jo, ji, k]:
        with T.init():
            C[io * 4 + ii, k] = T.float32(0)
        C[io * 4 + ii, k] = C[io * 4 + ii, k] + A[io, jo, ii, ji] * B[jo * 4 + ji, k]
