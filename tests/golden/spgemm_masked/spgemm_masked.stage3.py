# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def spgemm_masked(a: T.Buffer(("nnz_a",), "float32"), b: T.Buffer(("nnz_b",), "float32"), c: T.Buffer(("nnz_c",), "float32"), indptr_a: T.Buffer(("m + 1",), "int32"), indices_a: T.Buffer((nnz_a,), "int32"), indptr_b: T.Buffer(("k + 1",), "int32"), indices_b: T.Buffer((nnz_b,), "int32"), indptr_c: T.Buffer((m + 1,), "int32"), indices_c: T.Buffer((nnz_c,), "int32"), m: T.int32, k: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.searched_axes": ["JC"], "sparsetir.spans": {"spgemm_masked0": ["examples/spgemm_masked.py:37"], "spgemm_masked1": ["examples/spgemm_masked.py:37"], "spgemm_masked2": ["examples/spgemm_masked.py:37", "examples/spgemm_masked.py:38"], "spgemm_masked2_JC_pos0": ["examples/spgemm_masked.py:38"], "spgemm_masked2_JC_search0": ["examples/spgemm_masked.py:38"], "spgemm_masked_zero0": ["examples/spgemm_masked.py:35"], "spgemm_masked_zero1": ["examples/spgemm_masked.py:35", "examples/spgemm_masked.py:36"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("spgemm_masked_zero0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr_c[0:m + 1])
            T.writes(c[0:nnz_c])
            T.sblock_attr({"sparse": True})
            for j in range(indptr_c[vi + 1] - indptr_c[vi]):
                with T.sblock("spgemm_masked_zero1"):
                    vj = T.axis.spatial(n, j)
                    T.reads()
                    T.writes(c[indptr_c[vi] + vj])
                    T.sblock_attr({"sparse": True})
                    c[indptr_c[vi] + vj] = T.float32(0.0)
    for i in range(m):
        with T.sblock("spgemm_masked0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr_a[0:m + 1], indptr_b[0:k + 1], indices_a[0:nnz_a], indptr_c[0:m + 1], indices_c[0:nnz_c], indices_b[0:nnz_b], c[0:nnz_c], a[0:nnz_a], b[0:nnz_b])
            T.writes(c[0:nnz_c])
            T.sblock_attr({"sparse": True})
            for kk in range(indptr_a[vi + 1] - indptr_a[vi]):
                with T.sblock("spgemm_masked1"):
                    vkk = T.axis.reduce(k, kk)
                    T.reads(indptr_b[0:k + 1], indices_a[indptr_a[vi] + vkk], indptr_c[0:m + 1], indices_c[0:nnz_c], indices_b[0:nnz_b], c[0:nnz_c], a[indptr_a[vi] + vkk], b[0:nnz_b])
                    T.writes(c[0:nnz_c])
                    T.sblock_attr({"sparse": True})
                    spgemm_masked2_JC_pos0 = T.sblock_alloc_buffer((n,), "int32", scope="local")
                    for j in range(indptr_b[indices_a[indptr_a[vi] + vkk] + 1] - indptr_b[indices_a[indptr_a[vi] + vkk]]):
                        with T.sblock("spgemm_masked2_JC_search0"):
                            vj = T.axis.spatial(n, j)
                            T.reads(indptr_c[0:m + 1], indices_c[0:nnz_c], indices_b[indptr_b[indices_a[indptr_a[vi] + vkk]] + vj], indices_a[indptr_a[vi] + vkk])
                            T.writes(spgemm_masked2_JC_pos0[vj])
                            T.sblock_attr({"sparse": True})
                            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                            lohi[0] = 0
                            lohi[1] = indptr_c[vi + 1] - indptr_c[vi]
                            while lohi[0] < lohi[1]:
                                if T.if_then_else((lohi[0] + lohi[1]) // 2 + indptr_c[vi] >= 0 and (lohi[0] + lohi[1]) // 2 + indptr_c[vi] < nnz_c, indices_c[(lohi[0] + lohi[1]) // 2 + indptr_c[vi]], 0) < indices_b[indptr_b[indices_a[indptr_a[vi] + vkk]] + vj]:
                                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                                else:
                                    lohi[1] = (lohi[0] + lohi[1]) // 2
                            spgemm_masked2_JC_pos0[vj] = T.if_then_else(lohi[0] < indptr_c[vi + 1] - indptr_c[vi], T.if_then_else(T.if_then_else(indptr_c[vi] + lohi[0] >= 0 and indptr_c[vi] + lohi[0] < nnz_c, indices_c[indptr_c[vi] + lohi[0]], 0) == indices_b[indptr_b[indices_a[indptr_a[vi] + vkk]] + vj], lohi[0], -1), -1)
                        with T.sblock("spgemm_masked2"):
                            vj = T.axis.spatial(n, j)
                            T.reads(spgemm_masked2_JC_pos0[vj], c[indptr_c[vi] + spgemm_masked2_JC_pos0[vj]], a[indptr_a[vi] + vkk], b[indptr_b[indices_a[indptr_a[vi] + vkk]] + vj], indices_a[indptr_a[vi] + vkk])
                            T.writes(c[indptr_c[vi] + spgemm_masked2_JC_pos0[vj]])
                            T.sblock_attr({"sparse": True})
                            if spgemm_masked2_JC_pos0[vj] >= 0:
                                if indptr_c[vi] + spgemm_masked2_JC_pos0[vj] < nnz_c:
                                    c[indptr_c[vi] + spgemm_masked2_JC_pos0[vj]] = T.if_then_else(spgemm_masked2_JC_pos0[vj] >= 0, T.if_then_else(indptr_c[vi] + spgemm_masked2_JC_pos0[vj] < nnz_c, c[indptr_c[vi] + spgemm_masked2_JC_pos0[vj]], T.float32(0.0)), T.float32(0.0)) + a[indptr_a[vi] + vkk] * b[indptr_b[indices_a[indptr_a[vi] + vkk]] + vj]
