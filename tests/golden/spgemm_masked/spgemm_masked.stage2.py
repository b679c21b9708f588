@T.prim_func
def spgemm_masked(a: T.handle, b: T.handle, c: T.handle, indptr_a: T.handle, indices_a: T.handle, indptr_b: T.handle, indices_b: T.handle, indptr_c: T.handle, indices_c: T.handle, m: T.int32, k: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.searched_axes": ["JC"], "sparsetir.spans": {"spgemm_masked_zero0": ["examples/spgemm_masked.py:35"], "spgemm_masked_zero1": ["examples/spgemm_masked.py:35", "examples/spgemm_masked.py:36"], "spgemm_masked0": ["examples/spgemm_masked.py:37"], "spgemm_masked1": ["examples/spgemm_masked.py:37"], "spgemm_masked2": ["examples/spgemm_masked.py:37", "examples/spgemm_masked.py:38"], "spgemm_masked2_JC_search0": ["examples/spgemm_masked.py:38"], "spgemm_masked2_JC_pos0": ["examples/spgemm_masked.py:38"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    KA = T.sparse_variable(I, (k, nnz_a), (indptr_a, indices_a))
    KA_dense = T.dense_variable(I, (k, nnz_a), indptr_a)
    KB = T.dense_fixed(k)
    JB = T.sparse_variable(KB, (n, nnz_b), (indptr_b, indices_b))
    JB_dense = T.dense_variable(KB, (n, nnz_b), indptr_b)
    JC = T.sparse_variable(I, (n, nnz_c), (indptr_c, indices_c))
    JC_dense = T.dense_variable(I, (n, nnz_c), indptr_c)
    A = T.match_sparse_buffer(a, (I, KA), "float32")
    B = T.match_sparse_buffer(b, (KB, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    KA_indptr = T.match_sparse_buffer(indptr_a, (I,), "int32", extra_storage=1)
    KA_indices = T.match_sparse_buffer(indices_a, (I, KA_dense), "int32")
    JB_indptr = T.match_sparse_buffer(indptr_b, (KB,), "int32", extra_storage=1)
    JB_indices = T.match_sparse_buffer(indices_b, (KB, JB_dense), "int32")
    JC_indptr = T.match_sparse_buffer(indptr_c, (I,), "int32", extra_storage=1)
    JC_indices = T.match_sparse_buffer(indices_c, (I, JC_dense), "int32")
    for i in range(m):
        with T.sblock("spgemm_masked_zero0"):
            vi = T.axis.spatial(m, i)
            T.reads(JC_indptr[vi:vi + 2])
            T.writes(C[vi, 0:n])
            T.sblock_attr({"sparse": True})
            for j in range(JC_indptr[vi + 1] - JC_indptr[vi]):
                with T.sblock("spgemm_masked_zero1"):
                    vj = T.axis.spatial(n, j)
                    T.reads()
                    T.writes(C[vi, vj])
                    T.sblock_attr({"sparse": True})
                    C[vi, vj] = T.float32(0)
    for i in range(m):
        with T.sblock("spgemm_masked0"):
            vi = T.axis.spatial(m, i)
            T.reads(KA_indptr[vi:vi + 2], JB_indptr[0:k + 1], KA_indices[vi, 0:k], JC_indptr[vi:vi + 2], JC_indices[vi, 0:n], JB_indices[0:k, 0:n], C[vi, 0:n], A[vi, 0:k], B[0:k, 0:n])
            T.writes(C[vi, 0:n])
            T.sblock_attr({"sparse": True})
            for kk in range(KA_indptr[vi + 1] - KA_indptr[vi]):
                with T.sblock("spgemm_masked1"):
                    vkk = T.axis.reduce(k, kk)
                    spgemm_masked2_JC_pos0 = T.sblock_alloc_buffer((n,), "int32", scope="local")
                    T.reads(JB_indptr[0:k + 1], KA_indices[vi, vkk], JC_indptr[vi:vi + 2], JC_indices[vi, 0:n], JB_indices[KA_indices[vi, vkk], 0:n], C[vi, 0:n], A[vi, vkk], B[KA_indices[vi, vkk], 0:n])
                    T.writes(C[vi, 0:n])
                    T.sblock_attr({"sparse": True})
                    for j in range(JB_indptr[KA_indices[vi, vkk] + 1] - JB_indptr[KA_indices[vi, vkk]]):
                        with T.sblock("spgemm_masked2_JC_search0"):
                            vj = T.axis.spatial(n, j)
                            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                            T.reads(JC_indptr[vi:vi + 2], JC_indices[vi, 0:n], JB_indices[KA_indices[vi, vkk], vj], KA_indices[vi, vkk])
                            T.writes(spgemm_masked2_JC_pos0[vj])
                            T.sblock_attr({"sparse": True})
                            lohi[0] = 0
                            lohi[1] = JC_indptr[vi + 1] - JC_indptr[vi]
                            while lohi[0] < lohi[1]:
                                if JC_indices[vi, (lohi[0] + lohi[1]) // 2] < JB_indices[KA_indices[vi, vkk], vj]:
                                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                                else:
                                    lohi[1] = (lohi[0] + lohi[1]) // 2
                            spgemm_masked2_JC_pos0[vj] = T.if_then_else(lohi[0] < JC_indptr[vi + 1] - JC_indptr[vi], T.if_then_else(JC_indices[vi, lohi[0]] == JB_indices[KA_indices[vi, vkk], vj], lohi[0], -1), -1)
                        with T.sblock("spgemm_masked2"):
                            vj = T.axis.spatial(n, j)
                            T.reads(spgemm_masked2_JC_pos0[vj], C[vi, spgemm_masked2_JC_pos0[vj]], A[vi, vkk], B[KA_indices[vi, vkk], vj], KA_indices[vi, vkk])
                            T.writes(C[vi, spgemm_masked2_JC_pos0[vj]])
                            T.sblock_attr({"sparse": True})
                            if spgemm_masked2_JC_pos0[vj] >= 0:
                                C[vi, spgemm_masked2_JC_pos0[vj]] = T.if_then_else(spgemm_masked2_JC_pos0[vj] >= 0, C[vi, spgemm_masked2_JC_pos0[vj]], T.float32(0)) + A[vi, vkk] * B[KA_indices[vi, vkk], vj]
