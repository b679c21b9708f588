# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csf_reduction(a: T.Buffer(("nnz_k",), "float32"), out: T.Buffer(("m",), "float32"), indptr_j: T.Buffer((m + 1,), "int32"), indices_j: T.Buffer(("nnz_j",), "int32"), indptr_k: T.Buffer((nnz_j + 1,), "int32"), indices_k: T.Buffer((nnz_k,), "int32"), m: T.int32, n: T.int32, p: T.int32, nnz_j: T.int32, nnz_k: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"csf_reduction0": ["examples/csf_reduction.py:25"], "csf_reduction0_init": ["examples/csf_reduction.py:25", "examples/csf_reduction.py:27"], "csf_reduction1": ["examples/csf_reduction.py:25"], "csf_reduction2": ["examples/csf_reduction.py:25", "examples/csf_reduction.py:28"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csf_reduction0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr_j[0:m + 1], indptr_k[0:nnz_j + 1], out[vi], a[0:nnz_k])
            T.writes(out[vi])
            T.sblock_attr({"sparse": True})
            out[vi] = T.float32(0.0)
            for j in range(indptr_j[vi + 1] - indptr_j[vi]):
                with T.sblock("csf_reduction1"):
                    vj = T.axis.reduce(n, j)
                    T.reads(indptr_k[0:nnz_j + 1], out[vi], a[0:nnz_k])
                    T.writes(out[vi])
                    T.sblock_attr({"sparse": True})
                    for k in range(indptr_k[indptr_j[vi] + vj + 1] - indptr_k[indptr_j[vi] + vj]):
                        with T.sblock("csf_reduction2"):
                            vk = T.axis.reduce(p, k)
                            T.reads(out[vi], a[indptr_k[indptr_j[vi] + vj] + vk])
                            T.writes(out[vi])
                            T.sblock_attr({"sparse": True})
                            out[vi] = out[vi] + a[indptr_k[indptr_j[vi] + vj] + vk]
