@T.prim_func
def fused_rows_reduction(x: T.handle, out: T.handle, indptr_j: T.handle, indptr_k: T.handle, indptr_l: T.handle, m: T.int32, max_j: T.int32, max_k: T.int32, max_l: T.int32, nnz_j: T.int32, nnz_k: T.int32, nnz_l: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"fused_rows_reduction0": ["tests/transforms/scripts/fused_rows_reduction.py:29"], "fused_rows_reduction1": ["tests/transforms/scripts/fused_rows_reduction.py:29"], "fused_rows_reduction2": ["tests/transforms/scripts/fused_rows_reduction.py:29", "tests/transforms/scripts/fused_rows_reduction.py:32"], "fused_rows_reduction0_init": ["tests/transforms/scripts/fused_rows_reduction.py:29", "tests/transforms/scripts/fused_rows_reduction.py:31"], "fused_rows_reduction_ij_search0": ["tests/transforms/scripts/fused_rows_reduction.py:29"], "fused_rows_reduction_ij_pos0": ["tests/transforms/scripts/fused_rows_reduction.py:29"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.dense_variable(I, (max_j, nnz_j), indptr_j)
    K = T.dense_variable(J, (max_k, nnz_k), indptr_k)
    L = T.dense_variable(K, (max_l, nnz_l), indptr_l)
    X = T.match_sparse_buffer(x, (I, J, K, L), "float32")
    OUT = T.match_sparse_buffer(out, (I, J), "float32")
    J_indptr = T.match_sparse_buffer(indptr_j, (I,), "int32", extra_storage=1)
    K_indptr = T.match_sparse_buffer(indptr_k, (I, J), "int32", extra_storage=1)
    L_indptr = T.match_sparse_buffer(indptr_l, (I, J, K), "int32", extra_storage=1)
    fused_rows_reduction_ij_pos0 = T.alloc_buffer((nnz_j,), "int32", scope="local")
    for ij in range(nnz_j):
        with T.sblock("fused_rows_reduction_ij_search0"):
            vij = T.axis.spatial(nnz_j, ij)
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            T.reads(J_indptr[0:m + 1])
            T.writes(fused_rows_reduction_ij_pos0[vij])
            T.sblock_attr({"sparse": True})
            lohi[0] = 0
            lohi[1] = m
            while lohi[0] < lohi[1]:
                if J_indptr[(lohi[0] + lohi[1]) // 2] <= vij:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            fused_rows_reduction_ij_pos0[vij] = lohi[0] - 1
        with T.sblock("fused_rows_reduction0"):
            vij = T.axis.spatial(nnz_j, ij)
            T.reads(fused_rows_reduction_ij_pos0[vij], J_indptr[fused_rows_reduction_ij_pos0[vij]], K_indptr[fused_rows_reduction_ij_pos0[vij], 0:max_j + 1], L_indptr[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], 0:max_k + 1], OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]], X[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], 0:max_k, 0:max_l])
            T.writes(OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]])
            T.sblock_attr({"sparse": True})
            OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]] = T.float32(0)
            for k in range(K_indptr[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]] + 1] - K_indptr[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]]):
                with T.sblock("fused_rows_reduction1"):
                    vk = T.axis.reduce(max_k, k)
                    T.reads(L_indptr[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], vk:vk + 2], J_indptr[fused_rows_reduction_ij_pos0[vij]], OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]], X[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], vk, 0:max_l])
                    T.writes(OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]])
                    T.sblock_attr({"sparse": True})
                    for l in range(L_indptr[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], vk + 1] - L_indptr[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], vk]):
                        with T.sblock("fused_rows_reduction2"):
                            vl = T.axis.reduce(max_l, l)
                            T.reads(OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]], J_indptr[fused_rows_reduction_ij_pos0[vij]], X[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], vk, vl])
                            T.writes(OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]])
                            T.sblock_attr({"sparse": True})
                            OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]] = OUT[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]]] + X[fused_rows_reduction_ij_pos0[vij], vij - J_indptr[fused_rows_reduction_ij_pos0[vij]], vk, vl]
