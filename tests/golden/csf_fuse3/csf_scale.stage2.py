@T.prim_func
def csf_scale(a: T.handle, b: T.handle, indptr_j: T.handle, indices_j: T.handle, indptr_k: T.handle, indices_k: T.handle, m: T.int32, n: T.int32, p: T.int32, nnz_j: T.int32, nnz_k: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"csf_scale0": ["tests/transforms/scripts/csf_fuse3.py:16", "tests/transforms/scripts/csf_fuse3.py:17"], "csf_scale_ijk_search0": ["tests/transforms/scripts/csf_fuse3.py:16"], "csf_scale_ijk_pos0": ["tests/transforms/scripts/csf_fuse3.py:16"], "csf_scale_ijk_search1": ["tests/transforms/scripts/csf_fuse3.py:16"], "csf_scale_ijk_pos1": ["tests/transforms/scripts/csf_fuse3.py:16"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz_j), (indptr_j, indices_j))
    J_dense = T.dense_variable(I, (n, nnz_j), indptr_j)
    K = T.sparse_variable(J, (p, nnz_k), (indptr_k, indices_k))
    K_dense = T.dense_variable(J_dense, (p, nnz_k), indptr_k)
    A = T.match_sparse_buffer(a, (I, J, K), "float32")
    B = T.match_sparse_buffer(b, (I, J, K), "float32")
    J_indptr = T.match_sparse_buffer(indptr_j, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices_j, (I, J_dense), "int32")
    K_indptr = T.match_sparse_buffer(indptr_k, (I, J_dense), "int32", extra_storage=1)
    K_indices = T.match_sparse_buffer(indices_k, (I, J_dense, K_dense), "int32")
    csf_scale_ijk_pos0 = T.alloc_buffer((nnz_k,), "int32", scope="local")
    csf_scale_ijk_pos1 = T.alloc_buffer((nnz_k,), "int32", scope="local")
    for ijk in range(nnz_k):
        with T.sblock("csf_scale_ijk_search0"):
            vijk = T.axis.spatial(nnz_k, ijk)
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            T.reads(K_indptr[0:m, 0])
            T.writes(csf_scale_ijk_pos0[vijk])
            T.sblock_attr({"sparse": True})
            lohi[0] = 0
            lohi[1] = m
            while lohi[0] < lohi[1]:
                if K_indptr[(lohi[0] + lohi[1]) // 2, 0] <= vijk:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            csf_scale_ijk_pos0[vijk] = lohi[0] - 1
        with T.sblock("csf_scale_ijk_search1"):
            vijk = T.axis.spatial(nnz_k, ijk)
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            T.reads(J_indptr[0:m + 1], csf_scale_ijk_pos0[vijk], K_indptr[csf_scale_ijk_pos0[vijk], 0:n + 1])
            T.writes(csf_scale_ijk_pos1[vijk])
            T.sblock_attr({"sparse": True})
            lohi[0] = 0
            lohi[1] = J_indptr[csf_scale_ijk_pos0[vijk] + 1] - J_indptr[csf_scale_ijk_pos0[vijk]]
            while lohi[0] < lohi[1]:
                if K_indptr[csf_scale_ijk_pos0[vijk], (lohi[0] + lohi[1]) // 2] <= vijk:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            csf_scale_ijk_pos1[vijk] = lohi[0] - 1
        with T.sblock("csf_scale0"):
            vijk = T.axis.spatial(nnz_k, ijk)
            T.reads(A[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], vijk - K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]]], csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]], J_indices[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]], K_indices[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], vijk - K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]]])
            T.writes(B[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], vijk - K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]]])
            T.sblock_attr({"sparse": True})
            B[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], vijk - K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]]] = A[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], vijk - K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]]] * T.float32(2) + T.cast(csf_scale_ijk_pos0[vijk] * 100 + J_indices[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]] * 10 + K_indices[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], vijk - K_indptr[csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk]]], "float32")
