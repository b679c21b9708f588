from sparsetir.script import tir as T


# out[i, j] = sum over k, l of X[i, j, k, l], X a 4-D ragged tensor (J, K, L each ragged under
# the axis before): the stored (i, j) pairs are one fused loop, followed by reductions over the
# two inner variable axes; out is ragged like the (I, J) part of X.
@T.prim_func
def fused_rows_reduction(
    x: T.handle,
    out: T.handle,
    indptr_j: T.handle,
    indptr_k: T.handle,
    indptr_l: T.handle,
    m: T.int32,
    max_j: T.int32,
    max_k: T.int32,
    max_l: T.int32,
    nnz_j: T.int32,
    nnz_k: T.int32,
    nnz_l: T.int32,
) -> None:
    T.func_attr({"global_symbol": "fused_rows_reduction", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.dense_variable(I, (max_j, nnz_j), indptr_j, "int32")
    K = T.dense_variable(J, (max_k, nnz_k), indptr_k, "int32")
    L = T.dense_variable(K, (max_l, nnz_l), indptr_l, "int32")
    X = T.match_sparse_buffer(x, (I, J, K, L), "float32")
    OUT = T.match_sparse_buffer(out, (I, J), "float32")
    with T.sp_iter([T.fuse(I, J), K, L], "SSRR", "fused_rows_reduction") as [i, j, k, l]:
        with T.init():
            OUT[i, j] = T.float32(0)
        OUT[i, j] = OUT[i, j] + X[i, j, k, l]
