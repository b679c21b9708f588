# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def bsr_spmm(a: T.Buffer(("nnzb", 4, 4), "float32"), b: T.Buffer(("nb * 4", "feat_size"), "float32"), c: T.Buffer(("mb * 4", feat_size), "float32"), indptr: T.Buffer((mb + 1,), "int32"), indices: T.Buffer((nnzb,), "int32"), mb: T.int32, nb: T.int32, nnzb: T.int32, feat_size: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"bsr_spmm0": ["examples/bsr_spmm.py:29"], "bsr_spmm1": ["examples/bsr_spmm.py:29", "examples/bsr_spmm.py:32"], "bsr_spmm1_init": ["examples/bsr_spmm.py:29", "examples/bsr_spmm.py:31"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for io, ii in T.grid(mb, 4):
        with T.sblock("bsr_spmm0"):
            vio, vii = T.axis.remap("SS", [io, ii])
            T.reads(indptr[0:mb + 1], a[0:nnzb, vii, 0:4], b[0:nb * 4, 0:feat_size], indices[0:nnzb])
            T.writes(c[vio * 4 + vii, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for k_init in range(feat_size):
                with T.sblock("bsr_spmm1_init"):
                    vk = T.axis.spatial(feat_size, k_init)
                    T.reads()
                    T.writes(c[vio * 4 + vii, vk])
                    T.sblock_attr({"sparse": True})
                    c[vio * 4 + vii, vk] = T.float32(0.0)
            for jo, ji, k in T.grid(indptr[vio + 1] - indptr[vio], 4, feat_size):
                with T.sblock("bsr_spmm1_update"):
                    vjo = T.axis.reduce(nb, jo)
                    vji, vk = T.axis.remap("RS", [ji, k])
                    T.reads(c[vio * 4 + vii, vk], a[indptr[vio] + vjo, vii, vji], b[indices[indptr[vio] + vjo] * 4 + vji, vk], indices[indptr[vio] + vjo])
                    T.writes(c[vio * 4 + vii, vk])
                    T.sblock_attr({"sparse": True})
                    c[vio * 4 + vii, vk] = c[vio * 4 + vii, vk] + a[indptr[vio] + vjo, vii, vji] * b[indices[indptr[vio] + vjo] * 4 + vji, vk]
