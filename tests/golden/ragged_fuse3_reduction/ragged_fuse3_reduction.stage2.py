@T.prim_func
def ragged_fuse3_reduction(x: T.handle, out: T.handle, indptr_j: T.handle, indptr_k: T.handle, indptr_m: T.handle, rows: T.int32, max_j: T.int32, max_k: T.int32, max_m: T.int32, feat_size: T.int32, nnz_j: T.int32, nnz_k: T.int32, nnz_m: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"ragged_fuse3_reduction0": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction1": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30", "tests/transforms/scripts/ragged_fuse3_reduction.py:33"], "ragged_fuse3_reduction0_init": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30", "tests/transforms/scripts/ragged_fuse3_reduction.py:32"], "ragged_fuse3_reduction_jkm_search0": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction_jkm_pos0": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction_jkm_search1": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction_jkm_pos1": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"]}, "tir.noalias": True})
    I = T.dense_fixed(rows)
    J = T.dense_variable(I, (max_j, nnz_j), indptr_j)
    K = T.dense_variable(J, (max_k, nnz_k), indptr_k)
    M = T.dense_variable(K, (max_m, nnz_m), indptr_m)
    L = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (I, J, K, M, L), "float32")
    OUT = T.match_sparse_buffer(out, (I, L), "float32")
    J_indptr = T.match_sparse_buffer(indptr_j, (I,), "int32", extra_storage=1)
    K_indptr = T.match_sparse_buffer(indptr_k, (I, J), "int32", extra_storage=1)
    M_indptr = T.match_sparse_buffer(indptr_m, (I, J, K), "int32", extra_storage=1)
    for i, l in T.grid(rows, feat_size):
        with T.sblock("ragged_fuse3_reduction0"):
            vi, vl = T.axis.remap("SS", [i, l])
            ragged_fuse3_reduction_jkm_pos0 = T.sblock_alloc_buffer((nnz_m,), "int32", scope="local")
            ragged_fuse3_reduction_jkm_pos1 = T.sblock_alloc_buffer((nnz_m,), "int32", scope="local")
            T.reads(M_indptr[vi, 0:max_j, 0:T.max(0, max_k) + 1], J_indptr[vi:vi + 2], K_indptr[vi, 0:max_j + 1], OUT[vi, vl], X[vi, 0:max_j, 0:max_k, 0:max_m, vl])
            T.writes(OUT[vi, vl])
            T.sblock_attr({"sparse": True})
            OUT[vi, vl] = T.float32(0)
            for jkm in range(M_indptr[vi, J_indptr[vi + 1] - J_indptr[vi], 0] - M_indptr[vi, 0, 0]):
                with T.sblock("ragged_fuse3_reduction_jkm_search0"):
                    vjkm = T.axis.spatial(nnz_m, jkm)
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    T.reads(J_indptr[vi:vi + 2], M_indptr[vi, 0:max_j, 0])
                    T.writes(ragged_fuse3_reduction_jkm_pos0[vjkm])
                    T.sblock_attr({"sparse": True})
                    lohi[0] = 0
                    lohi[1] = J_indptr[vi + 1] - J_indptr[vi]
                    while lohi[0] < lohi[1]:
                        if M_indptr[vi, (lohi[0] + lohi[1]) // 2, 0] <= vjkm + M_indptr[vi, 0, 0]:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    ragged_fuse3_reduction_jkm_pos0[vjkm] = lohi[0] - 1
                with T.sblock("ragged_fuse3_reduction_jkm_search1"):
                    vjkm = T.axis.spatial(nnz_m, jkm)
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    T.reads(K_indptr[vi, 0:max_j + 1], ragged_fuse3_reduction_jkm_pos0[vjkm], M_indptr[vi, 0:max_j, 0:max_k + 1])
                    T.writes(ragged_fuse3_reduction_jkm_pos1[vjkm])
                    T.sblock_attr({"sparse": True})
                    lohi[0] = 0
                    lohi[1] = K_indptr[vi, ragged_fuse3_reduction_jkm_pos0[vjkm] + 1] - K_indptr[vi, ragged_fuse3_reduction_jkm_pos0[vjkm]]
                    while lohi[0] < lohi[1]:
                        if M_indptr[vi, ragged_fuse3_reduction_jkm_pos0[vjkm], (lohi[0] + lohi[1]) // 2] <= vjkm + M_indptr[vi, 0, 0]:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    ragged_fuse3_reduction_jkm_pos1[vjkm] = lohi[0] - 1
                with T.sblock("ragged_fuse3_reduction1"):
                    vjkm = T.axis.reduce(nnz_m, jkm)
                    T.reads(OUT[vi, vl], X[vi, ragged_fuse3_reduction_jkm_pos0[vjkm], ragged_fuse3_reduction_jkm_pos1[vjkm], vjkm + M_indptr[vi, 0, 0] - M_indptr[vi, ragged_fuse3_reduction_jkm_pos0[vjkm], ragged_fuse3_reduction_jkm_pos1[vjkm]], vl], ragged_fuse3_reduction_jkm_pos0[vjkm], ragged_fuse3_reduction_jkm_pos1[vjkm], M_indptr[vi, 0:max_j, 0:max_k + 1])
                    T.writes(OUT[vi, vl])
                    T.sblock_attr({"sparse": True})
                    OUT[vi, vl] = OUT[vi, vl] + X[vi, ragged_fuse3_reduction_jkm_pos0[vjkm], ragged_fuse3_reduction_jkm_pos1[vjkm], vjkm + M_indptr[vi, 0, 0] - M_indptr[vi, ragged_fuse3_reduction_jkm_pos0[vjkm], ragged_fuse3_reduction_jkm_pos1[vjkm]], vl]
