@T.prim_func
def csr_to_bsr(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle, indptr_b: T.handle, indices_b: T.handle, m: T.int32, n: T.int32, nnz: T.int32, mb: T.int32, nb: T.int32, nnzb: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.searched_axes": ["JO"], "sparsetir.spans": {"csr_to_bsr0": ["examples/csr_to_bsr.py:30"], "csr_to_bsr1": ["examples/csr_to_bsr.py:30", "examples/csr_to_bsr.py:31"], "csr_to_bsr1_JO_search0": ["examples/csr_to_bsr.py:31"], "csr_to_bsr1_JO_pos0": ["examples/csr_to_bsr.py:31"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    J_dense = T.dense_variable(I, (n, nnz), indptr)
    IO = T.dense_fixed(mb)
    JO = T.sparse_variable(IO, (nb, nnzb), (indptr_b, indices_b))
    JO_dense = T.dense_variable(IO, (nb, nnzb), indptr_b)
    II = T.dense_fixed(4)
    JI = T.dense_fixed(4)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (IO, JO, II, JI), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")
    JO_indptr = T.match_sparse_buffer(indptr_b, (IO,), "int32", extra_storage=1)
    JO_indices = T.match_sparse_buffer(indices_b, (IO, JO_dense), "int32")
    for i in range(m):
        with T.sblock("csr_to_bsr0"):
            vi = T.axis.spatial(m, i)
            csr_to_bsr1_JO_pos0 = T.sblock_alloc_buffer((n,), "int32", scope="local")
            T.reads(J_indptr[vi:vi + 2], JO_indptr[vi // 4:vi // 4 + 2], JO_indices[vi // 4, 0:nb], J_indices[vi, 0:n], A[vi, 0:n])
            T.writes(B[vi // 4, 0:nb, vi % 4, 0:4])
            T.sblock_attr({"sparse": True})
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                with T.sblock("csr_to_bsr1_JO_search0"):
                    vj = T.axis.spatial(n, j)
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    T.reads(JO_indptr[vi // 4:vi // 4 + 2], JO_indices[vi // 4, 0:nb], J_indices[vi, vj])
                    T.writes(csr_to_bsr1_JO_pos0[vj])
                    T.sblock_attr({"sparse": True})
                    lohi[0] = 0
                    lohi[1] = T.if_then_else(vi // 4 < mb, JO_indptr[vi // 4 + 1] - JO_indptr[vi // 4], 0)
                    while lohi[0] < lohi[1]:
                        if JO_indices[vi // 4, (lohi[0] + lohi[1]) // 2] < J_indices[vi, vj] // 4:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    csr_to_bsr1_JO_pos0[vj] = T.if_then_else(lohi[0] < T.if_then_else(vi // 4 < mb, JO_indptr[vi // 4 + 1] - JO_indptr[vi // 4], 0), T.if_then_else(JO_indices[vi // 4, lohi[0]] == J_indices[vi, vj] // 4, lohi[0], -1), -1)
                with T.sblock("csr_to_bsr1"):
                    vj = T.axis.spatial(n, j)
                    T.reads(csr_to_bsr1_JO_pos0[vj], A[vi, vj], J_indices[vi, vj])
                    T.writes(B[vi // 4, csr_to_bsr1_JO_pos0[vj], vi % 4, J_indices[vi, vj] % 4])
                    T.sblock_attr({"sparse": True})
                    if vi // 4 < mb and csr_to_bsr1_JO_pos0[vj] >= 0:
                        B[vi // 4, csr_to_bsr1_JO_pos0[vj], vi % 4, J_indices[vi, vj] % 4] = A[vi, vj]
