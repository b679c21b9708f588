# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_to_bsr(a: T.Buffer(("nnz",), "float32"), b: T.Buffer(("nnzb", 4, 4), "float32"), indptr: T.Buffer(("m + 1",), "int32"), indices: T.Buffer((nnz,), "int32"), indptr_b: T.Buffer(("mb + 1",), "int32"), indices_b: T.Buffer((nnzb,), "int32"), m: T.int32, n: T.int32, nnz: T.int32, mb: T.int32, nb: T.int32, nnzb: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.searched_axes": ["JO"], "sparsetir.spans": {"csr_to_bsr0": ["examples/csr_to_bsr.py:30"], "csr_to_bsr1": ["examples/csr_to_bsr.py:30", "examples/csr_to_bsr.py:31"], "csr_to_bsr1_JO_pos0": ["examples/csr_to_bsr.py:31"], "csr_to_bsr1_JO_search0": ["examples/csr_to_bsr.py:31"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csr_to_bsr0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], indptr_b[0:mb + 1], indices_b[0:nnzb], indices[0:nnz], a[0:nnz])
            T.writes(b[0:nnzb, vi % 4, 0:4])
            T.sblock_attr({"sparse": True})
            csr_to_bsr1_JO_pos0 = T.sblock_alloc_buffer((n,), "int32", scope="local")
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("csr_to_bsr1_JO_search0"):
                    vj = T.axis.spatial(n, j)
                    T.reads(indptr_b[0:mb + 1], indices_b[0:nnzb], indices[indptr[vi] + vj])
                    T.writes(csr_to_bsr1_JO_pos0[vj])
                    T.sblock_attr({"sparse": True})
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    lohi[0] = 0
                    lohi[1] = T.if_then_else(vi // 4 < mb, T.if_then_else(vi // 4 + 1 < mb + 1, indptr_b[vi // 4 + 1], 0) - T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0), 0)
                    while lohi[0] < lohi[1]:
                        if T.if_then_else((lohi[0] + lohi[1]) // 2 + T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0) >= 0 and (lohi[0] + lohi[1]) // 2 + T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0) < nnzb, indices_b[(lohi[0] + lohi[1]) // 2 + T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0)], 0) < indices[indptr[vi] + vj] // 4:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    csr_to_bsr1_JO_pos0[vj] = T.if_then_else(lohi[0] < T.if_then_else(vi // 4 < mb, T.if_then_else(vi // 4 + 1 < mb + 1, indptr_b[vi // 4 + 1], 0) - T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0), 0), T.if_then_else(T.if_then_else(T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0) + lohi[0] >= 0 and T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0) + lohi[0] < nnzb, indices_b[T.if_then_else(vi // 4 < mb + 1, indptr_b[vi // 4], 0) + lohi[0]], 0) == indices[indptr[vi] + vj] // 4, lohi[0], -1), -1)
                with T.sblock("csr_to_bsr1"):
                    vj = T.axis.spatial(n, j)
                    T.reads(csr_to_bsr1_JO_pos0[vj], a[indptr[vi] + vj], indices[indptr[vi] + vj])
                    T.writes(b[indptr_b[vi // 4] + csr_to_bsr1_JO_pos0[vj], vi % 4, indices[indptr[vi] + vj] % 4])
                    T.sblock_attr({"sparse": True})
                    if vi // 4 < mb and csr_to_bsr1_JO_pos0[vj] >= 0:
                        if indptr_b[vi // 4] + csr_to_bsr1_JO_pos0[vj] < nnzb:
                            b[indptr_b[vi // 4] + csr_to_bsr1_JO_pos0[vj], vi % 4, indices[indptr[vi] + vj] % 4] = a[indptr[vi] + vj]
