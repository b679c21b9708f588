@T.prim_func
def csrmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32, a_32: T.handle, indptr_32: T.handle, indices_32: T.handle, m_32: T.int32, n_32: T.int32, nnz_chunks_32: T.int32) -> None:
    T.func_attr({"composable": True, "global_symbol": "main", "sparse_tir_level": 2, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    I_32 = T.dense_fixed(m_32)
    JO_32 = T.dense_variable(I_32, ((n_32 + 32 - 1) // 32, nnz_chunks_32), indptr_32)
    JI_32 = T.sparse_fixed(JO_32, (n_32, 32), indices_32, sorted=False)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    A_32 = T.match_sparse_buffer(a_32, (I_32, JO_32, JI_32), "float32")
    with T.sp_iter([I_32, JO_32, JI_32], "SSS", "rewrite_A_32") as [i_32, jo_32, ji_32]:
        T.sp_iter_attr({"preprocess": True})
        A_32[i_32, jo_32, ji_32] = A[i_32, ji_32]
    with T.sp_iter([I, K], "SS", "csrmm_init") as [i, k]:
        C[i, k] = T.float32(0)
    with T.sp_iter([I_32, JO_32, JI_32, K], "SRRS", "csrmm_32") as [i_32, jo_32, ji_32, k]:
        C[i_32, k] = C[i_32, k] + A_32[i_32, jo_32, ji_32] * B[ji_32, k]
