# from sparsetir.script import tir as T

@T.prim_func
def csr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"csr_spmm0": ["csr_spmm.py:25"], "csr_spmm1": ["csr_spmm.py:25", "csr_spmm.py:28"], "csr_spmm1_init": ["csr_spmm.py:25", "csr_spmm.py:27"]}, "tir.noalias": True})
    I = T.dense_fixed(m, idtype="int32")
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), idtype="int32", sorted=True)
    J_dense = T.dense_variable(I, (n, nnz), indptr, idtype="int32")
    J_detach = T.dense_fixed(n, idtype="int32")
    K = T.dense_fixed(feat_size, idtype="int32")
    A = T.match_sparse_buffer(a, [I, J], dtype="float32")
    B = T.match_sparse_buffer(b, [J_detach, K], dtype="float32")
    C = T.match_sparse_buffer(c, [I, K], dtype="float32")
    J_indptr = T.match_sparse_buffer(indptr, [I], dtype="int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, [I, J_dense], dtype="int32")
    # body
    # with T.sblock("root"):
    for i in T.parallel(m):
        with T.sblock("csr_spmm0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], A[vi, 0:n], B[0:n, 0:feat_size], J_indices[vi, 0:n])
            T.writes(C[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for k_0 in range((feat_size + 7) // 8):
                for k_1_init in T.vectorized(8):
                    with T.sblock("csr_spmm1_init"):
                        vk = T.axis.spatial(feat_size, k_0 * 8 + k_1_init)
                        T.where(k_0 * 8 + k_1_init < feat_size)
                        T.reads()
                        T.writes(C[vi, vk])
                        T.sblock_attr({"sparse": True})
                        C[vi, vk] = T.float32(0.0)
                for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                    for k_1 in T.vectorized(8):
                        with T.sblock("csr_spmm1_update"):
                            vj = T.axis.reduce(n, j)
                            vk = T.axis.spatial(feat_size, k_0 * 8 + k_1)
                            T.where(k_0 * 8 + k_1 < feat_size)
                            T.reads(C[vi, vk], A[vi, vj], B[J_indices[vi, vj], vk], J_indices[vi, vj])
                            T.writes(C[vi, vk])
                            T.sblock_attr({"sparse": True})
                            C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]
