@T.prim_func
def batched_ragged_matmul(x: T.handle, y: T.handle, z: T.handle, indptr_i: T.handle, indptr_j: T.handle, indptr_k: T.handle, indptr_ij: T.handle, indptr_jk: T.handle, indptr_ik: T.handle, batch: T.int32, max_i: T.int32, max_j: T.int32, max_k: T.int32, nnz_i: T.int32, nnz_j: T.int32, nnz_ij: T.int32, nnz_jk: T.int32, nnz_ik: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"batched_ragged_matmul0": ["examples/batched_ragged_matmul.py:41"], "batched_ragged_matmul1": ["examples/batched_ragged_matmul.py:41", "examples/batched_ragged_matmul.py:44"], "batched_ragged_matmul1_init": ["examples/batched_ragged_matmul.py:41", "examples/batched_ragged_matmul.py:43"]}, "tir.noalias": True})
    B = T.dense_fixed(batch)
    I = T.dense_variable(B, (max_i, nnz_i), indptr_i)
    J = T.dense_variable(B, (max_j, nnz_j), indptr_j)
    K = T.dense_variable(B, max_k, indptr_k)
    IJ = T.dense_variable(I, (max_j, nnz_ij), indptr_ij)
    JK = T.dense_variable(J, (max_k, nnz_jk), indptr_jk)
    IK = T.dense_variable(I, (max_k, nnz_ik), indptr_ik)
    X = T.match_sparse_buffer(x, (B, I, IJ), "float32")
    Y = T.match_sparse_buffer(y, (B, J, JK), "float32")
    Z = T.match_sparse_buffer(z, (B, I, IK), "float32")
    I_indptr = T.match_sparse_buffer(indptr_i, (B,), "int32", extra_storage=1)
    J_indptr = T.match_sparse_buffer(indptr_j, (B,), "int32", extra_storage=1)
    K_indptr = T.match_sparse_buffer(indptr_k, (B,), "int32", extra_storage=1)
    IJ_indptr = T.match_sparse_buffer(indptr_ij, (B, I), "int32", extra_storage=1)
    JK_indptr = T.match_sparse_buffer(indptr_jk, (B, J), "int32", extra_storage=1)
    IK_indptr = T.match_sparse_buffer(indptr_ik, (B, I), "int32", extra_storage=1)
    for b in range(batch):
        with T.sblock("batched_ragged_matmul0"):
            vb = T.axis.spatial(batch, b)
            T.reads(I_indptr[vb:vb + 2], J_indptr[vb:vb + 2], K_indptr[vb:vb + 2], X[vb, 0:max_i, 0:max_j], Y[vb, 0:max_j, 0:max_k])
            T.writes(Z[vb, 0:max_i, 0:max_k])
            T.sblock_attr({"sparse": True})
            for i, j, k in T.grid(I_indptr[vb + 1] - I_indptr[vb], J_indptr[vb + 1] - J_indptr[vb], K_indptr[vb + 1] - K_indptr[vb]):
                with T.sblock("batched_ragged_matmul1"):
                    vi = T.axis.spatial(max_i, i)
                    vj = T.axis.reduce(max_j, j)
                    vk = T.axis.spatial(max_k, k)
                    T.reads(X[vb, vi, vj], Y[vb, vj, vk])
                    T.writes(Z[vb, vi, vk])
                    T.sblock_attr({"sparse": True})
                    with T.init():
                        Z[vb, vi, vk] = T.float32(0)
                    Z[vb, vi, vk] = Z[vb, vi, vk] + X[vb, vi, vj] * Y[vb, vj, vk]
