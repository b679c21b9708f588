@T.prim_func
def csr_elementwise(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"csr_elementwise0": ["examples/csr_elementwise.py:20"], "csr_elementwise1": ["examples/csr_elementwise.py:20", "examples/csr_elementwise.py:21"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    for i in range(m):
        with T.sblock("csr_elementwise0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], A[vi, 0:n])
            T.writes(B[vi, 0:n])
            T.sblock_attr({"sparse": True})
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("csr_elementwise1"):
                    vj = T.axis.spatial(n, j)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    T.sblock_attr({"sparse": True})
                    B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
