# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def ragged_fuse3_reduction(x: T.Buffer(("nnz_m", "feat_size"), "float32"), out: T.Buffer(("rows", feat_size), "float32"), indptr_j: T.Buffer((rows + 1,), "int32"), indptr_k: T.Buffer(("nnz_j + 1",), "int32"), indptr_m: T.Buffer(("nnz_k + 1",), "int32"), rows: T.int32, max_j: T.int32, max_k: T.int32, max_m: T.int32, feat_size: T.int32, nnz_j: T.int32, nnz_k: T.int32, nnz_m: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"ragged_fuse3_reduction0": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction0_init": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30", "tests/transforms/scripts/ragged_fuse3_reduction.py:32"], "ragged_fuse3_reduction1": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30", "tests/transforms/scripts/ragged_fuse3_reduction.py:33"], "ragged_fuse3_reduction_jkm_pos0": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction_jkm_pos1": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction_jkm_search0": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"], "ragged_fuse3_reduction_jkm_search1": ["tests/transforms/scripts/ragged_fuse3_reduction.py:30"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i, l in T.grid(rows, feat_size):
        with T.sblock("ragged_fuse3_reduction0"):
            vi, vl = T.axis.remap("SS", [i, l])
            T.reads(indptr_m[0:nnz_k + 1], indptr_j[0:rows + 1], indptr_k[0:nnz_j + 1], out[vi, vl], x[0:nnz_m, vl])
            T.writes(out[vi, vl])
            T.sblock_attr({"sparse": True})
            ragged_fuse3_reduction_jkm_pos0 = T.sblock_alloc_buffer((nnz_m,), "int32", scope="local")
            ragged_fuse3_reduction_jkm_pos1 = T.sblock_alloc_buffer((nnz_m,), "int32", scope="local")
            out[vi, vl] = T.float32(0.0)
            for jkm in range(indptr_m[indptr_k[indptr_j[vi + 1]]] - indptr_m[indptr_k[indptr_j[vi]]]):
                with T.sblock("ragged_fuse3_reduction_jkm_search0"):
                    vjkm = T.axis.spatial(nnz_m, jkm)
                    T.reads(indptr_j[0:rows + 1], indptr_m[0:nnz_k + 1])
                    T.writes(ragged_fuse3_reduction_jkm_pos0[vjkm])
                    T.sblock_attr({"sparse": True})
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    lohi[0] = 0
                    lohi[1] = indptr_j[vi + 1] - indptr_j[vi]
                    while lohi[0] < lohi[1]:
                        if T.if_then_else(T.if_then_else((lohi[0] + lohi[1]) // 2 + indptr_j[vi] >= 0 and (lohi[0] + lohi[1]) // 2 + indptr_j[vi] < nnz_j + 1, indptr_k[(lohi[0] + lohi[1]) // 2 + indptr_j[vi]], 0) >= 0 and T.if_then_else((lohi[0] + lohi[1]) // 2 + indptr_j[vi] >= 0 and (lohi[0] + lohi[1]) // 2 + indptr_j[vi] < nnz_j + 1, indptr_k[(lohi[0] + lohi[1]) // 2 + indptr_j[vi]], 0) < nnz_k + 1, indptr_m[T.if_then_else((lohi[0] + lohi[1]) // 2 + indptr_j[vi] >= 0 and (lohi[0] + lohi[1]) // 2 + indptr_j[vi] < nnz_j + 1, indptr_k[(lohi[0] + lohi[1]) // 2 + indptr_j[vi]], 0)], 0) <= vjkm + indptr_m[indptr_k[indptr_j[vi]]]:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    ragged_fuse3_reduction_jkm_pos0[vjkm] = lohi[0] - 1
                with T.sblock("ragged_fuse3_reduction_jkm_search1"):
                    vjkm = T.axis.spatial(nnz_m, jkm)
                    T.reads(indptr_k[0:nnz_j + 1], ragged_fuse3_reduction_jkm_pos0[vjkm], indptr_m[0:nnz_k + 1])
                    T.writes(ragged_fuse3_reduction_jkm_pos1[vjkm])
                    T.sblock_attr({"sparse": True})
                    lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
                    lohi[0] = 0
                    lohi[1] = T.if_then_else(indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] + 1 >= 0 and indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] + 1 < nnz_j + 1, indptr_k[indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] + 1], 0) - T.if_then_else(indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] >= 0 and indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] < nnz_j + 1, indptr_k[indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm]], 0)
                    while lohi[0] < lohi[1]:
                        if T.if_then_else((lohi[0] + lohi[1]) // 2 + T.if_then_else(indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] >= 0 and indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] < nnz_j + 1, indptr_k[indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm]], 0) >= 0 and (lohi[0] + lohi[1]) // 2 + T.if_then_else(indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] >= 0 and indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] < nnz_j + 1, indptr_k[indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm]], 0) < nnz_k + 1, indptr_m[(lohi[0] + lohi[1]) // 2 + T.if_then_else(indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] >= 0 and indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm] < nnz_j + 1, indptr_k[indptr_j[vi] + ragged_fuse3_reduction_jkm_pos0[vjkm]], 0)], 0) <= vjkm + indptr_m[indptr_k[indptr_j[vi]]]:
                            lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                        else:
                            lohi[1] = (lohi[0] + lohi[1]) // 2
                    ragged_fuse3_reduction_jkm_pos1[vjkm] = lohi[0] - 1
                with T.sblock("ragged_fuse3_reduction1"):
                    vjkm = T.axis.reduce(nnz_m, jkm)
                    T.reads(out[vi, vl], x[vjkm + indptr_m[indptr_k[indptr_j[vi]]], vl], ragged_fuse3_reduction_jkm_pos0[vjkm], ragged_fuse3_reduction_jkm_pos1[vjkm], indptr_m[0:nnz_k + 1])
                    T.writes(out[vi, vl])
                    T.sblock_attr({"sparse": True})
                    out[vi, vl] = out[vi, vl] + x[vjkm + indptr_m[indptr_k[indptr_j[vi]]], vl]
