# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_rowsum(a: T.Buffer(("nnz",), "float32"), b: T.Buffer(("m",), "float32"), indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"csr_rowsum0": ["examples/csr_rowsum.py:20"], "csr_rowsum0_init": ["examples/csr_rowsum.py:20", "examples/csr_rowsum.py:22"], "csr_rowsum1": ["examples/csr_rowsum.py:20", "examples/csr_rowsum.py:23"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csr_rowsum0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], b[vi], a[0:nnz])
            T.writes(b[vi])
            T.sblock_attr({"sparse": True})
            b[vi] = T.float32(0.0)
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("csr_rowsum1"):
                    vj = T.axis.reduce(n, j)
                    T.reads(b[vi], a[indptr[vi] + vj])
                    T.writes(b[vi])
                    T.sblock_attr({"sparse": True})
                    b[vi] = b[vi] + a[indptr[vi] + vj]
