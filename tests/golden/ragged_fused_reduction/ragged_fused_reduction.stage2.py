@T.prim_func
def ragged_fused_reduction(x: T.handle, out: T.handle, indptr_j: T.handle, indptr_k: T.handle, m: T.int32, max_j: T.int32, max_k: T.int32, feat_size: T.int32, nnz_j: T.int32, nnz_k: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"ragged_fused_reduction0": ["examples/ragged_fused_reduction.py:28"], "ragged_fused_reduction1": ["examples/ragged_fused_reduction.py:28", "examples/ragged_fused_reduction.py:31"], "ragged_fused_reduction1_init": ["examples/ragged_fused_reduction.py:28", "examples/ragged_fused_reduction.py:30"], "ragged_fused_reduction_jk_search0": ["examples/ragged_fused_reduction.py:28"], "ragged_fused_reduction_jk_pos0": ["examples/ragged_fused_reduction.py:28"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.dense_variable(I, (max_j, nnz_j), indptr_j)
    K = T.dense_variable(J, (max_k, nnz_k), indptr_k)
    L = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (I, J, K, L), "float32")
    OUT = T.match_sparse_buffer(out, (I, L), "float32")
    J_indptr = T.match_sparse_buffer(indptr_j, (I,), "int32", extra_storage=1)
    K_indptr = T.match_sparse_buffer(indptr_k, (I, J), "int32", extra_storage=1)
    for i in range(m):
        with T.sblock("ragged_fused_reduction0"):
            vi = T.axis.spatial(m, i)
            ragged_fused_reduction_jk_pos0 = T.sblock_alloc_buffer((nnz_k,), "int32", scope="local")
            T.reads(K_indptr[vi, 0:max_j + 1], J_indptr[vi:vi + 2], X[vi, 0:max_j, 0:max_k, 0:feat_size])
            T.writes(OUT[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for jk in range(K_indptr[vi, J_indptr[vi + 1] - J_indptr[vi]] - K_indptr[vi, 0]):
                with T.sblock("ragged_fused_reduction_jk_search0"):
                    vjk = T.axis.spatial(nnz_k, jk)
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    T.reads(J_indptr[vi:vi + 2], K_indptr[vi, 0:max_j + 1])
                    T.writes(ragged_fused_reduction_jk_pos0[vjk])
                    T.sblock_attr({"sparse": True})
                    lohi[0] = 0
                    lohi[1] = J_indptr[vi + 1] - J_indptr[vi]
                    while lohi[0] < lohi[1]:
                        if K_indptr[vi, (lohi[0] + lohi[1]) // 2] <= vjk + K_indptr[vi, 0]:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    ragged_fused_reduction_jk_pos0[vjk] = lohi[0] - 1
                for l in range(feat_size):
                    with T.sblock("ragged_fused_reduction1"):
                        vjk = T.axis.reduce(nnz_k, jk)
                        vl = T.axis.spatial(feat_size, l)
                        T.reads(X[vi, ragged_fused_reduction_jk_pos0[vjk], vjk + K_indptr[vi, 0] - K_indptr[vi, ragged_fused_reduction_jk_pos0[vjk]], vl], ragged_fused_reduction_jk_pos0[vjk], K_indptr[vi, 0:max_j + 1])
                        T.writes(OUT[vi, vl])
                        T.sblock_attr({"sparse": True})
                        with T.init():
                            OUT[vi, vl] = T.float32(0)
                        OUT[vi, vl] = OUT[vi, vl] + X[vi, ragged_fused_reduction_jk_pos0[vjk], vjk + K_indptr[vi, 0] - K_indptr[vi, ragged_fused_reduction_jk_pos0[vjk]], vl]
