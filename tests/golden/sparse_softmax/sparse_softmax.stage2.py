@T.prim_func
def sparse_softmax(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"ROW_MAX": ["examples/sparse_softmax.py:21"], "ROW_SUM": ["examples/sparse_softmax.py:22"], "sparse_softmax0": ["examples/sparse_softmax.py:23"], "row_max0": ["examples/sparse_softmax.py:24", "examples/sparse_softmax.py:27"], "row_sum0": ["examples/sparse_softmax.py:28", "examples/sparse_softmax.py:31"], "normalize0": ["examples/sparse_softmax.py:32", "examples/sparse_softmax.py:33"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J), "float32")
    ROW_MAX = T.alloc_sparse_buffer((I,), "float32")
    ROW_SUM = T.alloc_sparse_buffer((I,), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    for i in range(m):
        with T.sblock("sparse_softmax0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], ROW_MAX[vi], A[vi, 0:n], ROW_SUM[vi])
            T.writes(ROW_MAX[vi], ROW_SUM[vi], B[vi, 0:n])
            T.sblock_attr({"sparse": True})
            ROW_MAX[vi] = T.float32(-3.4028234663852886e+38)
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("row_max0"):
                    vj = T.axis.reduce(n, j)
                    T.reads(ROW_MAX[vi], A[vi, vj])
                    T.writes(ROW_MAX[vi])
                    T.sblock_attr({"sparse": True})
                    ROW_MAX[vi] = T.max(ROW_MAX[vi], A[vi, vj])
            ROW_SUM[vi] = T.float32(0)
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("row_sum0"):
                    vj = T.axis.reduce(n, j)
                    T.reads(ROW_SUM[vi], A[vi, vj], ROW_MAX[vi])
                    T.writes(ROW_SUM[vi])
                    T.sblock_attr({"sparse": True})
                    ROW_SUM[vi] = ROW_SUM[vi] + T.exp(A[vi, vj] - ROW_MAX[vi])
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("normalize0"):
                    vj = T.axis.spatial(n, j)
                    T.reads(A[vi, vj], ROW_MAX[vi], ROW_SUM[vi])
                    T.writes(B[vi, vj])
                    T.sblock_attr({"sparse": True})
                    B[vi, vj] = T.exp(A[vi, vj] - ROW_MAX[vi]) / ROW_SUM[vi]
