@T.prim_func
def csf_reduction(a: T.handle, out: T.handle, indptr_j: T.handle, indices_j: T.handle, indptr_k: T.handle, indices_k: T.handle, m: T.int32, n: T.int32, p: T.int32, nnz_j: T.int32, nnz_k: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"csf_reduction0": ["examples/csf_reduction.py:25"], "csf_reduction1": ["examples/csf_reduction.py:25"], "csf_reduction2": ["examples/csf_reduction.py:25", "examples/csf_reduction.py:28"], "csf_reduction0_init": ["examples/csf_reduction.py:25", "examples/csf_reduction.py:27"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz_j), (indptr_j, indices_j))
    J_dense = T.dense_variable(I, (n, nnz_j), indptr_j)
    K = T.sparse_variable(J, (p, nnz_k), (indptr_k, indices_k))
    K_dense = T.dense_variable(J_dense, (p, nnz_k), indptr_k)
    A = T.match_sparse_buffer(a, (I, J, K), "float32")
    OUT = T.match_sparse_buffer(out, (I,), "float32")
    J_indptr = T.match_sparse_buffer(indptr_j, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices_j, (I, J_dense), "int32")
    K_indptr = T.match_sparse_buffer(indptr_k, (I, J_dense), "int32", extra_storage=1)
    K_indices = T.match_sparse_buffer(indices_k, (I, J_dense, K_dense), "int32")
    for i in range(m):
        with T.sblock("csf_reduction0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], K_indptr[vi, 0:n + 1], OUT[vi], A[vi, 0:n, 0:p])
            T.writes(OUT[vi])
            T.sblock_attr({"sparse": True})
            OUT[vi] = T.float32(0)
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("csf_reduction1"):
                    vj = T.axis.reduce(n, j)
                    T.reads(K_indptr[vi, vj:vj + 2], OUT[vi], A[vi, vj, 0:p])
                    T.writes(OUT[vi])
                    T.sblock_attr({"sparse": True})
                    for k in range(K_indptr[vi, vj + 1] - K_indptr[vi, vj]):
                        with T.sblock("csf_reduction2"):
                            vk = T.axis.reduce(p, k)
                            T.reads(OUT[vi], A[vi, vj, vk])
                            T.writes(OUT[vi])
                            T.sblock_attr({"sparse": True})
                            OUT[vi] = OUT[vi] + A[vi, vj, vk]
