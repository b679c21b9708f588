from sparsetir.script import tir as T


# b[i, j, k] = 2 a[i, j, k] + (100 i + 10 j + k) over a 3-level CSF tensor, as one loop over all
# stored entries: T.fuse of three axes recovers i and j by binary search.

@T.prim_func
def csf_scale(a: T.handle, b: T.handle, indptr_j: T.handle, indices_j: T.handle, indptr_k: T.handle,
              indices_k: T.handle, m: T.int32, n: T.int32, p: T.int32, nnz_j: T.int32, nnz_k: T.int32) -> None:
    T.func_attr({"global_symbol": "csf_scale", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz_j), (indptr_j, indices_j), "int32")
    K = T.sparse_variable(J, (p, nnz_k), (indptr_k, indices_k), "int32")
    A = T.match_sparse_buffer(a, (I, J, K), "float32")
    B = T.match_sparse_buffer(b, (I, J, K), "float32")
    with T.sp_iter([T.fuse(I, J, K)], "SSS", "csf_scale") as [i, j, k]:
        B[i, j, k] = A[i, j, k] * T.float32(2) + T.cast(i * 100 + j * 10 + k, "float32")
