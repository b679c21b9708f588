@T.prim_func
def csr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"csr_spmm0": ["examples/csr_spmm.py:25"], "csr_spmm1": ["examples/csr_spmm.py:25", "examples/csr_spmm.py:28"], "csr_spmm1_init": ["examples/csr_spmm.py:25", "examples/csr_spmm.py:27"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    for i in range(m):
        with T.sblock("csr_spmm0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], A[vi, 0:n], B[0:n, 0:feat_size], J_indices[vi, 0:n])
            T.writes(C[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for j, k in T.grid(J_indptr[vi + 1] - J_indptr[vi], feat_size):
                with T.sblock("csr_spmm1"):
                    vj = T.axis.reduce(n, j)
                    vk = T.axis.spatial(feat_size, k)
                    T.reads(A[vi, vj], B[J_indices[vi, vj], vk], J_indices[vi, vj])
                    T.writes(C[vi, vk])
                    T.sblock_attr({"sparse": True})
                    with T.init():
                        C[vi, vk] = T.float32(0)
                    C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]
