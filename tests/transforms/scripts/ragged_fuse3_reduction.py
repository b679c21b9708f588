from sparsetir.script import tir as T


# out[i, l] = sum over j, k, m of X[i, j, k, m, l]: three ragged axes under I fused into one
# reduction loop (the fused loop starts at I's current row, not at position 0).
@T.prim_func
def ragged_fuse3_reduction(
    x: T.handle,
    out: T.handle,
    indptr_j: T.handle,
    indptr_k: T.handle,
    indptr_m: T.handle,
    rows: T.int32,
    max_j: T.int32,
    max_k: T.int32,
    max_m: T.int32,
    feat_size: T.int32,
    nnz_j: T.int32,
    nnz_k: T.int32,
    nnz_m: T.int32,
) -> None:
    T.func_attr({"global_symbol": "ragged_fuse3_reduction", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(rows)
    J = T.dense_variable(I, (max_j, nnz_j), indptr_j, "int32")
    K = T.dense_variable(J, (max_k, nnz_k), indptr_k, "int32")
    M = T.dense_variable(K, (max_m, nnz_m), indptr_m, "int32")
    L = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (I, J, K, M, L), "float32")
    OUT = T.match_sparse_buffer(out, (I, L), "float32")
    with T.sp_iter([I, L, T.fuse(J, K, M)], "SSRRR", "ragged_fuse3_reduction") as [i, l, j, k, m]:
        with T.init():
            OUT[i, l] = T.float32(0)
        OUT[i, l] = OUT[i, l] + X[i, j, k, m, l]
