from sparsetir.script import tir as T


# SDDMM with (I, J) fused into one iteration over the stored entries (COO-like).
@T.prim_func
def sddmm_fused(
    a: T.handle,
    b: T.handle,
    x: T.handle,
    y: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    feat_size: T.int32,
    nnz: T.int32,
) -> None:
    T.func_attr({"global_symbol": "sddmm_fused", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (I, K), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    X = T.match_sparse_buffer(x, (I, J), "float32")
    Y = T.match_sparse_buffer(y, (I, J), "float32")
    with T.sp_iter([T.fuse(I, J), K], "SSR", "sddmm_fused") as [i, j, k]:
        with T.init():
            Y[i, j] = T.float32(0)
        Y[i, j] = Y[i, j] + A[i, k] * B[j, k] * X[i, j]
