# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sddmm(a: T.Buffer(("m", "feat_size"), "float32"), b: T.Buffer(("n", feat_size), "float32"), x: T.Buffer(("nnz",), "float32"), y: T.Buffer((nnz,), "float32"), indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"sddmm0": ["examples/sddmm.py:27"], "sddmm1": ["examples/sddmm.py:27", "examples/sddmm.py:30"], "sddmm1_init": ["examples/sddmm.py:27", "examples/sddmm.py:29"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("sddmm0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], a[vi, 0:feat_size], b[0:n, 0:feat_size], indices[0:nnz], x[0:nnz])
            T.writes(y[0:nnz])
            T.sblock_attr({"sparse": True})
            for j, k in T.grid(indptr[vi + 1] - indptr[vi], feat_size):
                with T.sblock("sddmm1"):
                    vj = T.axis.spatial(n, j)
                    vk = T.axis.reduce(feat_size, k)
                    T.reads(a[vi, vk], b[indices[indptr[vi] + vj], vk], indices[indptr[vi] + vj], x[indptr[vi] + vj])
                    T.writes(y[indptr[vi] + vj])
                    T.sblock_attr({"sparse": True})
                    with T.init():
                        y[indptr[vi] + vj] = T.float32(0.0)
                    y[indptr[vi] + vj] = y[indptr[vi] + vj] + a[vi, vk] * b[indices[indptr[vi] + vj], vk] * x[indptr[vi] + vj]
