@T.prim_func
def sddmm(a: T.handle, b: T.handle, x: T.handle, y: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"sddmm0": ["examples/sddmm.py:27"], "sddmm1": ["examples/sddmm.py:27", "examples/sddmm.py:30"], "sddmm1_init": ["examples/sddmm.py:27", "examples/sddmm.py:29"]}, "tir.noalias": True})
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
    for i in range(m):
        with T.sblock("sddmm0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], A[vi, 0:feat_size], B[0:n, 0:feat_size], J_indices[vi, 0:n], X[vi, 0:n])
            T.writes(Y[vi, 0:n])
            T.sblock_attr({"sparse": True})
            for j, k in T.grid(J_indptr[vi + 1] - J_indptr[vi], feat_size):
                with T.sblock("sddmm1"):
                    vj = T.axis.spatial(n, j)
                    vk = T.axis.reduce(feat_size, k)
                    T.reads(A[vi, vk], B[J_indices[vi, vj], vk], J_indices[vi, vj], X[vi, vj])
                    T.writes(Y[vi, vj])
                    T.sblock_attr({"sparse": True})
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[J_indices[vi, vj], vk] * X[vi, vj]
