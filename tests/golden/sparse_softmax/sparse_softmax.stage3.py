# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sparse_softmax(a: T.Buffer(("nnz",), "float32"), b: T.Buffer((nnz,), "float32"), indptr: T.Buffer(("m + 1",), "int32"), indices: T.Buffer((nnz,), "int32"), m: T.int32, n: T.int32, nnz: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"ROW_MAX": ["examples/sparse_softmax.py:21"], "ROW_SUM": ["examples/sparse_softmax.py:22"], "normalize0": ["examples/sparse_softmax.py:32", "examples/sparse_softmax.py:33"], "row_max0": ["examples/sparse_softmax.py:24", "examples/sparse_softmax.py:27"], "row_sum0": ["examples/sparse_softmax.py:28", "examples/sparse_softmax.py:31"], "sparse_softmax0": ["examples/sparse_softmax.py:23"]}, "tir.noalias": True})
    # with T.sblock("root"):
    ROW_MAX = T.sblock_alloc_buffer((m,))
    ROW_SUM = T.sblock_alloc_buffer((m,))
    for i in range(m):
        with T.sblock("sparse_softmax0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr[0:m + 1], ROW_MAX[vi], a[0:nnz], ROW_SUM[vi])
            T.writes(ROW_MAX[vi], ROW_SUM[vi], b[0:nnz])
            T.sblock_attr({"sparse": True})
            ROW_MAX[vi] = T.float32(-340282346638528859811704183484516925440.0)
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("row_max0"):
                    vj = T.axis.reduce(n, j)
                    T.reads(ROW_MAX[vi], a[indptr[vi] + vj])
                    T.writes(ROW_MAX[vi])
                    T.sblock_attr({"sparse": True})
                    ROW_MAX[vi] = T.max(ROW_MAX[vi], a[indptr[vi] + vj])
            ROW_SUM[vi] = T.float32(0.0)
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("row_sum0"):
                    vj = T.axis.reduce(n, j)
                    T.reads(ROW_SUM[vi], a[indptr[vi] + vj], ROW_MAX[vi])
                    T.writes(ROW_SUM[vi])
                    T.sblock_attr({"sparse": True})
                    ROW_SUM[vi] = ROW_SUM[vi] + T.exp(a[indptr[vi] + vj] - ROW_MAX[vi])
            for j in range(indptr[vi + 1] - indptr[vi]):
                with T.sblock("normalize0"):
                    vj = T.axis.spatial(n, j)
                    T.reads(a[indptr[vi] + vj], ROW_MAX[vi], ROW_SUM[vi])
                    T.writes(b[indptr[vi] + vj])
                    T.sblock_attr({"sparse": True})
                    b[indptr[vi] + vj] = T.exp(a[indptr[vi] + vj] - ROW_MAX[vi]) / ROW_SUM[vi]
