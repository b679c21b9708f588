# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def ragged_fused_reduction(x: T.Buffer(("nnz_k", "feat_size"), "float32"), out: T.Buffer(("m", feat_size), "float32"), indptr_j: T.Buffer((m + 1,), "int32"), indptr_k: T.Buffer(("nnz_j + 1",), "int32"), m: T.int32, max_j: T.int32, max_k: T.int32, feat_size: T.int32, nnz_j: T.int32, nnz_k: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"ragged_fused_reduction0": ["examples/ragged_fused_reduction.py:28"], "ragged_fused_reduction1": ["examples/ragged_fused_reduction.py:28", "examples/ragged_fused_reduction.py:31"], "ragged_fused_reduction1_init": ["examples/ragged_fused_reduction.py:28", "examples/ragged_fused_reduction.py:30"], "ragged_fused_reduction_jk_pos0": ["examples/ragged_fused_reduction.py:28"], "ragged_fused_reduction_jk_search0": ["examples/ragged_fused_reduction.py:28"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("ragged_fused_reduction0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr_k[0:nnz_j + 1], indptr_j[0:m + 1], x[0:nnz_k, 0:feat_size])
            T.writes(out[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            ragged_fused_reduction_jk_pos0 = T.sblock_alloc_buffer((nnz_k,), "int32", scope="local")
            for l_init in range(feat_size):
                with T.sblock("ragged_fused_reduction1_init"):
                    vl = T.axis.spatial(feat_size, l_init)
                    T.reads()
                    T.writes(out[vi, vl])
                    T.sblock_attr({"sparse": True})
                    out[vi, vl] = T.float32(0.0)
            for jk in range(indptr_k[indptr_j[vi + 1]] - indptr_k[indptr_j[vi]]):
                with T.sblock("ragged_fused_reduction_jk_search0"):
                    vjk = T.axis.spatial(nnz_k, jk)
                    T.reads(indptr_j[0:m + 1], indptr_k[0:nnz_j + 1])
                    T.writes(ragged_fused_reduction_jk_pos0[vjk])
                    T.sblock_attr({"sparse": True})
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    lohi[0] = 0
                    lohi[1] = indptr_j[vi + 1] - indptr_j[vi]
                    while lohi[0] < lohi[1]:
                        if T.if_then_else((lohi[0] + lohi[1]) // 2 + indptr_j[vi] >= 0 and (lohi[0] + lohi[1]) // 2 + indptr_j[vi] < nnz_j + 1, indptr_k[(lohi[0] + lohi[1]) // 2 + indptr_j[vi]], 0) <= vjk + indptr_k[indptr_j[vi]]:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    ragged_fused_reduction_jk_pos0[vjk] = lohi[0] - 1
                for l in range(feat_size):
                    with T.sblock("ragged_fused_reduction1_update"):
                        vjk = T.axis.reduce(nnz_k, jk)
                        vl = T.axis.spatial(feat_size, l)
                        T.reads(out[vi, vl], x[vjk + indptr_k[indptr_j[vi]], vl], ragged_fused_reduction_jk_pos0[vjk], indptr_k[0:nnz_j + 1])
                        T.writes(out[vi, vl])
                        T.sblock_attr({"sparse": True})
                        out[vi, vl] = out[vi, vl] + x[vjk + indptr_k[indptr_j[vi]], vl]
