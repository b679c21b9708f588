@T.prim_func
def csr_multiply_assembled(a: T.handle, b: T.handle, c: T.handle, indptr_a: T.handle, indices_a: T.handle, indptr_b: T.handle, indices_b: T.handle, indptr_c: T.handle, indices_c: T.handle, m: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.searched_axes": ["JA", "JB"], "sparsetir.spans": {"csr_multiply_assembled0": ["examples/csr_multiply_assembled.py:32"], "csr_multiply_assembled1": ["examples/csr_multiply_assembled.py:32", "examples/csr_multiply_assembled.py:33"], "csr_multiply_assembled_j_merge": ["examples/csr_multiply_assembled.py:32"]}, "tir.noalias": True})
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
        with T.sblock("csr_multiply_assembled0"):
            vi = T.axis.spatial(m, i)
            T.reads(JA_indptr[vi:vi + 2], JB_indptr[vi:vi + 2], JA_indices[vi, 0:n], JB_indices[vi, 0:n], JC_indptr[vi:vi + 2], A[vi, 0:n], B[vi, 0:n])
            T.writes(C[vi, 0:n], JC_indices[vi, 0:n])
            T.sblock_attr({"sparse": True})
            with T.sblock("csr_multiply_assembled1"):
                csr_multiply_assembled_j_merge = T.sblock_alloc_buffer((4,), "int32", scope="local")
                T.reads(JA_indptr[vi:vi + 2], JB_indptr[vi:vi + 2], JA_indices[vi, 0:n], JB_indices[vi, 0:n], JC_indptr[vi:vi + 2], A[vi, 0:n], B[vi, 0:n])
                T.writes(C[vi, 0:n], JC_indices[vi, 0:n])
                T.sblock_attr({"sparse": True})
                csr_multiply_assembled_j_merge[0] = 0
                csr_multiply_assembled_j_merge[1] = 0
                csr_multiply_assembled_j_merge[3] = 0
                while csr_multiply_assembled_j_merge[0] < JA_indptr[vi + 1] - JA_indptr[vi] and csr_multiply_assembled_j_merge[1] < JB_indptr[vi + 1] - JB_indptr[vi]:
                    csr_multiply_assembled_j_merge[2] = T.min(JA_indices[vi, csr_multiply_assembled_j_merge[0]], JB_indices[vi, csr_multiply_assembled_j_merge[1]])
                    if JA_indices[vi, csr_multiply_assembled_j_merge[0]] == csr_multiply_assembled_j_merge[2] and JB_indices[vi, csr_multiply_assembled_j_merge[1]] == csr_multiply_assembled_j_merge[2]:
                        if csr_multiply_assembled_j_merge[3] < JC_indptr[vi + 1] - JC_indptr[vi]:
                            C[vi, csr_multiply_assembled_j_merge[3]] = A[vi, csr_multiply_assembled_j_merge[0]] * B[vi, csr_multiply_assembled_j_merge[1]]
                        if csr_multiply_assembled_j_merge[3] < JC_indptr[vi + 1] - JC_indptr[vi]:
                            JC_indices[vi, csr_multiply_assembled_j_merge[3]] = csr_multiply_assembled_j_merge[2]
                        csr_multiply_assembled_j_merge[3] = csr_multiply_assembled_j_merge[3] + 1
                    if JA_indices[vi, csr_multiply_assembled_j_merge[0]] == csr_multiply_assembled_j_merge[2]:
                        csr_multiply_assembled_j_merge[0] = csr_multiply_assembled_j_merge[0] + 1
                    if JB_indices[vi, csr_multiply_assembled_j_merge[1]] == csr_multiply_assembled_j_merge[2]:
                        csr_multiply_assembled_j_merge[1] = csr_multiply_assembled_j_merge[1] + 1
