# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sddmm_fused(a: T.Buffer(("m", "feat_size"), "float32"), b: T.Buffer(("n", feat_size), "float32"), x: T.Buffer(("nnz",), "float32"), y: T.Buffer((nnz,), "float32"), indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"sddmm_fused0": ["examples/sddmm_fused.py:27", "examples/sddmm_fused.py:30"], "sddmm_fused0_init": ["examples/sddmm_fused.py:27", "examples/sddmm_fused.py:29"], "sddmm_fused_ij_pos0": ["examples/sddmm_fused.py:27"], "sddmm_fused_ij_search0": ["examples/sddmm_fused.py:27"]}, "tir.noalias": True})
    # with T.sblock("root"):
    sddmm_fused_ij_pos0 = T.sblock_alloc_buffer((nnz,), "int32", scope="local")
    for ij in range(nnz):
        with T.sblock("sddmm_fused_ij_search0"):
            vij = T.axis.spatial(nnz, ij)
            T.reads(indptr[0:m + 1])
            T.writes(sddmm_fused_ij_pos0[vij])
            T.sblock_attr({"sparse": True})
            lohi = T.sblock_alloc_buffer((2,), "int32", scope="local")
            lohi[0] = 0
            lohi[1] = m
            while lohi[0] < lohi[1]:
                if T.if_then_else((lohi[0] + lohi[1]) // 2 >= 0 and (lohi[0] + lohi[1]) // 2 < m + 1, indptr[(lohi[0] + lohi[1]) // 2], 0) <= vij:
                    lohi[0] = (lohi[0] + lohi[1]) // 2 + 1
                else:
                    lohi[1] = (lohi[0] + lohi[1]) // 2
            sddmm_fused_ij_pos0[vij] = lohi[0] - 1
        for k in range(feat_size):
            with T.sblock("sddmm_fused0"):
                vij, vk = T.axis.remap("SR", [ij, k])
                T.reads(sddmm_fused_ij_pos0[vij], indptr[sddmm_fused_ij_pos0[vij]], a[sddmm_fused_ij_pos0[vij], vk], b[indices[vij], vk], indices[vij], x[vij])
                T.writes(y[vij])
                T.sblock_attr({"sparse": True})
                with T.init():
                    y[vij] = T.float32(0.0)
                y[vij] = y[vij] + T.if_then_else(sddmm_fused_ij_pos0[vij] >= 0 and sddmm_fused_ij_pos0[vij] < m, a[sddmm_fused_ij_pos0[vij], vk], T.float32(0.0)) * b[indices[vij], vk] * x[vij]
