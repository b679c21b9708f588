from sparsetir.script import tir as T


# out[i, l] = sum over j, k of X[i, j, k, l], X a 4-D ragged tensor (J ragged under I, K ragged
# under J); the two reduction axes are fused into one iteration.
@T.prim_func
def ragged_fused_reduction(
    x: T.handle,
    out: T.handle,
    indptr_j: T.handle,
    indptr_k: T.handle,
    m: T.int32,
    max_j: T.int32,
    max_k: T.int32,
    feat_size: T.int32,
    nnz_j: T.int32,
    nnz_k: T.int32,
) -> None:
    T.func_attr(
        {"global_symbol": "ragged_fused_reduction", "tir.noalias": True, "sparse_tir_level": 2}
    )
    I = T.dense_fixed(m)
    J = T.dense_variable(I, (max_j, nnz_j), indptr_j, "int32")
    K = T.dense_variable(J, (max_k, nnz_k), indptr_k, "int32")
    L = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (I, J, K, L), "float32")
    OUT = T.match_sparse_buffer(out, (I, L), "float32")
    with T.sp_iter([I, T.fuse(J, K), L], "SRRS", "ragged_fused_reduction") as [i, j, k, l]:
        with T.init():
            OUT[i, l] = T.float32(0)
        OUT[i, l] = OUT[i, l] + X[i, j, k, l]
