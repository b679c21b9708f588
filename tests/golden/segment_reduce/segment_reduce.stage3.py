# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def segment_reduce(x: T.Buffer(("nnz", "feat_size"), "float32"), out: T.Buffer(("m", feat_size), "float32"), indptr: T.Buffer((m + 1,), "int32"), m: T.int32, max_len: T.int32, feat_size: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"segment_reduce0": ["examples/segment_reduce.py:21"], "segment_reduce1": ["examples/segment_reduce.py:21", "examples/segment_reduce.py:24"], "segment_reduce1_init": ["examples/segment_reduce.py:21", "examples/segment_reduce.py:23"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("segment_reduce0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], x[0:nnz, 0:feat_size])
            T.writes(out[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for k_init in range(feat_size):
                with T.sblock("segment_reduce1_init"):
                    vk = T.axis.spatial(feat_size, k_init)
                    T.reads()
                    T.writes(out[vi, vk])
                    T.sblock_attr({"sparse": True})
                    out[vi, vk] = T.float32(0.0)
            for j, k in T.grid(indptr[vi + 1] - indptr[vi], feat_size):
                with T.sblock("segment_reduce1_update"):
                    vj = T.axis.reduce(max_len, j)
                    vk = T.axis.spatial(feat_size, k)
                    T.reads(out[vi, vk], x[indptr[vi] + vj, vk])
                    T.writes(out[vi, vk])
                    T.sblock_attr({"sparse": True})
                    out[vi, vk] = out[vi, vk] + x[indptr[vi] + vj, vk]
