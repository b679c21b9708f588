from sparsetir.script import tir as T


# C = A @ B with A in ELL: nnz_cols stored columns in every row (padding stores zeros).
@T.prim_func
def ell_spmm(
    a: T.handle,
    b: T.handle,
    c: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz_cols: T.int32,
    feat_size: T.int32,
) -> None:
    T.func_attr({"global_symbol": "ell_spmm", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_fixed(I, (n, nnz_cols), indices, "int32")
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    with T.sp_iter([I, J, K], "SRS", "ell_spmm") as [i, j, k]:
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + A[i, j] * B[j, k]
