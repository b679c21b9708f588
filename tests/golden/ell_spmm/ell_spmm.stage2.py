@T.prim_func
def ell_spmm(a: T.handle, b: T.handle, c: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz_cols: T.int32, feat_size: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"ell_spmm0": ["examples/ell_spmm.py:24", "examples/ell_spmm.py:27"], "ell_spmm0_init": ["examples/ell_spmm.py:24", "examples/ell_spmm.py:26"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_fixed(I, (n, nnz_cols), indices)
    J_dense = T.dense_fixed(nnz_cols)
    J_detach = T.dense_fixed(n)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    for i, j, k in T.grid(m, nnz_cols, feat_size):
        with T.sblock("ell_spmm0"):
            vi, vj, vk = T.axis.remap("SRS", [i, j, k])
            T.reads(A[vi, vj], B[J_indices[vi, vj], vk], J_indices[vi, vj])
            T.writes(C[vi, vk])
            T.sblock_attr({"sparse": True})
            with T.init():
                C[vi, vk] = T.float32(0)
            C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]
