@T.prim_func
def csr_row_dot(a: T.handle, b: T.handle, out: T.handle, indptr_a: T.handle, indices_a: T.handle, indptr_b: T.handle, indices_b: T.handle, m: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.searched_axes": ["JA", "JB"], "sparsetir.spans": {"csr_row_dot0": ["examples/csr_row_dot.py:27"], "csr_row_dot1": ["examples/csr_row_dot.py:27", "examples/csr_row_dot.py:30"], "csr_row_dot0_init": ["examples/csr_row_dot.py:27", "examples/csr_row_dot.py:29"], "csr_row_dot_j_merge": ["examples/csr_row_dot.py:27"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, nnz_a), (indptr_a, indices_a))
    JA_dense = T.dense_variable(I, (n, nnz_a), indptr_a)
    JB = T.sparse_variable(I, (n, nnz_b), (indptr_b, indices_b))
    JB_dense = T.dense_variable(I, (n, nnz_b), indptr_b)
    A = T.match_sparse_buffer(a, (I, JA), "float32")
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    O = T.match_sparse_buffer(out, (I,), "float32")
    JA_indptr = T.match_sparse_buffer(indptr_a, (I,), "int32", extra_storage=1)
    JA_indices = T.match_sparse_buffer(indices_a, (I, JA_dense), "int32")
    JB_indptr = T.match_sparse_buffer(indptr_b, (I,), "int32", extra_storage=1)
    JB_indices = T.match_sparse_buffer(indices_b, (I, JB_dense), "int32")
    for i in range(m):
        with T.sblock("csr_row_dot0"):
            vi = T.axis.spatial(m, i)
            T.reads(JA_indptr[vi:vi + 2], JB_indptr[vi:vi + 2], JA_indices[vi, 0:n], JB_indices[vi, 0:n], O[vi], A[vi, 0:n], B[vi, 0:n])
            T.writes(O[vi])
            T.sblock_attr({"sparse": True})
            O[vi] = T.float32(0)
            with T.sblock("csr_row_dot1"):
                csr_row_dot_j_merge = T.sblock_alloc_buffer((3,), "int32", scope="local")
                T.reads(JA_indptr[vi:vi + 2], JB_indptr[vi:vi + 2], JA_indices[vi, 0:n], JB_indices[vi, 0:n], O[vi], A[vi, 0:n], B[vi, 0:n])
                T.writes(O[vi])
                T.sblock_attr({"sparse": True})
                csr_row_dot_j_merge[0] = 0
                csr_row_dot_j_merge[1] = 0
                while csr_row_dot_j_merge[0] < JA_indptr[vi + 1] - JA_indptr[vi] and csr_row_dot_j_merge[1] < JB_indptr[vi + 1] - JB_indptr[vi]:
                    csr_row_dot_j_merge[2] = T.min(JA_indices[vi, csr_row_dot_j_merge[0]], JB_indices[vi, csr_row_dot_j_merge[1]])
                    if JA_indices[vi, csr_row_dot_j_merge[0]] == csr_row_dot_j_merge[2] and JB_indices[vi, csr_row_dot_j_merge[1]] == csr_row_dot_j_merge[2]:
                        O[vi] = O[vi] + A[vi, csr_row_dot_j_merge[0]] * B[vi, csr_row_dot_j_merge[1]]
                    if JA_indices[vi, csr_row_dot_j_merge[0]] == csr_row_dot_j_merge[2]:
                        csr_row_dot_j_merge[0] = csr_row_dot_j_merge[0] + 1
                    if JB_indices[vi, csr_row_dot_j_merge[1]] == csr_row_dot_j_merge[2]:
                        csr_row_dot_j_merge[1] = csr_row_dot_j_merge[1] + 1
