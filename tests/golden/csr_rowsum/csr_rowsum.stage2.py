@T.prim_func
def csr_rowsum(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"csr_rowsum0": ["examples/csr_rowsum.py:20"], "csr_rowsum1": ["examples/csr_rowsum.py:20", "examples/csr_rowsum.py:23"], "csr_rowsum0_init": ["examples/csr_rowsum.py:20", "examples/csr_rowsum.py:22"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    for i in range(m):
        with T.sblock("csr_rowsum0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], B[vi], A[vi, 0:n])
            T.writes(B[vi])
            T.sblock_attr({"sparse": True})
            B[vi] = T.float32(0)
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("csr_rowsum1"):
                    vj = T.axis.reduce(n, j)
                    T.reads(B[vi], A[vi, vj])
                    T.writes(B[vi])
                    T.sblock_attr({"sparse": True})
                    B[vi] = B[vi] + A[vi, vj]
