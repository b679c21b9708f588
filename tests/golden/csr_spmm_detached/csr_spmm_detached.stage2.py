@T.prim_func
def csr_spmm_detached(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.searched_axes": ["J"], "sparsetir.spans": {"csr_spmm_detached0": ["examples/csr_spmm_detached.py:26", "examples/csr_spmm_detached.py:29"], "csr_spmm_detached0_init": ["examples/csr_spmm_detached.py:26", "examples/csr_spmm_detached.py:28"], "csr_spmm_detached0_J_search0": ["examples/csr_spmm_detached.py:29"], "csr_spmm_detached0_J_pos0": ["examples/csr_spmm_detached.py:29"]}, "tir.noalias": True})
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
    csr_spmm_detached0_J_pos0 = T.alloc_buffer((m, n), "int32", scope="local")
    for i, j in T.grid(m, n):
        with T.sblock("csr_spmm_detached0_J_search0"):
            vi, vj = T.axis.remap("SS", [i, j])
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            T.reads(J_indptr[vi:vi + 2], J_indices[vi, 0:n])
            T.writes(csr_spmm_detached0_J_pos0[vi, vj])
            T.sblock_attr({"sparse": True})
            lohi[0] = 0
            lohi[1] = J_indptr[vi + 1] - J_indptr[vi]
            while lohi[0] < lohi[1]:
                if J_indices[vi, (lohi[0] + lohi[1]) // 2] < vj:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            csr_spmm_detached0_J_pos0[vi, vj] = T.if_then_else(lohi[0] < J_indptr[vi + 1] - J_indptr[vi], T.if_then_else(J_indices[vi, lohi[0]] == vj, lohi[0], -1), -1)
        for k in range(feat_size):
            with T.sblock("csr_spmm_detached0"):
                vi, vj, vk = T.axis.remap("SRS", [i, j, k])
                T.reads(csr_spmm_detached0_J_pos0[vi, vj], A[vi, csr_spmm_detached0_J_pos0[vi, vj]], B[vj, vk])
                T.writes(C[vi, vk])
                T.sblock_attr({"sparse": True})
                with T.init():
                    C[vi, vk] = T.float32(0)
                C[vi, vk] = C[vi, vk] + T.if_then_else(csr_spmm_detached0_J_pos0[vi, vj] >= 0, A[vi, csr_spmm_detached0_J_pos0[vi, vj]], T.float32(0)) * B[vj, vk]
