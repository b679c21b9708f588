@T.prim_func
def csr_add_assembled(a: T.handle, b: T.handle, c: T.handle, indptr_a: T.handle, indices_a: T.handle, indptr_b: T.handle, indices_b: T.handle, indptr_c: T.handle, indices_c: T.handle, m: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.searched_axes": ["JA", "JB"], "sparsetir.spans": {"csr_add_assembled0": ["examples/csr_add_assembled.py:34"], "csr_add_assembled1": ["examples/csr_add_assembled.py:34", "examples/csr_add_assembled.py:35"], "csr_add_assembled_j_merge": ["examples/csr_add_assembled.py:34"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, nnz_a), (indptr_a, indices_a))
    JA_dense = T.dense_variable(I, (n, nnz_a), indptr_a)
    JB = T.sparse_variable(I, (n, nnz_b), (indptr_b, indices_b))
    JB_dense = T.dense_variable(I, (n, nnz_b), indptr_b)
    JC = T.sparse_variable(I, (n, nnz_c), (indptr_c, indices_c), assembled=True)
    JC_dense = T.dense_variable(I, (n, nnz_c), indptr_c)
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    C = T.match_sparse_buffer(c, (I, JC), "float32")
    JA_indptr = T.match_sparse_buffer(indptr_a, (I,), "int32", extra_storage=1)
    JA_indices = T.match_sparse_buffer(indices_a, (I, JA_dense), "int32")
    JB_indptr = T.match_sparse_buffer(indptr_b, (I,), "int32", extra_storage=1)
    JB_indices = T.match_sparse_buffer(indices_b, (I, JB_dense), "int32")
    JC_indptr = T.match_sparse_buffer(indptr_c, (I,), "int32", extra_storage=1)
    JC_indices = T.match_sparse_buffer(indices_c, (I, JC_dense), "int32")
    for i in range(m):
        with T.sblock("csr_add_assembled0"):
            vi = T.axis.spatial(m, i)
            T.reads(JA_indptr[vi:vi + 2], JB_indptr[vi:vi + 2], JA_indices[vi, 0:n], JB_indices[vi, 0:n], JC_indptr[vi:vi + 2], A[vi, 0:n], B[vi, 0:n])
            T.writes(C[vi, 0:n], JC_indices[vi, 0:n])
            T.sblock_attr({"sparse": True})
            with T.sblock("csr_add_assembled1"):
                csr_add_assembled_j_merge = T.sblock_alloc_buffer((4,), "int32", scope="local")
                T.reads(JA_indptr[vi:vi + 2], JB_indptr[vi:vi + 2], JA_indices[vi, 0:n], JB_indices[vi, 0:n], JC_indptr[vi:vi + 2], A[vi, 0:n], B[vi, 0:n])
                T.writes(C[vi, 0:n], JC_indices[vi, 0:n])
                T.sblock_attr({"sparse": True})
                csr_add_assembled_j_merge[0] = 0
                csr_add_assembled_j_merge[1] = 0
                csr_add_assembled_j_merge[3] = 0
                while csr_add_assembled_j_merge[0] < JA_indptr[vi + 1] - JA_indptr[vi] or csr_add_assembled_j_merge[1] < JB_indptr[vi + 1] - JB_indptr[vi]:
                    csr_add_assembled_j_merge[2] = T.min(T.if_then_else(csr_add_assembled_j_merge[0] < JA_indptr[vi + 1] - JA_indptr[vi], JA_indices[vi, csr_add_assembled_j_merge[0]], 2147483647), T.if_then_else(csr_add_assembled_j_merge[1] < JB_indptr[vi + 1] - JB_indptr[vi], JB_indices[vi, csr_add_assembled_j_merge[1]], 2147483647))
                    if csr_add_assembled_j_merge[3] < JC_indptr[vi + 1] - JC_indptr[vi]:
                        C[vi, csr_add_assembled_j_merge[3]] = T.if_then_else(T.if_then_else(csr_add_assembled_j_merge[0] < JA_indptr[vi + 1] - JA_indptr[vi], JA_indices[vi, csr_add_assembled_j_merge[0]] == csr_add_assembled_j_merge[2], False), A[vi, csr_add_assembled_j_merge[0]], T.float32(0)) + T.if_then_else(T.if_then_else(csr_add_assembled_j_merge[1] < JB_indptr[vi + 1] - JB_indptr[vi], JB_indices[vi, csr_add_assembled_j_merge[1]] == csr_add_assembled_j_merge[2], False), B[vi, csr_add_assembled_j_merge[1]], T.float32(0))
                    if csr_add_assembled_j_merge[3] < JC_indptr[vi + 1] - JC_indptr[vi]:
                        JC_indices[vi, csr_add_assembled_j_merge[3]] = csr_add_assembled_j_merge[2]
                    csr_add_assembled_j_merge[3] = csr_add_assembled_j_merge[3] + 1
                    if T.if_then_else(csr_add_assembled_j_merge[0] < JA_indptr[vi + 1] - JA_indptr[vi], JA_indices[vi, csr_add_assembled_j_merge[0]] == csr_add_assembled_j_merge[2], False):
                        csr_add_assembled_j_merge[0] = csr_add_assembled_j_merge[0] + 1
                    if T.if_then_else(csr_add_assembled_j_merge[1] < JB_indptr[vi + 1] - JB_indptr[vi], JB_indices[vi, csr_add_assembled_j_merge[1]] == csr_add_assembled_j_merge[2], False):
                        csr_add_assembled_j_merge[1] = csr_add_assembled_j_merge[1] + 1
