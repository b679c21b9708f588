@T.prim_func
def sddmm_fused(a: T.handle, b: T.handle, x: T.handle, y: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"sddmm_fused0": ["examples/sddmm_fused.py:27", "examples/sddmm_fused.py:30"], "sddmm_fused0_init": ["examples/sddmm_fused.py:27", "examples/sddmm_fused.py:29"], "sddmm_fused_ij_search0": ["examples/sddmm_fused.py:27"], "sddmm_fused_ij_pos0": ["examples/sddmm_fused.py:27"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (I, K), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    X = T.match_sparse_buffer(x, (I, J), "float32")
    Y = T.match_sparse_buffer(y, (I, J), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    sddmm_fused_ij_pos0 = T.alloc_buffer((nnz,), "int32", scope="local")
    for ij in range(nnz):
        with T.sblock("sddmm_fused_ij_search0"):
            vij = T.axis.spatial(nnz, ij)
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            T.reads(J_indptr[0:m + 1])
            T.writes(sddmm_fused_ij_pos0[vij])
            T.sblock_attr({"sparse": True})
            lohi[0] = 0
            lohi[1] = m
            while lohi[0] < lohi[1]:
                if J_indptr[(lohi[0] + lohi[1]) // 2] <= vij:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            sddmm_fused_ij_pos0[vij] = lohi[0] - 1
        for k in range(feat_size):
            with T.sblock("sddmm_fused0"):
                vij, vk = T.axis.remap("SR", [ij, k])
                T.reads(sddmm_fused_ij_pos0[vij], J_indptr[sddmm_fused_ij_pos0[vij]], A[sddmm_fused_ij_pos0[vij], vk], B[J_indices[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]], vk], J_indices[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]], X[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]])
                T.writes(Y[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]])
                T.sblock_attr({"sparse": True})
                with T.init():
                    Y[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]] = T.float32(0)
                Y[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]] = Y[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]] + A[sddmm_fused_ij_pos0[vij], vk] * B[J_indices[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]], vk] * X[sddmm_fused_ij_pos0[vij], vij - J_indptr[sddmm_fused_ij_pos0[vij]]]
