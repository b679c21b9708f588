# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_spmm(a: T.Buffer(("nnz",), "float32"), b: T.Buffer(("n", "feat_size"), "float32"), c: T.Buffer(("m", feat_size), "float32"), indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"csr_spmm0": ["examples/csr_spmm.py:25"], "csr_spmm1": ["examples/csr_spmm.py:25", "examples/csr_spmm.py:28"], "csr_spmm1_init": ["examples/csr_spmm.py:25", "examples/csr_spmm.py:27"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csr_spmm0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], a[0:nnz], b[0:n, 0:feat_size], indices[0:nnz])
            T.writes(c[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for k_init in range(feat_size):
                with T.sblock("csr_spmm1_init"):
                    vk = T.axis.spatial(feat_size, k_init)
                    T.reads()
                    T.writes(c[vi, vk])
                    T.sblock_attr({"sparse": True})
                    c[vi, vk] = T.float32(0.0)
            for j, k in T.grid(indptr[vi + 1] - indptr[vi], feat_size):
                with T.sblock("csr_spmm1_update"):
                    vj = T.axis.reduce(n, j)
                    vk = T.axis.spatial(feat_size, k)
                    T.reads(c[vi, vk], a[indptr[vi] + vj], b[indices[indptr[vi] + vj], vk], indices[indptr[vi] + vj])
                    T.writes(c[vi, vk])
                    T.sblock_attr({"sparse": True})
                    c[vi, vk] = c[vi, vk] + a[indptr[vi] + vj] * b[indices[indptr[vi] + vj], vk]
