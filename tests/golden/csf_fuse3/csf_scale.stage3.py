# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csf_scale(a: T.Buffer(("nnz_k",), "float32"), b: T.Buffer((nnz_k,), "float32"), indptr_j: T.Buffer(("m + 1",), "int32"), indices_j: T.Buffer(("nnz_j",), "int32"), indptr_k: T.Buffer((nnz_j + 1,), "int32"), indices_k: T.Buffer((nnz_k,), "int32"), m: T.int32, n: T.int32, p: T.int32, nnz_j: T.int32, nnz_k: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"csf_scale0": ["tests/transforms/scripts/csf_fuse3.py:16", "tests/transforms/scripts/csf_fuse3.py:17"], "csf_scale_ijk_pos0": ["tests/transforms/scripts/csf_fuse3.py:16"], "csf_scale_ijk_pos1": ["tests/transforms/scripts/csf_fuse3.py:16"], "csf_scale_ijk_search0": ["tests/transforms/scripts/csf_fuse3.py:16"], "csf_scale_ijk_search1": ["tests/transforms/scripts/csf_fuse3.py:16"]}, "tir.noalias": True})
    # with T.sblock("root"):
    csf_scale_ijk_pos0 = T.sblock_alloc_buffer((nnz_k,), "int32", scope="local")
    csf_scale_ijk_pos1 = T.sblock_alloc_buffer((nnz_k,), "int32", scope="local")
    for ijk in range(nnz_k):
        with T.sblock("csf_scale_ijk_search0"):
            vijk = T.axis.spatial(nnz_k, ijk)
            T.reads(indptr_k[0:nnz_j + 1])
            T.writes(csf_scale_ijk_pos0[vijk])
            T.sblock_attr({"sparse": True})
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            lohi[0] = 0
            lohi[1] = m
            while lohi[0] < lohi[1]:
                if T.if_then_else(T.if_then_else((lohi[0] + lohi[1]) // 2 >= 0 and (lohi[0] + lohi[1]) // 2 < m + 1, indptr_j[(lohi[0] + lohi[1]) // 2], 0) >= 0 and T.if_then_else((lohi[0] + lohi[1]) // 2 >= 0 and (lohi[0] + lohi[1]) // 2 < m + 1, indptr_j[(lohi[0] + lohi[1]) // 2], 0) < nnz_j + 1, indptr_k[T.if_then_else((lohi[0] + lohi[1]) // 2 >= 0 and (lohi[0] + lohi[1]) // 2 < m + 1, indptr_j[(lohi[0] + lohi[1]) // 2], 0)], 0) <= vijk:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            csf_scale_ijk_pos0[vijk] = lohi[0] - 1
        with T.sblock("csf_scale_ijk_search1"):
            vijk = T.axis.spatial(nnz_k, ijk)
            T.reads(indptr_j[0:m + 1], csf_scale_ijk_pos0[vijk], indptr_k[0:nnz_j + 1])
            T.writes(csf_scale_ijk_pos1[vijk])
            T.sblock_attr({"sparse": True})
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            lohi[0] = 0
            lohi[1] = T.if_then_else(csf_scale_ijk_pos0[vijk] + 1 >= 0 and csf_scale_ijk_pos0[vijk] + 1 < m + 1, indptr_j[csf_scale_ijk_pos0[vijk] + 1], 0) - T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0)
            while lohi[0] < lohi[1]:
                if T.if_then_else((lohi[0] + lohi[1]) // 2 + T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0) >= 0 and (lohi[0] + lohi[1]) // 2 + T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0) < nnz_j + 1, indptr_k[(lohi[0] + lohi[1]) // 2 + T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0)], 0) <= vijk:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            csf_scale_ijk_pos1[vijk] = lohi[0] - 1
        with T.sblock("csf_scale0"):
            vijk = T.axis.spatial(nnz_k, ijk)
            T.reads(a[vijk], csf_scale_ijk_pos0[vijk], csf_scale_ijk_pos1[vijk], indptr_k[indptr_j[csf_scale_ijk_pos0[vijk]] + csf_scale_ijk_pos1[vijk]], indices_j[indptr_j[csf_scale_ijk_pos0[vijk]] + csf_scale_ijk_pos1[vijk]], indices_k[vijk])
            T.writes(b[vijk])
            T.sblock_attr({"sparse": True})
            b[vijk] = a[vijk] * T.float32(2.0) + T.Cast("float32", csf_scale_ijk_pos0[vijk] * 100 + T.if_then_else(T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0) + csf_scale_ijk_pos1[vijk] >= 0 and T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0) + csf_scale_ijk_pos1[vijk] < nnz_j, indices_j[T.if_then_else(csf_scale_ijk_pos0[vijk] >= 0 and csf_scale_ijk_pos0[vijk] < m + 1, indptr_j[csf_scale_ijk_pos0[vijk]], 0) + csf_scale_ijk_pos1[vijk]], 0) * 10 + indices_k[vijk])
