@T.prim_func
def csrmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32, a_4: T.handle, indices_i_4: T.handle, indices_j_4: T.handle, m_4: T.int32, n_4: T.int32, num_rows_4: T.int32, a_8: T.handle, indices_i_8: T.handle, indices_j_8: T.handle, m_8: T.int32, n_8: T.int32, num_rows_8: T.int32) -> None:
    T.func_attr({"composable": True, "global_symbol": "main", "sparse_tir_level": 2, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    O_4 = T.dense_fixed(1)
    I_4 = T.sparse_fixed(O_4, (m_4, num_rows_4), indices_i_4, sorted=False)
    J_4 = T.sparse_fixed(I_4, (n_4, 4), indices_j_4, sorted=False)
    O_8 = T.dense_fixed(1)
    I_8 = T.sparse_fixed(O_8, (m_8, num_rows_8), indices_i_8, sorted=False)
    J_8 = T.sparse_fixed(I_8, (n_8, 8), indices_j_8, sorted=False)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    A_4 = T.match_sparse_buffer(a_4, (O_4, I_4, J_4), "float32")
    A_8 = T.match_sparse_buffer(a_8, (O_8, I_8, J_8), "float32")
    with T.sp_iter([O_4, I_4, J_4], "SSS", "rewrite_A_4") as [o_4, i_4, j_4]:
        T.sp_iter_attr({"preprocess": True})
        A_4[o_4, i_4, j_4] = A[i_4, j_4]
    with T.sp_iter([O_8, I_8, J_8], "SSS", "rewrite_A_8") as [o_8, i_8, j_8]:
        T.sp_iter_attr({"preprocess": True})
        A_8[o_8, i_8, j_8] = A[i_8, j_8]
    with T.sp_iter([I, K], "SS", "csrmm_init") as [i, k]:
        C[i, k] = T.float32(0)
    with T.sp_iter([O_4, I_4, J_4, K], "SSRS", "csrmm_4") as [o_4, i_4, j_4, k]:
        C[i_4, k] = C[i_4, k] + A_4[o_4, i_4, j_4] * B[j_4, k]
    with T.sp_iter([O_8, I_8, J_8, K], "SSRS", "csrmm_8") as [o_8, i_8, j_8, k]:
        C[i_8, k] = C[i_8, k] + A_8[o_8, i_8, j_8] * B[j_8, k]
