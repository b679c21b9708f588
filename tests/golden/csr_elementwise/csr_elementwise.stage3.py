# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_elementwise(a: T.Buffer(("nnz",), "float32"), b: T.Buffer((nnz,), "float32"), indptr: T.Buffer(("m + 1",), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"csr_elementwise0": ["examples/csr_elementwise.py:20"], "csr_elementwise1": ["examples/csr_elementwise.py:20", "examples/csr_elementwise.py:21"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csr_elementwise0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], a[0:nnz])
            T.writes(b[0:nnz])
            T.sblock_attr({"sparse": True})
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("csr_elementwise1"):
                    vj = T.axis.spatial(n, j)
                    T.reads(a[indptr[vi] + vj])
                    T.writes(b[indptr[vi] + vj])
                    T.sblock_attr({"sparse": True})
                    b[indptr[vi] + vj] = a[indptr[vi] + vj] * T.float32(2.0) + T.float32(1.0)
