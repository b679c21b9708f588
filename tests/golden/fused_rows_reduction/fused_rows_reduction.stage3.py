# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def fused_rows_reduction(x: T.Buffer(("nnz_l",), "float32"), out: T.Buffer(("nnz_j",), "float32"), indptr_j: T.Buffer(("m + 1",), "int32"), indptr_k: T.Buffer((nnz_j + 1,), "int32"), indptr_l: T.Buffer(("nnz_k + 1",), "int32"), m: T.int32, max_j: T.int32, max_k: T.int32, max_l: T.int32, nnz_j: T.int32, nnz_k: T.int32, nnz_l: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"fused_rows_reduction0": ["tests/transforms/scripts/fused_rows_reduction.py:29"], "fused_rows_reduction0_init": ["tests/transforms/scripts/fused_rows_reduction.py:29", "tests/transforms/scripts/fused_rows_reduction.py:31"], "fused_rows_reduction1": ["tests/transforms/scripts/fused_rows_reduction.py:29"], "fused_rows_reduction2": ["tests/transforms/scripts/fused_rows_reduction.py:29", "tests/transforms/scripts/fused_rows_reduction.py:32"], "fused_rows_reduction_ij_pos0": ["tests/transforms/scripts/fused_rows_reduction.py:29"], "fused_rows_reduction_ij_search0": ["tests/transforms/scripts/fused_rows_reduction.py:29"]}, "tir.noalias": True})
    # with T.sblock("root"):
    fused_rows_reduction_ij_pos0 = T.sblock_alloc_buffer((nnz_j,), "int32", scope="local")
    for ij in range(nnz_j):
        with T.sblock("fused_rows_reduction_ij_search0"):
            vij = T.axis.spatial(nnz_j, ij)
            T.reads(indptr_j[0:m + 1])
            T.writes(fused_rows_reduction_ij_pos0[vij])
            T.sblock_attr({"sparse": True})
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            lohi[0] = 0
            lohi[1] = m
            while lohi[0] < lohi[1]:
                if T.if_then_else((lohi[0] + lohi[1]) // 2 >= 0 and (lohi[0] + lohi[1]) // 2 < m + 1, indptr_j[(lohi[0] + lohi[1]) // 2], 0) <= vij:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            fused_rows_reduction_ij_pos0[vij] = lohi[0] - 1
        with T.sblock("fused_rows_reduction0"):
            vij = T.axis.spatial(nnz_j, ij)
            T.reads(fused_rows_reduction_ij_pos0[vij], indptr_j[fused_rows_reduction_ij_pos0[vij]], indptr_k[0:nnz_j + 1], indptr_l[0:nnz_k + 1], out[vij], x[0:nnz_l])
            T.writes(out[vij])
            T.sblock_attr({"sparse": True})
            out[vij] = T.float32(0.0)
            for k in range(indptr_k[vij + 1] - indptr_k[vij]):
                with T.sblock("fused_rows_reduction1"):
                    vk = T.axis.reduce(max_k, k)
                    T.reads(indptr_l[0:nnz_k + 1], indptr_j[fused_rows_reduction_ij_pos0[vij]], out[vij], x[0:nnz_l])
                    T.writes(out[vij])
                    T.sblock_attr({"sparse": True})
                    for l in range(indptr_l[indptr_k[vij] + vk + 1] - indptr_l[indptr_k[vij] + vk]):
                        with T.sblock("fused_rows_reduction2"):
                            vl = T.axis.reduce(max_l, l)
                            T.reads(out[vij], indptr_j[fused_rows_reduction_ij_pos0[vij]], x[indptr_l[indptr_k[vij] + vk] + vl])
                            T.writes(out[vij])
                            T.sblock_attr({"sparse": True})
                            out[vij] = out[vij] + x[indptr_l[indptr_k[vij] + vk] + vl]
