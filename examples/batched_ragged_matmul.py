from sparsetir.script import tir as T


# A batch of dense matmuls of different shapes, Z[b] = X[b] @ Y[b] with X[b] of shape
# (rows_b, inner_b) and Y[b] of shape (inner_b, cols_b). I, J, K give each batch's extents;
# IJ, JK, IK are the per-row extents of the three ragged value buffers.
@T.prim_func
def batched_ragged_matmul(
    x: T.handle,
    y: T.handle,
    z: T.handle,
    indptr_i: T.handle,
    indptr_j: T.handle,
    indptr_k: T.handle,
    indptr_ij: T.handle,
    indptr_jk: T.handle,
    indptr_ik: T.handle,
    batch: T.int32,
    max_i: T.int32,
    max_j: T.int32,
    max_k: T.int32,
    nnz_i: T.int32,
    nnz_j: T.int32,
    nnz_ij: T.int32,
    nnz_jk: T.int32,
    nnz_ik: T.int32,
) -> None:
    T.func_attr(
        {"global_symbol": "batched_ragged_matmul", "tir.noalias": True, "sparse_tir_level": 2}
    )
    B = T.dense_fixed(batch)
    I = T.dense_variable(B, (max_i, nnz_i), indptr_i, "int32")
    J = T.dense_variable(B, (max_j, nnz_j), indptr_j, "int32")
    K = T.dense_variable(B, max_k, indptr_k, "int32")  # only iterated: no nnz needed
    IJ = T.dense_variable(I, (max_j, nnz_ij), indptr_ij, "int32")
    JK = T.dense_variable(J, (max_k, nnz_jk), indptr_jk, "int32")
    IK = T.dense_variable(I, (max_k, nnz_ik), indptr_ik, "int32")
    X = T.match_sparse_buffer(x, (B, I, IJ), "float32")
    Y = T.match_sparse_buffer(y, (B, J, JK), "float32")
    Z = T.match_sparse_buffer(z, (B, I, IK), "float32")
    with T.sp_iter([B, I, J, K], "SSRS", "batched_ragged_matmul") as [b, i, j, k]:
        with T.init():
            Z[b, i, k] = T.float32(0)
        Z[b, i, k] += X[b, i, j] * Y[b, j, k]
